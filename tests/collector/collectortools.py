"""Helpers for the collector tests: a pool of master + collector, direct access to its collector."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Callable
from typing import Any

from pooltools import Pool, wait_for

from htcd.wire.address import Address
from htcd.wire.client import Connection
from htcd.wire.locate import read_address_file


def start_collector_pool(make_pool: Callable[..., Pool], knobs: dict[str, str] | None = None,
                         config_text: str = "") -> Pool:
    """A pool running only the master and the collector (no slots, no schedd to wait for)."""
    pool = make_pool({"DAEMON_LIST": "MASTER COLLECTOR", **(knobs or {})}, config_text=config_text, start=False)
    pool.master = subprocess.Popen([sys.executable, "-m", "htcd", "master", "-f"], env=pool.env,
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_for(lambda: collector_address(pool), 60, "the collector's address file")
    wait_for(lambda: pool.htcd("status", "-collector", "-af", "Name", check=False).returncode == 0, 60,
             "the collector to answer")
    return pool


def collector_address(pool: Pool, name: str = ".collector_address") -> Address | None:
    return read_address_file(str(pool.local / "log" / name))


def call(addr: Address | str, command: str, **args: Any) -> Any:
    with Connection(addr, timeout=120) as conn:
        return conn.call(command, **args)


def own_ad(addr: Address | str) -> dict[str, str]:
    """The collector's own ad, fresh (DC_QUERY_SELF)."""
    return call(addr, "DC_QUERY_SELF")[0]


def free_ports(n: int) -> list[int]:
    """Ports free for both TCP and UDP on loopback right now."""
    found: list[int] = []
    while len(found) < n:
        with socket.socket() as t, socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
            t.bind(("127.0.0.1", 0))
            port = t.getsockname()[1]
            try:
                u.bind(("127.0.0.1", port))
            except OSError:
                continue
            if port not in found:
                found.append(port)
    return found

"""Helpers for the overload tests: a master + collector pool, load generator processes, the
kernel's own figures for a UDP socket, percentiles."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

import flood
from pooltools import Pool, wait_for

from htcd.wire.address import Address
from htcd.wire.client import Connection
from htcd.wire.locate import read_address_file


def start_collector_pool(make_pool: Callable[..., Pool], knobs: dict[str, str] | None = None) -> Pool:
    """A pool running only the master and the collector."""
    pool = make_pool({"DAEMON_LIST": "MASTER COLLECTOR", **(knobs or {})}, start=False)
    pool.master = subprocess.Popen([sys.executable, "-m", "htcd", "master", "-f"], env=pool.env,
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_for(lambda: collector_address(pool), 60, "the collector's address file")
    wait_for(lambda: pool.htcd("status", "-collector", "-af", "Name", check=False).returncode == 0, 60,
             "the collector to answer")
    return pool


def collector_address(pool: Pool) -> Address | None:
    return read_address_file(str(pool.local / "log" / ".collector_address"))


def call(addr: Address | str, command: str, **args: Any) -> Any:
    with Connection(addr, timeout=120) as conn:
        return conn.call(command, **args)


def own_ad(addr: Address | str) -> dict[str, str]:
    return call(addr, "DC_QUERY_SELF")[0]


class Flooders(flood.Flooders):
    """``flood.Flooders`` with a pool's environment."""

    def __init__(self, pool: Pool, address: str, specs: list[tuple[str, int, int, float, int, float]]) -> None:
        super().__init__(pool.env, address, specs)


def proc_net_udp(port: int) -> tuple[int, int] | None:
    """(rx_queue bytes, drops) of the UDP socket bound to ``port``, read from /proc/net/udp."""
    for path in ("/proc/net/udp", "/proc/net/udp6"):
        with open(path) as f:
            rows = f.read().splitlines()[1:]
        for row in rows:
            cols = row.split()
            if int(cols[1].rsplit(":", 1)[1], 16) == port:
                return int(cols[4].split(":")[1], 16), int(cols[-1])
    return None


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

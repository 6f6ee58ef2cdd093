"""Helpers for the overload tests: a master + collector pool, load generator processes, the
kernel's own figures for a UDP socket, percentiles."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pooltools import Pool, wait_for

from htcd.wire.address import Address
from htcd.wire.client import Connection
from htcd.wire.locate import read_address_file

FLOOD = Path(__file__).with_name("flood.py")


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


class Flooders:
    """Load generator processes (``flood.py``), started together once each has sent its ads'
    first update; ended by PID if still running at the end."""

    def __init__(self, pool: Pool, address: str, specs: list[tuple[str, int, int, float, int, float]]) -> None:
        self.procs = [subprocess.Popen([sys.executable, str(FLOOD), address, mode, str(first), str(count),
                                        str(seconds), str(most), str(rate)],
                                       env=pool.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                      for mode, first, count, seconds, most, rate in specs]
        for p in self.procs:
            assert p.stdout is not None
            line = p.stdout.readline()
            assert json.loads(line) == {"ready": True}, line

    def go(self) -> None:
        for p in self.procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()

    def running(self) -> bool:
        return any(p.poll() is None for p in self.procs)

    def results(self, timeout: float = 120) -> list[dict[str, Any]]:
        out = []
        for p in self.procs:
            stdout, _ = p.communicate(timeout=timeout)
            assert p.returncode == 0, stdout
            out.append(json.loads(stdout.strip().splitlines()[-1]))
        return out

    def kill(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()


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

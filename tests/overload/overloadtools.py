"""Helpers for the overload tests: a master + collector pool, load generator processes, the
kernel's own figures for a UDP socket, percentiles."""

from __future__ import annotations

import flood
from collector.collectortools import call, collector_address, own_ad, start_collector_pool
from pooltools import Pool

__all__ = ["Flooders", "call", "collector_address", "own_ad", "percentile", "proc_net_udp", "start_collector_pool"]


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

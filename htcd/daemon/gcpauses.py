"""Keeping Python's cyclic garbage collector from holding a daemon's event loop.

A full collection walks every live container object: at 100,000 stored ads (the collector) or
queued jobs (the schedd) that is 40-70 ms in one go, on the loop.  What a daemon keeps for long
holds no reference cycles, so reference counting frees it; once the kept set has grown,
``gc.freeze()`` moves everything that exists out of the collector's reach.  Nothing is ever
unfrozen: a cycle that was garbage at a freeze stays (a freeze happens only when the kept set has
grown by a tenth), and unfreezing after an ``htcd rm -all`` made the next collections walk the
departed jobs still waiting for their history records (~40 ms on the loop)."""

from __future__ import annotations

import gc
import logging
import time

SLOW = 0.05  # a collection longer than this is logged


class GcPauses:
    """A daemon's garbage collections: the longest pause (for its ad) and when to freeze."""

    def __init__(self, log: logging.Logger | logging.LoggerAdapter[logging.Logger]) -> None:
        self.log = log
        self.longest = 0.0  # seconds
        self.frozen_at = 0  # kept objects counted at the last freeze
        self._started = 0.0
        gc.callbacks.append(self._watch)

    def close(self) -> None:
        if self._watch in gc.callbacks:
            gc.callbacks.remove(self._watch)

    def _watch(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        took = time.perf_counter() - self._started
        if took > self.longest:
            self.longest = took
            if took > SLOW:
                self.log.info("a garbage collection (generation %d) took %.3f s", info.get("generation", -1), took)

    def kept(self, n: int) -> None:
        """The daemon keeps ``n`` long-lived things now (ads, jobs): freeze once they have grown
        by a tenth (and at least 5,000) since the last freeze, or since they shrank to under a
        tenth of it."""
        if n - self.frozen_at >= max(5000, self.frozen_at // 10):
            gc.freeze()
            self.frozen_at = n
        elif n < self.frozen_at // 10:
            self.frozen_at = n

    def freeze(self) -> None:
        """Freeze now (after building many long-lived objects, such as an index)."""
        gc.freeze()

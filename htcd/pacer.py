"""Slicing long work on an asyncio loop, so no iteration holds it past ~20 ms.

Below the wire and the daemon core: the server decodes big requests with it, the daemons walk
their queues with it (the 100 ms rule of ``htcd.daemon.stats``).
"""

from __future__ import annotations

import asyncio
from time import perf_counter


class Pacer:
    """Slices long work on the event loop: ``due()`` says the slice's time is used up, ``pause()``
    gives the loop a turn and starts a new slice.  In a loop over many items, check ``due()``
    every few dozen items: ``if i % 64 == 0 and pacer.due(): await pacer.pause()``."""

    def __init__(self, budget: float = 0.02) -> None:
        self.budget = budget
        self.start = perf_counter()

    def due(self) -> bool:
        return perf_counter() - self.start >= self.budget

    async def pause(self) -> None:
        await asyncio.sleep(0)
        self.start = perf_counter()

    async def step(self) -> None:
        if self.due():
            await self.pause()

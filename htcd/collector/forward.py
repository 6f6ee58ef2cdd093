"""Forwarding to ``CONDOR_VIEW_HOST``: every update the collector accepts goes on to the view
collector(s), as HTCondor's collector does.

Forwarding never holds up the update that caused it.  Over UDP (the default, as in HTCondor:
``UPDATE_VIEW_COLLECTOR_WITH_TCP`` is false) a datagram is sent at once when the session is
open; otherwise updates wait in a bounded queue that a background task sends in batches over
the connection.  Updates that do not fit the queue, or come while a view collector that could not
be reached is left alone for a few seconds, are dropped and counted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from typing import Any

from htcd.config import Config
from htcd.daemon.advertise import CollectorLink, uses_tcp
from htcd.errors import UserError
from htcd.wire.address import Address
from htcd.wire.errors import WireError
from htcd.wire.locate import collector_addresses

QUEUE_LIMIT = 100_000
BATCH = 500
RETRY_AFTER = 5.0  # seconds a view collector that failed is left alone (updates meanwhile are dropped)


class Forwarder:
    def __init__(self, config: Config, own: Address, log: logging.Logger) -> None:
        self.log = log
        self.links: list[CollectorLink] = []
        self.forwarded = 0
        self.dropped = 0
        self.types = {t.lower() for t in config.get_list("CONDOR_VIEW_CLASSAD_TYPES")}
        try:
            targets = collector_addresses(config, "CONDOR_VIEW_HOST")
        except UserError as exc:
            log.error("CONDOR_VIEW_HOST: %s; not forwarding", exc)
            targets = []
        for addr in targets:
            if (addr.unix and addr.unix == own.unix) or (addr.host == own.host and addr.port == own.port):
                log.warning("CONDOR_VIEW_HOST %s is this collector itself; not forwarding to it", addr)
                continue
            self.links.append(CollectorLink(addr, uses_tcp(config, addr, view=True), log))
        self._queues: list[deque[tuple[str, dict[str, Any]]]] = [deque() for _ in self.links]
        self._retry_at = [0.0 for _ in self.links]
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stopping = False

    @property
    def active(self) -> bool:
        return bool(self.links)

    def start(self) -> None:
        if self.links:
            self._task = asyncio.create_task(self._run(), name="forward to the view collector")
            for link in self.links:
                self.log.info("forwarding updates to the view collector at %s over %s", link.address,
                              "TCP" if link.use_tcp else "UDP")

    async def stop(self) -> None:
        self._stopping = True
        self._wake.set()
        task = self._task
        # cancel until it ends: a cancellation can be lost when it meets a connection attempt
        # finishing at the same moment (asyncio.wait_for in Python 3.11)
        while task is not None and not task.done():
            task.cancel()
            await asyncio.wait({task}, timeout=1.0)
        for link in self.links:
            with contextlib.suppress(Exception):
                await link.close()

    def forward(self, command: str, args: dict[str, Any], ad_type: str) -> None:
        """Pass one accepted update (or invalidation) on; never waits."""
        if self.types and ad_type.lower() not in self.types:
            return
        message = {"cmd": command, "args": args}
        now = time.monotonic()
        for link, queue, retry in zip(self.links, self._queues, self._retry_at, strict=True):
            if now < retry:  # it failed a moment ago: do not try again for every update
                self.dropped += 1
                continue
            if command == "UPDATE_AD" and not link.use_tcp and not queue and link.send_datagram(message):
                self.forwarded += 1
                continue
            if len(queue) >= QUEUE_LIMIT:
                self.dropped += 1
                continue
            queue.append((command, args))
            self._wake.set()

    async def _run(self) -> None:
        while not self._stopping:
            await self._wake.wait()
            self._wake.clear()
            for n, (link, queue) in enumerate(zip(self.links, self._queues, strict=True)):
                while queue:
                    try:
                        await self._drain(link, queue)
                        link.report(None, "forward to")
                    except (WireError, UserError, KeyError, TypeError, ValueError) as exc:
                        link.report(exc, "forward to")
                        self.dropped += len(queue)
                        queue.clear()
                        self._retry_at[n] = time.monotonic() + RETRY_AFTER

    async def _drain(self, link: CollectorLink, queue: deque[tuple[str, dict[str, Any]]]) -> None:
        if not link.use_tcp:  # open the session, then send what waited as datagrams
            await link.send(*queue[0])
            queue.popleft()
            self.forwarded += 1
            while queue and queue[0][0] == "UPDATE_AD" and link.send_datagram({"cmd": "UPDATE_AD",
                                                                                "args": queue[0][1]}):
                queue.popleft()
                self.forwarded += 1
            return
        if queue[0][0] != "UPDATE_AD":
            command, args = queue.popleft()
            await link.request(command, **args)
            self.forwarded += 1
            return
        batch: list[dict[str, Any]] = []
        while queue and queue[0][0] == "UPDATE_AD" and len(batch) < BATCH:
            batch.append(queue.popleft()[1])
        await link.request("UPDATE_AD", updates=batch)
        self.forwarded += len(batch)

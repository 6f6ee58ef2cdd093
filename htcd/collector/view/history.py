"""Pool history on a collector's loop: KEEP_POOL_HISTORY and its knobs, the sampling timer, and
the worker thread that owns the SQLite file.

Reducing the ads runs on the loop in slices (``sampler.steps`` yields every few thousand ads);
writing and reading the file run on one worker thread, so a slow disk never holds the loop.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

from htcd.collector.store import AdStore
from htcd.collector.view import sampler
from htcd.collector.view.store import HistoryStore, Series, StoreError
from htcd.config import Config
from htcd.errors import UserError
from htcd.pacer import Pacer

DEFAULT_MAX_STORAGE = 10_000_000
DEFAULT_INTERVAL = 60
OFF_RECHECK = 5.0  # seconds between two looks at whether a reconfig turned history on
SLICE = 0.01  # seconds of reducing between two turns of the loop
T = TypeVar("T")


class Collector(Protocol):
    @property
    def config(self) -> Config: ...

    @property
    def log(self) -> logging.Logger: ...

    store: AdStore
    history: PoolHistory | None

    def every(self, interval: Callable[[], float], action: Callable[[], Any], what: str,
              first: float = 0.0, during_shutdown: bool = False) -> None: ...


class Settings:
    """The knobs, read and checked: ``UserError`` names the bad one."""

    def __init__(self, config: Config) -> None:
        self.keep = config.get_bool("KEEP_POOL_HISTORY", False)
        directory = (config.get("POOL_HISTORY_DIR") or "").strip()
        if not directory:  # HTCondor's view server: $(LOCAL_DIR)/ViewHist
            local = (config.get("LOCAL_DIR") or "").strip()
            if self.keep and not local:
                raise UserError("KEEP_POOL_HISTORY is true but neither POOL_HISTORY_DIR nor LOCAL_DIR is set")
            directory = os.path.join(local, "ViewHist")
        self.directory = directory
        self.max_storage = config.get_int("POOL_HISTORY_MAX_STORAGE", DEFAULT_MAX_STORAGE)
        if self.max_storage < 65536:
            raise UserError(f"POOL_HISTORY_MAX_STORAGE = {self.max_storage} bytes is too small to hold "
                            "a pool history (at least 65536)")
        self.interval = config.get_int("POOL_HISTORY_SAMPLING_INTERVAL", DEFAULT_INTERVAL)
        if self.interval < 1:
            raise UserError(f"POOL_HISTORY_SAMPLING_INTERVAL = {self.interval} must be at least 1 second")


class PoolHistory:
    """A collector's history: its store, the last sample's glance, and what sampling cost."""

    def __init__(self, settings: Settings, log: logging.Logger) -> None:
        self.settings = settings
        self.log = log
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="pool-history")
        self.store = HistoryStore(settings.directory, settings.max_storage, settings.interval)
        self.last: sampler.Sample | None = None
        self.last_cpu = 0.0  # CPU seconds the last sample's reduction took on the loop
        self.last_write = 0.0  # CPU seconds the last write took on the worker thread
        self.samples = 0

    @property
    def interval(self) -> int:
        return self.settings.interval

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on the worker thread (the one that uses the SQLite file)."""
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)

    async def reduce(self, store: AdStore, now: float | None = None) -> tuple[sampler.Sample, float]:
        """The collector's ads as a sample, reduced on the loop in slices, and the CPU seconds
        that took."""
        gen = sampler.steps(store, now)
        pacer = Pacer(SLICE)
        cpu = 0.0
        started = time.thread_time()
        while True:
            try:
                next(gen)
            except StopIteration as stop:
                cpu += time.thread_time() - started
                result: sampler.Sample = stop.value
                return result, cpu
            if pacer.due():
                cpu += time.thread_time() - started
                await pacer.pause()
                started = time.thread_time()

    async def sample(self, store: AdStore, now: float | None = None) -> sampler.Sample:
        """Take one sample and write it."""
        s, self.last_cpu = await self.reduce(store, now)
        self.last_write = await self.run(self._write, s)
        self.last = s
        self.samples += 1
        self.log.debug("pool history: sample of %d ads (%.3f s CPU reducing, %.3f s CPU writing)", s.ads,
                       self.last_cpu, self.last_write)
        return s

    def _write(self, s: sampler.Sample) -> float:
        """Record a sample (on the worker thread); the CPU seconds it took."""
        started = time.thread_time()
        self.store.record(s.time, s.series)
        return time.thread_time() - started

    def last_sample(self) -> dict[str, Any] | None:
        """What the last sample cost: ads reduced, CPU seconds reducing (on the loop) and writing."""
        if self.last is None:
            return None
        return {"time": self.last.time, "ads": self.last.ads, "reduce_cpu_seconds": round(self.last_cpu, 4),
                "write_cpu_seconds": round(self.last_write, 4)}

    async def series(self, name: str, start: int, end: int, keys: list[str] | None = None) -> Series | None:
        return await self.run(self.store.series, name, start, end, None if keys is None else frozenset(keys))

    async def series_json(self, name: str, start: int, end: int, keys: list[str] | None = None) -> bytes | None:
        """The series as JSON text, read and encoded on the worker thread (a wide series is
        megabytes of JSON: encoding it on the loop would hold it)."""
        def work() -> bytes | None:
            found = self.store.series(name, start, end, None if keys is None else frozenset(keys))
            return None if found is None else json.dumps(found.to_json(), separators=(",", ":")).encode()

        return await self.run(work)

    async def close(self) -> None:
        await self.run(self.store.close)
        self.pool.shutdown(wait=True)


def open_history(collector: Collector) -> PoolHistory | None:
    """The history the collector's config asks for, or None (off, or it cannot be opened: the
    reason is logged and the collector runs on without it)."""
    try:
        settings = Settings(collector.config)
    except UserError as exc:
        collector.log.error("pool history not kept: %s", exc)
        return None
    if not settings.keep:
        return None
    try:
        h = PoolHistory(settings, collector.log)
    except StoreError as exc:
        collector.log.error("pool history not kept: %s", exc)
        return None
    collector.log.info("keeping pool history in %s: a sample every %d s, at most %d bytes", h.store.path,
                       settings.interval, settings.max_storage)
    if not (collector.config.get("COLLECTOR_METRICS_PORT") or "").strip():
        collector.log.warning("KEEP_POOL_HISTORY is true but COLLECTOR_METRICS_PORT is not set: the history is "
                              "kept, but nothing serves /view/ until the port is set")
    return h


def install(collector: Collector) -> None:
    """Open the history if asked for and start the sampling timer (it samples whatever history
    the collector holds at each tick, so a reconfig may turn it on or off)."""
    collector.history = open_history(collector)

    def interval() -> float:  # while off, look again soon: a reconfig may turn it on
        h = collector.history
        return float(h.interval if h is not None else OFF_RECHECK)

    async def tick() -> None:
        h = collector.history
        if h is not None:
            try:
                await h.sample(collector.store)
            except StoreError as exc:
                collector.log.error("pool history: %s", exc)

    collector.every(interval, tick, "pool history sample", first=interval())


async def reconfigure(collector: Collector) -> None:
    """Follow a reconfig: new limits apply at once; a new directory, or KEEP_POOL_HISTORY turned
    on or off, closes the old store and opens the new one."""
    old = collector.history
    try:
        settings = Settings(collector.config)
    except UserError as exc:
        collector.log.error("pool history: %s; keeping the previous settings", exc)
        return
    if old is not None and settings.keep and settings.directory == old.settings.directory:
        old.settings = settings
        await old.run(old.store.set_limits, settings.max_storage, settings.interval)
        return
    collector.history = None
    if old is not None:
        await old.close()
    collector.history = open_history(collector)


async def stop(collector: Collector) -> None:
    h, collector.history = collector.history, None
    if h is not None:
        await h.close()

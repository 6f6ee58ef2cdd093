"""DaemonCore statistics: how busy a daemon's event loop is, what it answers, what blocks it.

HTCondor's DaemonCore counts, per daemon, the time spent waiting in ``select()``, the loop's
cycles, commands, timers and signals, over the daemon's life and over a recent window
(``STATISTICS_WINDOW_SECONDS``, advanced every ``STATISTICS_WINDOW_QUANTUM``), and publishes them
in the daemon's ad at the level ``STATISTICS_TO_PUBLISH`` chooses (``DC:1`` basic, ``DC:2``
verbose, ``R``/``!R`` recent values, ``L``/``!L`` lifetime values, ``NONE``).  htcd measures the same
things on its asyncio loop by wrapping the loop's selector: the time inside ``select()`` is the
wait, and the time from ``select()`` returning to the next call is one iteration's busy time.  The
longest iteration, in wall and in this thread's CPU time, is the statistic
``DaemonCoreMaxBlockMs``/``DaemonCoreMaxBlockCpuMs`` (and ``Recent*``): a daemon is meant never to
hold its loop for more than 100 ms, and an iteration that does is logged with the callback that
took longest (a task's name says which command or timer it was).

:class:`htcd.pacer.Pacer` is the tool for keeping long work under that bound.
"""

from __future__ import annotations

import asyncio
import collections
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import psutil

BLOCK_LOG_SECONDS = 0.1  # an iteration longer than this is logged at D_ALWAYS
DEFAULT_WINDOW = 1200  # STATISTICS_WINDOW_SECONDS
DEFAULT_QUANTUM = 240  # STATISTICS_WINDOW_QUANTUM

perf_counter = time.perf_counter
thread_time = time.thread_time


# -- publishing flags ----------------------------------------------------------------------------

@dataclass(frozen=True)
class PublishFlags:
    """What ``STATISTICS_TO_PUBLISH`` asks of one collection of statistics."""

    level: int = 1  # 0 none, 1 basic, 2 verbose, 3 everything
    recent: bool = True  # R / !R
    lifetime: bool = True  # L / !L
    debug: bool = False  # D / !D (htcd has no debug-only attributes; accepted for compatibility)
    zero: bool = True  # Z / !Z


DC_DEFAULT = PublishFlags()


def parse_publish(text: str | None, pool: str = "DC", alt: str = "DAEMONCORE",
                  default: PublishFlags = DC_DEFAULT) -> tuple[PublishFlags, list[str]]:
    """HTCondor's ``STATISTICS_TO_PUBLISH`` syntax (``DEFAULT:1!L, DC:2RZ``, ``NONE``) -> the flags
    for ``pool`` and the problems found (unknown options), which the caller logs."""
    if text is None or text.strip().upper() in ("", "DEFAULT"):
        return default, []
    if text.strip().upper() == "NONE":
        return PublishFlags(level=0), []
    found = PublishFlags(level=0)
    problems: list[str] = []
    for item in re.split(r"[\s,]+", text.strip()):
        if not item:
            continue
        name, colon, opts = item.partition(":")
        if name.upper() not in (pool, alt, "DEFAULT", "ALL"):
            continue
        flags = default
        if colon:
            if opts.upper() == "NONE":
                flags = PublishFlags(level=0)
            else:
                bang = False
                for ch in opts:
                    low = ch.lower()
                    if ch in "0123":
                        flags = _with(flags, level=int(ch))
                    elif ch == "!":
                        bang = True
                        continue
                    elif low == "r":
                        flags = _with(flags, recent=not bang)
                    elif low == "l":
                        flags = _with(flags, lifetime=not bang)
                    elif low == "d":
                        flags = _with(flags, debug=not bang)
                    elif low == "z":
                        flags = _with(flags, zero=not bang)
                    else:
                        problems.append(f"option {ch!r} invalid in {item!r}")
                    bang = False
        found = flags
    return found, problems


def _with(flags: PublishFlags, **kw: Any) -> PublishFlags:
    return PublishFlags(**{**flags.__dict__, **kw})


# -- counters ------------------------------------------------------------------------------------

@dataclass
class Counts:
    """Counters of one window quantum (or their sum over many)."""

    select_wait: float = 0.0
    pump_count: int = 0
    pump_sum: float = 0.0
    max_block: float = 0.0
    max_block_cpu: float = 0.0
    max_block_what: str = ""
    commands: int = 0
    messages: int = 0
    command_runtime: float = 0.0
    timers: int = 0
    timer_runtime: float = 0.0
    signals: int = 0
    debug_outs: int = 0
    per_command: dict[str, list[float]] = field(default_factory=dict)  # name -> [count, runtime]
    per_timer: dict[str, list[float]] = field(default_factory=dict)

    def add(self, other: Counts) -> None:
        for name in ("select_wait", "pump_count", "pump_sum", "commands", "messages", "command_runtime",
                     "timers", "timer_runtime", "signals", "debug_outs"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        if other.max_block > self.max_block:
            self.max_block, self.max_block_what = other.max_block, other.max_block_what
        self.max_block_cpu = max(self.max_block_cpu, other.max_block_cpu)
        for mine, theirs in ((self.per_command, other.per_command), (self.per_timer, other.per_timer)):
            for k, (n, rt) in theirs.items():
                cur = mine.setdefault(k, [0, 0.0])
                cur[0] += n
                cur[1] += rt


def _attr_name(text: str) -> str:
    """HTCondor's cleanStringForUseAsAttr: anything but letters, digits and _ becomes _."""
    return re.sub(r"[^A-Za-z0-9_]", "_", text.strip()) or "_"


def describe(handle: Any) -> str:
    """A loop callback in words: the task (command, timer) it steps, or the function."""
    cb = getattr(handle, "_callback", None)
    owner = handle if isinstance(handle, asyncio.Task) else getattr(cb, "__self__", None)
    if isinstance(owner, asyncio.Task):
        coro = owner.get_coro()
        return f"task {owner.get_name()!r} ({getattr(coro, '__qualname__', type(coro).__name__)})"
    return f"callback {getattr(cb, '__qualname__', None) or repr(cb)}"


# -- the loop monitor ----------------------------------------------------------------------------

class _TimedReady(collections.deque):
    """The loop's ready queue, timing each callback it hands out (the time to the next hand-out
    or to the next ``select()``), to name what made a long iteration long."""

    def __init__(self, items: Any, stats: DaemonStats) -> None:
        super().__init__(items)
        self.stats = stats

    def popleft(self) -> Any:
        handle = super().popleft()
        st = self.stats
        now = perf_counter()
        if st._cur_handle is not None:
            spent = now - st._cur_start
            if spent > st._worst_spent:
                st._worst_spent, st._worst = spent, st._cur_handle
        st._cur_handle, st._cur_start = handle, now
        return handle


class DaemonStats:
    """One daemon's DaemonCore statistics; ``attach`` it to the running loop."""

    def __init__(self, on_block: Callable[[float, float, str], None] | None = None) -> None:
        self.on_block = on_block
        self.init_time = time.time()
        self.init_mono = perf_counter()
        self.flags = DC_DEFAULT
        self.window = DEFAULT_WINDOW
        self.quantum = DEFAULT_QUANTUM
        self.closed = Counts()  # quanta that left the window
        self.buckets: collections.deque[Counts] = collections.deque([Counts()])
        self.cur = self.buckets[-1]
        self.bucket_start = self.init_mono
        self.next_tick = self.init_mono + self.quantum
        self.last_tick_time = int(self.init_time)
        self.attached = False
        self._iter_start = perf_counter()
        self._cpu_mark = thread_time()
        self._last_select = self._iter_start
        self._last_wait = 0.0
        self._cur_handle: Any = None
        self._cur_start = 0.0
        self._worst: Any = None
        self._worst_spent = 0.0
        self._debug_mark = 0
        self._process = psutil.Process(os.getpid())
        self._cpu_prev: tuple[float, float] | None = None
        self.monitor: dict[str, Any] = {}
        self._cached: tuple[tuple[Any, ...], dict[str, Any]] | None = None

    # -- configuration --------------------------------------------------------------------------
    def configure(self, window: int, quantum: int, flags: PublishFlags) -> None:
        """Apply STATISTICS_WINDOW_SECONDS / _QUANTUM / STATISTICS_TO_PUBLISH; a new window size
        starts the recent values afresh (the lifetime values keep everything)."""
        quantum = max(1, quantum)
        window = max(quantum, (max(1, window) + quantum - 1) // quantum * quantum)  # whole quanta
        self.flags = flags
        if (window, quantum) == (self.window, self.quantum):
            return
        for b in self.buckets:
            self.closed.add(b)
        self.window, self.quantum = window, quantum
        self.buckets = collections.deque([Counts()])
        self.cur = self.buckets[-1]
        now = perf_counter()
        self.bucket_start, self.next_tick = now, now + quantum

    @property
    def window_quanta(self) -> int:
        return self.window // self.quantum

    # -- measuring ------------------------------------------------------------------------------
    def attach(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Wrap the loop's selector (and time its ready queue); False if this loop has neither
        (then only commands, timers and signals are counted)."""
        selector = getattr(loop, "_selector", None)
        ready = getattr(loop, "_ready", None)
        if selector is None or not isinstance(ready, collections.deque) or self.attached:
            return False
        real_select = selector.select

        def select(timeout: float | None = None) -> Any:
            t0 = perf_counter()
            self._end_iteration(t0)
            try:
                return real_select(timeout)
            finally:
                t1 = perf_counter()
                self._last_wait = t1 - t0
                self._iter_start = t1

        selector.select = select
        loop._ready = _TimedReady(ready, self)  # type: ignore[attr-defined]  # asyncio's private ready queue
        self._iter_start = self._last_select = self._cur_start = perf_counter()
        self._cur_handle = asyncio.current_task(loop)  # the step running now was not handed out by us
        self._cpu_mark = thread_time()
        self.attached = True
        return True

    def _end_iteration(self, t0: float) -> None:
        cpu_now = thread_time()
        busy = t0 - self._iter_start
        cpu = cpu_now - self._cpu_mark
        self._cpu_mark = cpu_now
        if t0 >= self.next_tick:
            self.tick(t0)
        cur = self.cur
        cur.pump_count += 1  # one cycle: the last wait and the work after it, counted together
        cur.pump_sum += t0 - self._last_select
        cur.select_wait += self._last_wait
        self._last_select = t0
        if self._cur_handle is not None:
            spent = t0 - self._cur_start
            if spent > self._worst_spent:
                self._worst_spent, self._worst = spent, self._cur_handle
            self._cur_handle = None
        if busy > cur.max_block or cpu > cur.max_block_cpu or busy >= BLOCK_LOG_SECONDS:
            what = f"{describe(self._worst)} for {self._worst_spent:.3f} s" if self._worst is not None else "?"
            if busy > cur.max_block:
                cur.max_block, cur.max_block_what = busy, what
            if cpu > cur.max_block_cpu:
                cur.max_block_cpu = cpu
            if busy >= BLOCK_LOG_SECONDS and self.on_block is not None:
                self.on_block(busy, cpu, what)
        self._worst, self._worst_spent = None, 0.0

    def tick(self, now: float | None = None) -> None:
        """Advance the recent window by the quanta that have passed."""
        now = perf_counter() if now is None else now
        while now >= self.next_tick:
            fresh = Counts()
            self.buckets.append(fresh)
            if len(self.buckets) > self.window_quanta:
                self.closed.add(self.buckets.popleft())
            self.cur = fresh
            self.bucket_start = self.next_tick
            self.next_tick += self.quantum
            self.last_tick_time = int(time.time())

    def command(self, name: str, seconds: float, handled: bool = True) -> None:
        cur = self.cur
        cur.messages += 1
        if handled:
            cur.commands += 1
            cur.command_runtime += seconds
            entry = cur.per_command.get(name)
            if entry is None:
                cur.per_command[name] = [1, seconds]
            else:
                entry[0] += 1
                entry[1] += seconds

    def timer(self, name: str, seconds: float) -> None:
        cur = self.cur
        cur.timers += 1
        cur.timer_runtime += seconds
        entry = cur.per_timer.setdefault(name, [0, 0.0])
        entry[0] += 1
        entry[1] += seconds

    def signal(self) -> None:
        self.cur.signals += 1

    def sample_self(self) -> dict[str, Any]:
        """HTCondor's self monitoring (MonitorSelf*): CPU use since the last sample (percent of
        one CPU), image size and RSS in KiB, age in seconds."""
        from htcd.daemon.log import DaemonLogHandler

        lines = DaemonLogHandler.lines_written
        self.cur.debug_outs += lines - self._debug_mark
        self._debug_mark = lines
        now = time.time()
        try:
            with self._process.oneshot():
                cpu = self._process.cpu_times()
                mem = self._process.memory_info()
                created = self._process.create_time()
        except psutil.Error:
            return self.monitor
        used = cpu.user + cpu.system
        if self._cpu_prev is None:
            usage = 100.0 * used / max(1e-6, now - created)
        else:
            usage = 100.0 * (used - self._cpu_prev[1]) / max(1e-6, now - self._cpu_prev[0])
        self._cpu_prev = (now, used)
        self.monitor = {"MonitorSelfTime": int(now), "MonitorSelfCPUUsage": round(max(0.0, usage), 4),
                        "MonitorSelfImageSize": mem.vms // 1024, "MonitorSelfResidentSetSize": mem.rss // 1024,
                        "MonitorSelfAge": int(now - created), "_user": cpu.user, "_sys": cpu.system}
        return self.monitor

    # -- reading --------------------------------------------------------------------------------
    def recent(self) -> Counts:
        total = Counts()
        for b in self.buckets:
            total.add(b)
        return total

    def lifetime(self, recent: Counts | None = None) -> Counts:
        total = Counts()
        total.add(self.closed)
        total.add(self.recent() if recent is None else recent)
        return total

    def recent_lifetime(self) -> float:
        now = perf_counter()
        return min(now - self.init_mono, (len(self.buckets) - 1) * self.quantum + (now - self.bucket_start))

    @staticmethod
    def duty_cycle(c: Counts) -> float:
        if c.pump_count and c.pump_sum > 1e-9:
            return max(0.0, 1.0 - c.select_wait / c.pump_sum)
        return 0.0

    def attributes(self, flags: PublishFlags | None = None, sockets: int = 0) -> dict[str, Any]:
        """The statistics as ad attributes, at ``flags`` (default: as configured).  Within one loop
        iteration nothing changes, so the ads of many slots built together share one computation."""
        flags = self.flags if flags is None else flags
        self.tick()
        key = (flags, sockets, id(self.cur), self.cur.pump_count, self.cur.commands, self.cur.timers,
               id(self.monitor))
        if self._cached is not None and self._cached[0] == key:
            return self._cached[1]
        out = self._attributes(flags, sockets)
        self._cached = (key, out)
        return out

    def _attributes(self, flags: PublishFlags, sockets: int) -> dict[str, Any]:
        recent = self.recent()
        life = self.lifetime(recent)
        out: dict[str, Any] = {"DaemonCoreDutyCycle": round(self.duty_cycle(life), 6),
                               "RecentDaemonCoreDutyCycle": round(self.duty_cycle(recent), 6)}
        monitor = self.monitor or self.sample_self()
        out.update({k: v for k, v in monitor.items() if not k.startswith("_")})
        out["MonitorSelfRegisteredSocketCount"] = sockets
        if flags.level >= 2 and monitor:
            out["MonitorSelfUserCpuTime"] = round(monitor["_user"], 3)
            out["MonitorSelfSysCpuTime"] = round(monitor["_sys"], 3)
        if flags.level < 1:
            return out

        def pair(name: str, level: int, life_value: Any, recent_value: Any) -> None:
            if flags.level < level:
                return
            if flags.lifetime:
                out[name] = life_value
            if flags.recent:
                out["Recent" + name] = recent_value

        lifetime = int(perf_counter() - self.init_mono)
        recent_lifetime = int(self.recent_lifetime())
        pair("StatsLifetime", 1, lifetime, recent_lifetime)
        out["DCStatsLifetime"] = lifetime
        if flags.recent:
            out["DCRecentStatsLifetime"] = recent_lifetime
            out["RecentWindowMax"] = self.window
        if flags.level >= 2:
            out["DCStatsLastUpdateTime"] = int(time.time())
            if flags.recent:
                out["DCRecentStatsTickTime"] = self.last_tick_time
                out["DCRecentWindowMax"] = self.window
        pair("DCSelectWaittime", 1, round(life.select_wait, 6), round(recent.select_wait, 6))
        pair("DCPumpCycleCount", 1, life.pump_count, recent.pump_count)
        pair("DCPumpCycleSum", 1, round(life.pump_sum, 6), round(recent.pump_sum, 6))
        pair("DCCommands", 1, life.commands, recent.commands)
        pair("DCSockMessages", 1, life.messages, recent.messages)
        pair("DCSocketRuntime", 1, round(life.command_runtime, 6), round(recent.command_runtime, 6))
        pair("DCTimersFired", 1, life.timers, recent.timers)
        pair("DCTimerRuntime", 1, round(life.timer_runtime, 6), round(recent.timer_runtime, 6))
        pair("DCSignals", 1, life.signals, recent.signals)
        pair("DaemonCoreMaxBlockMs", 1, round(life.max_block * 1000, 3), round(recent.max_block * 1000, 3))
        pair("DaemonCoreMaxBlockCpuMs", 1, round(life.max_block_cpu * 1000, 3),
             round(recent.max_block_cpu * 1000, 3))
        pair("DaemonCoreMaxBlockWhat", 2, life.max_block_what, recent.max_block_what)
        pair("DCDebugOuts", 2, life.debug_outs, recent.debug_outs)
        for kind, life_map, recent_map in (("Command", life.per_command, recent.per_command),
                                           ("Timer", life.per_timer, recent.per_timer)):
            for name, (n, rt) in life_map.items():
                rn, rrt = recent_map.get(name, (0, 0.0))
                if not flags.zero and not n and not rn:
                    continue
                attr = f"DC{kind}_{_attr_name(name)}"
                pair(attr, 2, int(n), int(rn))
                pair(attr + "Runtime", 2, round(rt, 6), round(rrt, 6))
        return out

    def publish(self, ad: Any, flags: PublishFlags | None = None, sockets: int = 0) -> None:
        for k, v in self.attributes(flags, sockets).items():
            ad[k] = v

    def unpublish(self, ad: Any) -> None:
        """Remove every statistics attribute (before publishing at another level)."""
        every = self.attributes(PublishFlags(level=3), 0)
        for name in list(ad):
            if name in every:
                del ad[name]

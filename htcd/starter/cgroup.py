"""Per-job control groups: the job's processes, memory limit, usage and freezing, v2 or v1.

A job's group is ``<BASE_CGROUP>/<sandbox name>`` under the hierarchy root: cgroup v2 when its
mount offers the memory controller, else the v1 ``memory`` hierarchy (with ``freezer``,
``cpuacct`` and ``cpu`` beside it when mounted).  The group carries the job's memory limits and
its CPU weight (100 per CPU of the slot, as HTCondor's cpu.shares / cpu.weight), so jobs on one
machine share contended CPUs in proportion to the CPUs they were given.  What works is probed once per process by making the base
group; when nothing works (no cgroupfs, a container without write access) the starter falls
back to following the process tree by itself.  The job's first process joins its group before
it executes the job (it writes itself into ``cgroup.procs`` files the starter opened), so every
process it makes, double-forked or setsid'd, is in the group.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from htcd.classad import ClassAd
from htcd.classad.expr import parse_expr
from htcd.classad.parser import ClassAdSyntaxError
from htcd.daemon.pids import pid_alive

MOUNTS = "/proc/self/mounts"
_V1_CONTROLLERS = ("memory", "freezer", "cpuacct", "cpu")
CPU_WEIGHT_PER_CPU = 100  # HTCondor: the slot's Cpus times 100


@dataclass(frozen=True)
class Layout:
    """The cgroup hierarchies this machine offers: v2 (one mount) or v1 (one mount per controller)."""

    version: int
    mounts: dict[str, str] = field(default_factory=dict)  # v1: controller -> mount; v2: {"": mount}


def detect(mounts_file: str = MOUNTS) -> Layout | None:
    """The usable layout from the mount table: v2 with the memory controller, else v1 memory."""
    v2: list[str] = []
    v1: dict[str, str] = {}
    try:
        with open(mounts_file) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split()
        if len(parts) < 4:
            continue
        path, fstype, opts = parts[1], parts[2], parts[3].split(",")
        if fstype == "cgroup2":
            v2.append(path)
        elif fstype == "cgroup":
            for c in _V1_CONTROLLERS:
                if c in opts:
                    v1.setdefault(c, path)
    for path in v2:
        with contextlib.suppress(OSError), open(os.path.join(path, "cgroup.controllers")) as f:
            if "memory" in f.read().split():
                return Layout(2, {"": path})
    if "memory" in v1:
        return Layout(1, v1)
    return None


_probed: dict[str, Layout | None] = {}


def available(base: str, log_problem: Callable[[str], object] | None = None) -> Layout | None:
    """The layout if a job group can be made under ``base`` here (probed once per base)."""
    if base in _probed:
        return _probed[base]
    layout = detect()
    if layout is not None and "cpu" in layout.mounts:  # the CPU weight is optional: without it, no weight
        try:
            os.makedirs(os.path.join(layout.mounts["cpu"], base), exist_ok=True)
        except OSError as exc:
            if log_problem is not None:
                log_problem(f"the cpu cgroup hierarchy is not usable ({exc.strerror or exc}): jobs get no CPU weight")
            layout = Layout(1, {c: m for c, m in layout.mounts.items() if c != "cpu"})
    if layout is not None:
        try:
            for mount in layout.mounts.values():
                os.makedirs(os.path.join(mount, base), exist_ok=True)
            if layout.version == 2:
                _enable_controllers(layout.mounts[""], base)
        except OSError as exc:
            if log_problem is not None:
                log_problem(f"cgroups are not usable here ({exc.strerror or exc}): "
                            "following the job's processes without them")
            layout = None
    elif log_problem is not None:
        log_problem("no cgroup hierarchy with the memory controller: following the job's processes without one")
    _probed[base] = layout
    return layout


def _enable_controllers(mount: str, base: str) -> None:
    """v2 delegates a controller level by level: turn memory (and cpu, when the kernel offers it)
    on from the root down to ``base`` and in ``base`` itself, for the job groups below it."""
    path = mount
    for part in [*(p for p in base.split("/") if p), ""]:
        control = os.path.join(path, "cgroup.subtree_control")
        with open(control) as f:
            on = f.read().split()
        with open(os.path.join(path, "cgroup.controllers")) as f:
            offered = f.read().split()
        for controller in ("memory", "cpu"):
            if controller not in on and controller in offered:
                try:
                    with open(control, "w") as f:
                        f.write(f"+{controller}")
                except OSError:
                    if controller == "memory":
                        raise
                    break  # no CPU weight then (the kernel refuses cpu, e.g. with realtime tasks about)
        if part:
            path = os.path.join(path, part)


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def _write(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _keyed(text: str) -> dict[str, int]:
    out = {}
    for line in text.splitlines():
        k, _, v = line.partition(" ")
        with contextlib.suppress(ValueError):
            out[k] = int(v)
    return out


class JobCgroup:
    """One job's group (in each v1 hierarchy, or the one v2 group)."""

    def __init__(self, layout: Layout, base: str, name: str) -> None:
        self.layout = layout
        self.rel = os.path.join(base, name)
        self.paths = {c: os.path.join(m, self.rel) for c, m in layout.mounts.items()}
        self.limit_bytes = -1  # the hard limit set, if any

    @classmethod
    def at(cls, paths: dict[str, str], version: int) -> JobCgroup:
        """A group found again from the paths a state file recorded (orphan cleanup)."""
        self = cls.__new__(cls)
        self.layout = Layout(version, {})
        self.rel = ""
        self.paths = dict(paths)
        self.limit_bytes = -1
        return self

    def _file(self, controller: str, name: str) -> str:
        key = "" if self.layout.version == 2 else controller
        return os.path.join(self.paths.get(key, ""), name)

    def create(self) -> None:
        for path in self.paths.values():
            os.makedirs(path, exist_ok=True)

    def set_memory(self, hard_mb: int | None, soft_mb: int | None, no_swap: bool, low_mb: int | None = None) -> None:
        """Apply the limits (MB); None leaves one unset.  ``low_mb`` is v2's memory.low (v1 has none)."""
        v2 = self.layout.version == 2
        if low_mb and v2:
            _write(self._file("memory", "memory.low"), str(low_mb * 1024 * 1024))
        if hard_mb:
            self.limit_bytes = hard_mb * 1024 * 1024
            _write(self._file("memory", "memory.max" if v2 else "memory.limit_in_bytes"), str(self.limit_bytes))
            swap = self._file("memory", "memory.swap.max" if v2 else "memory.memsw.limit_in_bytes")
            if no_swap and os.path.exists(swap):
                with contextlib.suppress(OSError):
                    _write(swap, "0" if v2 else str(self.limit_bytes))
        if soft_mb:
            _write(self._file("memory", "memory.high" if v2 else "memory.soft_limit_in_bytes"),
                   str(soft_mb * 1024 * 1024))

    def has_cpu(self) -> bool:
        """Can this group carry a CPU weight (v1 ``cpu`` mounted; v2 ``cpu`` delegated)?"""
        if self.layout.version == 2:
            return os.path.exists(self._file("", "cpu.weight"))
        return "cpu" in self.paths

    def set_cpu_weight(self, cpus: float) -> int:
        """The group's share of contended CPU: ``cpus`` times 100 (v1 cpu.shares, v2 cpu.weight,
        whose range is 1..10000); the value written."""
        if self.layout.version == 2:
            weight = max(1, min(10000, round(cpus * CPU_WEIGHT_PER_CPU)))
            _write(self._file("", "cpu.weight"), str(weight))
        else:
            weight = max(2, round(cpus * CPU_WEIGHT_PER_CPU))
            _write(self._file("cpu", "cpu.shares"), str(weight))
        return weight

    def cpu_weight(self) -> int:
        name = ("", "cpu.weight") if self.layout.version == 2 else ("cpu", "cpu.shares")
        with contextlib.suppress(OSError, ValueError):
            return int(_read(self._file(*name)).strip())
        return 0

    def open_joins(self) -> list[int]:
        """Open ``cgroup.procs`` of each hierarchy for the job's first process to write itself into
        (opened here, as root: the kernel checks the opener's rights)."""
        fds = []
        try:
            for path in self.paths.values():
                fds.append(os.open(os.path.join(path, "cgroup.procs"), os.O_WRONLY | os.O_CLOEXEC))
        except OSError:
            for fd in fds:
                os.close(fd)
            raise
        return fds

    def procs(self) -> list[int]:
        pids: set[int] = set()
        for path in self.paths.values():
            with contextlib.suppress(OSError):
                pids.update(int(p) for p in _read(os.path.join(path, "cgroup.procs")).split())
        return sorted(pids)

    def memory_bytes(self) -> int:
        """Memory the job uses now, without the page cache (as HTCondor's CGROUP_IGNORE_CACHE_MEMORY)."""
        with contextlib.suppress(OSError):
            stat = _keyed(_read(self._file("memory", "memory.stat")))
            if self.layout.version == 2:
                return stat.get("anon", 0) + stat.get("kernel_stack", 0)
            return stat.get("total_rss", stat.get("rss", 0)) + stat.get("total_mapped_file", 0)
        return 0

    def peak_bytes(self) -> int:
        name = "memory.peak" if self.layout.version == 2 else "memory.max_usage_in_bytes"
        with contextlib.suppress(OSError, ValueError):
            return int(_read(self._file("memory", name)).strip())
        return 0

    def oom_kills(self) -> int:
        """How many times the kernel's OOM killer struck inside the group."""
        name = "memory.events" if self.layout.version == 2 else "memory.oom_control"
        with contextlib.suppress(OSError):
            return _keyed(_read(self._file("memory", name))).get("oom_kill", 0)
        return 0

    def cpu_seconds(self) -> tuple[float, float] | None:
        """(user, system) CPU seconds of every process the group ever held, dead ones included."""
        try:
            if self.layout.version == 2:
                stat = _keyed(_read(self._file("", "cpu.stat")))
                return stat.get("user_usec", 0) / 1e6, stat.get("system_usec", 0) / 1e6
            if "cpuacct" not in self.paths:
                return None
            stat = _keyed(_read(self._file("cpuacct", "cpuacct.stat")))
        except OSError:
            return None
        hz = os.sysconf("SC_CLK_TCK")
        return stat.get("user", 0) / hz, stat.get("system", 0) / hz

    def can_freeze(self) -> bool:
        return self.layout.version == 2 or "freezer" in self.paths

    def freeze(self, frozen: bool) -> None:
        """Freeze or thaw; a thaw is checked and repeated, since a group left frozen would keep
        its processes (and their SIGKILLs) forever."""
        if self.layout.version == 2:
            path, value, want = self._file("", "cgroup.freeze"), ("1" if frozen else "0"), None
        else:
            path, value = self._file("freezer", "freezer.state"), ("FROZEN" if frozen else "THAWED")
            want = None if frozen else "THAWED"
        for _ in range(100 if want else 1):
            _write(path, value)
            if want is None or _read(path).strip() == want:
                return
        raise OSError(errno.EBUSY, f"{path} stays {_read(path).strip()}")

    def kill_all(self) -> int:
        """SIGKILL every process in the group (frozen meanwhile, so none can fork away); how many."""
        killed = 0
        kill_file = self._file("", "cgroup.kill") if self.layout.version == 2 else ""
        if kill_file and os.path.exists(kill_file):
            pids = self.procs()
            with contextlib.suppress(OSError):
                _write(kill_file, "1")
                return len(pids)
        frozen = False
        if self.can_freeze():
            with contextlib.suppress(OSError):
                self.freeze(True)
                frozen = True
        for _ in range(10):
            pids = self.procs()
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
                    killed += 1
            if frozen:
                break  # a frozen group cannot fork: one pass reaches everyone
        if frozen:
            with contextlib.suppress(OSError):
                self.freeze(False)  # SIGKILL takes effect once thawed
        return killed

    def remove(self) -> bool:
        """rmdir each group; False while some process is still on its way out (EBUSY)."""
        done = True
        for path in self.paths.values():
            try:
                os.rmdir(path)
            except FileNotFoundError:
                pass
            except OSError as exc:
                if exc.errno != errno.EBUSY:
                    raise
                done = False
        return done



_JOB_GROUP = re.compile(r"dir_(\d+)_\d+_\d+")  # a sandbox's name: dir_<startd pid>_<slot id>_<ns>


def sweep_stale(paths: dict[str, str], log: logging.Logger | None = None) -> int:
    """Remove the empty job groups beside the job group at ``paths`` whose startd is gone (one
    killed, or stopped before its jobs' groups emptied, leaves them with no one to remove them);
    how many were removed.  Groups of a running startd, and groups still holding processes, stay."""
    removed = 0
    for path in paths.values():
        parent = os.path.dirname(path)
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        for name in names:
            m = _JOB_GROUP.fullmatch(name)
            if m is None or int(m.group(1)) == os.getpid() or pid_alive(int(m.group(1))):
                continue
            try:
                os.rmdir(os.path.join(parent, name))
            except OSError:  # still has processes (EBUSY), or removed meanwhile
                continue
            removed += 1
            if log is not None:
                log.info("removed the empty cgroup %s its startd (pid %s) left", os.path.join(parent, name), m.group(1))
    return removed


    return True

MEMORY_POLICIES = ("hard", "soft", "none", "custom")


def apply_policy(group: JobCgroup, config: Any, job: ClassAd, machine: ClassAd | None, limit_mb: int,
                 log: logging.Logger) -> None:
    """The job's CPU weight and memory limits, as HTCondor's starter sets them.

    CPU: the slot's Cpus (else RequestCpus) times 100.  Memory (CGROUP_MEMORY_LIMIT_POLICY,
    ``limit_mb`` is the slot's Memory): ``hard`` = hard limit at the slot size (v1 also a soft
    limit at 90% of it); ``soft`` = soft limit at the slot size, hard limit at the whole machine's
    memory; ``custom`` = hard limit from CGROUP_HARD_MEMORY_LIMIT_EXPR; ``none`` = no limit.
    CGROUP_LOW_MEMORY_LIMIT sets memory.low (v2).  Expressions are evaluated with the slot as MY
    and the job as TARGET; their numbers are megabytes, like the Memory they are written from."""
    def knob(name: str, default: str = "") -> str:
        return str(config.get(name, default) or default) if config is not None else default

    cpus = _number(machine.eval("Cpus")) if machine is not None else None
    cpus = cpus or _number(job.eval("RequestCpus")) or 1
    if group.has_cpu():
        log.info("cgroup %s: CPU weight %d (%g cpus)", group.rel, group.set_cpu_weight(cpus), cpus)
    policy = knob("CGROUP_MEMORY_LIMIT_POLICY", "hard").strip().lower()
    if policy not in MEMORY_POLICIES:
        log.error("CGROUP_MEMORY_LIMIT_POLICY = %s is not hard, soft, custom or none: using hard", policy)
        policy = "hard"
    no_swap = config is None or config.get_bool("DISABLE_SWAP_FOR_JOB", True)
    hard: int | None = None
    soft: int | None = None
    if policy == "hard" and limit_mb > 0:
        hard = limit_mb
        soft = limit_mb * 9 // 10 if group.layout.version == 1 else None
    elif policy == "soft" and limit_mb > 0:
        soft = limit_mb
        whole = _number(machine.eval("TotalMemory")) if machine is not None else None
        hard = int(whole) if whole and whole > limit_mb else None
    elif policy == "custom":
        hard = _limit_from(knob("CGROUP_HARD_MEMORY_LIMIT_EXPR"), "CGROUP_HARD_MEMORY_LIMIT_EXPR", machine, job, log)
        if hard is None:
            log.error("CGROUP_MEMORY_LIMIT_POLICY = custom without a usable CGROUP_HARD_MEMORY_LIMIT_EXPR: "
                      "the job's cgroup has no hard memory limit")
    low = _limit_from(knob("CGROUP_LOW_MEMORY_LIMIT"), "CGROUP_LOW_MEMORY_LIMIT", machine, job, log)
    if low is not None and group.layout.version == 1:
        log.warning("CGROUP_LOW_MEMORY_LIMIT: cgroup v1 has no memory.low; not set")
        low = None
    group.set_memory(hard, soft, no_swap, low)
    if hard or soft or low:
        log.info("cgroup %s: memory policy %s: hard %s MB, soft %s MB, low %s MB", group.rel, policy, hard, soft, low)


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _limit_from(text: str, knob: str, machine: ClassAd | None, job: ClassAd, log: logging.Logger) -> int | None:
    """A knob's ClassAd expression as megabytes (None when unset, or not a positive number: logged)."""
    if not text.strip():
        return None
    try:
        value = parse_expr(text).eval(machine if machine is not None else ClassAd(), job)
    except ClassAdSyntaxError as exc:
        log.error("%s = %s cannot be parsed (%s): not used", knob, text, exc)
        return None
    number = _number(value)
    if number is None or number <= 0:
        log.error("%s = %s evaluates to %r, not a positive number of megabytes: not used", knob, text, value)
        return None
    return int(number)

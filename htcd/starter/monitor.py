"""Finding and measuring every process a job made.

With a cgroup the group's member list is the truth.  Without one, the job's tree is its session
(the job leads a new one), the descendants of those processes, and, at cleanup, any process
started since the job whose environment carries the job's marker (its ``_CONDOR_SCRATCH_DIR``),
which finds double-forked and setsid'd processes that left both the session and the tree.
Sampling reads /proc only when called (on STARTER_UPDATE_INTERVAL), never in a loop.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable

import psutil

from htcd.starter.cgroup import JobCgroup

MARKER = "_CONDOR_SCRATCH_DIR"


def session_members(sid: int) -> list[int]:
    """Processes of session ``sid`` (the job leads its own session)."""
    out = []
    for pid in psutil.pids():
        with contextlib.suppress(OSError):
            if os.getsid(pid) == sid:
                out.append(pid)
    return out


def tree(root: int | None, cgroup: JobCgroup | None) -> list[psutil.Process]:
    """The job's live processes now."""
    if cgroup is not None:
        pids: Iterable[int] = cgroup.procs()
    elif root:
        pids = set(session_members(root))
        for pid in [*pids, root]:
            with contextlib.suppress(psutil.Error):
                pids.update(c.pid for c in psutil.Process(pid).children(recursive=True))
    else:
        pids = ()
    procs = []
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            procs.append(psutil.Process(pid))
    return procs


def marked(marker: str, since: float, uid: int | None) -> list[psutil.Process]:
    """Processes started at or after ``since`` (epoch s) whose environment carries ``marker`` as
    the job's _CONDOR_SCRATCH_DIR; only the job's user's processes are read when it is known."""
    found = []
    me = os.getpid()
    for proc in psutil.process_iter(["pid", "create_time", "uids"]):
        try:
            if proc.pid == me or (proc.info["create_time"] or 0) < since - 1:
                continue
            if uid is not None and proc.info["uids"] is not None and proc.info["uids"].real != uid:
                continue
            if proc.environ().get(MARKER) == marker:
                found.append(proc)
        except (psutil.Error, OSError):
            continue
    return found


def user_processes(uid: int) -> list[psutil.Process]:
    """Every process of ``uid`` (an account dedicated to jobs: all of them are the job's)."""
    out = []
    for proc in psutil.process_iter(["uids"]):
        with contextlib.suppress(psutil.Error):
            if proc.info["uids"] is not None and proc.info["uids"].real == uid and proc.pid != os.getpid():
                out.append(proc)
    return out


def kill(procs: Iterable[psutil.Process]) -> int:
    n = 0
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.kill()
            n += 1
    return n


def disk_kib(path: str) -> int:
    total = 0
    for root, _dirs, names in os.walk(path):
        for n in names:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, n)).st_blocks * 512
    return (total + 1023) // 1024


def sample(procs: list[psutil.Process], cgroup: JobCgroup | None, sandbox: str,
           reaped: tuple[float, float] = (0.0, 0.0)) -> dict[str, int | float]:
    """Usage as the job ad spells it: ImageSize, ResidentSetSize, DiskUsage in KiB,
    RemoteUserCpu, RemoteSysCpu in seconds, MemoryUsage in MB (rounded up)."""
    rss = vms = 0
    user = sys_ = 0.0
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            mem, cpu = proc.memory_info(), proc.cpu_times()
            rss, vms = rss + mem.rss, vms + mem.vms
            user, sys_ = user + cpu.user + cpu.children_user, sys_ + cpu.system + cpu.children_system
    if cgroup is not None:
        rss = max(rss, cgroup.memory_bytes())
        cpu_total = cgroup.cpu_seconds()
        if cpu_total is not None:
            user, sys_ = max(user, cpu_total[0]), max(sys_, cpu_total[1])
    user, sys_ = max(user, reaped[0]), max(sys_, reaped[1])
    rss_kib = rss // 1024
    return {"ImageSize": max(vms // 1024, rss_kib), "ResidentSetSize": rss_kib,
            "MemoryUsage": (rss_kib + 1023) // 1024, "DiskUsage": disk_kib(sandbox) if sandbox else 0,
            "RemoteUserCpu": round(user, 2), "RemoteSysCpu": round(sys_, 2)}

"""The job's sandbox under EXECUTE, its state file, and cleaning up after a crashed startd.

A sandbox is ``dir_<startd pid>_<slot id>_<ns>`` (0700, owned by the job's user).  Beside it,
``<sandbox>.state`` records what a restarted startd needs to find the job's leftovers: the
process group, the cgroup, the user and the start time.  ``clean_orphans`` reads every state
file at start-up, kills what is left of those jobs (by cgroup, else by process group and the
sandbox marker in the environment) and removes the sandboxes.  Files a job wrote outside its
sandbox are not tracked.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import time
from typing import Any

import psutil

from htcd.starter import monitor
from htcd.starter.cgroup import JobCgroup


def _read_umask() -> int:
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


_UMASK = _read_umask()  # read once, at import (os.umask can only be read by setting it)


def new_path(execute_dir: str, slot_id: int) -> str:
    """A fresh sandbox's name under EXECUTE (nothing is made yet)."""
    return os.path.join(os.path.abspath(execute_dir), f"dir_{os.getpid()}_{slot_id}_{time.monotonic_ns()}")


def make(execute_dir: str, slot_id: int, uid: int | None, gid: int | None) -> str:
    path = new_path(execute_dir, slot_id)
    make_at(path, execute_dir, uid, gid)
    return path


def make_at(path: str, execute_dir: str, uid: int | None, gid: int | None) -> None:
    """Make the sandbox ``path``: one mkdir when EXECUTE exists and the umask leaves 0700 alone
    (a chmod only when it does not, a chown only for a job of another user)."""
    try:
        os.mkdir(path, 0o700)
    except FileNotFoundError:  # EXECUTE itself is missing (first job, or removed meanwhile)
        os.makedirs(execute_dir, exist_ok=True)
        os.mkdir(path, 0o700)
    if _UMASK & 0o700:
        os.chmod(path, 0o700)  # whatever the umask
    if uid is not None and gid is not None:
        os.chown(path, uid, gid)


def chown_tree(path: str, uid: int | None, gid: int | None) -> None:
    """Give everything the starter wrote into the sandbox to the job's user."""
    if uid is None or gid is None:
        return
    for root, dirs, files in os.walk(path):
        for n in [root, *(os.path.join(root, d) for d in dirs), *(os.path.join(root, f) for f in files)]:
            os.lchown(n, uid, gid)


def state_path(sandbox: str) -> str:
    return sandbox + ".state"


def write_state(sandbox: str, **info: Any) -> None:
    """Write the state file atomically (a new file renamed over the old): a startd that crashes
    meanwhile finds the old state or the new, never half of one.  No fsync: the file matters only
    while this boot's processes may live, and a reboot ends them all."""
    tmp = state_path(sandbox) + ".new"
    with open(tmp, "w") as f:
        json.dump({"sandbox": sandbox, "startd_pid": os.getpid(), **info}, f)
    os.replace(tmp, state_path(sandbox))


def remove(sandbox: str) -> None:
    shutil.rmtree(sandbox, ignore_errors=True)
    remove_state(sandbox)


def remove_state(sandbox: str) -> None:
    """The job's processes, sandbox and cgroup are gone: nothing is left for a restart to clean."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(state_path(sandbox))


def clean_orphans(execute_dir: str, log: logging.Logger) -> int:
    """After a crash: kill what the jobs of earlier startds left running, remove their sandboxes
    and cgroups; the number of sandboxes removed."""
    cleaned = 0
    try:
        names = sorted(os.listdir(execute_dir))
    except FileNotFoundError:
        return 0
    for name in names:
        path = os.path.join(execute_dir, name)
        if name.endswith((".state", ".state.new")):
            with contextlib.suppress(OSError, ValueError):
                with open(path) as f:
                    state = json.load(f)
                if isinstance(state, dict) and not _alive_elsewhere(state):
                    kill_leftovers(state, log)
            with contextlib.suppress(OSError):
                os.unlink(path)
    for name in names:
        path = os.path.join(execute_dir, name)
        if name.startswith("dir_") and os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
            log.info("removed orphaned sandbox %s", path)
            cleaned += 1
    return cleaned


def _alive_elsewhere(state: dict[str, Any]) -> bool:
    """The state file of a startd still running (not this one): not an orphan."""
    pid = state.get("startd_pid")
    if not isinstance(pid, int) or pid == os.getpid():
        return False
    with contextlib.suppress(psutil.Error):
        return psutil.Process(pid).is_running() and "htcd" in " ".join(psutil.Process(pid).cmdline())
    return False


def kill_leftovers(state: dict[str, Any], log: logging.Logger) -> int:
    """Kill every process of the job ``state`` describes; how many."""
    sandbox = str(state.get("sandbox") or "")
    killed = 0
    cg = state.get("cgroup")
    if isinstance(cg, dict) and cg.get("paths"):
        group = JobCgroup.at(cg["paths"], int(cg.get("version", 1)))
        killed += group.kill_all()
        for _ in range(50):
            if group.remove():
                break
            time.sleep(0.02)  # start-up only: the killed processes leave the group within moments
    pgid = state.get("pgid")
    if isinstance(pgid, int) and pgid > 1:
        for proc in psutil.process_iter(["pid"]):
            with contextlib.suppress(psutil.Error, OSError):
                if os.getpgid(proc.pid) == pgid and proc.environ().get(monitor.MARKER) == sandbox:
                    proc.kill()
                    killed += 1
    if sandbox:
        killed += monitor.kill(monitor.marked(sandbox, float(state.get("start", 0) or 0), state.get("uid")))
    if killed:
        log.info("killed %d orphaned job processes of %s", killed, sandbox)
    return killed

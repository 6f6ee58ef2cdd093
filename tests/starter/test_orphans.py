"""clean_orphans: what a crashed startd's jobs left (processes, sandboxes, cgroups) is removed at
the next start, and only that."""

from __future__ import annotations

import logging
import os
import subprocess
from pathlib import Path

import psutil
import pytest
from pooltools import wait_for

from htcd.starter import cgroup as cgroups
from htcd.starter import sandbox
from htcd.universe import join_cgroup

LOG = logging.getLogger("test-orphans")
CGROUPS = os.geteuid() == 0 and cgroups.available("htcd") is not None


def dead(proc: subprocess.Popen) -> bool:
    return proc.poll() is not None


@pytest.mark.parametrize("use_cgroup", [pytest.param(True, marks=pytest.mark.skipif(
    not CGROUPS, reason="no usable cgroup hierarchy here")), False])
def test_orphans_of_a_crashed_startd_are_killed(pool_dir: Path, use_cgroup: bool) -> None:
    execute = pool_dir / "execute"
    box = sandbox.make(str(execute), 1, None, None)
    group = None
    fds: tuple[int, ...] = ()
    if use_cgroup:
        layout = cgroups.available("htcd")
        assert layout is not None
        group = cgroups.JobCgroup(layout, "htcd", os.path.basename(box))
        group.create()
        fds = tuple(group.open_joins())
    env = {**os.environ, "_CONDOR_SCRATCH_DIR": box}
    # the job, and a process that left its group and session (setsid) but kept the marker
    job = subprocess.Popen(["sleep", "300"], env=env, start_new_session=True, preexec_fn=join_cgroup(fds))
    escaped = subprocess.Popen(["setsid", "sleep", "301"], env=env, preexec_fn=join_cgroup(fds))
    for fd in fds:
        os.close(fd)
    bystander = subprocess.Popen(["sleep", "302"], start_new_session=True)  # not the job's: left alone
    try:
        sandbox.write_state(box, pgid=job.pid, start=psutil.Process(job.pid).create_time(), uid=None,
                            cgroup={"paths": group.paths, "version": group.layout.version} if group else None,
                            startd_pid=999999999)
        assert sandbox.clean_orphans(str(execute), LOG) == 1
        wait_for(lambda: dead(job) and dead(escaped), 30, "the orphaned processes to be killed")
        assert not os.path.exists(box) and not os.path.exists(box + ".state")
        if group is not None:
            assert not any(os.path.exists(p) for p in group.paths.values())
        assert bystander.poll() is None
    finally:
        for p in (job, escaped, bystander):
            p.kill()
            p.wait()


def test_sandboxes_left_without_processes_are_removed(pool_dir: Path) -> None:
    """A sandbox whose job left no process (or whose startd was this one) is removed all the same."""
    execute = pool_dir / "execute"
    box = sandbox.make(str(execute), 1, None, None)
    sandbox.write_state(box, pgid=None, start=0, uid=None, cgroup=None)  # our own pid: not alive elsewhere
    assert sandbox.clean_orphans(str(execute), LOG) == 1
    assert not os.path.exists(box)

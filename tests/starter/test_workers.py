"""The starter's file work off the startd's loop: the worker pool keeps each job's steps in
order (a cancelled step still ends before the job's clean-up), the state file a restart cleans
up by exists before the job's first process and is gone after it, and a sandbox is 0700
whatever the umask."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import threading
from pathlib import Path

import pytest
from starter.starter_tools import LOG, make_config, shell_job, vanilla

from htcd.starter import cgroup as cgroups
from htcd.starter import sandbox, workers
from htcd.starter.starter import Starter

CGROUPS = os.geteuid() == 0 and cgroups.available("htcd") is not None


def test_a_step_runs_in_the_pool_and_a_cancelled_one_ends_before_the_cancel() -> None:
    release = threading.Event()
    done: list[str] = []

    def slow_step() -> None:
        release.wait(30)
        done.append("written")

    async def main() -> tuple[int, list[str]]:
        where = await workers.run(threading.get_ident)
        task = asyncio.ensure_future(workers.run(slow_step))
        await asyncio.sleep(0)  # let the step reach the pool
        task.cancel()
        asyncio.get_running_loop().call_soon(release.set)  # the step ends only after the cancel
        with pytest.raises(asyncio.CancelledError):
            await task
        return where, list(done)

    where, seen = asyncio.run(main())
    assert where != threading.get_ident(), "the step ran on the loop's thread"
    assert seen == ["written"], "the cancelled caller went on before its step had ended"


def test_a_sandbox_is_0700_whatever_the_umask_and_execute_is_made(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    execute = tmp_path / "missing" / "execute"
    box = sandbox.make(str(execute), 1, None, None)
    assert execute.is_dir() and stat.S_IMODE(os.stat(box).st_mode) == 0o700
    old = os.umask(0o777)
    try:
        monkeypatch.setattr(sandbox, "_UMASK", 0o777)
        strict = sandbox.make(str(execute), 2, None, None)
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(strict).st_mode) == 0o700, "a umask that masks the owner's bits is undone"


@pytest.mark.parametrize("use_cgroup", [pytest.param(True, marks=pytest.mark.skipif(
    not CGROUPS, reason="no usable cgroup hierarchy here")), False])
def test_the_state_file_is_there_while_the_job_runs_and_gone_after(pool_dir: Path, execute_dir: Path,
                                                                    use_cgroup: bool) -> None:
    """The job reads its own state file: it names the sandbox and the cgroup (with a cgroup) or,
    without one, gains the job's process group once the job has started."""
    execute = execute_dir
    script = ('S="$_CONDOR_SCRATCH_DIR.state"; '
              + ('n=0; while ! grep -q \'"pgid": [0-9]\' "$S" && [ $n -lt 600 ]; do sleep 0.05; n=$((n+1)); done; '
                 if not use_cgroup else "")
              + 'cat "$S"')
    cfg = make_config(pool_dir, "" if use_cgroup else "BASE_CGROUP =\n")
    s = Starter(shell_job(script), "slot1_1@test", 1001, str(execute), vanilla(), LOG, config=cfg)
    result = asyncio.run(s.run())
    state = json.loads(result["stdout"])
    assert state["sandbox"] == s.sandbox and state["startd_pid"] == os.getpid()
    if use_cgroup:
        assert state["cgroup"] and state["cgroup"]["paths"], state
        assert state["pgid"] is None, "with a cgroup the state is written once, before the job"
    else:
        assert state["cgroup"] is None and state["pgid"] == s.pid, state
    assert not os.path.exists(s.sandbox) and not os.path.exists(sandbox.state_path(s.sandbox))
    assert not any(execute.iterdir()), list(execute.iterdir())


@pytest.mark.parametrize("use_cgroup", [pytest.param(True, marks=pytest.mark.skipif(
    not CGROUPS, reason="no usable cgroup hierarchy here")), False])
def test_the_job_gets_its_core_limit_and_the_startd_keeps_its_own(pool_dir: Path, execute_dir: Path,
                                                                  use_cgroup: bool) -> None:
    """Without a cgroup the job is spawned with no preexec_fn, its core limit inherited from the
    startd for the moment of the spawn: the job has it, the startd's own limit is back after."""
    import resource

    before = resource.getrlimit(resource.RLIMIT_CORE)
    cfg = make_config(pool_dir, "" if use_cgroup else "BASE_CGROUP =\n")
    job = shell_job("grep 'core file' /proc/self/limits", CoreSize=4096000)
    s = Starter(job, "slot1_1@test", 1001, str(execute_dir), vanilla(), LOG, config=cfg)
    out = asyncio.run(s.run())["stdout"].decode().split()
    hard = before[1]
    wanted = 4096000 if hard == resource.RLIM_INFINITY or hard >= 4096000 else hard
    assert out[4] == str(wanted), out
    assert resource.getrlimit(resource.RLIMIT_CORE) == before

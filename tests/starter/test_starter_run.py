"""The starter on real processes: sandbox, user, environment, usage samples, memory limits,
signals and clean-up of every process the job made."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import psutil
import pytest
from pooltools import wait_for
from starter.starter_tools import LOG, make_config, needs_root, shell_job, until, vanilla

from htcd.starter import cgroup as cgroups
from htcd.starter.starter import Starter

PY = "/usr/bin/python3"  # an interpreter every account may run
CGROUPS = os.geteuid() == 0 and cgroups.available("htcd") is not None
needs_cgroups = pytest.mark.skipif(not CGROUPS, reason="no usable cgroup hierarchy with the memory controller here")


EXECUTE: list[Path] = []


@pytest.fixture(autouse=True)
def _execute(execute_dir: Path) -> None:
    EXECUTE[:] = [execute_dir]


def starter(tmp: Path, job, cfg_text: str = "", **kw) -> Starter:
    cfg = make_config(tmp, cfg_text)
    return Starter(job, "slot1_1@test", 1001, str(EXECUTE[0]), vanilla(), LOG, config=cfg, **kw)


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@needs_root
def test_sandbox_user_and_environment(pool_dir: Path) -> None:
    job = shell_job('stat -c "%a %U" .; id -un; echo "S=$_CONDOR_SCRATCH_DIR"; echo "SLOT=$_CONDOR_SLOT"; '
                    'echo "FOO=$FOO"; echo "OMP=$OMP_NUM_THREADS"; echo "PWD=$PWD"',
                    Owner="daemon", User="daemon@example.org", Environment="FOO=bar", RequestCpus=2)
    s = starter(pool_dir, job, "UID_DOMAIN = example.org\n")
    result = asyncio.run(s.run())
    out = result["stdout"].decode().splitlines()
    assert out[0] == "700 daemon" and out[1] == "daemon", out
    env = dict(line.split("=", 1) for line in out[2:])
    assert env["S"] == env["PWD"] == s.sandbox and os.path.basename(s.sandbox).startswith("dir_")
    assert env["SLOT"] == "slot1_1" and env["FOO"] == "bar" and env["OMP"] == "2"
    assert not os.path.exists(s.sandbox) and not os.path.exists(s.sandbox + ".state")


@needs_root
def test_a_root_owned_job_runs_as_nobody(pool_dir: Path) -> None:
    s = starter(pool_dir, shell_job("id -un"), "UID_DOMAIN = example.org\n")
    assert asyncio.run(s.run())["stdout"].decode().strip() == "nobody"


@pytest.mark.parametrize("use_cgroup", [pytest.param(True, marks=needs_cgroups), False])
def test_every_process_is_cleaned_up(pool_dir: Path, use_cgroup: bool) -> None:
    """A job that leaves a setsid'd, double-forked grandchild behind: it is gone after the job."""
    job = shell_job("setsid sh -c 'sleep 300 & echo $! > pid; wait' & sleep 0.2; "
                    "while [ ! -s pid ]; do sleep 0.05; done; cat pid")
    s = starter(pool_dir, job, "" if use_cgroup else "BASE_CGROUP =\n")
    result = asyncio.run(s.run())
    assert result["exit_code"] == 0, result
    pid = int(result["stdout"].decode().strip())
    wait_for(lambda: gone(pid), 10, f"the job's grandchild {pid} to die of its SIGKILL")
    assert (s.cgroup is not None) == use_cgroup
    if s.cgroup is not None:
        assert not any(os.path.exists(p) for p in s.cgroup.paths.values())
    assert not os.path.exists(s.sandbox)


def test_periodic_usage_updates(pool_dir: Path) -> None:
    """A CPU-burning job: samples reach on_update and the job ad (RemoteUserCpu, ResidentSetSize)."""
    samples: list[dict] = []
    job = shell_job(f"exec {PY} -c 'import time\nwhile time.process_time() < 1.5: sum(range(20000))'")
    s = starter(pool_dir, job, "STARTER_UPDATE_INTERVAL = 1\nSTARTER_INITIAL_UPDATE_INTERVAL = 1\n",
                on_update=samples.append)
    result = asyncio.run(s.run())
    assert result["exit_code"] == 0
    assert samples, "no periodic sample"
    assert samples[-1]["RemoteUserCpu"] > 0 and samples[-1]["ResidentSetSize"] > 0
    assert set(samples[-1]) >= {"ImageSize", "ResidentSetSize", "RemoteUserCpu", "RemoteSysCpu", "DiskUsage",
                                "MemoryUsage"}
    assert job.get_value("RemoteUserCpu") > 0 and job.get_value("ResidentSetSize") > 0
    assert result["user_cpu"] >= 1.0 and result["max_rss_kb"] > 0


ALLOC = f"exec {PY} -c 'import time\nx = bytearray(250 * 1024 * 1024)\nx[::4096] = b\"1\" * len(x[::4096])\ntime.sleep(60)'"


@needs_cgroups
def test_hard_cgroup_limit_holds_the_job(pool_dir: Path) -> None:
    s = starter(pool_dir, shell_job(ALLOC), "STARTER_UPDATE_INTERVAL = 1\nSTARTER_INITIAL_UPDATE_INTERVAL = 1\n",
                memory_mb=64)
    result = asyncio.run(asyncio.wait_for(s.run(), 60))
    assert result["hold_code"] == 34 and result["hold_subcode"] == 102
    assert result["hold_reason"].startswith("Job has gone over cgroup memory limit of 64 megabytes. "
                                            "Last measured usage: ")
    assert result["hold_reason"].endswith("Consider resubmitting with a higher request_memory.")


def test_without_cgroups_the_monitor_enforces_the_limit(pool_dir: Path) -> None:
    s = starter(pool_dir, shell_job(ALLOC), "BASE_CGROUP =\nSTARTER_UPDATE_INTERVAL = 1\n"
                "STARTER_INITIAL_UPDATE_INTERVAL = 1\n", memory_mb=64)
    result = asyncio.run(asyncio.wait_for(s.run(), 60))
    assert s.cgroup is None and result["hold_code"] == 34
    assert result["hold_reason"].startswith("Job has gone over memory limit of 64 megabytes.")


def test_soft_policy_does_not_hold(pool_dir: Path) -> None:
    job = shell_job(f"exec {PY} -c 'x = bytearray(150 * 1024 * 1024); x[::4096] = b\"1\" * len(x[::4096])'")
    s = starter(pool_dir, job, "CGROUP_MEMORY_LIMIT_POLICY = soft\n", memory_mb=64)
    result = asyncio.run(asyncio.wait_for(s.run(), 60))
    assert result["exit_code"] == 0 and not result["hold_reason"], result


@pytest.mark.parametrize("use_cgroup", [pytest.param(True, marks=needs_cgroups), False])
def test_suspend_and_continue_reach_the_whole_tree(pool_dir: Path, use_cgroup: bool) -> None:
    job = shell_job("setsid sleep 300 & echo $! > child; exec sleep 300")
    s = starter(pool_dir, job, "" if use_cgroup else "BASE_CGROUP =\n")

    def stopped(pids: list[int]) -> bool:
        return all(psutil.Process(p).status() == psutil.STATUS_STOPPED for p in pids)

    def running(pids: list[int]) -> bool:
        return all(psutil.Process(p).status() != psutil.STATUS_STOPPED for p in pids)

    async def scenario() -> dict:
        task = asyncio.ensure_future(s.run())
        text = await until(lambda: s.sandbox and os.path.exists(os.path.join(s.sandbox, "child"))
                           and Path(s.sandbox, "child").read_text().strip(), 30, "the job's child")
        child = int(text)
        pids = [s.pid, child]
        s.suspend()
        await until(lambda: stopped(pids), 30, "the job to stop")
        s.resume()
        await until(lambda: running(pids), 30, "the job to continue")
        s.kill()
        result = await asyncio.wait_for(task, 30)
        await until(lambda: gone(child), 10, "the setsid'd child to die of its SIGKILL")
        return result

    result = asyncio.run(scenario())
    assert result["signal"] == signal.SIGKILL


def test_vacate_sends_the_kill_sig(pool_dir: Path) -> None:
    job = shell_job("trap 'echo got USR1; exit 0' USR1; touch ready; while :; do sleep 0.1; done", KillSig="SIGUSR1")
    s = starter(pool_dir, job)

    async def scenario() -> dict:
        task = asyncio.ensure_future(s.run())
        await until(lambda: s.sandbox and os.path.exists(os.path.join(s.sandbox, "ready")), 30, "the job")
        s.suspend()
        s.vacate()  # resumes it first, so that the job can act on the signal
        return await asyncio.wait_for(task, 30)

    result = asyncio.run(scenario())
    assert result["exit_code"] == 0 and result["stdout"].decode().strip() == "got USR1"


def test_checkpoint_signal(pool_dir: Path) -> None:
    job = shell_job("trap 'echo ckpt >> log' USR2; trap 'exit 3' TERM; touch ready; while :; do sleep 0.1; done",
                    WantCheckpointSignal=True, CheckpointSig="SIGUSR2")
    s = starter(pool_dir, job)
    plain = starter(pool_dir, shell_job("sleep 1"))
    assert not plain.checkpoint()  # no job yet, and this one did not ask

    async def scenario() -> dict:
        task = asyncio.ensure_future(s.run())
        await until(lambda: s.sandbox and os.path.exists(os.path.join(s.sandbox, "ready")), 30, "the job")
        assert s.checkpoint()
        await until(lambda: os.path.exists(os.path.join(s.sandbox, "log")), 30, "the checkpoint signal")
        s.vacate()
        return await asyncio.wait_for(task, 30)

    result = asyncio.run(scenario())
    assert result["exit_code"] == 3  # still running after the checkpoint; the KillSig (TERM) ended it

"""The starter in a real pool: sandbox, environment, usage in the job ad, memory limits and
policies, signals, and clean-up after a startd killed with SIGKILL mid-job."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import psutil
import pytest
from pooltools import wait_for
from starter.starter_tools import needs_root

from htcd.starter import cgroup as cgroups

PSLOT = {"NUM_SLOTS_TYPE_1": "1", "SLOT_TYPE_1": "100%", "SLOT_TYPE_1_PARTITIONABLE": "true",
         "STARTER_UPDATE_INTERVAL": "1", "STARTER_INITIAL_UPDATE_INTERVAL": "1", "POLLING_INTERVAL": "1"}
CGROUPS = os.geteuid() == 0 and cgroups.available("htcd") is not None
ALLOC = ("#!/usr/bin/python3\nimport time\nx = bytearray(300 * 1024 * 1024)\n"
         "x[::4096] = b'1' * len(x[::4096])\ntime.sleep(120)\n")


@pytest.fixture
def knobs(execute_dir: Path) -> dict[str, str]:
    """A partitionable slot, fast samples, and an EXECUTE the job accounts can reach."""
    return {**PSLOT, "EXECUTE": str(execute_dir)}


def script(pool, name: str, text: str) -> None:
    path = pool.jobs_dir / name
    path.write_text(text)
    os.chmod(path, 0o755)


def shared_dir(knobs: dict[str, str]) -> Path:
    """A directory outside the sandbox any job account may write (pids, marks)."""
    path = Path(knobs["EXECUTE"]) / "shared"
    path.mkdir(exist_ok=True)
    os.chmod(path, 0o777)
    return path


def attr(pool, job: str, name: str) -> str:
    return pool.job_attr(job, name)


def history(pool) -> str:
    path = pool.local / "spool" / "history"
    return path.read_text() if path.exists() else ""


@needs_root
def test_sandbox_environment_and_usage(make_pool, knobs: dict[str, str]) -> None:
    pool = make_pool(knobs=knobs, slots=1)
    script(pool, "job.sh", "#!/bin/sh\nstat -c '%a %U' \"$_CONDOR_SCRATCH_DIR\"\necho \"S=$_CONDOR_SCRATCH_DIR\"\n"
           "echo \"SLOT=$_CONDOR_SLOT\"\necho \"G=$HTCD_T_GETENV\"\n"
           "exec /usr/bin/python3 -c 'import time\nwhile time.process_time() < 1.5: sum(range(20000))'\n")
    pool.env["HTCD_T_GETENV"] = "from-submitter"
    cluster = pool.submit("should_transfer_files = YES\nexecutable = job.sh\noutput = out\nerror = err\nlog = job.log\n"
                          "getenv = HTCD_T_*\nrequest_memory = 100M\nqueue\n")
    wait_for(lambda: pool.job_ids() == [], 90, "the job to finish")
    out = (pool.jobs_dir / "out").read_text().splitlines()
    assert out[0] == "700 nobody", out  # root's job: never as root, the sandbox is the job user's
    env = dict(line.split("=", 1) for line in out[1:])
    assert env["S"].startswith(knobs["EXECUTE"] + "/dir_") and not os.path.exists(env["S"])
    assert env["SLOT"] == "slot1_1" and env["G"] == "from-submitter"
    hist = history(pool)
    cpu = float(hist.split("RemoteUserCpu = ")[1].split()[0])
    rss = int(hist.split("ResidentSetSize = ")[1].split()[0])
    assert cpu >= 1.0 and rss > 0, (cpu, rss)
    assert f"ClusterId = {cluster}" in hist
    assert "sandbox " in pool.log("StarterLog.slot1_1") and "user nobody" in pool.log("StarterLog.slot1_1")


@pytest.mark.skipif(not CGROUPS, reason="no usable cgroup hierarchy with the memory controller here")
def test_over_the_cgroup_limit_the_job_is_held(make_pool, knobs: dict[str, str]) -> None:
    pool = make_pool(knobs=knobs, slots=1)
    script(pool, "alloc.py", ALLOC)
    cluster = pool.submit("should_transfer_files = YES\nexecutable = alloc.py\nrequest_memory = 128M\nqueue\n")
    job = f"{cluster}.0"
    wait_for(lambda: attr(pool, job, "JobStatus") == "5", 90, "the job to be held")
    assert attr(pool, job, "HoldReasonCode") == "34"
    reason = attr(pool, job, "HoldReason")
    assert "Job has gone over cgroup memory limit of 128 megabytes. Last measured usage:" in reason, reason
    assert "Consider resubmitting with a higher request_memory." in reason


def test_want_hold_policy_holds_with_its_subcode(make_pool, knobs: dict[str, str]) -> None:
    knobs = {**knobs, "CGROUP_MEMORY_LIMIT_POLICY": "none"}
    pool = make_pool(knobs=knobs, config_text="use POLICY : Hold_If_Memory_Exceeded\n", slots=1)
    script(pool, "alloc.py", ALLOC)
    cluster = pool.submit("should_transfer_files = YES\nexecutable = alloc.py\nrequest_memory = 128M\nqueue\n")
    job = f"{cluster}.0"
    wait_for(lambda: attr(pool, job, "JobStatus") == "5", 90, "the job to be held")
    assert attr(pool, job, "HoldReasonCode") == "21"
    assert attr(pool, job, "HoldReasonSubCode") == "102"
    assert "memory usage exceeded request_memory" in attr(pool, job, "HoldReason")


def test_preempt_policy_evicts_back_to_idle(make_pool, knobs: dict[str, str]) -> None:
    knobs = {**knobs, "CGROUP_MEMORY_LIMIT_POLICY": "none"}
    pool = make_pool(knobs=knobs, config_text="use POLICY : Preempt_If_Memory_Exceeded\n", slots=1)
    script(pool, "alloc.py", ALLOC)
    cluster = pool.submit("should_transfer_files = YES\nexecutable = alloc.py\nrequest_memory = 128M\nlog = job.log\nqueue\n")
    log = pool.jobs_dir / "job.log"
    wait_for(lambda: "004 (" in (log.read_text() if log.exists() else ""), 90, "the job to be evicted")
    assert "PREEMPT = " in pool.log("StartLog")
    pool.htcd("rm", str(cluster))
    wait_for(lambda: pool.job_ids() == [], 60, "the job to leave")


def test_vacate_sends_kill_sig_and_suspend_stops(make_pool, knobs: dict[str, str]) -> None:
    """WANT_SUSPEND/SUSPEND stop the job a while; then PREEMPT vacates it with its kill_sig."""
    knobs = {**knobs, "WANT_SUSPEND": "(time() - JobStart) < 5", "SUSPEND": "(time() - JobStart) > 2 && (time() - JobStart) < 4",
             "CONTINUE": "(time() - JobStart) >= 4", "PREEMPT": "(time() - JobStart) > 6",
             "MachineMaxVacateTime": "60"}
    pool = make_pool(knobs=knobs, slots=1)
    shared = shared_dir(knobs)
    script(pool, "job.sh", f"#!/bin/sh\ntrap 'echo got USR1 >> {shared}/mark; exit 0' USR1\n"
           "while :; do sleep 0.1; done\n")
    cluster = pool.submit("should_transfer_files = YES\nexecutable = job.sh\nkill_sig = SIGUSR1\nqueue\n")
    wait_for(lambda: (shared / "mark").exists(), 90, "the job's kill_sig")
    assert (shared / "mark").read_text() == "got USR1\n"
    log = pool.log("StartLog")
    assert "Claimed/Busy -> Claimed/Suspended" in log and "Claimed/Suspended -> Claimed/Busy" in log
    assert "vacating the job: SIGUSR1" in pool.log("StarterLog.slot1_1")
    pool.htcd("rm", str(cluster))
    wait_for(lambda: pool.job_ids() == [], 60, "the job to leave")


def test_startd_killed_mid_job_leaves_nothing_behind(make_pool, knobs: dict[str, str]) -> None:
    """kill -9 of the startd: its restart kills the job and its setsid'd grandchild, removes the
    sandbox (and the job's cgroup)."""
    pool = make_pool(knobs=knobs, slots=1)
    shared = shared_dir(knobs)
    script(pool, "job.sh", f"#!/bin/sh\nsetsid sh -c 'sleep 600 & echo $! > {shared}/grandchild; wait' &\n"
           f"echo $$ > {shared}/job\nexec sleep 600\n")
    pool.submit("should_transfer_files = YES\nexecutable = job.sh\nqueue\n")
    wait_for(lambda: (shared / "grandchild").exists() and (shared / "grandchild").read_text().strip()
             and (shared / "job").exists() and (shared / "job").read_text().strip(), 90, "the job to start")
    pids = [int((shared / n).read_text()) for n in ("job", "grandchild")]
    execute = Path(knobs["EXECUTE"])
    sandboxes = [p for p in execute.iterdir() if p.name.startswith("dir_") and p.is_dir()]
    assert len(sandboxes) == 1
    state = (execute / (sandboxes[0].name + ".state")).read_text()
    old = pool.daemon_pids()["STARTD"]
    os.kill(old, signal.SIGKILL)
    wait_for(lambda: pool.daemon_pids().get("STARTD") not in (None, old), 60, "a new startd")
    wait_for(lambda: all(not psutil.pid_exists(p) or psutil.Process(p).status() == psutil.STATUS_ZOMBIE
                         for p in pids), 60, "the orphaned job processes to be killed")
    wait_for(lambda: not sandboxes[0].exists(), 30, "the orphaned sandbox to be removed")
    assert not list(execute.glob("*.state"))
    if '"cgroup": {' in state:
        paths = state.split('"paths": {')[1].split("}")[0]
        for path in [p.split('": "')[1] for p in paths.split('", "')]:
            assert not os.path.exists(path.rstrip('"')), path
    assert "removed orphaned sandbox" in pool.log("StartLog")
    pool.htcd("rm", "-all")
    wait_for(lambda: pool.job_ids() == [], 60, "the job to leave")

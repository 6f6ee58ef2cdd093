"""The startd's side of shutting down, asked for directly with DC_OFF_GRACEFUL: peaceful (the jobs
finish, however long they take; no new claims), graceful (the jobs are vacated, then killed after
MachineMaxVacateTime) and fast (killed at once)."""

from __future__ import annotations

import psutil
from pooltools import wait_for
from startd.startd_tools import STUBBORN, WAITER, events, job_pid, script, transitions, wait_states

KNOBS = {"NUM_CPUS": "2", "POLLING_INTERVAL": "0.5"}


def _busy_slot(pool) -> str:
    busy = wait_states(pool, lambda s: "Claimed/Busy" in s.values(), what="the job to run")
    return next(k for k, v in busy.items() if v == "Claimed/Busy")


def test_peaceful_shutdown_waits_for_the_job_and_takes_no_new_claims(own_startd) -> None:
    startd = own_startd(KNOBS, slots=2)
    pool = startd.pool
    script(pool, "wait.sh", WAITER)
    pool.submit("executable = wait.sh\narguments = 0\nlog = p.log\nqueue\n")
    slot = _busy_slot(pool)
    job = psutil.Process(job_pid(pool))
    startd.send_off(peaceful=True)
    wait_for(lambda: "peaceful shutdown: 1 jobs running" in pool.log("StartLog"), 30, "the peaceful shutdown")
    wait_states(pool, {slot: "Claimed/Retiring"})
    pool.submit("executable = wait.sh\narguments = 1\nlog = p2.log\nqueue\n", name="second.sub")
    wait_for(lambda: "the startd is shutting down and takes no new claims" in pool.log("ShadowLog"), 60,
             "the refused claim for the second job")
    assert startd.proc is not None and startd.proc.poll() is None and job.is_running(), \
        "the startd and its job carry on"
    assert events(pool.jobs_dir / "p2.log") == ["000"]
    (pool.jobs_dir / "go").touch()
    assert startd.wait(60) == 0
    wait_for(lambda: "005" in events(pool.jobs_dir / "p.log"), 30, "the job's terminated event")
    assert "004" not in events(pool.jobs_dir / "p.log"), "a peaceful shutdown evicts nothing"
    assert "Claimed/Busy -> Claimed/Retiring (peaceful shutdown of the startd)" in transitions(pool, slot)


def test_graceful_shutdown_vacates_then_kills(own_startd) -> None:
    startd = own_startd({**KNOBS, "MachineMaxVacateTime": "1"})
    pool = startd.pool
    script(pool, "stubborn.sh", STUBBORN)
    pool.submit("executable = stubborn.sh\narguments = 0\nlog = g.log\nqueue\n")
    slot = _busy_slot(pool)
    job_pid(pool)
    startd.send_off()
    assert startd.wait(60) == 0
    assert (pool.jobs_dir / "term.0").read_text() == "got TERM\n", "the job was asked to leave first"
    steps = transitions(pool, slot)
    assert steps[-4:-1] == ["Claimed/Busy -> Claimed/Retiring (graceful shutdown of the startd)",
                            "Claimed/Retiring -> Preempting/Vacating (MaxJobRetirementTime = 0 is over)",
                            "Preempting/Vacating -> Preempting/Killing (MachineMaxVacateTime = 1 (1 s) ran out)"]
    wait_for(lambda: "004" in events(pool.jobs_dir / "g.log"), 30, "the evicted event")
    wait_for(lambda: pool.job_attr("1.0", "JobStatus") == "1", 30, "the job to be idle again")


def test_fast_shutdown_kills_at_once(own_startd) -> None:
    startd = own_startd({**KNOBS, "MachineMaxVacateTime": "3600", "MAXJOBRETIREMENTTIME": "3600"})
    pool = startd.pool
    script(pool, "stubborn.sh", STUBBORN)
    pool.submit("executable = stubborn.sh\narguments = 0\nlog = f.log\nqueue\n")
    slot = _busy_slot(pool)
    pid = job_pid(pool)
    startd.send_off(fast=True)
    assert startd.wait(30) == 0
    assert "Claimed/Busy -> Preempting/Killing (fast shutdown of the startd)" in transitions(pool, slot)
    assert not (pool.jobs_dir / "term.0").exists() and not psutil.pid_exists(pid)

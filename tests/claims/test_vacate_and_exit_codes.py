"""htcd vacate and htcd vacate_job send running jobs back to idle; every way a job's run ends is
in ShadowLog with HTCondor's shadow exit code (EXITING WITH STATUS n)."""

from __future__ import annotations

import re

import psutil
from pooltools import wait_for
from startd.startd_tools import STUBBORN, WAITER, events, job_pid, script, transitions, wait_states

ONE_SLOT = {"NUM_CPUS": "1", "POLLING_INTERVAL": "0.5"}


def statuses(pool) -> list[int]:
    return [int(n) for n in re.findall(r"EXITING WITH STATUS (\d+)", pool.log("ShadowLog"))]


def test_vacate_job_sends_the_job_back_to_idle(make_pool) -> None:
    pool = make_pool({**ONE_SLOT, "START": "TARGET.NumJobStarts =?= undefined || TARGET.NumJobStarts == 0"}, slots=1)
    script(pool, "wait.sh", WAITER)
    pool.submit("executable = wait.sh\narguments = 0\nlog = v.log\nqueue\n")
    proc = psutil.Process(job_pid(pool))
    wait_for(lambda: pool.job_attr("1.0", "JobStatus") == "2", 30, "the job to run")
    out = pool.htcd("vacate_job", "1.0").stdout
    assert out.strip() == "Job 1.0 vacated"
    psutil.wait_procs([proc], timeout=30)
    assert not proc.is_running(), "the job got its soft kill (SIGTERM) and left"
    wait_for(lambda: pool.job_attr("1.0", "JobStatus") == "1", 30, "the job to be idle again")
    assert "004" in events(pool.jobs_dir / "v.log")
    assert "via htcd vacate_job" in (pool.jobs_dir / "v.log").read_text()
    assert 107 in statuses(pool)
    wait_states(pool, {"slot1": "Unclaimed/Idle"}, what="the claim to be released")
    assert pool.htcd("vacate_job", "1.0", check=False).stdout.strip() == "Job 1.0 not vacated: not running"
    pool.htcd("rm", "1")


def test_vacate_job_fast_kills_at_once(make_pool) -> None:
    pool = make_pool({**ONE_SLOT, "START": "TARGET.NumJobStarts =?= undefined || TARGET.NumJobStarts == 0"}, slots=1)
    script(pool, "stubborn.sh", STUBBORN)
    pool.submit("executable = stubborn.sh\narguments = 0\nlog = f.log\nqueue\n")
    proc = psutil.Process(job_pid(pool))
    wait_for(lambda: pool.job_attr("1.0", "JobStatus") == "2", 30, "the job to run")
    assert pool.htcd("vacate_job", "-fast", "1.0").stdout.strip() == "Job 1.0 fast-vacated"
    psutil.wait_procs([proc], timeout=30)
    assert not proc.is_running() and not (pool.jobs_dir / "term.0").exists(), "killed, not asked"
    wait_for(lambda: pool.job_attr("1.0", "JobStatus") == "1", 30, "the job to be idle again")
    pool.htcd("rm", "1")


def test_vacate_ends_the_claims_of_a_machine(make_pool) -> None:
    pool = make_pool({**ONE_SLOT, "START": "TARGET.NumJobStarts =?= undefined || TARGET.NumJobStarts == 0"}, slots=1)
    script(pool, "wait.sh", WAITER)
    pool.submit("executable = wait.sh\narguments = 0\nlog = m.log\nqueue\n")
    proc = psutil.Process(job_pid(pool))
    wait_states(pool, {"slot1": "Claimed/Busy"})
    out = pool.htcd("vacate").stdout
    assert out.startswith('Sent "Vacate-All-Claims" command to startd '), out
    psutil.wait_procs([proc], timeout=30)
    assert not proc.is_running()
    wait_for(lambda: pool.job_attr("1.0", "JobStatus") == "1", 30, "the job to be idle again")
    steps = transitions(pool, "slot1")
    assert any(s.startswith("Claimed/Busy -> Preempting/Vacating (vacated by ") for s in steps), steps
    wait_states(pool, {"slot1": "Unclaimed/Idle"})
    assert "004" in events(pool.jobs_dir / "m.log") and 107 in statuses(pool)
    assert pool.htcd("vacate", "-fast", "slot1").stdout.startswith('Sent "Vacate-Claim-Fast" command for slot1')
    pool.htcd("rm", "1")


def test_every_exit_code_is_in_the_shadow_log(make_pool) -> None:
    """100 exited, 115 exited with the claim closing (CLAIM_WORKLIFE on slot 2), 102 removed
    (htcd rm), 113 removed by policy, 112 held, 107 vacated, 108 activation refused."""
    knobs = {"NUM_CPUS": "2", "POLLING_INTERVAL": "0.5", "PERIODIC_EXPR_INTERVAL": "1",
             "CLAIM_WORKLIFE": "ifThenElse(SlotID == 2, 0, -1)"}
    pool = make_pool(knobs, slots=2)
    script(pool, "wait.sh", WAITER)
    script(pool, "quick.sh", "#!/bin/sh\necho ok\n")

    def run(sub: str, name: str) -> int:
        return pool.submit(sub, name=name)

    def seen(code: int, n: int = 1) -> None:
        wait_for(lambda: statuses(pool).count(code) >= n, 60, f"EXITING WITH STATUS {code}\n{pool.log('ShadowLog')}")

    run("executable = quick.sh\nrequirements = TARGET.SlotID == 1\nqueue\n", "a.sub")
    seen(100)
    run("executable = quick.sh\nrequirements = TARGET.SlotID == 2\nqueue\n", "b.sub")
    seen(115)
    c = run("executable = wait.sh\narguments = 0\nrequirements = TARGET.SlotID == 1\nqueue\n", "c.sub")
    job_pid(pool, 0)
    pool.htcd("rm", str(c))
    seen(102)
    run("executable = wait.sh\narguments = 1\nrequirements = TARGET.SlotID == 1\n"
        "periodic_remove = JobStatus == 2\nqueue\n", "d.sub")
    seen(113)
    e = run("executable = wait.sh\narguments = 2\nrequirements = TARGET.SlotID == 1\nqueue\n", "e.sub")
    job_pid(pool, 2)
    wait_for(lambda: pool.job_attr(f"{e}.0", "JobStatus") == "2", 30, "job e to run")
    pool.htcd("hold", str(e))
    seen(112)
    f = run("executable = wait.sh\narguments = 3\nrequirements = TARGET.SlotID == 1\nqueue\n", "f.sub")
    job_pid(pool, 3)
    wait_for(lambda: pool.job_attr(f"{f}.0", "JobStatus") == "2", 30, "job f to run")
    pool.htcd("vacate_job", str(f))
    seen(107)
    pool.htcd("rm", str(f))
    g = run("executable = quick.sh\nrequirements = TARGET.SlotID == 1\n+PluginUniverse = \"nosuch\"\nqueue\n",
            "g.sub")
    seen(108)
    pool.htcd("rm", str(g), str(e))
    assert "does not offer the nosuch universe" in pool.log("ShadowLog")
    assert set(statuses(pool)) >= {100, 102, 107, 108, 112, 113, 115}

"""A job removed or held while its claim is being requested or activated is stopped, not left
running.

Window 1: the negotiator matched the job and the shadow waits for the startd's answer to
REQUEST_CLAIM; the job is not yet the shadow's, so a removal takes it out of the queue at once,
and the shadow must not start it when the claim comes.

Window 2: the shadow has sent ACTIVATE_CLAIM, and the startd is still taking the job's big
input (a chunk stream) before it creates the starter.  A DEACTIVATE_CLAIM sent then finds no
job to stop; the shadow must stop the job once the startd says it started, and the job must
never count as running (no execute event, JobStatus never 2)."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

from pooltools import Pool, wait_for
from startd.startd_tools import WAITER, script, wait_states

ONE_SLOT = {"NUM_CPUS": "1", "POLLING_INTERVAL": "0.5"}
BIG = 768 * 1024 * 1024  # sparse: long enough to stream that the stop lands before the starter exists


def events(log: Path) -> list[str]:
    text = log.read_text() if log.exists() else ""
    return [line[:3] for line in text.splitlines() if line[:3].isdigit() and " (" in line]


def start_activating(pool: Pool) -> None:
    script(pool, "wait.sh", WAITER)
    big = pool.jobs_dir / "big.in"
    with open(big, "wb") as f:
        f.truncate(BIG)
    pool.submit("executable = wait.sh\narguments = 0\nlog = a.log\nshould_transfer_files = YES\n"
                "transfer_input_files = big.in\nqueue\n", name="a.sub")
    wait_for(lambda: "(1.0) activating claim on" in pool.log("ShadowLog"), 60, "the claim's activation")


def input_sent(pool: Pool) -> bool:
    return bool(re.search(r"\(1\.0\) sent \d+ bytes of input", pool.log("ShadowLog")))


def test_a_job_removed_while_its_claim_activates_is_stopped(make_pool) -> None:
    pool = make_pool(ONE_SLOT, slots=1)
    start_activating(pool)
    pool.htcd("rm", "1.0")
    assert not input_sent(pool), "the removal must land while the input still streams (the window under test)"
    wait_for(lambda: "009" in events(pool.jobs_dir / "a.log"), 120,
             f"the job's abort event\n{pool.log('ShadowLog')[-3000:]}\n{pool.log('StartLog')[-3000:]}")
    assert "removed while its claim was being activated" in pool.log("ShadowLog")
    assert "001" not in events(pool.jobs_dir / "a.log"), "a job stopped before it started has no execute event"
    wait_states(pool, {"slot1": "Unclaimed/Idle"}, what="the slot to be free again")
    assert pool.htcd("history", "1.0", "-af", "JobStatus").stdout.split() == ["3"]
    pid = pool.jobs_dir / "pid.0"
    if pid.exists():  # the job may have been started for an instant: it must be gone
        wait_for(lambda: not os.path.exists(f"/proc/{int(pid.read_text())}"), 30, "the job's process to end")


def test_a_job_held_while_its_claim_activates_stays_held(make_pool) -> None:
    pool = make_pool(ONE_SLOT, slots=1)
    start_activating(pool)
    pool.htcd("hold", "1.0")
    assert not input_sent(pool), "the hold must land while the input still streams (the window under test)"
    wait_for(lambda: "held while its claim was being activated" in pool.log("ShadowLog"), 120,
             f"the shadow to stop the held job\n{pool.log('ShadowLog')[-3000:]}")
    wait_for(lambda: "EXITING WITH STATUS 112" in pool.log("ShadowLog"), 60, "the shadow to end with 112")
    wait_states(pool, {"slot1": "Unclaimed/Idle"}, what="the slot to be free again")
    assert pool.job_attr("1.0", "JobStatus") == "5"
    assert "001" not in events(pool.jobs_dir / "a.log") and "012" in events(pool.jobs_dir / "a.log")
    pool.htcd("rm", "1.0")


def test_a_job_removed_while_its_claim_is_requested_is_not_started(make_pool) -> None:
    pool = make_pool(ONE_SLOT, slots=1)
    script(pool, "wait.sh", WAITER)
    wait_states(pool, {"slot1": "Unclaimed/Idle"}, what="the slot in the collector")
    startd = pool.daemon_pids()["STARTD"]
    os.kill(startd, signal.SIGSTOP)  # the claim request waits for the startd's answer
    try:
        pool.submit("executable = wait.sh\narguments = 0\nlog = r.log\nqueue\n", name="r.sub")
        wait_for(lambda: "(1.0) Requesting a claim on slot1@" in pool.log("ShadowLog"), 60, "the claim request")
        pool.htcd("rm", "1.0")
        assert pool.htcd("q", "1.0", "-af", "JobStatus").stdout.strip() == "", "removed at once: not the shadow's yet"
    finally:
        os.kill(startd, signal.SIGCONT)
    wait_for(lambda: "(1.0) the job was removed before its claim was activated" in pool.log("ShadowLog"), 60,
             f"the shadow to drop the removed job\n{pool.log('ShadowLog')[-3000:]}")
    wait_states(pool, {"slot1": "Unclaimed/Idle"}, what="the claim to be released")
    assert "activated for job 1.0" not in pool.log("StartLog")
    assert not (pool.jobs_dir / "pid.0").exists(), "the removed job never ran"
    assert "001" not in events(pool.jobs_dir / "r.log") and "009" in events(pool.jobs_dir / "r.log")

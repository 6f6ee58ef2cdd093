"""JobPrio (submit's ``priority``) orders a submitter's jobs for matching, as HTCondor's schedd
offers them: higher first, the queue's order among equals."""

from __future__ import annotations

from pooltools import wait_for

from htcd.eventlog import EXECUTE, read_events
from htcd.schedd.jobs import Cluster, Job, in_priority_order, job_prio


def _jobs(prios: list[str | None]) -> list[Job]:
    cluster = Cluster(1, {"Owner": '"u"'})
    return [Job(cluster, i, {} if p is None else {"JobPrio": p}) for i, p in enumerate(prios)]


def test_priority_order_is_higher_first_and_stable_among_equals() -> None:
    jobs = _jobs(["0", "5", None, "5", "-3", "7", "not a number"])
    assert [job_prio(j) for j in jobs] == [0, 5, 0, 5, -3, 7, 0]
    assert [j.proc_id for j in in_priority_order(jobs)] == [5, 1, 3, 0, 2, 6, 4]
    plain = _jobs([None, "0", None])
    assert in_priority_order(plain) is plain  # no job sets one: the queue's order, nothing sorted


def test_the_higher_priority_job_runs_first_on_a_single_slot(make_pool) -> None:
    pool = make_pool(knobs={"NUM_CPUS": "1"}, slots=1)
    # both procs are queued by one submit, so the first negotiation sees both idle
    pool.submit("executable = /bin/true\nlog = prio.log\npriority = 0\nqueue\npriority = 10\nqueue\n")
    wait_for(lambda: pool.job_ids() == [], 90, "both jobs to finish")
    order = [e.proc for e in read_events(str(pool.jobs_dir / "prio.log")) if e.type == EXECUTE]
    assert order == [1, 0], f"execute events by proc: {order} (proc 1 has priority 10)"


def test_a_reused_claim_takes_the_higher_priority_job(make_pool) -> None:
    pool = make_pool(knobs={"NUM_CPUS": "1"}, slots=1)
    (pool.jobs_dir / "hold_slot.sh").write_text("#!/bin/sh\nwhile [ ! -e go ]; do sleep 0.05; done\n")
    (pool.jobs_dir / "hold_slot.sh").chmod(0o755)
    first = pool.submit(f"executable = hold_slot.sh\ninitialdir = {pool.jobs_dir}\nlog = prio.log\nqueue\n", "a.sub")
    wait_for(lambda: pool.job_attr(f"{first}.0", "JobStatus") == "2", 60, "the first job to run")
    low = pool.submit("executable = /bin/true\nlog = prio.log\nqueue\n", "b.sub")
    high = pool.submit("executable = /bin/true\nlog = prio.log\npriority = 10\nqueue\n", "c.sub")
    (pool.jobs_dir / "go").write_text("")  # the first job ends; its claim runs the next job
    wait_for(lambda: pool.job_ids() == [], 90, "every job to finish")
    order = [e.cluster for e in read_events(str(pool.jobs_dir / "prio.log")) if e.type == EXECUTE]
    assert order == [first, high, low], f"execute events by cluster: {order} (cluster {high} has priority 10)"

"""``htcd q -better-analyze`` on a real pool: the job from the schedd, the slots from the collector."""

from __future__ import annotations

import re

from pooltools import wait_for


def table_rows(report: str) -> list[tuple[str, int, str]]:
    """(step, matched, condition) of the 'reduces to these conditions' table."""
    rows = []
    for line in report.splitlines():
        m = re.match(r"^(\[\d+\])\s+(\d+)  (.*)$", line)
        if m:
            rows.append((m.group(1), int(m.group(2)), m.group(3)))
    return rows


def summary(report: str) -> dict[str, int]:
    out = {}
    for line in report.splitlines():
        m = re.match(r"^\s+(\d+) (are rejected by|reject your job|match and are already|match but are serving"
                     r"|are able to run)", line)
        if m:
            out[m.group(2)] = int(m.group(1))
    return out


def test_impossible_and_possible_jobs(make_pool) -> None:
    pool = make_pool(knobs={"START": "FALSE", "MEMORY": "4096"})  # 2 slots of 2048 MB; none may start
    impossible = pool.submit("executable = /bin/true\nrequirements = Memory > 999999\nqueue\n", "big.sub")
    possible = pool.submit("executable = /bin/true\nrequest_memory = 100M\nqueue\n", "small.sub")

    big = pool.htcd("q", "-better-analyze", f"{impossible}.0").stdout
    assert f"The Requirements expression for job {impossible:03d}.000 is" in big
    rows = table_rows(big)
    assert rows[0] == ("[0]", 0, "Memory > 999999"), rows
    assert all(n == 2 for _, n, _ in rows[1:]), "the default clauses all match"
    assert summary(big) == {"are rejected by": 2, "reject your job": 0, "match and are already": 0,
                            "match but are serving": 0, "are able to run": 0}
    assert "No machines matched the jobs's constraints" in big
    assert "(2 of the 2 refuse your job by their own requirements, whatever the job asks for)" in big
    assert re.search(r"^1   \( Memory > 999999 \) +0 +2 +MODIFY TO 2047$", big, re.M), big
    assert "Verdict: no slot has Memory > 999999: the largest has 2048" in big
    assert "User priority: not known" in big and "accountant" in big
    assert pool.job_attr(f"{impossible}.0", "JobStatus") == "1"

    small = pool.htcd("q", f"{possible}.0", "-analyze").stdout  # HTCondor's other spelling, id first
    rows = table_rows(small)
    assert len(rows) >= 4 and all(n == 2 for _, n, _ in rows), rows
    assert "TARGET.Memory >= 100" in [c for _, _, c in rows], "RequestMemory is shown reduced to its value"
    assert "    RequestMemory = 100\n" in small, "the job attributes the Requirements uses are listed"
    assert summary(small)["reject your job"] == 2
    assert "Suggestions:" not in small
    assert ("Verdict: 2 slots satisfy your job's requirements, but their own Requirements (START) refuse "
            "the job (2 have START = false)") in small


def test_unknown_job_is_a_clear_error(make_pool) -> None:
    pool = make_pool(knobs={"START": "FALSE"})
    bad = pool.htcd("q", "-better-analyze", "999.0", check=False)
    assert bad.returncode == 1
    assert "no job 999.0 in the queue of schedd" in bad.stderr
    assert "Traceback" not in bad.stderr and bad.stdout == ""
    none = pool.htcd("q", "-better-analyze", check=False)
    assert none.returncode == 1 and "needs a job" in none.stderr and "Traceback" not in none.stderr


def test_running_job_counts_as_yours(pool) -> None:
    cluster = pool.submit("executable = /bin/sleep\narguments = 300\nqueue\n")
    wait_for(lambda: pool.job_attr(f"{cluster}.0", "JobStatus") == "2", 60, "the job to start")

    def claimed_in_collector() -> str:
        out = pool.htcd("q", "-better-analyze", f"{cluster}.0").stdout
        return out if summary(out).get("match and are already") == 1 else ""

    out = wait_for(claimed_in_collector, 30, "the claimed slot's ad to reach the collector")
    assert f"{cluster:03d}.000:  Job is running." in out and "Verdict: the job is running" in out
    assert summary(out) == {"are rejected by": 0, "reject your job": 0, "match and are already": 1,
                            "match but are serving": 0, "are able to run": 1}
    pool.htcd("rm", f"{cluster}.0")
    wait_for(lambda: pool.job_ids() == [], 30, "the removed job to leave the queue")

"""``htcd job_report`` on a real pool that ran jobs: three completed (burning some CPU), one
removed while running, one held by hand, one submitted on hold and then removed, one held by hand
while idle, released and then completed."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from types import SimpleNamespace

import pytest
from pooltools import Pool, wait_for

from htcd.classad import ClassAd
from htcd.cli import job_report
from htcd.client.collector import address as collector
from htcd.errors import UserError
from htcd.wire.client import Connection

BURN = "executable = /bin/sh\narguments = \"-c 'sleep 1; i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'\"\nqueue 3\n"
SLEEP = "executable = /bin/sleep\narguments = 300\n"


@pytest.fixture(scope="module")
def pool(module_pool: Callable[..., Pool]) -> Pool:
    pool = module_pool()
    done = pool.submit(BURN, "burn.sub")
    wait_for(lambda: not pool.schedd_jobs(f"ClusterId == {done}", ["ClusterId"]), 120,
             lambda: "the three jobs to complete\n" + pool.log("SchedLog")[-2000:])
    removed = pool.submit(SLEEP + "queue\n", "removed.sub")
    held = pool.submit(SLEEP + "queue\n", "held.sub")
    wait_for(lambda: pool.job_attr(f"{removed}.0", "JobStatus") == "2" == pool.job_attr(f"{held}.0", "JobStatus"),
             120, "both sleepers running")
    pool.htcd("rm", f"{removed}.0")
    pool.htcd("hold", "-reason", "scratch disk full", f"{held}.0")
    on_hold = pool.submit(SLEEP + "hold = true\nqueue\n", "onhold.sub")
    wait_for(lambda: pool.job_attr(f"{on_hold}.0", "JobStatus") == "5", 30, "the job submitted on hold")
    pool.htcd("rm", f"{on_hold}.0")
    later = pool.submit("executable = /bin/true\nrequirements = false\nqueue\n", "later.sub")
    pool.htcd("hold", "-reason", "wait for the data", f"{later}.0")
    pool.htcd("qedit", f"{later}.0", "Requirements", "true")
    pool.htcd("release", f"{later}.0")
    wait_for(lambda: pool.job_ids() == [f"{held}.0"] and pool.job_attr(f"{held}.0", "JobStatus") == "5", 60,
             lambda: f"only the held job left in the queue: {pool.job_ids()}")
    wait_for(lambda: len(history(pool)) == 6, 30, "the six jobs that left in the history", interval=0.5)
    return pool


def history(pool: Pool) -> list[dict]:
    return json.loads(pool.htcd("history", "-json").stdout)


def test_report_counts_the_days_jobs(pool: Pool) -> None:
    report = json.loads(pool.htcd("job_report", "-json").stdout)
    owner = history(pool)[0]["Owner"]
    assert list(report["users"]) == [owner]
    me = report["users"][owner]
    assert (me["completed"], me["removed"], me["held"]) == (4, 2, 3), (report, history(pool), pool.job_ids())
    ads = history(pool)
    cpu = sum(float(a.get("RemoteUserCpu", 0)) + float(a.get("RemoteSysCpu", 0)) for a in ads) / 3600
    wall = sum(float(a.get("RemoteWallClockTime", 0)) for a in ads) / 3600
    assert cpu > 0 and me["cpu_hours"] == pytest.approx(cpu, abs=1e-4)
    assert wall > 0 and me["wall_hours"] == pytest.approx(wall, abs=1e-4)
    assert report["total"] == me and report["end"] - report["start"] == 86400
    assert len(report["schedds"]) == 1 and report["unanswered"] == {}
    reasons = {(r["code"], r["reason"]): r["jobs"] for r in report["held_reasons"]}
    assert len(reasons) == 3 and sum(reasons.values()) == 3
    by_hand = [k for k in reasons if k[1] == "scratch disk full"]
    assert by_hand and by_hand[0][0] == int(pool.job_attr(pool.job_ids()[0], "HoldReasonCode"))
    # removed while held, and held then released: their hold reasons moved to Last* (as HTCondor's schedd)
    on_hold = next(a for a in ads if a.get("LastJobStatus") == 5)
    assert on_hold.get("HoldReason") is None and (on_hold["LastHoldReasonCode"], on_hold["LastHoldReason"]) in reasons
    released = next(a for a in ads if a.get("LastHoldReason") == "wait for the data")
    assert released["JobStatus"] == 4 and released.get("HoldReasonCode") is None
    assert released["NumHolds"] == 1 and released["NumHoldsByReason"] == {"UserRequest": 1}
    assert (released["LastHoldReasonCode"], "wait for the data") in reasons


def test_report_as_text(pool: Pool) -> None:
    out = pool.htcd("job_report").stdout
    lines = out.splitlines()
    assert lines[0].startswith("Job report ") and lines[1].startswith("Schedds: ")
    head = next(i for i, line in enumerate(lines) if line.startswith("USER"))
    assert lines[head].split() == ["USER", "COMPLETED", "REMOVED", "HELD", "CPU_HOURS", "WALL_HOURS"]
    total = lines[head + 2].split()
    assert total[:4] == ["TOTAL", "4", "2", "3"]
    # aligned: every number column ends where its heading ends
    assert len({len(lines[head + k]) for k in (0, 1, 2)}) == 1
    assert "Held in the period: 3 jobs" in out and "scratch disk full" in out


def test_other_periods(pool: Pool) -> None:
    tomorrow = time.strftime("%Y-%m-%d", time.localtime(time.time() + 86400))
    report = json.loads(pool.htcd("job_report", "-day", tomorrow, "-json").stdout)
    assert report["end"] - report["start"] in (82800, 86400, 90000) and report["users"] == {}
    assert report["total"]["completed"] == 0 and report["held_reasons"] == []
    now = int(time.time())
    report = json.loads(pool.htcd("job_report", "-since", str(now - 3600), "-until", str(now + 60), "-json").stdout)
    assert report["start"] == now - 3600 and report["total"]["completed"] == 4


def test_bad_periods_are_refused() -> None:
    def args(**kw: str | None) -> SimpleNamespace:
        return SimpleNamespace(**{"day": None, "since": None, "until": None, **kw})

    with pytest.raises(UserError, match="give either -day or -since/-until"):
        job_report.period(args(day="2026-01-02", since="2026-01-01"))
    with pytest.raises(UserError, match="-day '2026-13-01': expected a date"):
        job_report.period(args(day="2026-13-01"))
    with pytest.raises(UserError, match="-since 'yesterday': expected YYYY-MM-DD"):
        job_report.period(args(since="yesterday"))
    with pytest.raises(UserError, match="the period is empty"):
        job_report.period(args(since="2000", until="1000"))
    start, end = job_report.period(args(), now=1_000_000)
    assert (start, end) == (1_000_001 - 86400, 1_000_001)  # a job that changed this second is in
    start, end = job_report.period(args(since="2026-03-01 12:30"))
    assert start == int(time.mktime((2026, 3, 1, 12, 30, 0, 0, 0, -1)))


def test_cli_mistakes_exit_without_traceback(pool: Pool) -> None:
    proc = pool.htcd("job_report", "-day", "someday", check=False)
    assert proc.returncode == 1 and "-day 'someday': expected a date" in proc.stderr and "Traceback" not in proc.stderr
    proc = pool.htcd("job_report", "-name", "nosuch@nowhere", check=False)
    assert proc.returncode == 1 and "no schedd named 'nosuch@nowhere'" in proc.stderr


def test_a_schedd_that_does_not_answer_is_named(pool: Pool) -> None:
    """A schedd the collector knows but that does not answer is named, and the others are counted."""
    far = ClassAd({"MyType": "Scheduler", "Name": "far@example.org", "Machine": "example.org",
                   "MyAddress": "<127.0.0.1:1>"})
    with Connection(collector(pool.tool_config())) as conn:
        conn.call("UPDATE_AD", ad_type="Scheduler", ad=far.to_wire())
    proc = pool.htcd("job_report", "-json", check=False)
    assert proc.stdout.startswith("{"), proc.stderr
    report = json.loads(proc.stdout)
    assert proc.returncode == 1 and list(report["unanswered"]) == ["far@example.org"]
    assert "htcd job_report: schedd far@example.org: cannot reach the schedd" in proc.stderr
    assert len(report["schedds"]) == 1 and report["total"]["completed"] == 4
    proc = pool.htcd("job_report", check=False)
    assert proc.returncode == 1 and "Not answering (not counted): far@example.org: cannot reach" in proc.stdout

"""The schedd's limits, submit requirements, periodic policy, ads and history, on real pools whose
jobs stay queued (no negotiator, no startd) unless a test needs them to run."""

from __future__ import annotations

import datetime

from pooltools import wait_for

NO_EXECUTE = {"DAEMON_LIST": "MASTER COLLECTOR SCHEDD", "UPDATE_INTERVAL": "1"}
SUB = "executable = /bin/true\ntransfer_executable = false\n"


def _queued(pool) -> int:
    return len(pool.job_ids())


def test_job_count_limits_refuse_whole_submits(make_pool) -> None:
    pool = make_pool({**NO_EXECUTE, "MAX_JOBS_PER_SUBMISSION": "5", "MAX_JOBS_PER_OWNER": "8"}, slots=0)
    (pool.jobs_dir / "big.sub").write_text(SUB + "queue 6\n")
    proc = pool.htcd("submit", "big.sub", check=False)
    assert proc.returncode == 1 and "MAX_JOBS_PER_SUBMISSION = 5" in proc.stderr
    assert "Traceback" not in proc.stderr and _queued(pool) == 0
    pool.submit(SUB + "queue 5\n")
    (pool.jobs_dir / "four.sub").write_text(SUB + "queue 4\n")
    proc = pool.htcd("submit", "four.sub", check=False)
    assert proc.returncode == 1 and "MAX_JOBS_PER_OWNER = 8" in proc.stderr
    assert _queued(pool) == 5, "a refused submit leaves nothing behind"


def test_submit_requirements_reject_and_warn(make_pool) -> None:
    config = "\n".join([
        "SUBMIT_REQUIREMENT_NAMES = SmallMemory",
        "SUBMIT_REQUIREMENT_SmallMemory = TARGET.RequestMemory <= 1024",
        'SUBMIT_REQUIREMENT_SmallMemory_REASON = "jobs here may ask for 1 GB at most"',
        "SUBMIT_WARNING_NAMES = Batch",
        "SUBMIT_WARNING_Batch = TARGET.JobBatchName isnt undefined",
        'SUBMIT_WARNING_Batch_REASON = "please name your batch"'])
    pool = make_pool(NO_EXECUTE, config_text=config, slots=0)
    (pool.jobs_dir / "big.sub").write_text(SUB + "request_memory = 2048\nqueue 3\n")
    proc = pool.htcd("submit", "big.sub", check=False)
    assert proc.returncode == 1 and "jobs here may ask for 1 GB at most" in proc.stderr
    assert _queued(pool) == 0
    (pool.jobs_dir / "ok.sub").write_text(SUB + "request_memory = 512\nqueue 2\n")
    proc = pool.htcd("submit", "ok.sub")
    assert "please name your batch" in proc.stderr and _queued(pool) == 2


def test_periodic_policy_holds_releases_and_removes(make_pool) -> None:
    config = 'SYSTEM_PERIODIC_REMOVE = JobPrio == 7\nSYSTEM_PERIODIC_REMOVE_REASON = "priority seven"'
    pool = make_pool({**NO_EXECUTE, "PERIODIC_EXPR_INTERVAL": "1"}, config_text=config, slots=0)
    held = pool.submit(SUB + "periodic_hold = NumJobStarts == 0 && JobStatus == 1\n"
                             "periodic_hold_reason = \"never started\"\n"
                             "periodic_release = HoldReasonCode == 3 && Color is \"green\"\nqueue\n", "h.sub")
    gone = pool.submit(SUB + "priority = 7\nqueue\n", "r.sub")
    wait_for(lambda: pool.job_attr(f"{held}.0", "JobStatus") == "5", 30, "periodic_hold")
    assert pool.job_attr(f"{held}.0", "HoldReason") == "never started"
    wait_for(lambda: f"{gone}.0" not in pool.job_ids(), 30, "SYSTEM_PERIODIC_REMOVE")
    out = pool.htcd("history", "-af", "ClusterId", "JobStatus", "RemoveReason").stdout
    assert f"{gone} 3 priority seven" in out
    pool.htcd("qedit", f"{held}.0", "Color", '"green"')
    wait_for(lambda: pool.job_attr(f"{held}.0", "ReleaseReason") != "undefined", 30, "periodic_release")


def test_totals_scheduler_and_submitter_ads_follow_counters(make_pool) -> None:
    pool = make_pool({**NO_EXECUTE, "SCHEDD_COLLECT_STATS_BY_Owner": "true"}, slots=0)
    cid = pool.submit(SUB + "queue 4\n")
    pool.htcd("hold", f"{cid}.0", f"{cid}.1")
    out = pool.htcd("q", "-totals").stdout
    assert "Total for all users: 4 jobs; 0 completed, 0 removed, 2 idle, 0 running, 2 held" in out

    def sched() -> list[str]:
        return pool.htcd("status", "-schedd", "-af", "TotalIdleJobs", "TotalHeldJobs", "TotalJobAds").stdout.split()

    wait_for(lambda: sched() == ["2", "2", "4"], 30, "the Scheduler ad to count 2 idle, 2 held")
    wait_for(lambda: pool.htcd("status", "-submitter", "-af", "IdleJobs", "HeldJobs", "RunningJobs")
             .stdout.split() == ["2", "2", "0"], 30, "the Submitter ad")
    owner = pool.htcd("q", "-af", "Owner").stdout.split()[0]
    if owner.isidentifier():
        wait_for(lambda: pool.htcd("status", "-schedd", "-af", f"Owner_{owner}_JobsHeld").stdout.strip() == "2",
                 30, "per-owner statistics")


def test_history_newest_first_with_limit_and_rotation(make_pool) -> None:
    pool = make_pool({**NO_EXECUTE, "MAX_HISTORY_LOG": "2000", "MAX_HISTORY_ROTATIONS": "3"}, slots=0)
    cid = pool.submit(SUB + "queue 12\n")
    for p in range(12):
        pool.htcd("rm", f"{cid}.{p}")
    rotated = list((pool.local / "spool").glob("history.*"))
    assert 1 <= len(rotated) <= 3, "the history rotated and kept at most MAX_HISTORY_ROTATIONS files"
    procs = [int(x) for x in pool.htcd("history", "-af", "ProcId").stdout.split()]
    assert procs == sorted(procs, reverse=True) and procs[0] == 11
    assert pool.htcd("history", "-limit", "2", "-af", "ProcId").stdout.split() == ["11", "10"]
    assert "RemoveReason" in pool.htcd("history", "-l", "-limit", "1").stdout
    assert pool.htcd("history", "-constraint", "ProcId == 10", "-af", "ProcId").stdout.split() == ["10"]


def test_empty_history_keeps_nothing(make_pool) -> None:
    pool = make_pool(NO_EXECUTE, config_text="HISTORY =", slots=0)
    cid = pool.submit(SUB + "queue\n")
    pool.htcd("rm", str(cid))
    proc = pool.htcd("history", check=False)
    assert proc.returncode == 1 and "HISTORY" in proc.stderr and "Traceback" not in proc.stderr


def test_autoclusters_group_by_significant_attributes(make_pool) -> None:
    config = "SCHEDD_ROUND_ATTR_RequestMemory = 2"
    pool = make_pool(NO_EXECUTE, config_text=config, slots=0)
    pool.submit(SUB + "request_memory = 110\nqueue 3\nrequest_memory = 190\nqueue 2\n", "a.sub")
    pool.submit(SUB + "request_memory = 300\nqueue 4\n", "b.sub")
    out = pool.htcd("q", "-autocluster").stdout.splitlines()
    rows = [line.split() for line in out[1:]]
    counts = sorted(int(r[1]) for r in rows)
    assert counts == [4, 5], out  # 110 and 190 both round up to 200
    ids = pool.htcd("q", "-af", "AutoClusterId").stdout.split()
    assert len(ids) == 9 and len(set(ids)) == 2
    attrs = pool.htcd("q", "-af", "AutoClusterAttrs").stdout.split()[0]
    assert "RequestMemory" in attrs.split(",")


def test_on_exit_hold_and_negotiation_per_autocluster(make_pool) -> None:
    pool = make_pool()
    (pool.jobs_dir / "fail.sh").write_text("#!/bin/sh\nexit 3\n")
    (pool.jobs_dir / "fail.sh").chmod(0o755)
    cid = pool.submit("executable = fail.sh\non_exit_hold = ExitCode == 3\nqueue 3\n")
    wait_for(lambda: pool.htcd("q", "-af", "JobStatus").stdout.split() == ["5"] * 3, 90, "on_exit_hold")
    assert pool.job_attr(f"{cid}.0", "ExitCode") == "3"
    log = pool.log("NegotiatorLog")
    assert "1 requests" in log, "three jobs of one autocluster make one resource request"


def test_q_projection_evaluates_like_whole_ads(make_pool) -> None:
    """``-af`` of plain names is served from projected text (plus what it references) and prints
    what evaluating the whole ad prints; results stream in (cluster, proc) order."""
    pool = make_pool(NO_EXECUTE, slots=0)
    pool.submit(SUB + "request_memory = 100 + 28\narguments = $(Process)\nqueue 2500\n")
    pool.submit(SUB + "queue 3\n", "b.sub")
    attrs = ["ClusterId", "ProcId", "Owner", "JobStatus", "RequestMemory", "RequestDisk", "Args", "Missing"]
    fast = pool.htcd("q", "-af", *attrs).stdout.splitlines()
    slow = pool.htcd("q", "-af", *attrs, "ClusterId + 0").stdout.splitlines()  # not plain names: whole ads
    assert fast == [line.rsplit(" ", 1)[0] for line in slow]
    assert len(fast) == 2503 and fast[0].split()[4] == "128" and fast[-1].split()[:2] == ["2", "2"]
    ids = [tuple(map(int, line.split()[:2])) for line in fast]
    assert ids == sorted(ids)
    assert pool.htcd("q", "-limit", "7", "-af", "ProcId").stdout.split() == [str(i) for i in range(7)]


def test_max_jobs_running_runs_one_at_a_time(make_pool) -> None:
    pool = make_pool({"MAX_JOBS_RUNNING": "1"})
    (pool.jobs_dir / "nap.sh").write_text("#!/bin/sh\nsleep 0.3\n")
    (pool.jobs_dir / "nap.sh").chmod(0o755)
    pool.submit("executable = nap.sh\nlog = nap.log\nqueue 3\n")
    log = pool.jobs_dir / "nap.log"
    wait_for(lambda: log.exists() and log.read_text().count("\n005 (") + log.read_text().startswith("005 (") == 3,
             120, "three terminated events")
    codes = [line[:3] for line in log.read_text().splitlines() if line[:3] in ("001", "005")]
    assert codes == ["001", "005"] * 3, "a job starts only after the previous one ended"


def test_on_exit_remove_false_runs_the_job_again(make_pool) -> None:
    pool = make_pool()
    marker = pool.jobs_dir / "ran"  # outside the sandbox, which is new for each run
    (pool.jobs_dir / "twice.sh").write_text(f"#!/bin/sh\n[ -e {marker} ] && exit 0\ntouch {marker}\nexit 1\n")
    (pool.jobs_dir / "twice.sh").chmod(0o755)
    (pool.jobs_dir / "twice.sub").write_text("executable = twice.sh\n"
                                             "initialdir = .\non_exit_remove = ExitCode == 0\nlog = t.log\nqueue\n")
    pool.htcd("submit", "twice.sub")
    log = pool.jobs_dir / "t.log"
    wait_for(lambda: not pool.job_ids(), 90, "the job to leave the queue")
    assert log.read_text().count("Job executing") == 2
    assert pool.htcd("history", "-af", "ExitCode", "NumJobStarts").stdout.split() == ["0", "2"]


def test_job_start_delay_paces_starts(make_pool) -> None:
    pool = make_pool({"JOB_START_DELAY": "2", "JOB_START_COUNT": "1"})
    pool.submit("executable = /bin/true\ntransfer_executable = false\nlog = pace.log\nqueue 2\n")
    log = pool.jobs_dir / "pace.log"
    wait_for(lambda: log.exists() and log.read_text().count("Job terminated") == 2, 120, "both jobs to end")
    stamps = [line.split(" ", 2)[2][:19] for line in log.read_text().splitlines() if line.startswith("001 (")]
    t0, t1 = (datetime.datetime.fromisoformat(s.replace(" ", "T")) for s in stamps)
    assert (t1 - t0).total_seconds() >= 1, f"the second start waited for JOB_START_DELAY: {stamps}"


def test_hold_true_submits_held_jobs_that_release_to_idle(make_pool) -> None:
    pool = make_pool(NO_EXECUTE, slots=0)
    cid = pool.submit(SUB + "hold = true\nqueue 2\n", "held.sub")
    assert pool.job_attr(f"{cid}.0", "JobStatus") == "5"
    assert pool.job_attr(f"{cid}.1", "HoldReasonCode") == "15"
    assert pool.job_attr(f"{cid}.0", "HoldReason") == "submitted on hold at user's request"
    pool.htcd("release", f"{cid}.0")
    assert pool.job_attr(f"{cid}.0", "JobStatus") == "1"
    assert pool.job_attr(f"{cid}.1", "JobStatus") == "5", "releasing one proc leaves the other held"
    proc = pool.htcd("qedit", f"{cid}.1", "ClaimId", '"forged"', check=False)
    assert proc.returncode != 0 and "ClaimId cannot be changed" in proc.stderr

"""Local and scheduler universe jobs: the schedd runs them itself, on the access point."""

from __future__ import annotations

import os

import psutil
from pooltools import wait_for

NO_STARTD = {"DAEMON_LIST": "MASTER, COLLECTOR, NEGOTIATOR, SCHEDD"}

SCRIPT = """#!/bin/sh
echo "args: $1 $2"
echo "cwd: $(pwd)"
echo "from $JOB_UNIVERSE"
read line
echo "stdin: $line"
echo oops >&2
exit 4
"""

SLEEPER = """#!/bin/sh
echo $$ > pid.$1
exec sleep 300
"""


def events(path) -> list[str]:
    text = path.read_text() if path.exists() else ""
    return [line[:3] for line in text.splitlines() if line[:3].isdigit() and " (" in line]


def script(pool, name: str, text: str) -> None:
    (pool.jobs_dir / name).write_text(text)
    os.chmod(pool.jobs_dir / name, 0o755)


def schedd_ad(pool, *attrs: str) -> list[str]:
    return pool.htcd("status", "-schedd", "-af", *attrs).stdout.split()


def test_local_and_scheduler_jobs_run_without_a_startd(make_pool) -> None:
    pool = make_pool(knobs=NO_STARTD, slots=0)
    script(pool, "job.sh", SCRIPT)
    (pool.jobs_dir / "work").mkdir()
    (pool.jobs_dir / "work" / "in.txt").write_text("hello\n")
    for universe in ("local", "scheduler"):
        pool.submit(f"universe = {universe}\nexecutable = job.sh\narguments = a {universe}\n"
                    f"environment = JOB_UNIVERSE={universe}\ninitialdir = work\n"
                    f"input = in.txt\noutput = {universe}.out\nerror = {universe}.err\nlog = {universe}.log\nqueue\n",
                    f"{universe}.sub")
    work = pool.jobs_dir / "work"
    for universe in ("local", "scheduler"):
        log = work / f"{universe}.log"
        wait_for(lambda log=log: "005" in events(log), 60, f"the {universe} job's terminated event")
        assert events(log) == ["000", "001", "006", "005"]
        assert "(1) Normal termination (return value 4)" in log.read_text()
        out = (work / f"{universe}.out").read_text()
        assert f"args: a {universe}" in out
        assert f"cwd: {work}" in out, "the job runs in its Iwd, not in a sandbox"
        assert f"from {universe}" in out and "stdin: hello" in out
        assert (work / f"{universe}.err").read_text() == "oops\n"
    assert pool.log("StartLog") == "", "no startd ran"
    wait_for(lambda: pool.job_ids() == [], 30, "the jobs to leave the queue")
    history = pool.htcd("history", "-af", "JobUniverse", "ExitCode").stdout.split("\n")
    assert sorted(h for h in history if h) == ["12 4", "7 4"]


def test_remove_and_hold_while_running(make_pool) -> None:
    pool = make_pool(knobs=NO_STARTD, slots=0)
    script(pool, "sleeper.sh", SLEEPER)
    cluster = pool.submit("universe = local\nexecutable = sleeper.sh\narguments = $(Process)\nlog = s.log\n"
                          "queue 2\n")
    pids = [wait_for(lambda p=p: (pool.jobs_dir / f"pid.{p}").exists() and (pool.jobs_dir / f"pid.{p}").read_text(),
                     60, f"job {p} to start") for p in (0, 1)]
    procs = [psutil.Process(int(p)) for p in pids]
    wait_for(lambda: pool.job_attr(f"{cluster}.0", "JobStatus") == "2", 30, "the job to be running")
    wait_for(lambda: schedd_ad(pool, "TotalLocalJobsRunning", "TotalRunningJobs") == ["2", "2"], 30,
             "the schedd ad's count of running local jobs")

    pool.htcd("rm", f"{cluster}.0")
    wait_for(lambda: not procs[0].is_running() or procs[0].status() == psutil.STATUS_ZOMBIE, 30,
             "the removed job's process to end")
    wait_for(lambda: "009" in events(pool.jobs_dir / "s.log"), 30, "the aborted event")
    assert procs[1].is_running(), "the other job runs on"

    pool.htcd("hold", f"{cluster}.1")
    wait_for(lambda: not procs[1].is_running() or procs[1].status() == psutil.STATUS_ZOMBIE, 30,
             "the held job's process to end")
    wait_for(lambda: pool.job_attr(f"{cluster}.1", "JobStatus") == "5", 30, "the job to be held")
    assert pool.job_ids() == [f"{cluster}.1"]
    pool.htcd("rm", f"{cluster}.1")
    wait_for(lambda: pool.job_ids() == [], 30, "the queue to empty")


def test_start_local_universe_false_keeps_local_jobs_idle(make_pool) -> None:
    pool = make_pool(knobs={**NO_STARTD, "START_LOCAL_UNIVERSE": "False"}, slots=0)
    local = pool.submit("universe = local\nexecutable = /bin/true\nlog = l.log\nqueue\n", "l.sub")
    sched = pool.submit("universe = scheduler\nexecutable = /bin/true\nlog = s.log\nqueue\n", "s.sub")
    wait_for(lambda: "005" in events(pool.jobs_dir / "s.log"), 60, "the scheduler universe job to finish")
    assert pool.job_ids() == [f"{local}.0"] and sched != local
    assert pool.job_attr(f"{local}.0", "JobStatus") == "1"
    assert events(pool.jobs_dir / "l.log") == ["000"]
    wait_for(lambda: schedd_ad(pool, "TotalLocalJobsIdle", "TotalIdleJobs") == ["1", "1"], 30,
             "the schedd ad to count the idle local job")
    submitter = pool.htcd("status", "-submitters", "-af", "IdleJobs", "LocalJobsIdle").stdout.split()
    assert submitter == ["0", "1"], "a local job is not an idle job the negotiator should look for slots for"
    analysis = pool.htcd("q", "-better-analyze", f"{local}.0").stdout
    assert "Universe: local." in analysis and "START_LOCAL_UNIVERSE" in analysis

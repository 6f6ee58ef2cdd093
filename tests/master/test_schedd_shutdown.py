"""off -graceful / -peaceful for the schedd's jobs (point 5), and DAEMON_SHUTDOWN / exit status
99, which the master does not restart (point 7).

The jobs wait for a file the test creates, so when they end is up to the test, not to a clock."""

from __future__ import annotations

import os

from master.master_helpers import MINIMAL, after, new_pid, serving, wait_state
from pooltools import Pool, gone, wait_for

JOB = """\
executable = wait_for_go.sh
arguments  = {go}
log        = {name}.log
output     = {name}.out
request_memory = 64M
queue
"""
SCRIPT = """#!/bin/sh
while [ ! -e "$1" ]; do sleep 0.1; done
echo finished
"""


def submit_waiting_job(pool: Pool, name: str) -> tuple[int, str]:
    script = pool.jobs_dir / "wait_for_go.sh"
    script.write_text(SCRIPT)
    os.chmod(script, 0o755)
    go = str(pool.jobs_dir / f"{name}.go")
    cluster = pool.submit(JOB.format(go=go, name=name), name=f"{name}.sub")
    wait_for(lambda: pool.job_attr(f"{cluster}.0", "JobStatus") == "2", 60, f"job {name} to run")
    return cluster, go


def user_log(pool: Pool, name: str) -> str:
    path = pool.jobs_dir / f"{name}.log"
    return path.read_text() if path.exists() else ""


def test_graceful_stops_the_schedd_now_and_peaceful_lets_jobs_finish(pool: Pool) -> None:
    # graceful: the schedd goes at once, as HTCondor's (the same as fast); its running job runs on
    # under its lease, and the schedd started again reconnects to it, so it finishes once
    cluster, go = submit_waiting_job(pool, "a")
    schedd = pool.daemon_pids()["SCHEDD"]
    assert pool.htcd("off", "-graceful", "-daemon", "schedd").stdout == \
        'Sent "Kill-Daemon" command for "schedd" to local master\n'
    wait_for(lambda: gone(schedd), 60, "a graceful stop of the schedd")
    assert "graceful shutdown: leaving 1 running job(s) to run on for their job lease" in pool.log("SchedLog")
    assert "004 (" not in user_log(pool, "a"), "the job was not evicted"
    assert "005 (" not in user_log(pool, "a"), "the job did not get to finish"
    wait_for(lambda: "the job lease (JobLeaseDuration = " in pool.log("StartLog"), 30,
             "the startd to keep the job running without its shadow")
    pool.htcd("on", "-daemon", "schedd")
    schedd = new_pid(pool, "SCHEDD", schedd)
    wait_for(lambda: pool.htcd("q", check=False).returncode == 0, 60, "the schedd")
    wait_for(lambda: "reconnect" in pool.log("SchedLog").lower() and
             pool.job_attr(f"{cluster}.0", "JobStatus") == "2", 60, "the schedd to reconnect to job a")
    open(go, "w").close()
    wait_for(lambda: pool.job_ids() == [], 60, "job a to finish")
    log = user_log(pool, "a")
    assert log.count("Normal termination (return value 0)") == 1, log
    assert "004 (" not in log and log.count("001 (") == 1, "one run, never evicted"

    # peaceful: the schedd waits, however long, for its running job
    _, go = submit_waiting_job(pool, "b")
    assert pool.htcd("off", "-peaceful", "-daemon", "schedd").stdout == \
        'Sent "Kill-Daemon-Peacefully" command for "schedd" to local master\n'
    wait_for(lambda: "peaceful shutdown: waiting for 1 running job(s) to finish" in pool.log("SchedLog"), 60,
             "the schedd to wait for its job")
    wait_state(pool, "SCHEDD", "Shutdown,Peaceful")
    assert not gone(schedd), "still there: its job has not finished"
    assert f"Sent peaceful shutdown request to SCHEDD (pid {schedd})" in pool.log("MasterLog")
    open(go, "w").close()  # let the job finish
    wait_for(lambda: gone(schedd), 60, "the schedd to exit once its job is done")
    assert "Normal termination (return value 0)" in user_log(pool, "b")
    assert "peaceful shutdown: no job is running" in pool.log("SchedLog")
    log = after(pool.log("MasterLog"), f"The SCHEDD (pid {schedd}) exited with status 0")
    assert "restarting htcd schedd" not in log, "it stays off"


def test_daemon_shutdown_exits_99_and_the_master_leaves_it_off(make_pool) -> None:
    pool = make_pool(MINIMAL, slots=0)
    base = pool.config_file.read_text()
    schedd = pool.daemon_pids()["SCHEDD"]
    pool.config_file.write_text(base + "SCHEDD.DAEMON_SHUTDOWN = TotalJobAds == 0\n")
    pool.htcd("reconfig")
    wait_for(lambda: gone(schedd), 60, "DAEMON_SHUTDOWN to stop the schedd")
    wait_state(pool, "SCHEDD", "Hold")
    log = after(pool.log("MasterLog"), f"The SCHEDD (pid {schedd}) exited with status 99 "
                                      "(daemon will not restart automatically)")
    assert "restarting htcd schedd" not in log
    assert "DAEMON_SHUTDOWN (TotalJobAds == 0) is true: shutting down gracefully" in pool.log("SchedLog")
    pool.htcd("reconfig")  # a round trip through the master: still off
    assert "SCHEDD" not in pool.daemon_pids()

    pool.config_file.write_text(base)
    pool.htcd("reconfig")
    pool.htcd("on", "-daemon", "schedd")
    fresh = new_pid(pool, "SCHEDD", schedd)
    wait_state(pool, "SCHEDD", "Alive")
    serving(pool)

    # the master evaluates its own: it stops everything and exits with 99 too
    pool.config_file.write_text(base + "MASTER.DAEMON_SHUTDOWN = size(DaemonList) > 0\n")
    pool.htcd("reconfig")
    assert pool.master.wait(60) == 99
    assert gone(fresh)
    assert "DAEMON_SHUTDOWN (size(DaemonList) > 0) is true" in pool.log("MasterLog")

"""Claims and leases on real pools: a claim serves many jobs, ALIVE keeps an idle claim and a
missed lease ends it, and a running job survives a schedd killed with SIGKILL (reconnect, events
022/023) unless the schedd stays down past the job's lease (the EP kills it; it runs again)."""

from __future__ import annotations

import os
import signal
import sqlite3
import threading
import time
from pathlib import Path

import psutil
import pytest
from pooltools import wait_for
from startd.startd_tools import WAITER, events, job_pid, script, states, transitions

from htcd.classad import ClassAd
from htcd.wire.client import Connection
from htcd.wire.errors import RemoteError
from htcd.wire.locate import read_address_file

ONE_SLOT = {"NUM_CPUS": "1", "POLLING_INTERVAL": "0.5"}


def kill_schedd(pool) -> int:
    pid = pool.daemon_pids()["SCHEDD"]
    os.kill(pid, signal.SIGKILL)
    return pid


def new_schedd(pool, old: int) -> int:
    return wait_for(lambda: (p := pool.daemon_pids().get("SCHEDD")) not in (None, old) and p, 60,
                    "the master to start a new schedd")


def queue_empty(pool) -> bool:
    """The schedd answers and its queue is empty (False while a restarted schedd is not up yet)."""
    proc = pool.htcd("q", "-af", "ClusterId", check=False)
    return proc.returncode == 0 and not proc.stdout.strip()


def history_value(pool, attr: str) -> str:
    return pool.htcd("history", "-af", attr).stdout.strip()


def test_one_claim_runs_many_jobs(make_pool) -> None:
    pool = make_pool(ONE_SLOT, slots=1)
    script(pool, "quick.sh", "#!/bin/sh\necho ran $1\n")
    pool.submit("executable = quick.sh\narguments = $(Process)\nlog = many.log\nqueue 6\n")
    wait_for(lambda: events(pool.jobs_dir / "many.log").count("005") == 6, 120, "six jobs")
    steps = transitions(pool, "slot1")
    assert sum("-> Claimed/Idle (claimed by" in s for s in steps) == 1, steps
    assert sum(s.startswith("Claimed/Idle -> Claimed/Busy") for s in steps) == 6
    shadow = pool.log("ShadowLog")
    assert shadow.count("EXITING WITH STATUS 100") == 6
    assert shadow.count("was ACCEPTED") == 1
    assert "releasing the claim on slot1@" in shadow


def _offer(pool) -> str | None:
    collector = read_address_file(str(pool.local / "log" / ".collector_address"))
    with Connection(collector) as conn:
        private = conn.call("QUERY_PRIVATE_ADS", ad_type="Machine")
    return private[0]["private"].get("ClaimId") if private else None


def test_alive_keeps_an_idle_claim_and_a_missed_lease_ends_it(make_pool) -> None:
    pool = make_pool({**ONE_SLOT, "MAX_CLAIM_ALIVES_MISSED": "2"}, slots=1)
    offer = wait_for(lambda: _offer(pool), 30, "the slot's claim id at the collector")
    startd = read_address_file(str(pool.local / "log" / ".startd_address"))
    job = ClassAd({"Owner": "tester", "RequestCpus": 1, "RequestMemory": 1, "RequestDisk": 1, "JobUniverse": 5,
                   "ClusterId": 1, "ProcId": 0})
    with Connection(startd, timeout=60) as claim_conn:
        reply = claim_conn.call("REQUEST_CLAIM", claim_id=offer, job_ad=job.to_wire(), schedd_host="test",
                                alive_interval=1)
        claim_id = reply["claim_id"]
        assert states(pool)["slot1"] == "Claimed/Idle"
        # a schedd's keep-alives, for three times the lease (2 s)
        stop = time.monotonic() + 6
        with Connection(startd) as alive:
            while time.monotonic() < stop:
                answer = alive.call("ALIVE", claim_ids=[claim_id, "bogus#1#2#3"])
                assert answer == {"unknown": ["bogus#1#2#3"]}
                threading.Event().wait(0.5)  # the keep-alive period of this stand-in schedd
        assert states(pool)["slot1"] == "Claimed/Idle", "ALIVE kept the claim past its lease"
        assert "claim lease expired" not in pool.log("StartLog")
        # no more keep-alives: the lease lapses although the claim's connection stays open
        wait_for(lambda: "the claim lease expired" in pool.log("StartLog"), 30, "the lease to lapse")
        wait_for(lambda: states(pool).get("slot1") == "Unclaimed/Idle", 30, "the slot to be free again")
        with Connection(startd) as alive:
            assert alive.call("ALIVE", claim_ids=[claim_id]) == {"unknown": [claim_id]}


def _running_waiter(pool, lease: int, log: str = "r.log") -> tuple[int, psutil.Process]:
    script(pool, "wait.sh", WAITER)
    cluster = pool.submit(f"executable = wait.sh\narguments = 0\noutput = out.txt\nlog = {log}\n"
                          f"job_lease_duration = {lease}\nqueue\n")
    proc = psutil.Process(job_pid(pool))
    wait_for(lambda: pool.job_attr(f"{cluster}.0", "JobStatus") == "2", 30, "the job to be running")
    return cluster, proc


def test_a_running_job_survives_a_killed_schedd(make_pool) -> None:
    pool = make_pool({**ONE_SLOT, "ALIVE_INTERVAL": "1"}, slots=1)
    cluster, proc = _running_waiter(pool, lease=120)
    start = int(pool.job_attr(f"{cluster}.0", "JobCurrentStartDate"))
    wait_for(lambda: int(pool.job_attr(f"{cluster}.0", "LastJobLeaseRenewal") or 0) > start, 30,
             "a keep-alive round (ALIVE_INTERVAL = 1) to renew the job's lease")
    old = kill_schedd(pool)
    new_schedd(pool, old)
    wait_for(lambda: "Reconnect SUCCESS" in pool.log("ShadowLog"), 60, f"the reconnection\n{pool.log('ShadowLog')}")
    assert proc.is_running(), "the job kept running while the schedd was away"
    wait_for(lambda: pool.htcd("q", "-af", "JobStatus", check=False).stdout.strip() == "2", 30, "the job running")
    (pool.jobs_dir / "go").touch()
    wait_for(lambda: queue_empty(pool), 60, "the job to complete")
    log = events(pool.jobs_dir / "r.log")
    assert [e for e in log if e != "006"] == ["000", "001", "022", "023", "005"], log
    assert (pool.jobs_dir / "out.txt").read_text() == "finished\n"
    assert history_value(pool, "NumJobStarts") == "1"
    text = (pool.jobs_dir / "r.log").read_text()
    assert "Job disconnected, attempting to reconnect" in text and "Job reconnected to slot1@" in text


def test_a_result_waits_for_the_restarted_schedd(make_pool) -> None:
    """The job ends while the schedd is down: the startd keeps its result and output for the
    lease, and the new schedd gets them at once when it reconnects."""
    pool = make_pool({**ONE_SLOT, "MASTER_SCHEDD_BACKOFF_CONSTANT": "5"}, slots=1)
    _running_waiter(pool, lease=120)
    old = kill_schedd(pool)
    (pool.jobs_dir / "go").touch()
    wait_for(lambda: "ended while its shadow is away" in pool.log("StartLog"), 30, "the job to end without a shadow")
    new_schedd(pool, old)
    wait_for(lambda: queue_empty(pool), 60, f"the job to complete\n{pool.log('ShadowLog')}")
    assert (pool.jobs_dir / "out.txt").read_text() == "finished\n"
    log = events(pool.jobs_dir / "r.log")
    assert [e for e in log if e != "006"] == ["000", "001", "022", "023", "005"], log
    assert history_value(pool, "NumJobStarts") == "1"


def test_a_lapsed_lease_kills_the_job_and_it_runs_again(make_pool) -> None:
    pool = make_pool({**ONE_SLOT, "MASTER_SCHEDD_BACKOFF_CONSTANT": "8"}, slots=1)
    _, proc = _running_waiter(pool, lease=3)
    first = proc.pid
    old = kill_schedd(pool)
    wait_for(lambda: "the job lease of job 1.0 expired" in pool.log("StartLog"), 30, "the EP to end the job")
    psutil.wait_procs([proc], timeout=30)
    assert not psutil.pid_exists(first) or not proc.is_running(), "the EP killed the job"
    execute = pool.local / "execute"
    wait_for(lambda: not any(execute.iterdir()), 30, "the sandbox to be removed")
    new_schedd(pool, old)
    wait_for(lambda: "024" in events(pool.jobs_dir / "r.log"), 60, f"the failed reconnection\n{pool.log('ShadowLog')}")
    assert "Job reconnection failed" in (pool.jobs_dir / "r.log").read_text()
    wait_for(lambda: (pool.jobs_dir / "pid.0").read_text().strip() != str(first), 60, "the job to run again")
    (pool.jobs_dir / "go").touch()
    wait_for(lambda: queue_empty(pool), 60, "the job to complete")
    log = [e for e in events(pool.jobs_dir / "r.log") if e != "006"]
    assert log == ["000", "001", "022", "024", "001", "005"], log
    assert history_value(pool, "NumJobStarts") == "2"
    assert "EXITING WITH STATUS 107" in pool.log("ShadowLog")


def test_the_claim_id_stays_private(make_pool) -> None:
    pool = make_pool({**ONE_SLOT, "STARTER_INITIAL_UPDATE_INTERVAL": "1", "STARTER_UPDATE_INTERVAL": "1"},
                     slots=1)
    cluster, _ = _running_waiter(pool, lease=120)
    db = sqlite3.connect(str(pool.local / "spool" / "job_queue.log"))
    try:
        ads = [row[0] for row in db.execute("SELECT ad FROM procs")]
    finally:
        db.close()
    secret = next(a for a in ads if "ClaimId" in a).split('"ClaimId":"\\"', 1)[1].split('\\"', 1)[0]
    assert secret.count("#") == 3, "the durable ad holds the whole claim id"
    # a reconnect naming another job than the claim runs is refused (a claim reused meanwhile)
    startd = read_address_file(str(pool.local / "log" / ".startd_address"))
    with Connection(startd) as conn, pytest.raises(RemoteError, match=f"runs job {cluster}.0 on that claim, not job 99.0"):
        conn.call("RECONNECT_JOB", claim_id=secret, job_id="99.0")
    whole = pool.htcd("q", "-l", f"{cluster}.0").stdout
    assert "PublicClaimId" in whole and "ClaimId = " not in whole.replace("PublicClaimId = ", "")
    assert pool.job_attr(f"{cluster}.0", "ClaimId") in ("", "undefined")
    assert pool.htcd("q", "-constraint", "ClaimId =!= undefined", "-af", "ClusterId").stdout.strip() == ""
    # usage samples reach the job ad and the event log (006)
    wait_for(lambda: int(pool.job_attr(f"{cluster}.0", "ImageSize") or 0) > 0, 30, "a usage sample in the ad")
    wait_for(lambda: "006" in events(pool.jobs_dir / "r.log"), 30, "the image size event")
    (pool.jobs_dir / "go").touch()
    wait_for(lambda: queue_empty(pool), 60, "the job to complete")
    private = secret.rsplit("#", 1)[1]
    for name in ("SchedLog", "ShadowLog", "StartLog", "StarterLog.slot1"):
        assert private not in pool.log(name), f"{name} shows the claim's secret"
    history = pool.htcd("config_val", "HISTORY").stdout.strip()
    assert "ClaimId" not in Path(history).read_text().replace("PublicClaimId", ""), "the history keeps no claim id"

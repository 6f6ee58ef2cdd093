"""The schedd commits the job changes nobody waits for once per loop turn: a SIGKILL at any
moment loses no job (each is in the queue or in the history, exactly once), a graceful stop
commits what was pending, and a change a client was told about is on disk when it is told."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import sqlite3
from pathlib import Path

from pooltools import Pool, wait_for
from pooltools import gone as process_gone

from htcd.classad import ClassAd
from htcd.schedd import history
from htcd.schedd.queue import JobQueue, Writes

# one partitionable slot of 8 cpus: a run dropped at the startd (its start was not yet committed
# when the schedd died) keeps a cpu until its lease ends, the others go on; the master leaves a
# dead schedd down until the test turns it on
EXECUTE = {"NUM_CPUS": "8", "MEMORY": "4096", "NUM_SLOTS": "1", "NUM_SLOTS_TYPE_1": "1", "SLOT_TYPE_1": "100%",
           "SLOT_TYPE_1_PARTITIONABLE": "True", "MASTER_SCHEDD_BACKOFF_CONSTANT": "600"}
NO_EXECUTE = {"DAEMON_LIST": "MASTER COLLECTOR SCHEDD"}
JOBS = 200
RUNNING, IDLE, HELD = 2, 1, 5


# -- reading what is on disk -------------------------------------------------------------------
def _queue_file(pool: Pool) -> Path:
    return pool.local / "spool" / "job_queue.log"


def _on_disk(pool: Pool) -> dict[tuple[int, int], tuple[dict[str, str], bool]]:
    """Every proc row of the queue file, read-only: (cluster ad + proc ad, gone)."""
    db = sqlite3.connect(f"file:{_queue_file(pool)}?mode=ro", uri=True)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        clusters = {c: json.loads(ad) for c, ad in db.execute("SELECT cluster_id, ad FROM clusters")}
        rows = db.execute("SELECT cluster_id, proc_id, ad, gone FROM procs").fetchall()
        orphans = db.execute("SELECT COUNT(*) FROM procs WHERE cluster_id NOT IN (SELECT cluster_id FROM clusters)")
        assert orphans.fetchone() == (0,), "every proc row has its cluster row"
    finally:
        db.close()
    return {(c, p): ({**clusters[c], **json.loads(ad)}, gone is not None) for c, p, ad, gone in rows}


def _status(ad: dict[str, str]) -> int:
    return int(ad.get("JobStatus", "1"))


def _history(pool: Pool) -> list[tuple[int, int]]:
    return [(ad.get_value("ClusterId"), ad.get_value("ProcId"))
            for ad in history.read(str(pool.local / "spool" / "history"))]


def _terminated(log: Path) -> list[tuple[int, int]]:
    text = log.read_text() if log.exists() else ""
    return [(int(c), int(p)) for c, p in re.findall(r"^005 \((\d+)\.(\d+)\.\d+\)", text, re.MULTILINE)]


def _queued(pool: Pool) -> dict[tuple[int, int], int]:
    out = pool.htcd("q", "-af", "ClusterId", "ProcId", "JobStatus").stdout
    return {(int(c), int(p)): int(s) for c, p, s in (line.split() for line in out.splitlines() if line.strip())}


# -- the schedd's process ------------------------------------------------------------------------
def _schedd(pool: Pool) -> int:
    return pool.daemon_pids()["SCHEDD"]


def _schedd_back(pool: Pool, old: int) -> None:
    pool.htcd("on", "-daemon", "SCHEDD")
    wait_for(lambda: pool.daemon_pids().get("SCHEDD") not in (None, old), 30, "a new schedd")
    wait_for(lambda: pool.htcd("q", "-totals", check=False).returncode == 0, 30, "the new schedd to answer")


def _echo_jobs(pool: Pool, n: int) -> tuple[int, list[tuple[int, int]]]:
    """``n`` jobs, each writing its own id to its own output file."""
    (pool.jobs_dir / "out").mkdir()
    cid = pool.submit("executable = /bin/echo\narguments = $(Cluster).$(Process)\ntransfer_executable = false\n"
                      f"output = out/$(Process).txt\nlog = jobs.log\nrequest_memory = 1\nqueue {n}\n")
    return cid, [(cid, p) for p in range(n)]


def _all_complete(pool: Pool, ids: list[tuple[int, int]]) -> None:
    """Every job ends in the history exactly once, with its own output, and none stays queued."""
    wait_for(lambda: not _queued(pool), 120, f"every job to complete\n{pool.log('SchedLog')[-3000:]}")
    done = _history(pool)
    assert sorted(done) == sorted(ids), f"history: {len(done)} records, {len(set(done))} jobs of {len(ids)}"
    assert set(_terminated(pool.jobs_dir / "jobs.log")) == set(ids)
    wrong = [p for c, p in ids if (pool.jobs_dir / "out" / f"{p}.txt").read_text() != f"{c}.{p}\n"]
    assert not wrong, f"jobs whose output is not their own: {wrong[:10]}"


# -- the tests ---------------------------------------------------------------------------------
def test_kill_9_mid_run_loses_no_job(make_pool) -> None:
    pool = make_pool(EXECUTE, slots=1)
    cid, ids = _echo_jobs(pool, JOBS)
    for low, high in ((JOBS // 5, JOBS // 3), (JOBS // 2, 2 * JOBS // 3)):  # killed twice, at random points
        at = random.randint(low, high)
        wait_for(lambda at=at: len(set(_terminated(pool.jobs_dir / "jobs.log"))) >= at, 120, f"{at} jobs to complete")
        old = _schedd(pool)
        os.kill(old, signal.SIGKILL)
        wait_for(lambda old=old: process_gone(old), 30, "the killed schedd to be gone")

        # as the crash left it: each job queued (idle or running) or left (in the history, or
        # marked gone for the next schedd to put there), never both, never neither
        disk = _on_disk(pool)
        queued = {jid for jid, (_, gone) in disk.items() if not gone}
        gone = {jid for jid, (_, gone) in disk.items() if gone}
        done = _history(pool)
        assert queued and done, f"killed mid-run (at {at} completions)"
        assert len(done) == len(set(done)), "no job twice in the history"
        assert queued | gone | set(done) == set(ids), f"lost after a kill at {at} completions: " \
            f"{sorted(set(ids) - queued - gone - set(done))[:10]}"
        assert not queued & (gone | set(done)), "no job both queued and left"
        assert {_status(disk[j][0]) for j in queued} <= {IDLE, RUNNING}
        _schedd_back(pool, old)
    _all_complete(pool, ids)
    assert pool.job_attr(f"{cid}.0", "JobStatus") == ""  # nothing of it queued again


def test_graceful_stop_commits_what_was_pending(make_pool) -> None:
    pool = make_pool(EXECUTE, slots=1)
    _, ids = _echo_jobs(pool, JOBS // 2)
    wait_for(lambda: len(_terminated(pool.jobs_dir / "jobs.log")) >= JOBS // 8, 120, "some jobs to complete")
    old = _schedd(pool)
    pool.htcd("off", "-daemon", "SCHEDD")  # SIGTERM: a graceful shutdown
    wait_for(lambda: process_gone(old), 60, "the schedd to stop")

    # the disk holds what memory held: every job whose terminated event was written has left
    # the queue and is in the history; the running ones stay RUNNING, for the next schedd to
    # reconnect to (a graceful stop of a schedd is a fast one, as HTCondor's)
    disk = _on_disk(pool)
    done = _history(pool)
    assert not any(gone for _, gone in disk.values()), "every job that left is in the history and deleted"
    assert sorted(done) == sorted(set(done)) and set(done) | set(disk) == set(ids) and not set(done) & set(disk)
    assert set(_terminated(pool.jobs_dir / "jobs.log")) == set(done)
    assert {_status(ad) for ad, _ in disk.values()} <= {IDLE, RUNNING}
    assert "job queue: " in pool.log("SchedLog") and " commits of " in pool.log("SchedLog")

    _schedd_back(pool, old)
    _all_complete(pool, ids)


def test_a_change_a_client_was_told_of_is_on_disk(make_pool) -> None:
    pool = make_pool(NO_EXECUTE, slots=0)
    cid = pool.submit("executable = /bin/true\nqueue 3\n")
    disk = _on_disk(pool)
    assert sorted(disk) == [(cid, 0), (cid, 1), (cid, 2)]
    pool.htcd("hold", f"{cid}.0")
    assert _status(_on_disk(pool)[(cid, 0)][0]) == HELD
    pool.htcd("release", f"{cid}.0")
    assert _status(_on_disk(pool)[(cid, 0)][0]) == IDLE
    pool.htcd("qedit", f"{cid}.1", "Color", '"blue"')
    assert _on_disk(pool)[(cid, 1)][0]["Color"] == '"blue"'
    pool.htcd("rm", f"{cid}.2")
    row = _on_disk(pool).get((cid, 2))
    assert row is None or row[1], "the removed job is no longer queued"
    assert _history(pool) == [(cid, 2)], "and its history record is written"


def test_a_client_change_commits_the_changes_before_it(make_pool) -> None:
    """A job started (a shadow's change, pending) and then a hold of another job is acknowledged:
    the start is on disk too, since memory had it first."""
    pool = make_pool(EXECUTE, slots=1)
    (pool.jobs_dir / "wait.sh").write_text(f"#!/bin/sh\nwhile [ ! -e {pool.jobs_dir}/go ]; do sleep 0.1; done\n")
    (pool.jobs_dir / "wait.sh").chmod(0o755)
    run = pool.submit("executable = wait.sh\nrequest_memory = 1\nqueue\n", "run.sub")
    wait_for(lambda: _queued(pool).get((run, 0)) == RUNNING, 60, "the job to run")
    other = pool.submit("executable = /bin/true\nrequirements = false\nqueue\n", "other.sub")
    pool.htcd("hold", f"{other}.0")
    disk = _on_disk(pool)
    assert _status(disk[(other, 0)][0]) == HELD
    assert _status(disk[(run, 0)][0]) == RUNNING and disk[(run, 0)][0].get("ClaimId")
    pool.htcd("rm", f"{run}.0")  # a running job: marked removed now, gone once its run is stopped
    row = _on_disk(pool).get((run, 0))
    assert row is None or row[1] or _status(row[0]) == 3
    (pool.jobs_dir / "go").touch()
    wait_for(lambda: not _queued(pool).get((run, 0)), 60, "the removed job to leave")


# -- the queue file alone ----------------------------------------------------------------------
def _gone_job(q: JobQueue, cid: int, proc: int, status: str = "4") -> None:
    w = Writes()
    w.gone[(cid, proc)] = {"JobStatus": status}
    q.write(w)


def test_gone_jobs_reach_the_history_once(tmp_path: Path) -> None:
    q = JobQueue(str(tmp_path / "q.db"))
    q.submit(4, {"Cmd": '"/bin/true"', "Owner": '"u"', "ClusterId": "4"}, [{}, {}, {}])
    hist = str(tmp_path / "history")
    history.append(hist, [ClassAd({"ClusterId": 3, "ProcId": 0})])  # an older job
    _gone_job(q, 4, 0)
    _gone_job(q, 4, 1)
    history.append(hist, [ClassAd({"ClusterId": 4, "ProcId": 0, "JobStatus": 4})])  # written before the crash
    q.close()

    q = JobQueue(str(tmp_path / "q.db"))
    assert [(c, p) for c, p, _ in q.load()[1]] == [(4, 2)], "jobs gone are not queued"
    assert q.recover_history(hist) == 1, "only the job the history misses is appended"
    got = [(ad.get_value("ClusterId"), ad.get_value("ProcId"), ad.get_value("Cmd")) for ad in history.read(hist)]
    assert got == [(4, 1, "/bin/true"), (4, 0, None), (3, 0, None)]
    assert q.recover_history(hist) == 0 and q.db.execute("SELECT COUNT(*) FROM procs").fetchone() == (1,)
    w = Writes()
    w.gone[(4, 2)] = {}
    q.write(w)
    w = Writes()
    w.forget = [(4, 2)]
    q.write(w)
    assert q.db.execute("SELECT COUNT(*) FROM clusters").fetchone() == (0,), "the cluster goes with its last job"
    q.close()


def test_a_queue_file_of_an_older_schedd_is_read(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.executescript("CREATE TABLE clusters (cluster_id INTEGER PRIMARY KEY, ad TEXT NOT NULL);"
                     "CREATE TABLE procs (cluster_id INTEGER NOT NULL, proc_id INTEGER NOT NULL, ad TEXT NOT NULL,"
                     " PRIMARY KEY (cluster_id, proc_id));"
                     "INSERT INTO clusters VALUES (2, '{\"Owner\":\"\\\"u\\\"\"}');"
                     "INSERT INTO procs VALUES (2, 0, '{}');")
    db.close()
    q = JobQueue(str(path))
    clusters, procs, next_cluster = q.load()
    assert clusters == {2: {"Owner": '"u"'}} and list(procs) == [(2, 0, {})] and next_cluster == 3
    _gone_job(q, 2, 0)
    assert list(q.load()[1]) == []
    q.close()

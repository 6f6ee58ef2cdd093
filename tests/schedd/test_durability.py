"""A schedd killed with SIGKILL in the middle of submits loses nothing it acknowledged and keeps
no part of a cluster it did not: every cluster is wholly present or wholly absent."""

from __future__ import annotations

import os
import pwd
import signal
import threading
from typing import Any

from pooltools import wait_for

from htcd.client.schedd import ScheddClient
from htcd.errors import UserError

NO_EXECUTE = {"DAEMON_LIST": "MASTER COLLECTOR SCHEDD"}  # jobs stay queued: no negotiator, no startd
PROCS = 4000


def _ads(cid: int, procs: int) -> tuple[dict[str, str], list[dict[str, str]]]:
    cluster = {"Cmd": '"/bin/true"', "Iwd": '"/tmp"', "RequestMemory": "64", "Note": f'"cluster {cid}"',
               "Requirements": "TARGET.Memory >= RequestMemory"}
    return cluster, [{"Args": f'"{cid}.{i}"'} for i in range(procs)]


def _queue(addr: str) -> dict[tuple[int, int], dict[str, str]]:
    with ScheddClient(addr) as schedd:
        return {(int(w["ClusterId"]), int(w["ProcId"])): w for chunk in schedd.query() for w in chunk}


def _try_queue(pool: Any) -> dict[tuple[int, int], dict[str, str]] | None:
    try:
        return _queue(_schedd_address(pool))
    except (UserError, OSError):
        return None


def _schedd_address(pool: Any) -> str:
    return (pool.local / "spool" / ".schedd_address").read_text().split()[0]


def test_kill_9_mid_submit_keeps_whole_clusters(make_pool) -> None:
    queue_file = "queue/jobs.db"
    pool = make_pool(NO_EXECUTE, config_text=f"JOB_QUEUE_LOG = $(LOCAL_DIR)/{queue_file}", slots=0)
    addr = _schedd_address(pool)
    acked: dict[int, tuple[dict[str, str], list[dict[str, str]]]] = {}
    attempted: list[int] = []
    stop = threading.Event()

    def submitter() -> None:
        try:
            with ScheddClient(addr) as schedd:
                while not stop.is_set():
                    def build(cid: int) -> tuple[dict[str, str], list[dict[str, str]]]:
                        attempted.append(cid)
                        return _ads(cid, PROCS)

                    done = schedd.submit(build)
                    acked[done.cluster_id] = _ads(done.cluster_id, PROCS)
        except UserError:
            pass  # the schedd died under us: what it acknowledged must be there

    thread = threading.Thread(target=submitter)
    thread.start()
    try:
        wait_for(lambda: len(acked) >= 2, 60, "two acknowledged clusters")
        old = pool.daemon_pids()["SCHEDD"]
        # kill while a submit is in flight: the next cluster id is reserved but not acknowledged
        wait_for(lambda: len(attempted) > len(acked), 30, "a submit in flight")
        os.kill(old, signal.SIGKILL)
        thread.join(60)
    finally:
        stop.set()
        thread.join(60)
    assert not thread.is_alive()
    assert (pool.local / queue_file).exists(), "JOB_QUEUE_LOG names the queue file"
    wait_for(lambda: pool.daemon_pids().get("SCHEDD") not in (None, old), 30, "the master to restart the schedd")
    wait_for(lambda: pool.htcd("q", "-totals", check=False).returncode == 0, 30, "the new schedd to answer")

    jobs = _queue(_schedd_address(pool))
    clusters = {c for c, _ in jobs}
    assert set(acked) <= clusters, "every acknowledged cluster survives"
    assert clusters <= set(attempted), "no cluster appears that was never sent"
    for cid in clusters:
        procs = sorted(p for c, p in jobs if c == cid)
        assert procs == list(range(PROCS)), f"cluster {cid} is partial: {len(procs)} of {PROCS} procs"
        cluster_ad, proc_ads = _ads(cid, PROCS)
        for p, proc in enumerate(proc_ads):
            got = jobs[(cid, p)]
            expected = {**cluster_ad, **proc, "ClusterId": str(cid), "ProcId": str(p), "JobStatus": "1"}
            assert {k: got.get(k) for k in expected} == expected, f"job {cid}.{p} differs"
            assert got["Owner"] == f'"{pwd.getpwuid(os.geteuid()).pw_name}"'


def test_queue_survives_restart_exactly(make_pool) -> None:
    """Held, edited and idle jobs come back from the queue file as they were."""
    pool = make_pool(NO_EXECUTE, slots=0)
    cid = pool.submit("executable = /bin/true\narguments = $(Process)\nqueue 5\n")
    pool.htcd("hold", f"{cid}.1", "-reason", "testing")
    pool.htcd("qedit", f"{cid}.2", "Color", '"blue"')
    before = _queue(_schedd_address(pool))
    old = pool.daemon_pids()["SCHEDD"]
    os.kill(old, signal.SIGKILL)
    wait_for(lambda: pool.daemon_pids().get("SCHEDD") not in (None, old), 30, "a new schedd")
    after = wait_for(lambda: _try_queue(pool), 30, "the new schedd to answer")
    assert after == before
    assert after[(cid, 1)]["JobStatus"] == "5" and after[(cid, 2)]["Color"] == '"blue"'

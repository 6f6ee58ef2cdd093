"""The Matched state: the negotiator tells the startd of a match (MATCH_INFO) before the schedd
hears of it; the slot waits Matched/Idle for the claim request, at most MATCH_TIMEOUT seconds, and
the next negotiation cycles leave it alone."""

from __future__ import annotations

import pytest
from pooltools import wait_for
from startd.startd_tools import script, states, transitions, wait_states

from htcd.classad import ClassAd
from htcd.wire.client import Connection
from htcd.wire.errors import RemoteError
from htcd.wire.locate import read_address_file

ONE_SLOT = {"NUM_CPUS": "1", "POLLING_INTERVAL": "0.5"}
JOB = ClassAd({"Owner": "tester", "RequestCpus": 1, "RequestMemory": 1, "RequestDisk": 1, "JobUniverse": 5,
               "ClusterId": 1, "ProcId": 0})


def _offer(pool) -> str | None:
    collector = read_address_file(str(pool.local / "log" / ".collector_address"))
    with Connection(collector) as conn:
        private = conn.call("QUERY_PRIVATE_ADS", ad_type="Machine")
    return private[0]["private"].get("ClaimId") if private else None


def test_match_info_holds_the_slot_until_match_timeout(make_pool) -> None:
    pool = make_pool({**ONE_SLOT, "MATCH_TIMEOUT": "2", "DAEMON_LIST": "MASTER, COLLECTOR, SCHEDD, STARTD"}, slots=1)
    offer = wait_for(lambda: _offer(pool), 30, "the slot's offered claim id at the collector")
    startd = read_address_file(str(pool.local / "log" / ".startd_address"))
    with Connection(startd) as conn:
        reply = conn.call("MATCH_INFO", claim_ids=["bogus#1#2#3", offer])
    assert [n.split("@")[0] for n in reply["matched"]] == ["slot1"], reply
    wait_states(pool, {"slot1": "Matched/Idle"}, what="the slot to advertise Matched")
    wait_for(lambda: any(s.startswith("Matched/Idle -> Owner/Idle (no claim request came within MATCH_TIMEOUT = 2 s")
                         for s in transitions(pool, "slot1")), 30, "MATCH_TIMEOUT to end the match")
    wait_states(pool, {"slot1": "Unclaimed/Idle"}, what="the slot to be free again")
    # matched again, then claimed: the claim takes the Matched slot; the old offer is stale after
    with Connection(startd) as conn:
        assert len(conn.call("MATCH_INFO", claim_ids=[offer])["matched"]) == 1
    with Connection(startd, timeout=60) as claim_conn:
        claim_conn.call("REQUEST_CLAIM", claim_id=offer, job_ad=JOB.to_wire(), schedd_host="test", alive_interval=300)
        assert transitions(pool, "slot1")[-1].startswith("Matched/Idle -> Claimed/Idle (claimed by")
        with Connection(startd) as conn:
            assert conn.call("MATCH_INFO", claim_ids=[offer]) == {"matched": []}, "a claimed offer is stale"
    wait_states(pool, {"slot1": "Unclaimed/Idle"}, what="the claim to end with its connection")


def test_a_refused_claim_request_frees_a_matched_slot(make_pool) -> None:
    pool = make_pool({**ONE_SLOT, "START": "TARGET.Owner =!= \"tester\"",
                      "DAEMON_LIST": "MASTER, COLLECTOR, SCHEDD, STARTD"}, slots=1)
    offer = wait_for(lambda: _offer(pool), 30, "the slot's offered claim id at the collector")
    startd = read_address_file(str(pool.local / "log" / ".startd_address"))
    with Connection(startd) as conn:
        conn.call("MATCH_INFO", claim_ids=[offer])
        with pytest.raises(RemoteError, match="for this job"):
            conn.call("REQUEST_CLAIM", claim_id=offer, job_ad=JOB.to_wire(), schedd_host="test", alive_interval=300)
    steps = transitions(pool, "slot1")
    assert "Matched/Idle -> Owner/Idle (the claim request for the match was refused)" in steps, steps
    wait_states(pool, {"slot1": "Unclaimed/Idle"}, what="the slot to be free at once")


def test_a_job_passes_through_matched_and_the_pool_runs_it(make_pool) -> None:
    """In a whole pool the negotiator's MATCH_INFO comes before the schedd's claim request."""
    pool = make_pool(ONE_SLOT, slots=1)
    script(pool, "quick.sh", "#!/bin/sh\necho ok\n")
    pool.submit("executable = quick.sh\noutput = q.out\nlog = q.log\nqueue 2\n")
    wait_for(lambda: pool.job_ids() == [], 120, f"the jobs to finish\n{pool.log('NegotiatorLog')[-2000:]}")
    steps = transitions(pool, "slot1")
    i = steps.index(next(s for s in steps if s.startswith("Unclaimed/Idle -> Matched/Idle (matched by the negotiator")))
    assert steps[i + 1].startswith("Matched/Idle -> Claimed/Idle (claimed by"), steps
    assert "could not tell the startd" not in pool.log("NegotiatorLog")
    assert states(pool)["slot1"] in ("Unclaimed/Idle", "Owner/Idle", "Claimed/Idle")

"""HTCondor's slot state machine on a real pool with real jobs: each driver (SUSPEND/CONTINUE,
PREEMPT with retirement, vacating and killing, CLAIM_WORKLIFE, IS_OWNER, RANK) and the load
the startd measures from the job's processes."""

from __future__ import annotations

import psutil
from pooltools import wait_for
from startd.startd_tools import (
    STUBBORN,
    WAITER,
    call_startd,
    events,
    job_pid,
    script,
    slot_ads,
    states,
    stopped,
    transitions,
    wait_states,
)

from htcd.classad import ClassAd
from htcd.wire.client import Connection
from htcd.wire.errors import RemoteError, WireError
from htcd.wire.locate import read_address_file

ONE_SLOT = {"NUM_CPUS": "1", "POLLING_INTERVAL": "0.5"}
RSET = {"ENABLE_RUNTIME_CONFIG": "TRUE", "SETTABLE_ATTRS_CONFIG": "SUSPEND, CONTINUE, START, PREEMPT"}


def rset(pool, *items: str) -> None:
    pool.htcd("config_val", "-daemon", "startd", "-rset", *items)
    pool.htcd("reconfig", "-daemon", "startd")


def test_suspend_and_continue_stop_and_resume_the_job(make_pool) -> None:
    pool = make_pool({**ONE_SLOT, **RSET, "WANT_SUSPEND": "True", "SUSPEND": "False", "CONTINUE": "False"}, slots=1)
    script(pool, "wait.sh", WAITER)
    pool.submit("executable = wait.sh\narguments = 0\nlog = s.log\nqueue\n")
    wait_states(pool, {"slot1": "Claimed/Busy"})
    proc = psutil.Process(job_pid(pool))
    rset(pool, "SUSPEND = TotalSlots > 0")
    wait_states(pool, {"slot1": "Claimed/Suspended"})
    wait_for(lambda: stopped(proc), 30,
             lambda: f"the job to be suspended (state T, or D waiting on a stopped vfork child), its process is {proc.status()}:\n{pool.log('StartLog')}")
    assert "Claimed/Busy -> Claimed/Suspended (WANT_SUSPEND = True was True and SUSPEND = TotalSlots > 0 was True)" \
        in transitions(pool, "slot1")
    # the load is sampled every POLLING_INTERVAL: the first sample after the suspension says 0
    wait_for(lambda: slot_ads(pool)["slot1"].get_value("CondorLoadAvg") == 0.0, 30, "no load from a suspended job")
    rset(pool, "SUSPEND = False", "CONTINUE = True")
    wait_states(pool, {"slot1": "Claimed/Busy"})
    wait_for(lambda: proc.status() != psutil.STATUS_STOPPED, 30, "the job to run again")
    assert "Claimed/Suspended -> Claimed/Busy (CONTINUE = True was True)" in transitions(pool, "slot1")
    (pool.jobs_dir / "go").touch()
    wait_for(lambda: "005" in events(pool.jobs_dir / "s.log"), 60, "the job to finish")
    assert "004" not in events(pool.jobs_dir / "s.log"), "a suspended job is not evicted"


def test_a_suspended_job_does_not_hold_up_a_graceful_shutdown(make_pool) -> None:
    """The startd's graceful shutdown retires a suspended job too (continued, then vacated once
    MaxJobRetirementTime is over), instead of waiting forever for a job that cannot end."""
    pool = make_pool({**ONE_SLOT, **RSET, "WANT_SUSPEND": "True", "SUSPEND": "False", "CONTINUE": "False"},
                     slots=1)
    script(pool, "wait.sh", WAITER)
    pool.submit("executable = wait.sh\narguments = 0\nqueue\n")
    proc = psutil.Process(job_pid(pool))  # (suspended from the start, the job could stop before it says its pid)
    rset(pool, "SUSPEND = True")
    wait_for(lambda: stopped(proc), 30, lambda: f"the job to be suspended (state T, or D waiting on a stopped vfork child), its process is {proc.status()}")
    pool.stop(timeout=30)
    assert not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE, "the job went with the startd"
    steps = transitions(pool, "slot1")
    assert "Claimed/Suspended -> Claimed/Retiring (graceful shutdown of the startd)" in steps, steps


def test_preempt_retires_then_vacates_then_kills(make_pool) -> None:
    """PREEMPT from a STARTD_CRON attribute; the job ignores SIGTERM, so vacating ends in killing."""
    flag = "{dir}/preempt"
    knobs = {**ONE_SLOT, "MAXJOBRETIREMENTTIME": "2", "MachineMaxVacateTime": "2",
             "PREEMPT": "(MY.PleasePreempt =?= True)", "START": "(MY.PleasePreempt =!= True)",
             "STARTD_CRON_JOBLIST": "flag", "STARTD_CRON_flag_PERIOD": "1",
             "STARTD_CRON_flag_MODE": "Periodic"}
    pool = make_pool(knobs, start=False)
    probe = script(pool, "probe.sh", "#!/bin/sh\nif [ -e " + flag + " ]; then echo PleasePreempt = true; "
                                     "else echo PleasePreempt = false; fi\n")
    pool.config_file.write_text(pool.config_file.read_text() + f"STARTD_CRON_flag_EXECUTABLE = {probe}\n")
    pool.start(slots=1)
    script(pool, "stubborn.sh", STUBBORN)
    pool.submit("executable = stubborn.sh\narguments = 0\nlog = p.log\nqueue\n")
    wait_states(pool, {"slot1": "Claimed/Busy"})
    job_pid(pool)
    (pool.jobs_dir / "preempt").touch()
    wait_for(lambda: "004" in events(pool.jobs_dir / "p.log"), 60, "the evicted event")
    steps = transitions(pool, "slot1")
    busy = steps.index(next(s for s in steps if s.startswith("Claimed/Busy -> Claimed/Retiring")))
    assert steps[busy] == "Claimed/Busy -> Claimed/Retiring (PREEMPT = (MY.PleasePreempt =?= True) was True)"
    assert steps[busy + 1] == "Claimed/Retiring -> Preempting/Vacating (MaxJobRetirementTime = 2 is over)"
    assert steps[busy + 2] == "Preempting/Vacating -> Preempting/Killing (MachineMaxVacateTime = 2 (2 s) ran out)"
    assert steps[busy + 3].startswith("Preempting/Killing -> Owner/Idle")
    assert (pool.jobs_dir / "term.0").read_text() == "got TERM\n", "vacating sent the job SIGTERM first"
    wait_for(lambda: pool.job_attr("1.0", "JobStatus") == "1", 30, "the evicted job to be idle again")
    assert "evicted from slot1@" in (pool.jobs_dir / "p.log").read_text()
    wait_states(pool, {"slot1": "Unclaimed/Idle"})
    ad = slot_ads(pool)["slot1"]
    assert ad.get_value("JobPreemptions") == 1 and ad.get_value("PleasePreempt") is True
    pool.htcd("rm", "1")


def test_claim_worklife_ends_the_claim_after_the_job(make_pool) -> None:
    pool = make_pool({**ONE_SLOT, "CLAIM_WORKLIFE": "0"}, slots=1)
    script(pool, "quick.sh", "#!/bin/sh\necho ran\n")
    pool.submit("executable = quick.sh\nlog = w.log\nqueue 2\n")
    wait_for(lambda: events(pool.jobs_dir / "w.log").count("005") == 2, 90, "both jobs")
    steps = transitions(pool, "slot1")
    assert sum("-> Claimed/Idle (claimed by" in s for s in steps) == 2, \
        "each job needed a claim of its own"
    assert sum(s == "Claimed/Idle -> Preempting/Vacating (CLAIM_WORKLIFE = 0 has passed)" for s in steps) == 2
    assert "EXITING WITH STATUS 115" in pool.log("ShadowLog"), "the shadow was told the claim is closing"


def test_a_claim_is_reused_within_its_worklife(make_pool) -> None:
    pool = make_pool(ONE_SLOT, slots=1)
    script(pool, "quick.sh", "#!/bin/sh\necho ran\n")
    pool.submit("executable = quick.sh\nlog = w.log\nqueue 2\n")
    wait_for(lambda: events(pool.jobs_dir / "w.log").count("005") == 2, 90, "both jobs")
    steps = transitions(pool, "slot1")
    assert sum("-> Claimed/Idle (claimed by" in s for s in steps) == 1
    assert sum(s.startswith("Claimed/Idle -> Claimed/Busy") for s in steps) == 2


def test_is_owner_keeps_the_slot_in_owner(make_pool) -> None:
    pool = make_pool({**ONE_SLOT, **RSET, "START": "FALSE", "IS_OWNER": "(START =?= False)"}, slots=1)
    wait_states(pool, {"slot1": "Owner/Idle"})
    assert transitions(pool, "slot1") == [], "a slot starts in Owner and stays while IS_OWNER is true"
    assert slot_ads(pool)["slot1"].get_value("IsOwner") is True
    rset(pool, "START = TRUE")
    wait_states(pool, {"slot1": "Unclaimed/Idle"})
    assert transitions(pool, "slot1") == ["Owner/Idle -> Unclaimed/Idle (IS_OWNER = (START =?= False) was False)"]
    rset(pool, "START = FALSE")
    wait_states(pool, {"slot1": "Owner/Idle"})


def test_a_higher_ranked_claim_preempts_the_current_one(make_pool) -> None:
    """The startd side of RANK preemption: a claim request whose job the slot ranks higher waits
    while the current job is retired and vacated, then gets the slot."""
    pool = make_pool({**ONE_SLOT, "RANK": "ifThenElse(TARGET.VIP =?= True, 10, 0)"}, slots=1)
    script(pool, "wait.sh", WAITER)
    pool.submit("executable = wait.sh\narguments = 0\nlog = r.log\nqueue\n")
    wait_states(pool, {"slot1": "Claimed/Busy"})
    offer = wait_for(lambda: _claimed_offer(pool), 30, "the claimed slot's private ad at the collector")
    vip = ClassAd({"Owner": "vip", "VIP": True, "RequestCpus": 1, "RequestMemory": 1, "RequestDisk": 1,
                   "JobUniverse": 5, "ClusterId": 99, "ProcId": 0})
    low = ClassAd({"Owner": "nobody", "RequestCpus": 1, "JobUniverse": 5})
    with Connection(call_startd_address(pool), timeout=60) as conn:
        refused = _refusal(conn, offer, low)
        assert "RANK for this job (0) is not above the current claim's (0)" in refused
        reply = conn.call("REQUEST_CLAIM", claim_id=offer, job_ad=vip.to_wire(), schedd_host="test")
        assert reply["claim_id"] == offer and ClassAd.from_wire(reply["slot_ad"]).get_value("RemoteOwner") == "vip"
        steps = transitions(pool, "slot1")
        assert "Claimed/Busy -> Claimed/Retiring (a claim the slot ranks higher (10 > 0) waits for it)" in steps
        assert steps[-1] == "Preempting/Vacating -> Claimed/Idle (the preempting claim takes the slot)"
        assert slot_ads(pool)["slot1"].get_value("CurrentRank") == 10.0
        conn.call("RELEASE_CLAIM", claim_id=reply["claim_id"])
    wait_for(lambda: "004" in events(pool.jobs_dir / "r.log"), 30, "the preempted job's evicted event")
    assert slot_ads(pool)["slot1"].get_value("JobRankPreemptions") == 1
    pool.htcd("rm", "1")


def test_a_withdrawn_preempting_claim_request_unretires_the_slot(make_pool) -> None:
    pool = make_pool({**ONE_SLOT, "RANK": "ifThenElse(TARGET.VIP =?= True, 10, 0)", "MAXJOBRETIREMENTTIME": "3600"},
                     slots=1)
    script(pool, "wait.sh", WAITER)
    pool.submit("executable = wait.sh\narguments = 0\nlog = r.log\nqueue\n")
    wait_states(pool, {"slot1": "Claimed/Busy"})
    offer = wait_for(lambda: _claimed_offer(pool), 30, "the claimed slot's private ad at the collector")
    vip = ClassAd({"Owner": "vip", "VIP": True, "RequestCpus": 1, "JobUniverse": 5})
    conn = Connection(call_startd_address(pool), timeout=3)
    try:
        conn.call("REQUEST_CLAIM", claim_id=offer, job_ad=vip.to_wire(), schedd_host="test")
        raise AssertionError("the preempting claim was granted during a 3600 s retirement")
    except WireError:
        pass  # the client gave up waiting
    finally:
        conn.close()
    wait_for(lambda: "the preempting claim request from" in pool.log("StartLog"), 30, "the withdrawal")
    wait_states(pool, {"slot1": "Claimed/Busy"})
    steps = transitions(pool, "slot1")
    assert steps[-2:] == ["Claimed/Busy -> Claimed/Retiring (a claim the slot ranks higher (10 > 0) waits for it)",
                          "Claimed/Retiring -> Claimed/Busy (the preempting claim went away)"]
    (pool.jobs_dir / "go").touch()
    wait_for(lambda: "005" in events(pool.jobs_dir / "r.log"), 60, "the job to finish undisturbed")
    assert "004" not in events(pool.jobs_dir / "r.log")


def call_startd_address(pool):
    return read_address_file(str(pool.local / "log" / ".startd_address"))


def _claimed_offer(pool) -> str | None:
    """The claim id a preempting claim must present, as the negotiator sees it (the private ad of
    the claimed slot at the collector)."""
    collector = read_address_file(str(pool.local / "log" / ".collector_address"))
    with Connection(collector) as conn:
        public = [ClassAd.from_wire(w) for w in conn.call("QUERY_ADS", ad_type="Machine")]
        if [ad.get_value("State") for ad in public] != ["Claimed"]:
            return None
        private = conn.call("QUERY_PRIVATE_ADS", ad_type="Machine")
    return private[0]["private"].get("ClaimId") if private else None


def _refusal(conn: Connection, offer: str, job: ClassAd) -> str:
    try:
        conn.call("REQUEST_CLAIM", claim_id=offer, job_ad=job.to_wire(), schedd_host="test")
    except RemoteError as exc:
        return str(exc)
    raise AssertionError("a claim request the slot does not rank higher was accepted")


def test_condor_load_comes_from_the_jobs_processes(make_pool) -> None:
    pool = make_pool(ONE_SLOT, slots=1)
    script(pool, "spin.sh", "#!/bin/sh\necho $$ > {dir}/pid.0\nwhile [ ! -e {dir}/go ]; do :; done\n")
    pool.submit("executable = spin.sh\nlog = l.log\nqueue\n")
    wait_states(pool, {"slot1": "Claimed/Busy"})
    ad = wait_for(lambda: (a := slot_ads(pool).get("slot1")) is not None and a.get_value("CondorLoadAvg") > 0.3 and a,
                  60, "the busy job's load on its slot")
    assert ad.get_value("LoadAvg") >= ad.get_value("CondorLoadAvg")
    assert ad.get_value("TotalCondorLoadAvg") == ad.get_value("CondorLoadAvg")
    assert ad.get_value("JobId") == "1.0" and ad.get_value("JobStart") > 0
    (pool.jobs_dir / "go").touch()
    wait_for(lambda: "005" in events(pool.jobs_dir / "l.log"), 60, "the job to end")
    wait_for(lambda: slot_ads(pool)["slot1"].get_value("CondorLoadAvg") == 0.0, 30, "the load to go with the job")
    call_startd(pool, "PING")


FLAGS = """#!/bin/sh
[ -e {dir}/preempt ] && echo PleasePreempt = true || echo PleasePreempt = false
[ -e {dir}/kill ] && echo PleaseKill = true || echo PleaseKill = false
"""


def test_want_vacate_and_kill(make_pool) -> None:
    """Two jobs preempted at once: WANT_VACATE false kills job 1 without a SIGTERM; job 0 is vacated
    and stays Vacating (MachineMaxVacateTime is long) until KILL turns true."""
    knobs = {"NUM_CPUS": "2", "POLLING_INTERVAL": "0.5", "MachineMaxVacateTime": "3600",
             "PREEMPT": "(MY.PleasePreempt =?= True)", "START": "(MY.PleasePreempt =!= True)",
             "WANT_VACATE": "(TARGET.ProcId == 0)", "KILL": "(MY.PleaseKill =?= True)",
             "STARTD_CRON_JOBLIST": "flags", "STARTD_CRON_flags_PERIOD": "1"}
    pool = make_pool(knobs, start=False)
    flags = script(pool, "flags.sh", FLAGS)
    pool.config_file.write_text(pool.config_file.read_text() + f"STARTD_CRON_flags_EXECUTABLE = {flags}\n")
    pool.start()
    script(pool, "stubborn.sh", STUBBORN)
    pool.submit("executable = stubborn.sh\narguments = $(Process)\nlog = k.log\nqueue 2\n")
    wait_states(pool, lambda s: list(s.values()) == ["Claimed/Busy"] * 2, what="both jobs running")
    job_pid(pool, 0)
    job_pid(pool, 1)
    slot_of = {str(ad.get_value("JobId")): name for name, ad in slot_ads(pool).items()}
    (pool.jobs_dir / "preempt").touch()
    wait_states(pool, {slot_of["1.0"]: "Preempting/Vacating"}, what="job 0 vacating")
    wait_for(lambda: (pool.jobs_dir / "term.0").exists(), 30, "job 0's SIGTERM")
    wait_for(lambda: (pool.jobs_dir / "k.log").read_text().count("004 (") == 1, 30, "job 1's eviction")
    killed = transitions(pool, slot_of["1.1"])
    assert "Claimed/Retiring -> Preempting/Killing (MaxJobRetirementTime = 0 is over; " \
           "WANT_VACATE = (TARGET.ProcId == 0) was False)" in killed
    assert not (pool.jobs_dir / "term.1").exists(), "WANT_VACATE false: no soft kill"
    assert states(pool)[slot_of["1.0"]] == "Preempting/Vacating", "job 0 ignores SIGTERM and keeps vacating"
    (pool.jobs_dir / "kill").touch()
    wait_for(lambda: (pool.jobs_dir / "k.log").read_text().count("004 (") == 2, 30, "job 0's eviction")
    assert "Preempting/Vacating -> Preempting/Killing (KILL = (MY.PleaseKill =?= True) was True)" \
        in transitions(pool, slot_of["1.0"])
    pool.htcd("rm", "1")


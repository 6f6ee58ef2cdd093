"""``htcd drain`` against real pools: graceful, quick and fast draining, -start, cancelling, the
on-completion actions, and the refusals."""

from __future__ import annotations

import os

from pooltools import wait_for
from startd.startd_tools import (
    STUBBORN,
    WAITER,
    events,
    job_pid,
    script,
    slot_ads,
    transitions,
    wait_cycles,
    wait_states,
)

from htcd.classad import ClassAd
from htcd.wire.client import Connection
from htcd.wire.locate import read_address_file

TWO = {"NUM_CPUS": "2", "POLLING_INTERVAL": "0.5"}


def host(pool) -> str:
    return str(next(iter(slot_ads(pool).values())).get_value("Machine"))


def test_graceful_drain_lets_the_job_finish_and_cancel_resumes(make_pool) -> None:
    pool = make_pool({**TWO, "MAXJOBRETIREMENTTIME": "3600"})
    script(pool, "wait.sh", WAITER)
    pool.submit("executable = wait.sh\narguments = 0\nlog = g.log\nqueue\n")
    busy = wait_states(pool, lambda s: "Claimed/Busy" in s.values(), what="the job to run")
    job_slot = next(k for k, v in busy.items() if v == "Claimed/Busy")
    other = next(k for k in busy if k != job_slot)
    machine = host(pool)
    out = pool.htcd("drain", "-graceful", "-reason", "disk swap", "-verbose", machine).stdout
    assert out.startswith("Sent request to drain the startd <") and f"> with {machine}. This only affects" in out
    request_id = out.split("Request id: ")[1].strip()
    wait_states(pool, {job_slot: "Claimed/Retiring", other: "Drained/Retiring"})
    ad = slot_ads(pool)[job_slot]
    assert ad.get_value("Draining") is True and ad.get_value("DrainReason") == "disk swap"
    assert ad.get_value("DrainingRequestId") == request_id and ad.get_value("LastDrainStartTime") > 0
    assert ad.get_value("ExpectedMachineGracefulDrainingCompletion") >= ad.get_value("JobStart") + 3600 - 1
    assert ad.get_value("RetirementTimeRemaining") > 3500
    again = pool.htcd("drain", machine, check=False)
    assert again.returncode == 1 and "Draining already in progress." in again.stderr

    pool.submit("executable = wait.sh\narguments = 1\nlog = g2.log\nqueue\n", name="second.sub")
    wait_cycles(pool)
    assert events(pool.jobs_dir / "g2.log") == ["000"], "no new job starts while draining"

    (pool.jobs_dir / "go").touch()
    wait_states(pool, {job_slot: "Drained/Idle", other: "Drained/Idle"})
    wait_for(lambda: "005" in events(pool.jobs_dir / "g.log"), 30, "the terminated event")
    assert "004" not in events(pool.jobs_dir / "g.log"), "the job finished; it was not evicted"
    steps = transitions(pool, job_slot)
    assert "Claimed/Busy -> Claimed/Retiring (the machine is draining (-graceful))" in steps
    assert "Claimed/Retiring -> Preempting/Vacating (the job exited during retirement)" in steps
    assert "Preempting/Vacating -> Drained/Retiring (the machine is draining)" in steps
    assert steps[-1] == "Drained/Retiring -> Drained/Idle (every slot is drained)"

    wrong = pool.htcd("drain", "-cancel", "-request-id", "nope", machine, check=False)
    assert wrong.returncode == 1 and f"no drain with request id nope (the current one is {request_id})" in wrong.stderr
    out = pool.htcd("drain", "-cancel", "-request-id", request_id, machine).stdout
    assert out.strip() == f"Sent request to cancel draining on {machine}"
    wait_for(lambda: "005" in events(pool.jobs_dir / "g2.log"), 60, "the waiting job to run after the cancel")
    ad = wait_for(lambda: (a := slot_ads(pool)[other]).get_value("State") in ("Unclaimed", "Claimed") and a, 30, "")
    assert "Draining" not in ad and ad.get_value("LastDrainStopTime") >= ad.get_value("LastDrainStartTime")
    assert "Drained/Idle -> Owner/Idle (draining was cancelled)" in transitions(pool, other)


def test_quick_drain_vacates_and_resumes_on_completion(make_pool) -> None:
    pool = make_pool({**TWO, "MAXJOBRETIREMENTTIME": "3600"})
    script(pool, "wait.sh", WAITER)
    pool.submit("executable = wait.sh\narguments = 0\nlog = q.log\nqueue\n")
    busy = wait_states(pool, lambda s: "Claimed/Busy" in s.values(), what="the job to run")
    job_slot = next(k for k, v in busy.items() if v == "Claimed/Busy")
    job_pid(pool)
    pool.htcd("drain", "-quick", "-resume-on-completion", host(pool))
    wait_for(lambda: "004" in events(pool.jobs_dir / "q.log"), 60, "the job to be evicted")
    steps = transitions(pool, job_slot)
    assert "Claimed/Busy -> Preempting/Vacating (the machine is draining (-quick))" in steps, \
        "-quick does not honor MaxJobRetirementTime"
    wait_for(lambda: "Drained/Idle -> Owner/Idle (draining is complete (-resume-on-completion))"
             in transitions(pool, job_slot), 60, "the drain to complete and resume")
    (pool.jobs_dir / "go").touch()
    wait_for(lambda: "005" in events(pool.jobs_dir / "q.log"), 60, "the evicted job to run again and finish")
    assert all("Draining" not in ad for ad in slot_ads(pool).values())


def test_fast_drain_kills_at_once(make_pool) -> None:
    pool = make_pool({**TWO, "MAXJOBRETIREMENTTIME": "3600", "MachineMaxVacateTime": "3600"})
    script(pool, "stubborn.sh", STUBBORN)
    pool.submit("executable = stubborn.sh\narguments = 0\nlog = f.log\nqueue\n")
    busy = wait_states(pool, lambda s: "Claimed/Busy" in s.values(), what="the job to run")
    job_slot = next(k for k, v in busy.items() if v == "Claimed/Busy")
    job_pid(pool)
    pool.htcd("drain", "-fast", host(pool))
    wait_for(lambda: "004" in events(pool.jobs_dir / "f.log"), 60, "the job to be killed")
    assert "Claimed/Busy -> Preempting/Killing (the machine is draining (-fast))" in transitions(pool, job_slot)
    assert not (pool.jobs_dir / "term.0").exists(), "-fast does not vacate (no SIGTERM first)"
    wait_states(pool, lambda s: set(s.values()) == {"Drained/Idle"}, what="every slot drained")


def test_start_expression_while_draining(make_pool) -> None:
    pool = make_pool({**TWO, "MAXJOBRETIREMENTTIME": "3600"})
    script(pool, "wait.sh", WAITER)
    pool.submit("executable = wait.sh\narguments = 0\nlog = long.log\nqueue\n")
    busy = wait_states(pool, lambda s: "Claimed/Busy" in s.values(), what="the long job")
    other = next(k for k, v in busy.items() if v != "Claimed/Busy")
    pool.htcd("drain", "-start", "TARGET.Short =?= True", host(pool))
    wait_states(pool, {other: "Unclaimed/Idle"})
    assert slot_ads(pool)[other].expr_text("START") == "TARGET.Short =?= True"
    script(pool, "short.sh", "#!/bin/sh\nwhile [ ! -e {dir}/go_short ]; do sleep 0.1; done\n")
    pool.submit("executable = short.sh\nlog = short.log\n+Short = true\nqueue\n", name="short.sub")
    wait_states(pool, {other: "Claimed/Busy"}, what="the short job on the draining machine")
    assert slot_ads(pool)[other].get_value("AcceptedWhileDraining") is True
    pool.submit("executable = wait.sh\narguments = 2\nlog = other.log\nqueue\n", name="other.sub")
    wait_cycles(pool)
    assert events(pool.jobs_dir / "other.log") == ["000"], "only jobs that -start allows run while draining"
    (pool.jobs_dir / "go_short").touch()
    wait_for(lambda: "005" in events(pool.jobs_dir / "short.log"), 60, "the short job to finish")
    (pool.jobs_dir / "go").touch()
    wait_states(pool, lambda s: set(s.values()) == {"Drained/Idle"}, what="every slot drained")
    wait_for(lambda: "005" in events(pool.jobs_dir / "long.log"), 30, "the long job's terminated event")
    assert events(pool.jobs_dir / "other.log") == ["000"], "a drained machine takes no jobs"


def test_exit_on_completion_exits_with_status_99(own_startd) -> None:
    startd = own_startd({"NUM_CPUS": "1", "POLLING_INTERVAL": "0.5"})
    pool = startd.pool
    pool.htcd("drain", "-exit-on-completion", host(pool))
    assert startd.wait(60) == 99, "DAEMON_NO_RESTART: a master leaves the startd off"
    assert "draining is complete (-exit-on-completion)" in pool.log("StartLog")
    assert not (pool.local / "log" / ".startd_address").exists()


def test_restart_on_completion_restarts_the_startd(own_startd) -> None:
    startd = own_startd({"NUM_CPUS": "1", "POLLING_INTERVAL": "0.5"})
    pool = startd.pool
    first = read_address_file(str(pool.local / "log" / ".startd_address"))
    pool.htcd("drain", "-restart-on-completion", host(pool))
    wait_for(lambda: pool.log("StartLog").count("listening at") == 2, 60, "the startd to start again")
    assert startd.proc is not None and startd.proc.poll() is None, "the same process carries on"
    ad = wait_for(lambda: slot_ads(pool).get("slot1"), 60, "the restarted startd's slot")
    wait_states(pool, {"slot1": "Unclaimed/Idle"})
    assert "Draining" not in ad and read_address_file(str(pool.local / "log" / ".startd_address")) != first
    assert f"restarting the startd (pid {startd.proc.pid})" in pool.log("StartLog")


def test_drain_refusals(make_pool) -> None:
    pool = make_pool(TWO)
    machine = host(pool)
    cases = [
        (["-check", "Cpus > 1", machine], 1, "Draining check expression is false on slot1@"),
        (["-check", "Cpus", machine], 1, "Draining check expression does not evaluate to a bool"),
        (["-start", "(x ||", machine], 1, "-start (x ||: not a ClassAd expression"),
        (["-cancel", machine], 1, "the machine is not draining"),
        (["-request-id", "3", machine], 2, "-request-id may only be used with -cancel"),
        (["-cancel", "-reason", "x", machine], 2, "cannot use -reason with -cancel"),
        (["nosuch.example.org"], 1, "Can't find address for startd nosuch.example.org"),
    ]
    for args, code, message in cases:
        proc = pool.htcd("drain", *args, check=False)
        assert proc.returncode == code and message in proc.stderr and "Traceback" not in proc.stderr, (args, proc.stderr)
    assert all("Draining" not in ad for ad in slot_ads(pool).values()), "a refused drain changes nothing"

    collector = read_address_file(str(pool.local / "log" / ".collector_address"))
    fake = ClassAd()
    for key, value in {"MyType": "Machine", "Name": "slot1@far.example.org", "Machine": "far.example.org",
                       "MyAddress": "<127.0.0.1:1>", "StartdIpAddr": "<127.0.0.1:1>"}.items():
        fake[key] = value
    with Connection(collector) as conn:
        conn.call("UPDATE_AD", ad_type="Machine", ad=fake.to_wire())
    far = pool.htcd("drain", "far.example.org", check=False)
    assert far.returncode == 1 and "Traceback" not in far.stderr
    assert "Connection refused" in far.stderr, far.stderr  # another host's startd is reached over TCP
    assert os.path.exists(pool.local / "log" / ".startd_address")

"""The negotiator in real pools: fair share by priority factor, priorities kept across a restart,
concurrency limits, RANK and priority preemption, NEGOTIATOR_CONSIDER_PREEMPTION, userprio."""

from __future__ import annotations

import json
import os
import signal
from collections import Counter

from pooltools import Pool, wait_for

SLEEP = "executable = /bin/sleep\narguments = 300\naccounting_group = grp\n"


def running_by_user(pool: Pool) -> Counter[str]:
    out = pool.htcd("q", "-af", "AcctGroupUser", "JobStatus").stdout.split("\n")
    return Counter(line.split()[0] for line in out if line.strip().endswith(" 2"))


def status_of(pool: Pool) -> dict[str, str]:
    out = pool.htcd("q", "-af", "AcctGroupUser", "JobStatus").stdout
    return {line.split()[0]: line.split()[1] for line in out.splitlines() if line.strip()}


def records(pool: Pool) -> dict[str, dict]:
    return {r["Name"].split("@")[0]: r for r in json.loads(pool.htcd("userprio", "-json", "-allusers").stdout)}


def test_the_better_priority_factor_gets_more_slots(make_pool) -> None:
    pool = make_pool({"NUM_CPUS": "4"})
    pool.htcd("userprio", "-setfactor", "grp.alice", "1")
    pool.htcd("userprio", "-setfactor", "grp.bob", "3")
    pool.submit(SLEEP + "accounting_group_user = alice\nqueue 6\naccounting_group_user = bob\nqueue 6\n")
    wait_for(lambda: sum(running_by_user(pool).values()) >= 4, 60, "4 running jobs")
    # EUPs 0.5 and 1.5: shares of 4 slots in the ratio 3:1
    assert running_by_user(pool) == Counter({"alice": 3, "bob": 1})
    log = pool.log("NegotiatorLog")
    assert "---------- Started Negotiation Cycle ----------" in log
    assert "Negotiating with grp.alice@" in log and "---------- Finished Negotiation Cycle ----------" in log
    assert log.index("Negotiating with grp.alice@") < log.index("Negotiating with grp.bob@")
    assert "Matched 1.0 grp.alice@" in pool.log("MatchLog")
    # the accountant charges the claims: usage shows up in userprio
    wait_for(lambda: records(pool).get("grp.alice", {}).get("ResourcesUsed") == 3, 60, "alice's 3 slots in use")
    table = pool.htcd("userprio").stdout
    assert "Effective" in table and "Number of users:" in table and "grp.alice@" in table


def test_priorities_and_userprio_survive_a_negotiator_restart(make_pool) -> None:
    pool = make_pool({"NUM_CPUS": "1"}, slots=1)
    assert "was set to 2.500000" in pool.htcd("userprio", "-setfactor", "carol", "2.5").stdout
    pool.htcd("userprio", "-setprio", "carol", "40")
    pool.htcd("userprio", "-setfactor", "dave", "7")
    before = records(pool)
    assert before["carol"]["PriorityFactor"] == 2.5 and before["carol"]["RealPriority"] == 40
    assert before["carol"]["Priority"] == 100  # effective = real x factor
    # bad input is a clear error, not a traceback
    bad = pool.htcd("userprio", "-setfactor", "carol", "lots", check=False)
    assert bad.returncode != 0 and "number" in bad.stderr and "Traceback" not in bad.stderr
    pid = pool.daemon_pids()["NEGOTIATOR"]
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: pool.daemon_pids().get("NEGOTIATOR") not in (None, pid), 60, "a new negotiator")
    wait_for(lambda: pool.htcd("userprio", "-json", check=False).returncode == 0, 60, "the new negotiator answers")
    after = records(pool)
    assert after["carol"]["PriorityFactor"] == 2.5 and abs(after["carol"]["RealPriority"] - 40) < 0.1
    assert after["dave"]["PriorityFactor"] == 7
    # -resetusage, -delete, the wide tables
    pool.htcd("userprio", "-resetusage", "carol")
    assert records(pool)["carol"]["RealPriority"] == 0.5
    pool.htcd("userprio", "-delete", "dave")
    assert "dave" not in records(pool)
    wide = pool.htcd("userprio", "-all").stdout
    assert "Real" in wide and "Start Time" in wide and "Last Usage" in wide
    assert "Start Time" in pool.htcd("userprio", "-most").stdout
    gone = pool.htcd("userprio", "-delete", "nobody", check=False)
    assert gone.returncode != 0 and "no record" in gone.stderr


def test_a_concurrency_limit_caps_running_jobs(make_pool) -> None:
    pool = make_pool({"NUM_CPUS": "3", "DB_LIMIT": "1", "NEGOTIATOR_INTERVAL": "1"})
    pool.submit(SLEEP + "accounting_group_user = erin\nconcurrency_limits = db\nqueue 3\n")
    wait_for(lambda: sum(running_by_user(pool).values()) >= 1, 60, "a running job")
    wait_for(lambda: pool.log("NegotiatorLog").count("concurrency limit db reached") >= 2, 60,
             "two cycles refusing for the limit")
    assert sum(running_by_user(pool).values()) == 1


def _rank_pool(make_pool, consider: bool):
    return make_pool({"NUM_CPUS": "1", "NEGOTIATOR_INTERVAL": "1",
                      "NEGOTIATOR_CONSIDER_PREEMPTION": str(consider)},
                     config_text='RANK = (TARGET.AcctGroupUser =?= "vip") * 10\n', slots=1)


def test_rank_preemption_evicts_the_lower_ranked_job(make_pool) -> None:
    pool = _rank_pool(make_pool, True)
    pool.submit(SLEEP + "accounting_group_user = plain\nqueue\n", name="a.sub")
    wait_for(lambda: status_of(pool).get("plain") == "2", 60, "the plain job running")
    pool.submit(SLEEP + "accounting_group_user = vip\nqueue\n", name="b.sub")
    wait_for(lambda: status_of(pool) == {"plain": "1", "vip": "2"}, 90, "the vip job running, the plain one idle")
    assert "preempting grp.plain@" in pool.log("MatchLog")


def test_no_preemption_when_the_negotiator_does_not_consider_it(make_pool) -> None:
    pool = _rank_pool(make_pool, False)
    pool.submit(SLEEP + "accounting_group_user = plain\nqueue\n", name="a.sub")
    wait_for(lambda: status_of(pool).get("plain") == "2", 60, "the plain job running")
    pool.submit(SLEEP + "accounting_group_user = vip\nqueue\n", name="b.sub")
    start = pool.log("NegotiatorLog").count("Finished Negotiation Cycle")
    wait_for(lambda: pool.log("NegotiatorLog").count("Finished Negotiation Cycle") >= start + 3, 60, "three cycles")
    assert status_of(pool) == {"plain": "2", "vip": "1"}
    assert "preempting grp.plain@" not in pool.log("MatchLog")


def test_priority_preemption_evicts_the_worse_priority_user(make_pool) -> None:
    pool = make_pool({"NUM_CPUS": "1", "NEGOTIATOR_INTERVAL": "1", "PREEMPTION_REQUIREMENTS": "True"}, slots=1)
    pool.htcd("userprio", "-setfactor", "grp.hog", "1000")
    pool.htcd("userprio", "-setfactor", "grp.boss", "1")
    pool.submit(SLEEP + "accounting_group_user = hog\nqueue\n", name="a.sub")
    wait_for(lambda: status_of(pool).get("hog") == "2", 60, "the hog's job running")
    pool.submit(SLEEP + "accounting_group_user = boss\nqueue\n", name="b.sub")
    wait_for(lambda: status_of(pool) == {"hog": "1", "boss": "2"}, 90, "the boss's job running, the hog's idle")
    assert "preempting grp.hog@" in pool.log("MatchLog")


GROUPS = {"NUM_CPUS": "1", "GROUP_NAMES": "group_a, group_b", "GROUP_QUOTA_group_a": "1", "GROUP_QUOTA_group_b": "1"}
TWO_GROUPS = ("executable = /bin/sleep\narguments = 300\naccounting_group = group_a\nqueue\n"
              "accounting_group = group_b\nqueue\n")


def running_group(pool: Pool) -> str:
    out = pool.htcd("q", "-af", "AcctGroup", "JobStatus").stdout.split("\n")
    running = [line.split()[0] for line in out if line.strip().endswith(" 2")]
    return running[0] if len(running) == 1 else ""


def test_group_sort_expr_picks_the_group_that_negotiates_first(make_pool) -> None:
    """One slot, two equally starved groups: by default they go in name order (group_a gets the
    slot); a site's GROUP_SORT_EXPR putting group_b first gives it the slot."""
    knobs = {**GROUPS, "GROUP_SORT_EXPR": 'ifThenElse(AccountingGroup =?= "group_b", -1, '
                                          'ifThenElse(AccountingGroup =?= "<none>", 3.4e+38, 1))'}
    pool = make_pool(knobs, slots=1)
    pool.submit(TWO_GROUPS)
    assert wait_for(lambda: running_group(pool), 60, "one job to run") == "group_b"
    log = pool.log("NegotiatorLog")
    assert log.index("Group group_b - BEGIN NEGOTIATION") < log.index("Group group_a - BEGIN NEGOTIATION")
    pool.htcd("rm", "-all")


def test_a_group_sort_expr_that_does_not_parse_is_reported_and_the_default_used(make_pool) -> None:
    pool = make_pool({**GROUPS, "GROUP_SORT_EXPR": "GroupQuota >"}, slots=1)
    pool.submit(TWO_GROUPS)
    assert wait_for(lambda: running_group(pool), 60, "one job to run") == "group_a"
    assert "GROUP_SORT_EXPR = GroupQuota > is not a ClassAd expression" in pool.log("NegotiatorLog")
    pool.htcd("rm", "-all")

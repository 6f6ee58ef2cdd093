"""One sample of a collector's store: every series from the ads of a small pool with a partitionable
slot, expired ads left out, and the glance beside what ``htcd status -total`` counts."""

from __future__ import annotations

import time

import pytest

from htcd.classad import ClassAd
from htcd.cli.status_tables import SlotTotals
from htcd.collector.store import AdStore
from htcd.collector.view import sampler


def slot(name: str, state: str, activity: str, cpus: int, arch: str = "X86_64", opsys: str = "LINUX",
         **extra: str) -> dict[str, str]:
    return {"MyType": '"Machine"', "Name": f'"{name}"', "Machine": f'"{name.split("@")[-1]}"',
            "MyAddress": f'"<10.0.0.{hash(name.split("@")[-1]) % 200}:9618>"', "State": f'"{state}"',
            "Activity": f'"{activity}"', "Arch": f'"{arch}"', "OpSys": f'"{opsys}"', "Cpus": str(cpus), **extra}


def pool_store() -> AdStore:
    s = AdStore()
    big = {"MyAddress": '"<10.0.2.1:1>"', "RecentDaemonCoreDutyCycle": "0.5"}  # the startd's figure, in each slot
    arm = {"MyAddress": '"<10.0.2.2:1>"', "RecentDaemonCoreDutyCycle": "0.1"}
    # a partitionable slot with 8 cores, two dynamic slots of 2 and 3 carved from it
    s.update("Machine", slot("slot1@big", "Unclaimed", "Idle", 3, SlotType='"Partitionable"', **big))
    s.update("Machine", slot("slot1_1@big", "Claimed", "Busy", 2, SlotType='"Dynamic"', **big))
    s.update("Machine", slot("slot1_2@big", "Claimed", "Retiring", 3, SlotType='"Dynamic"', **big))
    s.update("Machine", slot("slot1@arm", "Owner", "Idle", 1, arch="AARCH64", **arm))
    s.update("Machine", slot("slot2@arm", "Claimed", "Busy", 1, arch="AARCH64", **arm))
    s.update("Machine", slot("slot1@odd", "Drained", "Idle", 4, Cpus="2 + 2"))  # an expression: still counted
    for schedd, idle, running, held in (("s1@h", 4, 2, 1), ("s2@h", 0, 3, 0)):
        s.update("Scheduler", {"Name": f'"{schedd}"', "MyAddress": '"<10.0.1.1:1>"', "TotalIdleJobs": str(idle),
                               "TotalRunningJobs": str(running), "TotalHeldJobs": str(held),
                               "TotalRemovedJobs": "1", "RecentDaemonCoreDutyCycle": "0.25"})
        # alice submits from both schedds: her counts add up
        s.update("Submitter", {"Name": '"alice@h"', "ScheddName": f'"{schedd}"', "MyAddress": '"<10.0.1.1:1>"',
                               "IdleJobs": str(idle), "RunningJobs": str(running), "HeldJobs": str(held)})
    s.update("Accounting", {"Name": '"alice@h"', "Priority": "512.5", "ResourcesUsed": "5",
                            "WeightedAccumulatedUsage": "3600.0"})
    s.update("Negotiator", {"Name": '"neg@h"', "MyAddress": '"<10.0.1.2:1>"', "LastNegotiationCycleDuration0": "0.5",
                            "LastNegotiationCycleMatches0": "2", "LastNegotiationCycleRejections0": "1",
                            "LastNegotiationCycleNumSchedulers0": "2", "RecentDaemonCoreDutyCycle": "0.01"})
    for host, duty in (("h", "0.1"), ("big", "0.3"), ("arm", None)):
        s.update("DaemonMaster", {"Name": f'"{host}"', "MyAddress": '"<10.0.1.3:1>"',
                                  **({"RecentDaemonCoreDutyCycle": duty} if duty else {})})
    return s


def test_a_sample_reduces_every_series() -> None:
    smp = sampler.take(pool_store())
    series = smp.series
    assert set(series) == set(sampler.SERIES)
    assert series["slots_by_state"] == {"Owner": 1, "Unclaimed": 1, "Matched": 0, "Claimed": 3, "Preempting": 0,
                                        "Backfill": 0, "Drained": 1}
    assert series["slots_by_activity"] == {"Idle": 3, "Busy": 2, "Suspended": 0, "Retiring": 1, "Vacating": 0,
                                           "Killing": 0, "Benchmarking": 0}
    assert series["slots_by_arch"] == {"X86_64/LINUX": 4, "AARCH64/LINUX": 2}
    assert series["claimed_by_arch"] == {"X86_64/LINUX": 2, "AARCH64/LINUX": 1}
    # the partitionable slot's 3 free cores, its dynamic slots' 5 claimed ones
    assert series["cpus_by_state"]["Unclaimed"] == 3 and series["cpus_by_state"]["Claimed"] == 6
    assert series["cpus_by_state"]["Drained"] == 4
    assert series["jobs_by_user"] == {"alice@h/Idle": 4, "alice@h/Running": 5, "alice@h/Held": 1}
    assert series["jobs_by_schedd"] == {"s1@h/Idle": 4, "s1@h/Running": 2, "s1@h/Held": 1, "s2@h/Idle": 0,
                                        "s2@h/Running": 3, "s2@h/Held": 0}
    assert series["user_priority"] == {"alice@h": 512.5}
    assert series["user_usage"] == {"alice@h": 5, "alice@h/accumulated": 3600.0}
    assert series["negotiation_cycle"] == {"duration": 0.5, "matches": 2, "rejections": 1, "submitters": 2}
    duty = series["duty_cycle"]
    assert duty.pop("masters/mean") == pytest.approx(0.2) and duty.pop("masters/max") == 0.3
    # two startds (five slots; the third host's slot has no figure): each counted once
    assert duty.pop("startds/mean") == pytest.approx(0.3) and duty.pop("startds/max") == 0.5
    assert duty == {"s1@h/Scheduler": 0.25, "s2@h/Scheduler": 0.25, "neg@h/Negotiator": 0.01}


def test_the_glance_counts_as_status_total_and_q_totals() -> None:
    s = pool_store()
    glance = sampler.take(s).glance
    want = SlotTotals()  # htcd status -total's own counting, over the same ads as ClassAds
    for e in s.table("Machine").entries.values():
        ad = ClassAd.from_wire(s.wire(e))
        want.add(f"{ad.eval_expr('Arch')}/{ad.eval_expr('OpSys')}", str(ad.eval_expr("State")))
    assert glance.rows == want.rows and glance.total == want.all
    out = glance.to_json()
    assert out["status_total"]["rows"][0]["arch"] == "AARCH64/LINUX"
    q = out["queue_totals"]
    assert (q["idle"], q["running"], q["held"], q["removed"], q["jobs"]) == (4, 5, 1, 2, 12)
    assert q["by_schedd"]["s2@h"]["running"] == 3


def test_expired_ads_are_left_out() -> None:
    s = pool_store()
    smp = sampler.take(s, now=time.time() + 10 * s.default_lifetime)
    assert sum(smp.series["slots_by_state"].values()) == 0 and smp.series["jobs_by_user"] == {}
    assert smp.ads == 0


def test_the_reduction_yields_between_chunks() -> None:
    s = AdStore()
    for i in range(sampler.CHUNK * 2 + 5):
        s.update("Machine", slot(f"slot{i}@h{i // 8}", "Unclaimed", "Idle", 1))
    gen = sampler.steps(s)
    pauses = 0
    while True:
        try:
            next(gen)
            pauses += 1
        except StopIteration as stop:
            result = stop.value
            break
    assert pauses >= 2 and result.series["slots_by_state"]["Unclaimed"] == sampler.CHUNK * 2 + 5

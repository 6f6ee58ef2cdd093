"""Partitionable slots on a real pool: dynamic slots carved per claim, several per negotiation
cycle, and the resources back when the jobs end."""

from __future__ import annotations

from pooltools import wait_for
from startd.startd_tools import WAITER, events, script, slot_ads, wait_states

PSLOT = {"NUM_CPUS": "4", "MEMORY": "4096", "POLLING_INTERVAL": "1"}


def test_partitionable_slot_runs_four_one_cpu_jobs_then_two_cpu_jobs(make_pool) -> None:
    pool = make_pool(PSLOT, "use FEATURE : PartitionableSlot\n", slots=1)
    pslot = slot_ads(pool)["slot1"]
    assert pslot.get_value("SlotType") == "Partitionable" and pslot.get_value("PartitionableSlot") is True
    assert (pslot.get_value("Cpus"), pslot.get_value("Memory")) == (4, 4096)
    script(pool, "wait.sh", WAITER)
    pool.submit("executable = wait.sh\narguments = $(Process)\nlog = one.log\nrequest_cpus = 1\n"
                "request_memory = 100\nqueue 4\n")
    busy = wait_states(pool, lambda s: sum(v == "Claimed/Busy" for v in s.values()) == 4, 90,
                       "four one-cpu jobs running at once")
    assert sorted(k for k, v in busy.items() if v == "Claimed/Busy") == ["slot1_1", "slot1_2", "slot1_3", "slot1_4"]
    ads = slot_ads(pool)
    for name in ("slot1_1", "slot1_2", "slot1_3", "slot1_4"):
        dslot = ads[name]
        assert dslot.get_value("SlotType") == "Dynamic" and dslot.get_value("DynamicSlot") is True
        assert (dslot.get_value("Cpus"), dslot.get_value("Memory")) == (1, 128), "100 MB rounds up to 128"
    left = ads["slot1"]
    assert (left.get_value("Cpus"), left.get_value("Memory")) == (0, 4096 - 4 * 128)
    assert sorted(left.get_value("ChildCpus")) == [1, 1, 1, 1] and left.get_value("NumDynamicSlots") == 4
    assert "Matched" in pool.log("MatchLog") and "4 matched" in pool.log("NegotiatorLog"), \
        "one negotiation cycle hands out all four pieces of the partitionable slot"

    (pool.jobs_dir / "go").touch()
    wait_for(lambda: events(pool.jobs_dir / "one.log").count("005") == 4, 60, "the four jobs to end")
    wait_states(pool, {"slot1": "Unclaimed/Idle"}, 30)
    wait_for(lambda: list(slot_ads(pool)) == ["slot1"], 30, "the dynamic slots to go")
    (pool.jobs_dir / "go").unlink()

    pool.submit("executable = wait.sh\narguments = $(Process)\nlog = two.log\nrequest_cpus = 2\n"
                "request_memory = 300\nqueue 2\n", name="two.sub")
    wait_states(pool, lambda s: sum(v == "Claimed/Busy" for v in s.values()) == 2, 90, "two two-cpu jobs")
    ads = slot_ads(pool)
    dynamic = [ad for name, ad in ads.items() if name != "slot1"]
    assert [(ad.get_value("Cpus"), ad.get_value("Memory")) for ad in dynamic] == [(2, 384), (2, 384)]
    assert ads["slot1"].get_value("Cpus") == 0
    (pool.jobs_dir / "go").touch()
    wait_for(lambda: events(pool.jobs_dir / "two.log").count("005") == 2, 60, "the two jobs to end")
    wait_for(lambda: list(slot_ads(pool)) == ["slot1"], 30, "the dynamic slots to go")
    back = slot_ads(pool)["slot1"]
    assert (back.get_value("Cpus"), back.get_value("Memory"), back.get_value("NumDynamicSlots")) == (4, 4096, 0)
    assert back.get_value("Disk") == pslot.get_value("Disk"), "every resource is back"
    status = pool.htcd("status", "-af", "Name").stdout.split()
    assert [n.split("@")[0] for n in status] == ["slot1"], "the collector forgot the dynamic slots"

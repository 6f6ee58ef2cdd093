"""The defrag daemon on a real personal pool: a partitionable-slot machine kept busy with one-cpu
jobs is drained so a waiting four-cpu job runs; DEFRAG_REQUIREMENTS false drains nothing; the
Defrag ad is in the collector; a restart keeps what was drained (the state file)."""

from __future__ import annotations

import os
import signal

from pooltools import wait_for
from startd.startd_tools import WAITER, events, script, slot_ads, wait_states

from htcd.classad import ClassAd, parse_old_ads

DEFRAG_POOL = {
    "NUM_CPUS": "4", "MEMORY": "4096", "POLLING_INTERVAL": "1",
    "DAEMON_LIST": "MASTER COLLECTOR NEGOTIATOR SCHEDD STARTD DEFRAG",
    "DEFRAG_INTERVAL": "1", "DEFRAG_UPDATE_INTERVAL": "1",
    "DEFRAG_DRAINING_MACHINES_PER_HOUR": "3600", "DEFRAG_SCHEDULE": "quick",
}


def defrag_ad(pool) -> ClassAd | None:
    """The Defrag ad as ``htcd status -any -l`` prints it (None while there is none)."""
    out = pool.htcd("status", "-any", "-constraint", 'MyType == "Defrag"', "-l", check=False)
    if out.returncode != 0 or not out.stdout.strip():
        return None
    ads = parse_old_ads(out.stdout)
    return ads[0] if ads else None


def test_defrag_drains_a_fragmented_machine_for_a_whole_machine_job(make_pool) -> None:
    pool = make_pool(DEFRAG_POOL, "use FEATURE : PartitionableSlot\nDEFRAG_REQUIREMENTS = false\n", slots=1)
    script(pool, "wait.sh", WAITER)
    try:
        _drain_and_restart(pool)
    finally:
        (pool.jobs_dir / "go").touch()


def _drain_and_restart(pool) -> None:
    # the four-cpu job first (held), so that it comes before the one-cpu jobs once they are evicted
    big = pool.submit("executable = wait.sh\narguments = big\nlog = big.log\nrequest_cpus = 4\n"
                      "request_memory = 100\nhold = true\nqueue\n", name="big.sub")
    pool.submit("executable = wait.sh\narguments = $(Process)\nlog = small.log\nrequest_cpus = 1\n"
                "request_memory = 100\nqueue 4\n")
    wait_states(pool, lambda s: sum(v == "Claimed/Busy" for v in s.values()) == 4, 90, "four one-cpu jobs")
    pool.htcd("release", str(big))

    # DEFRAG_REQUIREMENTS = false: polls go by, nothing is drained
    wait_for(lambda: pool.log("DefragLog").count("Drained 0 machines (wanted to drain 1 machines).") >= 3, 60,
             lambda: "three polls that drain nothing\n" + pool.log("DefragLog")[-3000:])
    assert "Draining" not in slot_ads(pool)["slot1"]
    ad = wait_for(lambda: defrag_ad(pool), 30, "the Defrag ad")
    assert ad.get_value("DrainSuccesses") == 0 and ad.get_value("WholeMachines") == 0

    with open(pool.config_file, "a") as f:
        f.write("DEFRAG_REQUIREMENTS = NumDynamicSlots >= 4\n")
    pool.htcd("reconfig")
    wait_for(lambda: "001" in events(pool.jobs_dir / "big.log"), 120,
             lambda: "the four-cpu job to start on the drained machine\n" + pool.log("DefragLog")[-3000:])
    small = events(pool.jobs_dir / "small.log")
    assert small.count("004") == 4, "quick draining evicted the four one-cpu jobs"
    log = pool.log("DefragLog")
    assert "Initiating quick draining of slot1@" in log
    assert "on completion: resume; START while draining: FALSE" in pool.log("StartLog"), \
        "DEFRAG_DRAINING_START_EXPR (default FALSE) is the START expression while draining"

    ad = wait_for(lambda: (a := defrag_ad(pool)) is not None and a.get_value("DrainSuccesses", 0) >= 1 and a, 30,
                  "the Defrag ad with the drain counted")
    assert ad.get_value("MyType") == "Defrag" and ad.get_value("DrainFailures") == 0
    assert ad.get_value("RecentDrainSuccesses") >= 1
    drains = ad.get_value("RecentDrainsList")
    assert drains and drains[0].get_value("what") == "quick" and drains[0].get_value("who").startswith("slot1@")
    assert ad.get_value("MachinesDrainingPeak") >= 0 and ad.get_value("WholeMachines") >= 0
    successes = ad.get_value("DrainSuccesses")

    # a restart of the defrag daemon keeps what it drained (DEFRAG_STATE_FILE)
    old = pool.daemon_pids()["DEFRAG"]
    started = ad.get_value("DaemonStartTime")
    os.kill(old, signal.SIGTERM)
    ad = wait_for(lambda: (a := defrag_ad(pool)) is not None and a.get_value("DaemonStartTime") != started
                  and a, 60, "the restarted defrag daemon's ad")
    assert ad.get_value("DrainSuccesses") >= successes
    assert ad.get_value("RecentDrainsList")[0].get_value("who").startswith("slot1@")
    assert "drains sent" in pool.log("DefragLog")

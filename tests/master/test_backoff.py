"""Point 1: a crashed daemon is restarted after HTCondor's backoff, which grows with each crash
and starts over once the daemon has recovered."""

from __future__ import annotations

import os
import signal

from master.master_helpers import ad_value, new_pid, restart_delays, serving
from pooltools import wait_for

from htcd.config import Config
from htcd.master.backoff import Backoff, seconds_text


def test_the_formula_and_defaults_are_htcondors() -> None:
    b = Backoff.for_daemon(Config("MASTER"), "SCHEDD")
    assert (b.constant, b.factor, b.ceiling, b.recover) == (9, 2.0, 3600, 300)
    # the manual's worked example: 1st crash 10 s, 2nd 11 s, 3rd 13 s, 6th 41 s, 9th 265 s, 13th capped
    assert [b.delay(n) for n in (0, 1, 2, 5, 8, 12)] == [10, 11, 13, 41, 265, 3600]
    assert b.delay(5000) == 3600, "no overflow far past the ceiling"
    assert Backoff(constant=0.2, factor=1.5).delay(2) == 0.2 + 3, "the power is rounded up, as ceil()"
    assert seconds_text(10.0) == "10" and seconds_text(1.2) == "1.2"


def test_per_daemon_knobs_win_over_the_global_ones() -> None:
    cfg = Config("MASTER")
    cfg.define("MASTER_BACKOFF_CONSTANT", "5", "<test>", 1)
    cfg.define("MASTER_SCHEDD_BACKOFF_FACTOR", "3", "<test>", 2)
    cfg.define("MASTER_BACKOFF_FACTOR", "0", "<test>", 3)  # not positive: HTCondor uses the default
    assert Backoff.for_daemon(cfg, "SCHEDD").delay(2) == 5 + 9
    assert Backoff.for_daemon(cfg, "STARTD").delay(2) == 5 + 4


def test_killed_daemon_restarts_with_growing_backoff_that_resets_after_recovery(make_pool) -> None:
    pool = make_pool({"MASTER_SCHEDD_BACKOFF_FACTOR": "3", "MASTER_SCHEDD_RECOVER_FACTOR": "8"})
    first = pool.daemon_pids()["SCHEDD"]
    os.kill(first, signal.SIGKILL)
    second = new_pid(pool, "SCHEDD", first)
    os.kill(second, signal.SIGKILL)  # within the recover time of the first restart
    third = new_pid(pool, "SCHEDD", second)
    started = f'Started DaemonCore process "htcd schedd -f", pid and pgroup = {third}'
    wait_for(lambda: started in pool.log("MasterLog"), 60, "the master to log the start")
    log = pool.log("MasterLog")
    assert f"The SCHEDD (pid {first}) died due to signal 9 (Killed)" in log
    assert f"The SCHEDD (pid {second}) died due to signal 9 (Killed)" in log
    # 0.2 (the pools' MASTER_BACKOFF_CONSTANT) + ceil(3 ** n) for n = 0, 1
    assert restart_delays(log, "SCHEDD") == ["1.2", "3.2"], log
    assert ad_value(pool, "SCHEDD_Restarts") == 2
    serving(pool)

    wait_for(lambda: "SCHEDD recovered" in pool.log("MasterLog"), 60, "the schedd to recover (8 s up)")
    assert ad_value(pool, "SCHEDD_Restarts") == 0
    os.kill(third, signal.SIGKILL)
    new_pid(pool, "SCHEDD", third)
    assert restart_delays(pool.log("MasterLog"), "SCHEDD") == ["1.2", "3.2", "1.2"], "the backoff starts over"
    assert restart_delays(pool.log("MasterLog"), "STARTD") == [], "the other daemons were left alone"

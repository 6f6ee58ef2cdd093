"""Point 4: a new installation (the watched file changes) restarts every daemon per
MASTER_NEW_BINARY_RESTART and re-executes the master.

The test points MASTER_WATCH_FILE at a file of its own and changes its modification time, as
an install would (by default the master watches htcd's own htcd/__init__.py)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from master.master_helpers import MINIMAL, after
from pooltools import gone, wait_for

BANNER = "** htcd MASTER"


@pytest.mark.parametrize(("mode", "stop_line"), [
    ("GRACEFUL", "Sent SIGTERM to SCHEDD"),
    ("PEACEFUL", "Sent peaceful shutdown request to SCHEDD"),
    ("FAST", "Sent SIGQUIT to SCHEDD"),
])
def test_new_installation_restarts_the_daemons_and_the_master(mode: str, stop_line: str, pool_dir: Path,
                                                              make_pool) -> None:
    watched = pool_dir / "installed-version"
    watched.write_text("1\n")
    pool = make_pool({**MINIMAL, "MASTER_WATCH_FILE": str(watched), "MASTER_CHECK_NEW_EXEC_INTERVAL": "1",
                      "MASTER_NEW_BINARY_RESTART": mode, "MASTER_NEW_BINARY_DELAY": "0.5"}, slots=0)
    before = pool.daemon_pids()
    assert f"Master restart ({mode}) is watching {watched}" in pool.log("MasterLog")

    later = time.time() + 100
    os.utime(watched, (later, later))  # "a new version was installed"
    wait_for(lambda: pool.log("MasterLog").count(BANNER) == 2, 60, f"the master to re-execute\n{pool.log('MasterLog')}")
    after_pids = wait_for(lambda: (lambda p: p if set(p) == set(before) else None)(pool.daemon_pids()), 60,
                          "the daemons to start again")
    log = after(pool.log("MasterLog"), f"{watched} was modified")
    adverb = {"GRACEFUL": "Gracefully", "PEACEFUL": "Peacefully", "FAST": "Fast"}[mode]
    assert f"restarting htcd master {adverb}." in log.splitlines()[0]
    assert stop_line in log
    assert "All daemons are gone." in log and "Restarting master in 0.5 seconds." in log
    assert 'Doing exec( "' in log and f"(pid {pool.master.pid}) listening" in log, "the same PID, re-executed"
    assert pool.master.poll() is None
    for name, pid in before.items():
        assert gone(pid) and after_pids[name] != pid, f"{name} was restarted"
    wait_for(lambda: pool.htcd("q", check=False).returncode == 0, 60, "the new schedd to answer")


def test_restart_mode_never_only_logs(pool_dir: Path, make_pool) -> None:
    watched = pool_dir / "installed-version"
    watched.write_text("1\n")
    pool = make_pool({**MINIMAL, "MASTER_WATCH_FILE": str(watched), "MASTER_CHECK_NEW_EXEC_INTERVAL": "1",
                      "MASTER_NEW_BINARY_RESTART": "NEVER"}, slots=0)
    before = pool.daemon_pids()
    later = time.time() + 100
    os.utime(watched, (later, later))
    wait_for(lambda: "but master restart mode is NEVER" in pool.log("MasterLog"), 60, "the change to be noticed")
    assert pool.daemon_pids() == before
    assert pool.log("MasterLog").count(BANNER) == 1 and "Doing exec" not in pool.log("MasterLog")

"""Point 2: a daemon that stops sending keepalives (here: stopped with SIGSTOP) is killed by the
master within the timeout it promised, and restarted; the pool then works again."""

from __future__ import annotations

import os
import resource
import signal
from collections.abc import Iterator

import pytest
from master.master_helpers import after, new_pid, serving, wait_state
from pooltools import gone

from htcd.daemon.keepalive import alive_period


def test_keepalive_period_is_htcondors() -> None:
    assert alive_period(3600) == 1170  # a third of the timeout, less 30 s
    assert alive_period(4) == 1 and alive_period(1) == 1


@pytest.fixture
def no_core_files() -> Iterator[None]:
    """SIGABRT must not leave core files in the working directory (children inherit the limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    resource.setrlimit(resource.RLIMIT_CORE, (0, hard))
    yield
    resource.setrlimit(resource.RLIMIT_CORE, (soft, hard))


def test_a_hung_schedd_is_killed_and_restarted(no_core_files: None, make_pool) -> None:
    pool = make_pool({"SCHEDD_NOT_RESPONDING_TIMEOUT": "4"})
    hung = pool.daemon_pids()["SCHEDD"]
    wait_state(pool, "SCHEDD", "Alive")  # its keepalives arrive
    os.kill(hung, signal.SIGSTOP)
    fresh = new_pid(pool, "SCHEDD", hung)
    log = after(pool.log("MasterLog"), f"Child pid {hung} appears hung! Killing it hard.")
    assert f"Sent SIGKILL to SCHEDD (pid {hung})" in log
    assert f"The SCHEDD (pid {hung}) was killed because it was no longer responding" in log
    assert "restarting htcd schedd in" in log
    assert gone(hung)
    serving(pool)
    assert "Total for query: 0 jobs" in pool.htcd("q").stdout, "the new schedd answers"
    wait_state(pool, "SCHEDD", "Alive")
    assert pool.daemon_pids()["STARTD"], "the other daemons keep running"

    # NOT_RESPONDING_WANT_CORE: SIGABRT first (for a core file), which a stopped process takes too
    with open(pool.config_file, "a") as f:
        f.write("NOT_RESPONDING_WANT_CORE = true\n")
    pool.htcd("reconfig")
    os.kill(fresh, signal.SIGSTOP)
    newest = new_pid(pool, "SCHEDD", fresh)
    log = after(pool.log("MasterLog"), f"Child pid {fresh} appears hung! Killing it hard.")
    assert "Sending SIGABRT to child to generate a core file." in log
    assert f"Sent SIGABRT to SCHEDD (pid {fresh})" in log
    assert f"The SCHEDD (pid {fresh}) was killed because it was no longer responding" in log
    assert f"Sent SIGKILL to SCHEDD (pid {fresh})" not in log, "SIGABRT was enough"
    assert gone(fresh) and newest != fresh
    serving(pool)

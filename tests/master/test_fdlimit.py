"""RLIMIT_NOFILE: the master raises its soft limit to the hard limit before it starts its daemons,
which inherit it; MAX_FILE_DESCRIPTORS asks for a value, as in HTCondor."""

from __future__ import annotations

import logging
import os
import resource
import subprocess
import sys

from master.master_helpers import MINIMAL
from pooltools import wait_for

from htcd.master.fdlimit import Limit, host_ceiling, target

LOW = 256


def _nofile(pid: int) -> tuple[int, int]:
    """(soft, hard) open-file limit of a process, from /proc/<pid>/limits."""
    with open(f"/proc/{pid}/limits") as f:
        for line in f:
            if line.startswith("Max open files"):
                soft, hard = line.split()[3:5]
                return int(soft), int(hard)
    raise AssertionError(f"no 'Max open files' line for pid {pid}")


def _can_raise_hard() -> bool:
    """Whether this process may raise its hard limit (root with CAP_SYS_RESOURCE), tried in a child."""
    probe = ("import resource; s, h = resource.getrlimit(resource.RLIMIT_NOFILE); "
             "resource.setrlimit(resource.RLIMIT_NOFILE, (s, h + 1))")
    return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0


def _start_low(pool) -> None:
    """Start the pool's master with a soft limit of LOW (the hard limit as inherited)."""
    def low() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (LOW, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    pool.master = subprocess.Popen([sys.executable, "-m", "htcd", "master", "-f"], env=pool.env,
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   preexec_fn=low)
    wait_for(lambda: "SCHEDD" in pool.daemon_pids(), 60, f"the schedd\n{pool.log('MasterLog')}")


def test_schedd_inherits_the_raised_limit(make_pool) -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if os.geteuid() == 0 and _can_raise_hard():  # root raises the hard limit too, to what the host allows
        hard = max(hard, host_ceiling())
    pool = make_pool(knobs=MINIMAL, start=False, slots=0)
    _start_low(pool)
    assert _nofile(pool.master.pid)[0] == hard, "the master raised its own soft limit"
    # HTCondor's default SCHEDD_MAX_FILE_DESCRIPTORS (20000) caps the schedd's soft limit below a larger hard one
    assert _nofile(pool.daemon_pids()["SCHEDD"]) == (min(20000, hard), hard)
    assert f"RLIMIT_NOFILE: soft {LOW} -> {hard}, hard" in pool.log("MasterLog")


def test_subsystem_knob_sets_one_daemon(make_pool) -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    pool = make_pool(knobs={**MINIMAL, "SCHEDD_MAX_FILE_DESCRIPTORS": "300", "MAX_FILE_DESCRIPTORS": "400"},
                     start=False, slots=0)
    _start_low(pool)
    want = min(400, hard)
    wait_for(lambda: "COLLECTOR" in pool.daemon_pids(), 60, "the collector")
    assert _nofile(pool.master.pid)[0] == want
    # HTCondor's default COLLECTOR_MAX_FILE_DESCRIPTORS = 10240 wins over MAX_FILE_DESCRIPTORS
    assert _nofile(pool.daemon_pids()["COLLECTOR"])[0] == min(10240, hard)
    assert _nofile(pool.daemon_pids()["SCHEDD"])[0] == min(300, hard)


def test_target_rules() -> None:
    # not root: soft up to the hard limit, never past it; the hard limit stays
    assert target(Limit(1024, 4096), None, False, 1 << 20) == Limit(4096, 4096)
    assert target(Limit(1024, 4096), 10000, False, 1 << 20) == Limit(4096, 4096)
    assert target(Limit(1024, 4096), 2000, False, 1 << 20) == Limit(2000, 4096)
    # root: the hard limit up to the host's ceiling (or the knob), the soft limit with it
    assert target(Limit(1024, 4096), None, True, 1 << 20) == Limit(1 << 20, 1 << 20)
    assert target(Limit(1024, 4096), 10000, True, 1 << 20) == Limit(10000, 10000)
    assert target(Limit(1024, 4096), 10000, True, 8000) == Limit(8000, 8000)
    logging.getLogger(__name__).debug("rules checked")

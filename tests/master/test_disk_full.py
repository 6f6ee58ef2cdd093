"""Point 3: when the file system of SPOOL (or LOG) fills up, the master stops its daemons
gracefully, says why in MasterLog and on stderr, and exits with status 99.

The disk is a real 8 MB tmpfs mounted for the test (this needs root); where mounting is not
allowed, the test raises MASTER_MIN_FREE_DISK above the free space of SPOOL's real file
system instead, which the master sees exactly as a full disk."""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from master.master_helpers import MINIMAL
from pooltools import gone

from htcd.master.checks import free_mb


@pytest.fixture
def small_fs(pool_dir: Path) -> Iterator[Path | None]:
    """An 8 MB tmpfs, or None where this machine does not let the test mount one."""
    mnt = pool_dir / "smallfs"
    mnt.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m,mode=0755", "tmpfs", str(mnt)],
                             capture_output=True).returncode == 0
    yield mnt if mounted else None
    if mounted:
        subprocess.run(["umount", str(mnt)], check=True)


def fill(directory: Path) -> None:
    """Write until the file system says it is full."""
    chunk = b"\0" * (1 << 20)
    with open(directory / "filler", "wb") as f:
        try:
            while True:
                f.write(chunk)
                f.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc


def test_master_stops_everything_cleanly_when_spool_fills_up(small_fs: Path | None, make_pool) -> None:
    knobs = {**MINIMAL, "MASTER_MIN_FREE_DISK": "2", "MASTER_CHECK_DISK_INTERVAL": "1"}
    if small_fs is not None:
        knobs["SPOOL"] = str(small_fs / "spool")
    pool = make_pool(knobs, slots=0)
    children = pool.daemon_pids()
    assert set(children) == {"COLLECTOR", "SCHEDD"}
    assert pool.master.poll() is None, "enough room at the start"

    if small_fs is not None:
        fill(small_fs)
        assert (free_mb(str(small_fs)) or 0) < 2
    else:  # no tmpfs here: demand more room than SPOOL's file system has
        spool = str(pool.local / "spool")
        with open(pool.config_file, "a") as f:
            f.write(f"MASTER_MIN_FREE_DISK = {int((free_mb(spool) or 0) + 1024)}\n")
        pool.htcd("reconfig")

    where = "SPOOL" if small_fs is not None else "LOG"  # LOG and SPOOL share the real file system
    assert pool.master.wait(60) == 99, "DAEMON_NO_RESTART: a supervisor should not restart it at once"
    stderr = pool.master.stderr.read().decode()
    assert f"htcd master: the file system holding {where} (" in stderr
    assert "less than MASTER_MIN_FREE_DISK (" in stderr and "shutting down the daemons and exiting" in stderr
    log = pool.log("MasterLog")
    assert f"the file system holding {where} (" in log
    for name, pid in children.items():
        assert gone(pid), f"{name} left behind"
        assert f"Sent SIGTERM to {name} (pid {pid})" in log, "a graceful stop"
        assert f"The {name} (pid {pid}) exited with status 0" in log
    assert log.index("Sent SIGTERM to SCHEDD") < log.index("Sent SIGTERM to COLLECTOR"), "the collector last"
    assert "SCHEDD (pid" in pool.log("SchedLog") and "EXITING WITH STATUS 0" in pool.log("SchedLog")
    assert not os.path.exists(pool.local / "log" / ".master_address")

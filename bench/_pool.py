"""A real pool in a temp dir for the benchmarks: start the master with some daemons, wait until a
tool gets an answer, find a daemon's PID, stop it and remove its directory.  (``make bench`` skips files starting with ``_``.)"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

HTCD = [sys.executable, "-m", "htcd"]


def start_pool(root: Path, knobs: list[str], ready: list[str], what: str) -> tuple[subprocess.Popen[bytes], dict[str, str]]:
    """Start ``htcd master`` on a personal-pool config plus ``knobs``; return once ``htcd *ready``
    succeeds (else exit saying ``what`` did not come up)."""
    cfg = root / "htcd_config"
    cfg.write_text("\n".join(["use ROLE : Personal", "CONDOR_HOST = 127.0.0.1", "COLLECTOR_HOST = $(CONDOR_HOST):0",
                              f"LOCAL_DIR = {root / 'local'}", *knobs]) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("_CONDOR_", "_HTCD_", "CONDOR_CONFIG"))}
    env["HTCD_CONFIG"] = str(cfg)
    master = subprocess.Popen([*HTCD, "master", "-f"], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while subprocess.run([*HTCD, *ready], env=env, capture_output=True).returncode != 0:
        if time.monotonic() > deadline:
            master.kill()
            raise SystemExit(f"the {what} did not come up")
        time.sleep(0.2)
    return master, env


def daemon_pid(master: subprocess.Popen[bytes], daemon: str) -> int:
    for child in psutil.Process(master.pid).children():
        if child.cmdline()[1:4] == ["-m", "htcd", daemon]:
            return child.pid
    raise SystemExit(f"no {daemon} process")


def stop_pool(master: subprocess.Popen[bytes], root: Path) -> None:
    """Stop the pool by its master's PID (SIGTERM; SIGKILL if it is not gone within 60 s) and
    remove its directory."""
    master.send_signal(signal.SIGTERM)
    try:
        master.wait(60)
    except subprocess.TimeoutExpired:
        master.kill()
        master.wait()
    shutil.rmtree(root, ignore_errors=True)

"""Helpers for the startd's pool tests: fresh slot ads straight from the startd, waits on slot
states, jobs that wait for a file, and a startd run by the test itself (not by a master)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
from pooltools import Pool, wait_for

from htcd.classad import ClassAd
from htcd.wire.address import Address
from htcd.wire.client import Connection
from htcd.wire.locate import read_address_file

# A job that records its pid and waits until the test creates the file "go" (no timing guesses).
WAITER = """#!/bin/sh
echo $$ > {dir}/pid.$1
while [ ! -e {dir}/go ]; do sleep 0.1; done
echo finished
"""
# The same, ignoring SIGTERM (only SIGKILL ends it before "go").
STUBBORN = """#!/bin/sh
trap 'echo got TERM >> {dir}/term.$1' TERM
echo $$ > {dir}/pid.$1
while [ ! -e {dir}/go ]; do sleep 0.1; done
echo finished
"""


def startd_address(pool: Pool) -> Address | None:
    return read_address_file(str(pool.local / "log" / ".startd_address"))


def call_startd(pool: Pool, command: str, **args: Any) -> Any:
    addr = startd_address(pool)
    assert addr is not None, "the startd has no address file"
    with Connection(addr) as conn:
        return conn.call(command, **args)


def slot_ads(pool: Pool) -> dict[str, ClassAd]:
    """The startd's own slot ads, fresh (DC_QUERY_SELF), by slot name."""
    try:
        wires = call_startd(pool, "DC_QUERY_SELF")
    except Exception:  # not up yet (or restarting): the caller waits
        return {}
    ads = [ClassAd.from_wire(w) for w in wires]
    return {str(ad.get_value("Name")).split("@")[0]: ad for ad in ads}


def states(pool: Pool) -> dict[str, str]:
    return {name: f"{ad.get_value('State')}/{ad.get_value('Activity')}" for name, ad in slot_ads(pool).items()}


def wait_states(pool: Pool, want: dict[str, str] | Callable[[dict[str, str]], bool], timeout: float = 60,
                what: str = "") -> dict[str, str]:
    """Wait until the slots are in the wanted State/Activity (a mapping name -> "State/Activity",
    or a predicate on the whole mapping)."""
    def check() -> dict[str, str] | None:
        now = states(pool)
        ok = want(now) if callable(want) else all(now.get(k) == v for k, v in want.items())
        return now if ok else None

    last: list[dict[str, str]] = []
    try:
        return wait_for(lambda: check() or last.append(states(pool)), timeout, what or f"slot states {want}")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; last seen {last[-1] if last else {}}\n{pool.log('StartLog')[-3000:]}") from None


def script(pool: Pool, name: str, body: str) -> Path:
    path = pool.jobs_dir / name
    path.write_text(body.format(dir=pool.jobs_dir))
    os.chmod(path, 0o755)
    return path


def stopped(proc: psutil.Process) -> bool:
    """The job's process is suspended: stopped (T), or blocked in vfork() (D) for a child that
    was stopped before it could exec -- what SIGSTOP to a shell's process group gives when it
    lands between the shell's vfork and its child's exec (dash runs commands so), one time in
    twenty for a loop of ``sleep 0.1``, more often with the freezer."""
    with contextlib.suppress(psutil.Error):
        status = proc.status()
        if status == psutil.STATUS_STOPPED:
            return True
        return status == psutil.STATUS_DISK_SLEEP and any(c.status() == psutil.STATUS_STOPPED
                                                          for c in proc.children())
    return False


def job_pid(pool: Pool, proc: int = 0, timeout: float = 60) -> int:
    path = pool.jobs_dir / f"pid.{proc}"
    wait_for(lambda: path.exists() and path.read_text().strip(), timeout, f"job {proc} to start")
    return int(path.read_text())


def wait_cycles(pool: Pool, n: int = 2, timeout: float = 60) -> None:
    """Wait until ``n`` more negotiation cycles have finished (so a whole one began after now)."""
    marker = "---------- Finished Negotiation Cycle"
    seen = pool.log("NegotiatorLog").count(marker)
    wait_for(lambda: pool.log("NegotiatorLog").count(marker) >= seen + n, timeout, f"{n} negotiation cycles")


def events(log: Path) -> list[str]:
    text = log.read_text() if log.exists() else ""
    return [line[:3] for line in text.splitlines() if line[:3].isdigit() and " (" in line]


def transitions(pool: Pool, slot: str) -> list[str]:
    """``A/B -> C/D (why)`` for every transition of ``slot`` in StartLog, in order."""
    marker = f" {slot}: Changing state and activity: "
    return [line.split(marker, 1)[1] for line in pool.log("StartLog").splitlines() if marker in line]


class OwnStartd:
    """A startd the test starts and stops itself (its pool's master runs no startd), to see how
    it exits."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.out = pool.dir / "startd.stderr"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, slots: int = 1) -> OwnStartd:
        with open(self.out, "ab") as err:
            self.proc = subprocess.Popen([sys.executable, "-m", "htcd", "startd", "-f"], env=self.pool.env,
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        wait_for(lambda: len(slot_ads(self.pool)) >= slots, 60, f"{slots} slots of the test's own startd")
        return self

    def send_off(self, **args: Any) -> None:
        call_startd(self.pool, "DC_OFF_GRACEFUL", **args)

    def wait(self, timeout: float = 60) -> int:
        assert self.proc is not None
        return self.proc.wait(timeout)

    def stop(self) -> None:
        """End the startd by its PID (SIGTERM, then SIGKILL), whatever state the test left it in."""
        if self.proc is None or self.proc.poll() is not None:
            return
        (self.pool.jobs_dir / "go").touch()  # let waiting jobs finish
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)

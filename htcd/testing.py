"""A pytest plugin for plugin authors: ``personal_pool``, a real htcd pool of one host in a
temporary directory, with the plugins installed in the test's Python environment.

Use it from a plugin package's ``conftest.py``::

    pytest_plugins = ["htcd.testing"]

and in a test::

    def test_my_universe(personal_pool):
        cluster = personal_pool.submit("universe = mine\\nexecutable = /bin/true\\nqueue\\n")
        assert personal_pool.wait_for_job(cluster)["ExitCode"] == "0"

The pool's daemons are real processes (``htcd master`` and its children) that load plugins
through the ``htcd`` entry-point group, as on a production host; override the
``personal_pool_config`` fixture (config lines, e.g. ``use POLICY : MyPolicy``) or
``personal_pool_env`` (e.g. a ``PYTHONPATH`` where the plugin is installed) to change them.
The pool is stopped by its master's PID after the test, and anything it left is killed and
reported as a failure; the daemons' logs are kept in the test's ``tmp_path / "pool-logs"``.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# Short intervals, so a test's job is matched within seconds.
DEFAULT_KNOBS = {
    "NUM_CPUS": "2",
    "UPDATE_INTERVAL": "5",
    "NEGOTIATOR_INTERVAL": "5",
    "NEGOTIATOR_CYCLE_DELAY": "0",
    "MASTER_BACKOFF_CONSTANT": "0.2",
}


def wait_for(cond: Callable[[], Any], timeout: float, what: Callable[[], str] | str,
             interval: float = 0.05) -> Any:
    """Poll ``cond`` until it returns something truthy; fail at the deadline saying ``what``
    (a string or a function giving one, e.g. the tail of a log)."""
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what() if callable(what) else what}")
        time.sleep(interval)


class PersonalPool:
    """A personal pool (collector, negotiator, schedd and startd on 127.0.0.1) under ``root``,
    driven with the real ``htcd`` tools."""

    def __init__(self, root: Path, config_text: str = "", knobs: dict[str, str] | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.dir = Path(root)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.config_file = self.dir / "htcd_config"
        lines = ["use ROLE : Personal", "CONDOR_HOST = 127.0.0.1", "COLLECTOR_HOST = $(CONDOR_HOST):0",
                 f"LOCAL_DIR = {self.local}",
                 *(f"{k} = {v}" for k, v in {**DEFAULT_KNOBS, **(knobs or {})}.items()), config_text]
        self.config_file.write_text("\n".join(lines) + "\n")
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("_CONDOR_", "_HTCD_")) and k not in ("HTCD_CONFIG", "CONDOR_CONFIG")}
        self.env.update(env or {})
        self.env["HTCD_CONFIG"] = str(self.config_file)
        self.jobs_dir = self.dir / "jobs"
        self.jobs_dir.mkdir(exist_ok=True)
        self.master: subprocess.Popen[bytes] | None = None

    @property
    def local(self) -> Path:
        return self.dir / "local"

    def log(self, name: str) -> str:
        """A daemon's log (``StartLog``, ``SchedLog``, ``MasterLog``...), "" before it exists."""
        path = self.local / "log" / name
        return path.read_text(errors="replace") if path.exists() else ""

    def htcd(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run ``htcd ARGS`` against this pool, in its jobs directory."""
        proc = subprocess.run([sys.executable, "-m", "htcd", *args], env=self.env, cwd=self.jobs_dir,
                              capture_output=True, text=True, timeout=120)
        if check and proc.returncode != 0:
            raise AssertionError(f"htcd {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
        return proc

    def start(self, slots: int | None = None, timeout: float = 60) -> PersonalPool:
        """Start the master and wait until ``slots`` slots (default NUM_CPUS) are in the
        collector and the schedd answers."""
        self.master = subprocess.Popen([sys.executable, "-m", "htcd", "master", "-f"], env=self.env,
                                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
        want = int(DEFAULT_KNOBS["NUM_CPUS"]) if slots is None else slots
        if want:
            wait_for(lambda: len(self.htcd("status", "-af", "Name", check=False).stdout.split()) >= want,
                     timeout, lambda: f"{want} slots in the collector; StartLog:\n{self.log('StartLog')[-3000:]}")
        wait_for(lambda: self.htcd("q", check=False).returncode == 0, timeout, "the schedd to answer")
        return self

    def stop(self, timeout: float = 60) -> None:
        """SIGTERM the master and wait for it; kill (by PID) any process it left, and fail then."""
        if self.master is None:
            return
        master, self.master = self.master, None
        stop_master(master, timeout)

    def submit(self, text: str, name: str = "job.sub") -> int:
        """Submit a submit description (written to ``name`` in the jobs directory); its cluster."""
        (self.jobs_dir / name).write_text(text)
        return int(self.htcd("submit", "-terse", name).stdout.strip().split(".")[0])

    def job_attrs(self, job: str, *attrs: str) -> list[str]:
        """Attributes of a queued job ("cluster.proc"), as ``htcd q -af`` prints them."""
        return self.htcd("q", job, "-af", *attrs).stdout.split()

    def wait_for_job(self, cluster: int, proc: int = 0, timeout: float = 120) -> dict[str, str]:
        """Wait until the job has left the queue; its history ad (attribute -> value as printed).
        A job held meanwhile fails the wait with its hold reason."""
        job = f"{cluster}.{proc}"

        def done() -> bool:
            status = self.htcd("q", job, "-af", "JobStatus", "HoldReason", check=False).stdout.strip()
            if status.startswith("5 "):
                raise AssertionError(f"job {job} was held: {status[2:]}")
            return not status

        wait_for(done, timeout, lambda: f"job {job} to finish; StartLog:\n{self.log('StartLog')[-3000:]}")
        ad: dict[str, str] = {}
        for line in self.htcd("history", job, "-l").stdout.splitlines():
            name, sep, value = line.partition(" = ")
            if sep:
                ad[name.strip()] = value.strip()
        return ad


@pytest.fixture
def personal_pool_config() -> str:
    """Config lines added to the personal pool's config file (override in your conftest)."""
    return ""


@pytest.fixture
def personal_pool_env() -> dict[str, str]:
    """Environment variables for the pool's daemons and tools (override in your conftest)."""
    return {}


@pytest.fixture
def personal_pool(tmp_path: Path, personal_pool_config: str,
                  personal_pool_env: dict[str, str]) -> Iterator[PersonalPool]:
    """A started personal pool, stopped after the test; its daemons' logs are then copied to
    ``tmp_path / "pool-logs"`` (pytest keeps the last runs' temporary directories).

    The pool lives in a short directory of its own, not in ``tmp_path``: the daemons listen on
    Unix sockets under it, whose paths may not exceed 107 bytes."""
    root = Path(tempfile.mkdtemp(prefix="htcd-pool-"))
    pool = PersonalPool(root, personal_pool_config, env=personal_pool_env)
    try:
        yield pool.start()
    finally:
        try:
            pool.stop()
        finally:
            if (pool.local / "log").is_dir():
                shutil.copytree(pool.local / "log", tmp_path / "pool-logs", dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("sock"))
            shutil.rmtree(root, ignore_errors=True)


def stop_master(master: subprocess.Popen[Any], timeout: float = 60) -> None:
    """SIGTERM a pool's master and wait for it (SIGKILL after ``timeout``); kill, by PID, any
    process of its family still running, and fail then."""
    import psutil

    try:
        family = [psutil.Process(master.pid), *psutil.Process(master.pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        family = []
    master.send_signal(signal.SIGTERM)
    try:
        master.wait(timeout)
    except subprocess.TimeoutExpired:
        master.kill()
        master.wait(10)
    left = [p for p in family if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    for p in left:
        p.kill()
    assert not left, f"the pool left processes behind: {[p.pid for p in left]}"

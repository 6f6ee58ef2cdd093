"""`make pool`'s script on the embedded default (no config file at all), run twice."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pooltools import clean_env, wait_for

ROOT = Path(__file__).parents[2]


@pytest.mark.skipif(os.path.exists("/etc/htcd/htcd_config"), reason="a system config would win over the default")
def test_pool_script_runs_a_demo_job_twice(pool_dir: Path) -> None:
    home = pool_dir / "home"
    home.mkdir()
    env = clean_env({"HOME": str(home), "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"})
    env.pop("XDG_STATE_HOME", None)
    state = home / ".local" / "state" / "htcd"
    try:
        for attempt in (1, 2):
            proc = subprocess.run(["bash", str(ROOT / "scripts" / "pool.sh")], env=env, capture_output=True,
                                  text=True, timeout=300, cwd=pool_dir)
            assert proc.returncode == 0, proc.stdout + proc.stderr
            assert "Hello from job" in proc.stdout
            assert "Unclaimed" in proc.stdout or "Claimed" in proc.stdout, "htcd status is shown"
            assert "Total for query" in proc.stdout, "htcd q is shown"
            assert "make stop" in proc.stdout
            if attempt == 2:
                assert "already running" in proc.stdout
        assert (state / "log" / "MasterLog").exists(), "the state lives in the per-user state dir"
        cfg = subprocess.run([sys.executable, "-m", "htcd", "config_val", "-config"], env=env,
                             capture_output=True, text=True, check=True)
        assert "<embedded default>" in cfg.stdout
    finally:
        off = subprocess.run([sys.executable, "-m", "htcd", "off", "-master"], env=env, capture_output=True, text=True)
        if off.returncode == 0:
            wait_for(lambda: not (state / "log" / ".master_address").exists(), 60, "the master to exit")

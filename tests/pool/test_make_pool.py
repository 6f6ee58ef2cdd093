"""`make pool`'s script: ansible-playbook -i inventories/local site.yml (the pool put under a temp
dir with HTCD_POOL_DIR), then a demo job through it; run twice, the second run changes nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from pooltools import clean_env, wait_for

ROOT = Path(__file__).parents[2]
BIN = Path(sys.executable).parent

pytestmark = [pytest.mark.ansible, pytest.mark.pool, pytest.mark.slow]


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.skipif(not (BIN / "ansible-playbook").exists(), reason="needs ansible-core (pip install 'htcd[deploy]')")
def test_pool_script_deploys_with_ansible_and_runs_a_demo_job_twice(pool_dir: Path) -> None:
    home = pool_dir / "home"
    home.mkdir()
    where = pool_dir / "pool"
    env = clean_env({"HOME": str(home), "PATH": f"{BIN}:{os.environ['PATH']}", "HTCD_POOL_DIR": str(where),
                     "ANSIBLE_NOCOLOR": "1"})
    pidfile = where / "log" / "htcd-master.pid"
    try:
        for attempt in (1, 2):
            proc = subprocess.run(["bash", str(ROOT / "scripts" / "pool.sh")], env=env, capture_output=True,
                                  text=True, timeout=600, cwd=pool_dir)
            assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr
            assert "Hello from job" in proc.stdout
            assert "Unclaimed" in proc.stdout or "Claimed" in proc.stdout, "htcd status is shown"
            assert "Total for query" in proc.stdout, "htcd q is shown"
            assert "make stop" in proc.stdout
            assert "execute points (1 machines" in proc.stdout, "site.yml's pool check is shown"
            if attempt == 2:
                assert " changed=0 " in proc.stdout, proc.stdout[-6000:]
        assert (where / "log" / "MasterLog").exists(), "the state lives under HTCD_POOL_DIR"
        cfg = subprocess.run([sys.executable, "-m", "htcd", "config_val", "-config"],
                             env={**env, "HTCD_CONFIG": str(where / "etc" / "htcd_config")},
                             capture_output=True, text=True, check=True)
        assert str(where / "etc" / "config.d" / "22-htcd-execute-point.conf") in cfg.stdout
        master = int(pidfile.read_text())
        stop = subprocess.run(["make", "-s", "stop"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert stop.returncode == 0, stop.stdout + stop.stderr
        assert not _alive(master), "make stop ends the master"
    finally:
        if pidfile.exists():
            pid = int(pidfile.read_text())
            if _alive(pid):
                psutil.Process(pid).kill()
                wait_for(lambda: not _alive(pid), 60, "the master to exit")

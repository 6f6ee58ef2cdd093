"""``run_as`` (the CLI as another user, in a forked child) works wherever the checkout lives, even
where that user cannot reach it: a checkout under a 0700 directory, such as root's home."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pooltools import clean_env

ROOT = Path(__file__).parents[1]
NOBODY = 65534
CHILD = """
import json, sys
import htcd, pooltools
assert htcd.__file__.startswith(sys.argv[1]), f"htcd imported from {htcd.__file__}"
print(json.dumps(pooltools.run_as(int(sys.argv[2]), ["ping", "READ", "WRITE"], json.loads(sys.argv[3]))))
"""


def _copy_checkout(into: Path) -> Path:
    """The package, its plugins and the test tools, copied under ``into`` (no bytecode)."""
    checkout = into / "checkout"
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "htcd", checkout / "htcd", ignore=skip)
    shutil.copytree(ROOT / "plugins" / "htcd_plugins", checkout / "htcd_plugins", ignore=skip)
    shutil.copy(ROOT / "tests" / "pooltools.py", checkout)
    return checkout


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")
def test_run_as_works_from_a_checkout_the_other_user_cannot_reach(make_pool, pool_dir: Path) -> None:
    pool = make_pool({"DAEMON_LIST": "MASTER COLLECTOR SCHEDD"}, slots=0)
    for d in [pool.dir, *pool.dir.parents]:  # the pool itself stays reachable, as in the pool tests
        if str(d) in ("/", "/tmp"):
            break
        d.chmod(d.stat().st_mode | 0o011)
    hidden = pool_dir / "home"
    hidden.mkdir(mode=0o700)
    checkout = _copy_checkout(hidden)
    proc = subprocess.run([sys.executable, "-c", CHILD, str(hidden), str(NOBODY), json.dumps(pool.env)],
                          cwd=checkout, env=clean_env({"PYTHONPATH": str(checkout)}), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    code, out, err = json.loads(proc.stdout)
    assert (hidden.stat().st_mode & 0o777) == 0o700, "the copy was out of the other user's reach"
    assert code == 0, err
    assert out.count("succeeded as nobody@") == 2, out

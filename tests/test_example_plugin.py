"""The example plugin package of examples/ builds with setuptools, installs next to htcd, and its
own tests -- a job through its universe on a real personal pool configured with its policy
template, by htcd.testing's ``personal_pool`` fixture -- pass."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from pooltools import clean_env

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "htcd-example-plugin"


def build(source: Path, site: Path) -> None:
    """Install the package's modules and metadata (entry points included) into ``site`` with
    setuptools alone (no network, no wheel package needed)."""
    proc = subprocess.run([sys.executable, "-c", "import setuptools; setuptools.setup()", "-q",
                           "egg_info", "--egg-base", str(site), "build_py", "--build-lib", str(site)],
                          cwd=source, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_example_plugin_builds_and_its_tests_pass_on_a_personal_pool(pool_dir) -> None:
    source = pool_dir / "htcd-example-plugin"
    shutil.copytree(EXAMPLE, source)
    site = pool_dir / "site"
    site.mkdir()
    build(source, site)
    env = clean_env({"PYTHONPATH": str(site), "HTCD_CONFIG": str(pool_dir / "cfg")})
    (pool_dir / "cfg").write_text("\n")

    listed = subprocess.run([sys.executable, "-m", "htcd", "plugins", "-json"], env=env, cwd=pool_dir,
                            capture_output=True, text=True, timeout=60)
    example = {p["name"]: p for p in json.loads(listed.stdout)}["example"]
    assert example == {"name": "example", "entry_point": "htcd_example.plugin",
                       "distribution": "htcd-example-plugin", "version": "0.1.0",
                       "hooks": ["htcd_config_templates", "htcd_register_universes"],
                       "blocked": False, "disabled": None}

    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          f"--basetemp={pool_dir / 'tmp'}", "tests"], env=env, cwd=source,
                         capture_output=True, text=True, timeout=280)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert "1 passed" in run.stdout

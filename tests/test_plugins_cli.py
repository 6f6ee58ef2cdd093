"""``htcd plugins``: every plugin of the host with its distribution, version, hooks and why one
is blocked or disabled, as text and as JSON."""

from __future__ import annotations

import json
import subprocess
import sys

from pooltools import clean_env

BROKEN = """
from htcd.hookspecs import hookimpl

@hookimpl
def htcd_register_universe(registry):
    registry.add("never", object)
"""

FINE = """
from htcd.hookspecs import hookimpl

@hookimpl
def htcd_machine_attributes():
    return {"HasFine": True}
"""


def install(site, module: str, text: str, version: str = "1.0") -> None:
    (site / f"{module}.py").write_text(text)
    dist = site / f"{module}-{version}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module.replace('_', '-')}\nVersion: {version}\n")
    (dist / "entry_points.txt").write_text(f"[htcd]\n{module.removesuffix('_cli_xyz')} = {module}\n")


def htcd_plugins(pool_dir, *args: str) -> subprocess.CompletedProcess[str]:
    env = clean_env({"HTCD_CONFIG": str(pool_dir / "cfg"), "PYTHONPATH": str(pool_dir / "site")})
    return subprocess.run([sys.executable, "-m", "htcd", "plugins", *args], env=env, cwd=pool_dir,
                          capture_output=True, text=True, timeout=60)


def test_htcd_plugins_lists_loaded_blocked_and_disabled_plugins(pool_dir) -> None:
    site = pool_dir / "site"
    site.mkdir()
    install(site, "typo_cli_xyz", BROKEN)
    install(site, "fine_cli_xyz", FINE, "2.5")
    (pool_dir / "cfg").write_text("PLUGINS_BLOCKED = docker\n")

    proc = htcd_plugins(pool_dir)
    assert proc.returncode == 1, "a disabled plugin makes the listing fail, for scripts"
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["NAME", "DISTRIBUTION", "VERSION", "STATUS", "HOOKS"]
    rows = {line.split()[0]: line.split() for line in lines[1:] if not line.startswith(" ")}
    assert rows["fine"] == ["fine", "fine-cli-xyz", "2.5", "loaded", "htcd_machine_attributes"]
    assert rows["vanilla"][1:4] == ["htcd", rows["vanilla"][2], "loaded"]
    assert rows["vanilla"][4] == "htcd_register_universes"
    assert rows["docker"][3] == "blocked"
    assert rows["typo"] == ["typo", "typo-cli-xyz", "1.0", "disabled", "htcd_register_universe"]
    reason = lines[lines.index(next(x for x in lines if x.startswith("typo"))) + 1]
    assert reason.strip().startswith("disabled: unknown hook htcd_register_universe")
    assert "unknown hook htcd_register_universe" in proc.stderr, "the error is logged too"

    listed = {p["name"]: p for p in json.loads(htcd_plugins(pool_dir, "-json").stdout)}
    assert listed["typo"]["disabled"].startswith("unknown hook htcd_register_universe")
    assert listed["fine"] == {"name": "fine", "entry_point": "fine_cli_xyz", "distribution": "fine-cli-xyz",
                              "version": "2.5", "hooks": ["htcd_machine_attributes"], "blocked": False,
                              "disabled": None}
    assert listed["docker"]["blocked"] and listed["docker"]["hooks"] == []

    long = htcd_plugins(pool_dir, "-long").stdout
    assert "    entry point: fine_cli_xyz" in long


def test_htcd_plugins_exits_0_when_all_load(pool_dir) -> None:
    (pool_dir / "site").mkdir()
    (pool_dir / "cfg").write_text("\n")
    proc = htcd_plugins(pool_dir)
    assert proc.returncode == 0, proc.stderr
    assert {line.split()[0] for line in proc.stdout.splitlines()[1:]} >= {"vanilla", "transfer_file"}

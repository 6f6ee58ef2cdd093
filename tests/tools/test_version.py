"""`htcd -version` / `htcd version` print condor_version's two lines, with htcd's one version.

The shape is checked against the HTCondor release the tests install (htcondor2.version()), so a
change of HTCondor's form shows here, and the package metadata is checked to carry the same
version as htcd/__init__.py (pyproject.toml reads it from there).
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys

import pytest

import htcd
from htcd import version

# $CondorVersion: X.Y.Z YYYY-MM-DD BuildID: <id> [PackageID: <id>] $
VERSION_RE = re.compile(r"^\$CondorVersion: (\d+\.\d+\.\d+) (\d{4}-\d{2}-\d{2}) BuildID: \S+( PackageID: \S+)? \$$")
# $CondorPlatform: ARCH-Distribution_Version $
PLATFORM_RE = re.compile(r"^\$CondorPlatform: [A-Z0-9_]+-[A-Za-z0-9]+(_[0-9.]+)? \$$")


@pytest.mark.parametrize("argv", [["-version"], ["version"]])
def test_version_lines(argv: list[str]) -> None:
    out = subprocess.run([sys.executable, "-m", "htcd", *argv], capture_output=True, text=True,
                         timeout=60, check=True).stdout.splitlines()
    assert len(out) == 2, out
    m = VERSION_RE.match(out[0])
    assert m, out[0]
    assert m.group(1) == htcd.__version__
    assert m.group(3) == f" PackageID: {htcd.__version__}"
    assert PLATFORM_RE.match(out[1]), out[1]


def test_htcondor_prints_the_same_shape() -> None:
    htcondor2 = pytest.importorskip("htcondor2")
    assert VERSION_RE.match(htcondor2.version()), htcondor2.version()
    assert PLATFORM_RE.match(htcondor2.platform()), htcondor2.platform()


def test_package_metadata_has_the_one_version() -> None:
    assert importlib.metadata.version("htcd") == htcd.__version__


def test_init_keeps_the_line_upgrades_rewrite() -> None:
    """molecule/upgrade/prepare.yml and roles/htcd read and rewrite exactly this line."""
    with open(htcd.__file__, encoding="utf-8") as f:
        lines = f.read().splitlines()
    assert f'__version__ = "{htcd.__version__}"' in lines


def test_platform_from_os_release(tmp_path) -> None:
    rel = tmp_path / "os-release"
    rel.write_text('NAME="AlmaLinux"\nVERSION_ID="8.10"\n')
    assert version.platform_name(str(rel)).endswith("-AlmaLinux_8.10")
    rel.write_text('NAME="Debian GNU/Linux"\nVERSION_ID="12"\n')
    assert version.platform_name(str(rel)).endswith("-Debian_12")
    assert version.platform_name(str(tmp_path / "none")).endswith("-Linux")


def test_build_date_is_the_file_date(tmp_path) -> None:
    f = tmp_path / "__init__.py"
    f.write_text("")
    os.utime(f, (0, 86400 * 365))
    assert version.build_date(str(f)) == "1971-01-01"


def _version_commands() -> list[tuple[str, str]]:
    """(file, command) of the playbook tasks that read the checkout's version."""
    yaml = pytest.importorskip("yaml")
    root = os.path.dirname(os.path.dirname(htcd.__file__))
    found = []
    for rel in ("upgrade.yml", "roles/htcd/tasks/wheelhouse.yml"):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            doc = yaml.safe_load(f)
        tasks = [t for play in doc for t in play.get("tasks", [])] if rel == "upgrade.yml" else doc
        found += [(rel, t["ansible.builtin.command"]["cmd"]) for t in tasks
                  if str(t.get("name", "")).startswith("Read the version")]
    return found


def test_playbooks_read_the_one_version() -> None:
    """upgrade.yml and the htcd role read the version where it is written, without importing htcd."""
    commands = _version_commands()
    assert {rel for rel, _ in commands} == {"upgrade.yml", "roles/htcd/tasks/wheelhouse.yml"}
    root = os.path.dirname(os.path.dirname(htcd.__file__))
    for rel, cmd in commands:
        argv = ["/bin/sh", "-c", cmd.replace("{{ ansible_playbook_python }}", sys.executable)]
        out = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=60, check=True).stdout
        assert out.strip() == htcd.__version__, (rel, out)

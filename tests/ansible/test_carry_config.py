"""roles/htcd_upgrade/files/carry_config.py on real ``htcd config_val -writeconfig:upgrade`` output:
the settings Ansible does not render (a hand-written config.d file) are carried to the new
version's config.d, the ones it renders (files saying "managed by Ansible") are not, and a second
run with the same input changes nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CARRY = REPO / "roles" / "htcd_upgrade" / "files" / "carry_config.py"
HTCD = str(Path(sys.executable).parent / "htcd")


def _env(top: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("CONDOR_CONFIG",) and not k.startswith(("_HTCD_", "_CONDOR_"))}
    env["HTCD_CONFIG"] = str(top)
    return env


def _carry(record: Path, dest: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(CARRY), str(record), str(dest), "0.1.0", "0.1.1"],
                          capture_output=True, text=True, timeout=60)


def test_hand_written_settings_are_carried_and_ansible_ones_are_not(tmp_path: Path) -> None:
    etc = tmp_path / "etc"
    (etc / "config.d").mkdir(parents=True)
    top = etc / "htcd_config"
    top.write_text(f"# htcd_config: managed by Ansible\nLOCAL_DIR = {tmp_path}/lib\n"
                   f"LOCAL_CONFIG_DIR = {etc}/config.d\nuse ROLE : Execute\n")
    (etc / "config.d" / "10-role.conf").write_text("# managed by Ansible\nNUM_CPUS = 3\n")
    (etc / "config.d" / "50-site.conf").write_text("# the site's own\nSTARTD_NOCLAIM_SHUTDOWN = 1200\n"
                                                   "SITE_RACK = r7\n")
    record = tmp_path / "0.1.0-to-0.1.1.conf"
    r = subprocess.run([HTCD, "config_val", "-writeconfig:upgrade", str(record)], env=_env(top),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "SITE_RACK" in record.read_text() and "NUM_CPUS" in record.read_text()

    dest = etc / "config.d" / "00-upgrade-carried.conf"
    r = _carry(record, dest)
    assert (r.returncode, r.stdout.strip()) == (0, "changed"), r.stderr
    carried = dest.read_text()
    assert f"# from {etc}/config.d/50-site.conf" in carried
    assert "SITE_RACK = r7" in carried and "STARTD_NOCLAIM_SHUTDOWN = 1200" in carried
    assert "NUM_CPUS" not in carried and "LOCAL_CONFIG_DIR" not in carried
    assert dest.stat().st_mode & 0o777 == 0o644

    # the carried file is read by htcd, and a second run changes nothing
    (etc / "config.d" / "50-site.conf").unlink()
    r = subprocess.run([HTCD, "config_val", "SITE_RACK", "NUM_CPUS"], env=_env(top),
                       capture_output=True, text=True, timeout=60)
    assert r.stdout.split() == ["r7", "3"], r.stdout + r.stderr
    r = _carry(record, dest)
    assert (r.returncode, r.stdout.strip()) == (0, "unchanged")
    assert dest.read_text() == carried


def test_usage_is_printed_for_wrong_arguments() -> None:
    r = subprocess.run([sys.executable, str(CARRY), "only-one"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "usage: carry_config.py" in r.stderr

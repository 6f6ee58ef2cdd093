"""``htcd fleet`` against real test hosts (molecule/testhosts.sh: network namespaces, each with its
own address, hostname and sshd), reached over SSH with Fabric from an Ansible inventory."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "molecule" / "testhosts.sh"
HTCD = str(Path(sys.executable).parent / "htcd")


def _unavailable() -> str | None:
    if os.geteuid() != 0:
        return "test hosts need root (network namespaces, mounts)"
    for tool in ("ip", "unshare", "ssh", "ssh-keygen"):
        if shutil.which(tool) is None:
            return f"test hosts need {tool}"
    if not os.path.exists("/usr/sbin/sshd"):
        return "test hosts need openssh-server (/usr/sbin/sshd)"
    if os.path.exists("/sys/class/net/htcdbr0"):
        return "test hosts are in use by another run (bridge htcdbr0 exists)"
    try:
        import fabric  # noqa: F401
    except ImportError:
        return "htcd fleet needs Fabric (pip install 'htcd[deploy]')"
    probe = subprocess.run(["unshare", "--net", "--mount", "true"], capture_output=True)
    if probe.returncode != 0:
        return "cannot create namespaces here: " + probe.stderr.decode().strip()
    return None


@pytest.fixture(scope="module")
def hosts(leak_check: Path) -> Iterator[Path]:
    """Three test hosts (cm1, ap1, ep1... with 4: two EPs); yields the state dir."""
    reason = _unavailable()
    if reason:
        pytest.skip(reason)
    state = leak_check / "testhosts"
    env = {**os.environ, "HTCD_TESTHOSTS_DIR": str(state)}
    try:
        subprocess.run(["bash", str(SCRIPT), "up", "4"], env=env, check=True, capture_output=True, timeout=120)
        yield state
    finally:
        subprocess.run(["bash", str(SCRIPT), "down"], env=env, check=True, timeout=120)
        assert not state.exists()
        assert not os.path.exists("/sys/class/net/htcdbr0")
        netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert "htcd-" not in netns


def fleet(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "htcd", "fleet", *args], capture_output=True, text=True,
                          timeout=180, env=env)


def test_run_reaches_every_host_of_a_group(hosts: Path) -> None:
    inv = str(hosts / "inventory")
    r = fleet("run", "-i", inv, "-g", "execute_point", "-htcd", HTCD, "--", "htcd", "config_val", "FULL_HOSTNAME")
    assert r.returncode == 0, r.stderr
    # each host answered with its own name: the tool ran there, not here
    assert re.search(r"^==> ep1 <== exit 0\nep1(\.htcd\.test)?\n", r.stdout, re.M), r.stdout
    assert re.search(r"^==> ep2 <== exit 0\nep2(\.htcd\.test)?\n", r.stdout, re.M), r.stdout
    assert "cm1" not in r.stdout and "ap1" not in r.stdout


def test_run_reads_an_ini_inventory_and_host_names(hosts: Path, tmp_path: Path) -> None:
    ini = tmp_path / "hosts.ini"
    ini.write_text(
        "# the same hosts, INI style\n"
        "[central_manager]\ncm1 ansible_host=10.213.0.11\n"
        "[execute_point]\nep[1:2] \n"
        "[execute_point:vars]\n"
        f"ansible_ssh_common_args='-F {hosts}/ssh_config'\n"
        "[central_manager:vars]\n"
        f"ansible_ssh_common_args='-o UserKnownHostsFile={hosts}/known_hosts'\n"
        "[all:vars]\nansible_user=root\n"
        f"ansible_ssh_private_key_file={hosts}/id_ed25519\n"
    )
    r = fleet("run", "-i", str(ini), "-g", "cm1,execute_point", "-htcd", HTCD, "--", "config_val", "FULL_HOSTNAME")
    assert r.returncode == 0, r.stderr
    assert [ln for ln in r.stdout.splitlines() if ln.startswith("==>")] == [
        "==> cm1 <== exit 0", "==> ep1 <== exit 0", "==> ep2 <== exit 0"]


def test_logs_are_fetched_into_a_folder_per_host(hosts: Path, tmp_path: Path) -> None:
    for name in ("cm1", "ap1", "ep1", "ep2"):
        subprocess.run(["ssh", "-F", str(hosts / "ssh_config"), name,
                        "echo \"$(hostname) master log\" > /var/log/htcd/MasterLog; "
                        "echo old > /var/log/htcd/MasterLog.old; mkdir -p /var/log/htcd/sub"],
                       check=True, timeout=60)
    out = tmp_path / "logs"
    r = fleet("logs", "-i", str(hosts / "inventory" / "hosts.yml"), "-g", "all", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in out.iterdir()) == ["ap1", "cm1", "ep1", "ep2"]
    for name in ("cm1", "ap1", "ep1", "ep2"):
        assert (out / name / "MasterLog").read_text() == f"{name} master log\n"
        assert sorted(p.name for p in (out / name).iterdir()) == ["MasterLog", "MasterLog.old"]


def test_a_host_that_cannot_be_reached_is_reported(hosts: Path, tmp_path: Path) -> None:
    inv = tmp_path / "hosts.yml"
    inv.write_text(
        "all:\n  vars:\n    ansible_user: root\n"
        f"    ansible_ssh_private_key_file: {hosts}/id_ed25519\n"
        f"    ansible_ssh_common_args: -o UserKnownHostsFile={hosts}/known_hosts\n"
        "  hosts:\n    ep1: {ansible_host: 10.213.0.13}\n    gone: {ansible_host: 10.213.0.99}\n"
    )
    r = fleet("run", "-i", str(inv), "-timeout", "3", "-htcd", HTCD, "--", "version")
    assert r.returncode == 1
    assert "==> ep1 <== exit 0" in r.stdout
    assert "gone: cannot reach gone (10.213.0.99)" in r.stderr


def test_an_unknown_host_key_is_refused(hosts: Path, tmp_path: Path) -> None:
    (tmp_path / "empty_known_hosts").write_text("")
    inv = tmp_path / "hosts.yml"
    inv.write_text(
        "all:\n  vars:\n    ansible_user: root\n"
        f"    ansible_ssh_private_key_file: {hosts}/id_ed25519\n"
        f"    ansible_ssh_common_args: -o UserKnownHostsFile={tmp_path}/empty_known_hosts\n"
        "  hosts:\n    ep1: {ansible_host: 10.213.0.13}\n"
    )
    r = fleet("run", "-i", str(inv), "-htcd", HTCD, "--", "version")
    assert r.returncode == 1
    assert "not found in known_hosts" in r.stderr


def test_tools_that_change_the_pool_are_refused(tmp_path: Path) -> None:
    inv = tmp_path / "hosts.ini"
    inv.write_text("[execute_point]\nep1 ansible_host=192.0.2.1\n")
    for argv, what in ((["htcd", "off", "-master"], "'off' is not a read-only tool"),
                       (["condor_drain"], "'condor_drain' is not a read-only tool"),
                       (["config_val", "-rset", "A = 1"], "config_val -rset changes something"),
                       (["userprio", "-setfactor", "u@d", "5"], "userprio -setfactor changes something")):
        r = fleet("run", "-i", str(inv), "-g", "execute_point", "--", *argv)
        assert r.returncode == 1 and what in r.stderr, r.stderr
        assert "Traceback" not in r.stderr


def test_inventory_mistakes_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "hosts.yml"
    bad.write_text("all:\n  hosts:\n    a: {ansible_host: '{{ lookup(\"env\", \"X\") }}'}\n")
    r = fleet("run", "-i", str(bad), "--", "version")
    assert r.returncode == 1 and f"{bad}: host a: ansible_host is a Jinja2 template" in r.stderr
    r = fleet("run", "-i", str(bad), "-g", "nope", "--", "version")
    assert r.returncode == 1 and "no group or host 'nope' in the inventory" in r.stderr
    r = fleet("logs", "-i", str(tmp_path / "missing"), "-o", str(tmp_path / "o"))
    assert r.returncode == 1 and "no such inventory file or directory" in r.stderr
    env = {k: v for k, v in os.environ.items() if k != "ANSIBLE_INVENTORY"}
    r = fleet("run", "--", "version", env=env)
    assert r.returncode == 1 and "give -i INVENTORY" in r.stderr

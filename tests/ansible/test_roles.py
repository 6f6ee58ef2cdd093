"""The Ansible roles and site.yml on this machine: syntax, argument specs and asserts refusing bad
input, the config snippets as htcd's own parser reads them, and one real converge of a personal
pool (every role on localhost, files in a temp dir): a restart-only knob restarts only its daemon,
and the role's service script stops the master by its PID.  (That a second run changes nothing is
tested with `make pool`'s script, tests/pool/test_make_pool.py.)"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from pooltools import wait_for

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PLAYBOOK = BIN / "ansible-playbook"
HTCD = str(BIN / "htcd")

pytestmark = pytest.mark.skipif(not PLAYBOOK.exists(), reason="needs ansible-core (pip install 'htcd[deploy]')")


def _env(tmp: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("HTCD_CONFIG", "CONDOR_CONFIG")}
    env.update(ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_HOME=str(tmp / "ansible-home"),
               ANSIBLE_LOCAL_TEMP=str(tmp / "ansible-tmp"), ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0",
               PATH=f"{BIN}:{env.get('PATH', '')}")
    env.update(extra or {})
    return env


def _play(tmp: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(PLAYBOOK), *args], cwd=REPO, env=_env(tmp), capture_output=True, text=True,
                          timeout=timeout)


def _local_vars(tmp: Path) -> dict[str, object]:
    """A personal pool as inventories/local makes one, but every file under ``tmp``."""
    return {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable, "htcd_become": False,
        "htcd_install_method": "existing", "htcd_venv": sys.prefix,
        "htcd_prefix": str(tmp / "opt"), "htcd_config_dir": str(tmp / "etc"),
        "htcd_state_dir": str(tmp / "lib"), "htcd_log_dir": str(tmp / "log"),
        "htcd_manage_user": False, "htcd_user": "{{ ansible_user_id }}", "htcd_group": "{{ ansible_user_gid }}",
        "htcd_service_mode": "script", "htcd_central_manager": "127.0.0.1", "htcd_collector_port": 0,
        "htcd_network_interface": "*",
        "htcd_pool_name": "testpool", "htcd_execute_point_knobs": {"RunBenchmarks": 0, "NUM_CPUS": 2},
    }


def _inventory(tmp: Path, groups: tuple[str, ...] = ("central_manager", "access_point", "execute_point"),
               **overrides: object) -> Path:
    inv = {"all": {"vars": {**_local_vars(tmp), **overrides},
                   "children": {g: {"hosts": {"localhost": None}} for g in groups}}}
    path = tmp / "inventory.json"
    path.write_text(json.dumps(inv))
    return path


def test_playbooks_pass_the_syntax_check(pool_dir: Path) -> None:
    for inventory in ("inventories/local", "inventories/example"):
        r = _play(pool_dir, "-i", inventory, "site.yml", "--syntax-check")
        assert r.returncode == 0, r.stdout + r.stderr


def _role_only(tmp: Path, role: str = "htcd") -> Path:
    book = tmp / "role.yml"
    book.write_text(f"- hosts: all\n  gather_subset: [min]\n  roles:\n    - role: {role}\n")
    return book


def test_a_bad_variable_is_refused_by_the_argument_spec(pool_dir: Path) -> None:
    inv = _inventory(pool_dir, htcd_install_method="from-the-moon")
    r = _play(pool_dir, "-i", str(inv), str(_role_only(pool_dir)))
    out = r.stdout + r.stderr
    assert r.returncode != 0
    assert "htcd_install_method" in out and "wheelhouse, index, existing" in out, out
    assert not (pool_dir / "etc").exists(), "nothing may be installed after a refused variable"


def test_bad_knob_names_are_refused(pool_dir: Path) -> None:
    inv = _inventory(pool_dir, htcd_execute_point_knobs={"NUM CPUS": 2})
    r = _play(pool_dir, "-i", str(inv), str(_role_only(pool_dir, "execute_point")))
    assert r.returncode != 0
    assert "htcd_execute_point_knobs: 'NUM CPUS' is not a knob name" in r.stdout, r.stdout


@pytest.mark.parametrize("password", ["changeme", "Sh0rt!pass", "aaaaaaaaaaaaaaaaaaaaaaaa",
                                      "alllowercaseandlongenough"])
def test_weak_secrets_are_refused_and_never_printed(pool_dir: Path, password: str) -> None:
    inv = _inventory(pool_dir, htcd_pool_password=password)
    r = _play(pool_dir, "-i", str(inv), str(_role_only(pool_dir)))
    out = r.stdout + r.stderr
    assert r.returncode != 0
    assert "htcd_pool_password is weak" in out, out
    assert password not in out
    assert not (pool_dir / "etc").exists()


_SNIPPETS = {
    "htcd": ["htcd_config", "config.d/10-htcd-paths.conf", "config.d/11-htcd-pool.conf",
             "config.d/90-htcd-extra.conf"],
    "central_manager": ["config.d/20-htcd-central-manager.conf"],
    "access_point": ["config.d/21-htcd-access-point.conf"],
    "execute_point": ["config.d/22-htcd-execute-point.conf"],
}


def _render(tmp: Path, roles: list[str], extra: dict[str, object]) -> Path:
    """Render the roles' templates with their defaults (what the roles write), no host touched."""
    etc = tmp / "etc"
    tasks = [{"name": "defaults", "ansible.builtin.include_vars": {"file": str(REPO / f"roles/{r}/defaults/main.yml")}}
             for r in ["htcd", *roles]]
    tasks.append({"name": "dirs", "ansible.builtin.file": {"path": str(etc / "config.d"), "state": "directory",
                                                           "mode": "0755"}})
    for role in ["htcd", *roles]:
        for dest in _SNIPPETS[role]:
            src = REPO / f"roles/{role}/templates/{Path(dest).name.removesuffix('.conf')}"
            src = src.with_name(src.name + (".conf.j2" if dest.endswith(".conf") else ".j2"))
            tasks.append({"name": dest, "ansible.builtin.template": {"src": str(src), "dest": str(etc / dest),
                                                                     "mode": "0644"}})
    book = tmp / "render.yml"
    book.write_text(json.dumps([{"hosts": "localhost", "gather_facts": False, "connection": "local",
                                 "vars": {"ansible_python_interpreter": sys.executable}, "tasks": tasks}]))
    extra_vars = {**_local_vars(tmp), **extra}
    extra_vars.pop("htcd_user"), extra_vars.pop("htcd_group")
    r = _play(tmp, "-i", "localhost,", str(book), "-e", json.dumps(extra_vars))
    assert r.returncode == 0, r.stdout + r.stderr
    return etc


@pytest.mark.parametrize(("roles", "daemons"), [
    (["execute_point"], "MASTER STARTD"),
    (["access_point"], "MASTER SCHEDD"),
    (["central_manager", "access_point", "execute_point"], "MASTER COLLECTOR NEGOTIATOR SCHEDD STARTD"),
])
def test_rendered_config_is_read_by_htcd(pool_dir: Path, roles: list[str], daemons: str) -> None:
    etc = _render(pool_dir, roles, {"htcd_extra_knobs": {"SOFT_UID_DOMAIN": False, "MAX_JOBS_RUNNING": 7},
                                    "htcd_central_manager": "cm.example.org", "htcd_collector_port": 9618,
                                    "htcd_pool_name": "example.org", "htcd_network_interface": "10.0.0.5"})
    files = sorted(p.relative_to(etc).as_posix() for p in etc.rglob("*") if p.is_file())
    assert files == sorted(f for r in ["htcd", *roles] for f in _SNIPPETS[r])
    for f in files:
        assert (etc / f).read_text().startswith("# Managed by Ansible: "), f
    env = _env(pool_dir, {"HTCD_CONFIG": str(etc / "htcd_config")})
    knobs = ["DAEMON_LIST", "COLLECTOR_HOST", "TRUST_DOMAIN", "SOFT_UID_DOMAIN", "MAX_JOBS_RUNNING",
             "LOCAL_DIR", "SECURITY_MODEL", "NETWORK_INTERFACE"]
    r = subprocess.run([HTCD, "config_val", *knobs], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == [daemons, "cm.example.org:9618", "example.org", "false", "7",
                                     str(pool_dir / "lib"), "24.0", "10.0.0.5"]


def _daemon_pids(master: int) -> dict[str, int]:
    out = {}
    for child in psutil.Process(master).children():
        try:
            cmd = child.cmdline()
        except psutil.Error:
            continue
        if "htcd" in cmd and len(cmd) > cmd.index("htcd") + 1:
            out[cmd[cmd.index("htcd") + 1]] = child.pid
    return out


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


STRONG = "pR7#kq2!Vx9-Lm4@Zt8"  # a test value, not a default: the roles ship none


def test_site_yml_converges_a_personal_pool_and_restarts_only_what_needs_it(pool_dir: Path) -> None:
    pidfile = pool_dir / "log" / "htcd-master.pid"
    service = pool_dir / "opt" / "bin" / "htcd-service"
    master = None
    try:
        r = _play(pool_dir, "-i", str(_inventory(pool_dir, htcd_pool_password=STRONG)), "site.yml")
        assert r.returncode == 0, r.stdout[-4000:] + r.stderr
        assert "execute points (1 machines, 2 slots)" in r.stdout and "access points (1 schedds)" in r.stdout
        master = int(pidfile.read_text())
        assert _alive(master)

        # (a second run reporting changed=0: tests/pool/test_make_pool.py, the same roles)

        # SCHEDD_NAME is restart-only and only the schedd's: the schedd restarts, nothing else
        before = wait_for(lambda: (p := _daemon_pids(master)) and len(p) == 4 and p, 60, "four daemons")
        r = _play(pool_dir, "-i", str(_inventory(pool_dir, htcd_pool_password=STRONG,
                                                      htcd_extra_knobs={"SCHEDD_NAME": "renamed"})),
                  "site.yml")
        assert r.returncode == 0, r.stdout[-4000:] + r.stderr
        assert "(item=SCHEDD)" in r.stdout, r.stdout[-6000:]
        after = wait_for(lambda: (p := _daemon_pids(master)) and len(p) == 4 and p["schedd"] != before["schedd"]
                         and p, 60, "a new schedd")
        assert {d: after[d] for d in ("collector", "negotiator", "startd")} == \
               {d: before[d] for d in ("collector", "negotiator", "startd")}
        assert int(pidfile.read_text()) == master

        # secrets are 0600 and never printed
        assert STRONG not in r.stdout

        # the host leaves the execute points: its snippet goes, the startd stops, the rest stays
        snippet = pool_dir / "etc" / "config.d" / "22-htcd-execute-point.conf"
        assert snippet.exists()
        r = _play(pool_dir, "-i", str(_inventory(pool_dir, ("central_manager", "access_point"),
                                                      htcd_pool_password=STRONG,
                                                      htcd_extra_knobs={"SCHEDD_NAME": "renamed"})),
                  "site.yml")
        assert r.returncode == 0, r.stdout[-4000:] + r.stderr
        assert not snippet.exists()
        left = wait_for(lambda: (p := _daemon_pids(master)) and "startd" not in p and p, 60, "the startd gone")
        assert not _alive(after["startd"])
        assert {d: left[d] for d in ("collector", "negotiator", "schedd")} == \
               {d: after[d] for d in ("collector", "negotiator", "schedd")}
        assert STRONG not in r.stdout
        assert (pool_dir / "lib" / "passwords.d" / "pool_password").read_text() == STRONG + "\n"
        for secret in (pool_dir / "lib" / "passwords.d").iterdir():
            assert secret.stat().st_mode & 0o077 == 0 or secret.suffix == ".pub", secret

        r = subprocess.run([str(service), "stop"], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        assert not _alive(master)
        assert subprocess.run([str(service), "status"], timeout=60).returncode != 0
    finally:
        if master is not None and _alive(master):
            psutil.Process(master).kill()
        shutil.rmtree(pool_dir / "ansible-home", ignore_errors=True)

"""``htcd fleet``: reach every host of an Ansible inventory over SSH when the pool's own protocol
cannot be used (a collector down, a host that no longer advertises, logs wanted from everywhere).

    htcd fleet run -i INVENTORY -g GROUP -- htcd status -direct HOST
    htcd fleet logs -i INVENTORY -g all -o DIR

``run`` runs one read-only htcd tool on every host of the group, in parallel, and prints each
host's output under its name; tools that change the pool are refused (use the playbooks, or
the tool itself against one host).  ``logs`` copies the daemon logs (``/var/log/htcd/*``) of
every host into ``DIR/<host>/``.  Connections use the inventory's ``ansible_host``,
``ansible_port``, ``ansible_user``, ``ansible_ssh_private_key_file`` and the ``-F``/``-o``
options of ``ansible_ssh_common_args``; host keys must be known (known_hosts).  A host with
``ansible_connection=local`` is this machine.  Fabric (the ``deploy`` extra) is imported only here.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from htcd.cli import fleet_inventory
from htcd.errors import UserError

# tool -> options that make it change something (refused)
READ_ONLY: dict[str, tuple[str, ...]] = {
    "q": (),
    "status": (),
    "ping": (),
    "history": (),
    "version": (),
    "updates_stats": (),
    "classad_eval": (),
    "config_val": ("-set", "-unset", "-rset", "-runset", "-writeconfig", "-reconfig-needs"),
    "userprio": ("-setfactor", "-setprio", "-resetusage", "-resetall", "-delete"),
}
DEFAULT_LOG_DIR = "/var/log/htcd"


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-i", "-inventory", dest="inventory", default=argparse.SUPPRESS, metavar="INVENTORY",
                        help="an Ansible inventory file or directory (default: $ANSIBLE_INVENTORY)")
    common.add_argument("-g", "-group", dest="group", default=argparse.SUPPRESS, metavar="GROUP",
                        help="hosts: groups or host names, comma-separated (default: all)")
    common.add_argument("-j", "-parallel", dest="parallel", type=int, default=argparse.SUPPRESS, metavar="N",
                        help="hosts reached at once (default 16)")
    common.add_argument("-timeout", type=float, default=argparse.SUPPRESS, metavar="SECONDS",
                        help="give up on a host after this long (default 60)")
    p.add_argument("-i", "-inventory", dest="inventory", default=None, metavar="INVENTORY", help=argparse.SUPPRESS)
    p.add_argument("-g", "-group", dest="group", default="all", help=argparse.SUPPRESS)
    p.add_argument("-j", "-parallel", dest="parallel", type=int, default=16, help=argparse.SUPPRESS)
    p.add_argument("-timeout", type=float, default=60.0, help=argparse.SUPPRESS)
    sub = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))
    run = sub.add_parser("run", parents=[common], help="run a read-only htcd tool on every host of the group",
                         description="run a read-only htcd tool on every host: " + ", ".join(sorted(READ_ONLY)))
    run.add_argument("-htcd", dest="htcd", default=None, metavar="PATH",
                     help="the htcd command on the hosts (default: host variable htcd_bin, else "
                          "/opt/htcd/venv/bin/htcd when present, else htcd)")
    run.add_argument("tool", nargs=argparse.REMAINDER, metavar="-- [htcd] TOOL ARGS",
                     help="the tool and its arguments")
    logs = sub.add_parser("logs", parents=[common], help="fetch the daemon logs of every host of the group")
    logs.add_argument("-o", "-output", dest="output", required=True, metavar="DIR",
                      help="where to put them: DIR/<host>/<file>")
    logs.add_argument("-remote-dir", dest="remote_dir", default=None, metavar="DIR",
                      help=f"the hosts' log directory (default: host variable htcd_log_dir, else {DEFAULT_LOG_DIR})")
    return run_fleet


def run_fleet(args: argparse.Namespace) -> int:
    if not args.action:
        raise UserError("say what to do: htcd fleet run -g GROUP -- TOOL ARGS, or htcd fleet logs -g GROUP -o DIR")
    source = args.inventory or os.environ.get("ANSIBLE_INVENTORY")
    if not source:
        raise UserError("no inventory: give -i INVENTORY (an Ansible inventory file or directory)")
    hosts = fleet_inventory.load(source.split(",")[0]).select(args.group)
    if args.action == "run":
        return _run(args, hosts)
    return _logs(args, hosts)


# --- connections -----------------------------------------------------------------------------------


@dataclass
class Target:
    """How to reach one host, resolved from its inventory variables (and an ssh_config named there)."""

    name: str
    address: str
    local: bool
    user: str | None = None
    port: int | None = None
    key_files: tuple[str, ...] = ()
    known_hosts: tuple[str, ...] = ()
    strict: bool = True
    timeout: float = 60.0


def _ssh_options(words: list[str]) -> tuple[str | None, dict[str, str]]:
    """The -F file and the -o Key=Value options of ansible_ssh_common_args/extra_args."""
    config, opts = None, {}
    it = iter(words)
    for w in it:
        if w == "-F":
            config = next(it, None)
        elif w.startswith("-F"):
            config = w[2:]
        elif w == "-o":
            kv = next(it, "")
            k, _, v = kv.replace("=", " ", 1).partition(" ")
            opts[k.lower()] = v.strip()
        elif w.startswith("-o"):
            k, _, v = w[2:].replace("=", " ", 1).partition(" ")
            opts[k.lower()] = v.strip()
    return config, opts


def resolve(host: fleet_inventory.Host, timeout: float) -> Target:
    v = host.vars
    if host.connection == "local":
        return Target(host.name, "localhost", local=True, timeout=timeout)
    if host.connection not in ("ssh", "paramiko", "smart"):
        raise UserError(f"host {host.name}: ansible_connection={host.connection} is not supported (ssh or local)")
    words = shlex.split(str(v.get("ansible_ssh_common_args", ""))) + shlex.split(str(v.get("ansible_ssh_extra_args", "")))
    config_file, opts = _ssh_options(words)
    from_cfg: dict[str, Any] = {}
    if config_file:
        import paramiko

        if not os.path.isfile(config_file):
            raise UserError(f"host {host.name}: ssh config {config_file} does not exist")
        from_cfg = dict(paramiko.SSHConfig.from_path(config_file).lookup(host.address))
    elif os.path.isfile(os.path.expanduser("~/.ssh/config")):
        import paramiko

        from_cfg = dict(paramiko.SSHConfig.from_path(os.path.expanduser("~/.ssh/config")).lookup(host.address))
    merged = {**from_cfg, **opts}
    address = str(v.get("ansible_host") or merged.get("hostname") or host.address)
    user = v.get("ansible_user") or v.get("ansible_ssh_user") or merged.get("user")
    port = v.get("ansible_port") or v.get("ansible_ssh_port") or merged.get("port")
    keys = v.get("ansible_ssh_private_key_file") or v.get("ansible_private_key_file") or merged.get("identityfile")
    key_list = [keys] if isinstance(keys, str) else list(keys or [])
    known = merged.get("userknownhostsfile") or "~/.ssh/known_hosts ~/.ssh/known_hosts2"
    known_list = known.split() if isinstance(known, str) else list(known)
    known_list.append("/etc/ssh/ssh_known_hosts")
    strict = str(merged.get("stricthostkeychecking", "yes")).lower() not in ("no", "off", "accept-new")
    return Target(host.name, address, local=False, user=str(user) if user else None,
                  port=int(port) if port else None,
                  key_files=tuple(os.path.expanduser(str(k)) for k in key_list),
                  known_hosts=tuple(os.path.expanduser(k) for k in known_list), strict=strict, timeout=timeout)


def _fabric() -> Any:
    try:
        import fabric
    except ImportError as exc:
        raise UserError("htcd fleet needs Fabric: pip install 'htcd[deploy]' (the deploy extra)") from exc
    return fabric


def connect(t: Target) -> Any:
    """A Fabric connection that refuses unknown host keys unless the inventory says otherwise."""
    fabric = _fabric()
    import paramiko

    kwargs: dict[str, Any] = {"allow_agent": True, "look_for_keys": not t.key_files,
                              "banner_timeout": t.timeout, "auth_timeout": t.timeout}
    if t.key_files:
        kwargs["key_filename"] = list(t.key_files)
    conn = fabric.Connection(t.address, user=t.user, port=t.port, connect_timeout=int(t.timeout),
                             connect_kwargs=kwargs)
    for f in t.known_hosts:
        if os.path.isfile(f):
            conn.client.load_host_keys(f)
    conn.client.set_missing_host_key_policy(paramiko.RejectPolicy() if t.strict else paramiko.AutoAddPolicy())
    return conn


# --- run ---------------------------------------------------------------------------------------------


def tool_argv(words: list[str]) -> list[str]:
    """The tool and its arguments, checked against the read-only list."""
    if words and words[0] == "--":
        words = words[1:]
    if words and os.path.basename(words[0]) == "htcd":
        words = words[1:]
    if not words:
        raise UserError("name the tool to run: htcd fleet run -g GROUP -- htcd status ...")
    tool = words[0]
    if tool not in READ_ONLY:
        raise UserError(f"{tool!r} is not a read-only tool; htcd fleet runs only: {', '.join(sorted(READ_ONLY))}")
    for w in words[1:]:
        for bad in READ_ONLY[tool]:
            if w == bad or w.startswith(bad + ":") or w.startswith(bad + "="):
                raise UserError(f"htcd {tool} {bad} changes something; htcd fleet runs only read-only tools")
    return words


@dataclass
class Outcome:
    host: str
    code: int
    stdout: str
    stderr: str


def _remote_htcd(args: argparse.Namespace, host: fleet_inventory.Host) -> str:
    if args.htcd:
        return str(args.htcd)
    if host.vars.get("htcd_bin"):
        return str(host.vars["htcd_bin"])
    venv = host.vars.get("htcd_venv", "/opt/htcd/venv")
    return f"$( [ -x {shlex.quote(str(venv))}/bin/htcd ] && echo {shlex.quote(str(venv))}/bin/htcd || echo htcd )"


def _run_one(t: Target, command: str) -> Outcome:
    if t.local:
        p = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=t.timeout)
        return Outcome(t.name, p.returncode, p.stdout, p.stderr)
    try:
        with connect(t) as conn:
            r = conn.run(command, hide=True, warn=True, in_stream=False, timeout=t.timeout)
            return Outcome(t.name, r.exited, r.stdout, r.stderr)
    except Exception as exc:  # a host that cannot be reached is reported, the others still run
        return Outcome(t.name, 255, "", f"cannot reach {t.name} ({t.address}): {type(exc).__name__}: {exc}\n")


def _run(args: argparse.Namespace, hosts: list[fleet_inventory.Host]) -> int:
    words = tool_argv(list(args.tool))
    targets = [resolve(h, args.timeout) for h in hosts]
    commands = [_remote_htcd(args, h) + " " + shlex.join(words) for h in hosts]
    if any(not t.local for t in targets):
        _fabric()
    with ThreadPoolExecutor(max_workers=max(1, args.parallel)) as pool:
        outcomes = list(pool.map(_run_one, targets, commands))
    failed = 0
    for o in outcomes:
        print(f"==> {o.host} <== exit {o.code}", flush=True)
        sys.stdout.write(o.stdout if o.stdout.endswith("\n") or not o.stdout else o.stdout + "\n")
        if o.stderr:
            sys.stderr.write("".join(f"{o.host}: {line}\n" for line in o.stderr.splitlines()))
        failed += o.code != 0
    if failed:
        print(f"htcd fleet: {failed} of {len(outcomes)} hosts failed", file=sys.stderr)
    return 1 if failed else 0


# --- logs --------------------------------------------------------------------------------------------


def _fetch_one(t: Target, remote_dir: str, dest: Path) -> tuple[str, int, str]:
    """Copy every regular file of remote_dir into dest; (host, files copied, error or "")."""
    dest.mkdir(parents=True, exist_ok=True)
    if t.local:
        if not os.path.isdir(remote_dir):
            return t.name, 0, f"no directory {remote_dir}"
        n = 0
        for entry in sorted(os.scandir(remote_dir), key=lambda e: e.name):
            if entry.is_file(follow_symlinks=False):
                shutil.copy2(entry.path, dest / entry.name)
                n += 1
        return t.name, n, ""
    import stat

    try:
        with connect(t) as conn:
            sftp = conn.sftp()
            try:
                entries = sftp.listdir_attr(remote_dir)
            except OSError as exc:
                return t.name, 0, f"cannot list {remote_dir}: {exc}"
            n = 0
            for e in sorted(entries, key=lambda e: e.filename):
                if e.st_mode is not None and stat.S_ISREG(e.st_mode):
                    sftp.get(f"{remote_dir.rstrip('/')}/{e.filename}", str(dest / e.filename))
                    n += 1
            return t.name, n, ""
    except Exception as exc:  # report the host, fetch the others
        return t.name, 0, f"cannot reach {t.address}: {type(exc).__name__}: {exc}"


def _logs(args: argparse.Namespace, hosts: list[fleet_inventory.Host]) -> int:
    out = Path(args.output)
    targets = [resolve(h, args.timeout) for h in hosts]
    if any(not t.local for t in targets):
        _fabric()
    dirs = [args.remote_dir or str(h.vars.get("htcd_log_dir") or DEFAULT_LOG_DIR) for h in hosts]
    for h in hosts:
        if h.name in ("", ".", "..") or "/" in h.name:
            raise UserError(f"host name {h.name!r} cannot be a directory name")
    with ThreadPoolExecutor(max_workers=max(1, args.parallel)) as pool:
        results = list(pool.map(_fetch_one, targets, dirs, [out / h.name for h in hosts]))
    failed = 0
    for (name, n, err), d in zip(results, dirs, strict=True):
        if err:
            failed += 1
            print(f"{name}: {err}", file=sys.stderr)
        else:
            print(f"{name}: {n} files from {d} -> {out / name}")
    return 1 if failed else 0

"""Two hosts in network namespaces for the CCB test: a bridge ``htcdccb0`` (10.214.0.1/24, apart
from molecule's htcdbr0 and 10.213.0.0/24, so both can run at once), host ``ap`` at
10.214.0.10 and ``ep`` at 10.214.0.11, each with its own htcd directories (files are shared:
only the network is per host).  Daemons are started with ``ip netns exec``, which executes the
command itself, so the PID the test holds is the master's."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from pooltools import Pool

BRIDGE = "htcdccb0"
PREFIX = "10.214.0"
HOSTS = {"ap": 10, "ep": 11}


def available() -> str | None:
    """Why the namespace test cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root (network namespaces)"
    missing = [tool for tool in ("ip", "nft") if shutil.which(tool) is None]
    return f"needs {', '.join(missing)}" if missing else None


def ns(host: str) -> str:
    return f"htcdccb-{host}"


def ip(host: str) -> str:
    return f"{PREFIX}.{HOSTS[host]}"


def _run(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.strip()}")
    return proc


def down() -> None:
    """Remove the hosts: processes left in a namespace (by PID, from ``ip netns pids``), then the
    namespaces, links and the FORWARD rule; quiet about what is not there."""
    for host in HOSTS:
        for pid in _run("ip", "netns", "pids", ns(host), check=False).stdout.split():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), signal.SIGKILL)
        _run("ip", "netns", "del", ns(host), check=False)
        _run("ip", "link", "del", f"vccb-{host}", check=False)
    _run("ip", "link", "del", BRIDGE, check=False)
    if shutil.which("iptables"):
        while _run("iptables", "-D", "FORWARD", "-i", BRIDGE, "-o", BRIDGE, "-j", "ACCEPT", check=False).returncode == 0:
            pass


@contextlib.contextmanager
def hosts() -> Iterator[None]:
    down()  # a run killed before its clean-up left them
    try:
        _run("ip", "link", "add", BRIDGE, "type", "bridge")
        _run("ip", "addr", "add", f"{PREFIX}.1/24", "dev", BRIDGE)
        _run("ip", "link", "set", BRIDGE, "up")
        if shutil.which("iptables"):  # with br_netfilter, bridged frames meet FORWARD's policy
            _run("iptables", "-I", "FORWARD", "-i", BRIDGE, "-o", BRIDGE, "-j", "ACCEPT", check=False)
        for host in HOSTS:
            _run("ip", "netns", "add", ns(host))
            _run("ip", "link", "add", f"vccb-{host}", "type", "veth", "peer", "name", "eth0", "netns", ns(host))
            _run("ip", "link", "set", f"vccb-{host}", "master", BRIDGE, "up")
            _run("ip", "-n", ns(host), "addr", "add", f"{ip(host)}/24", "dev", "eth0")
            _run("ip", "-n", ns(host), "link", "set", "eth0", "up")
            _run("ip", "-n", ns(host), "link", "set", "lo", "up")
        yield
    finally:
        down()


def block_inbound_tcp(host: str) -> None:
    """An nft rule on ``host``: every TCP connection from outside (a SYN on eth0) is dropped;
    connections the host opens itself still work."""
    rules = ('table inet htcdccb {\n chain input {\n  type filter hook input priority 0; policy accept;\n'
             '  iifname "eth0" tcp flags & (syn | ack) == syn drop\n }\n}\n')
    proc = subprocess.run(["ip", "netns", "exec", ns(host), "nft", "-f", "-"], input=rules, capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 0, f"nft: {proc.stderr}"


def start(pool: Pool, host: str) -> None:
    """The pool's master on ``host``."""
    pool.master = subprocess.Popen(["ip", "netns", "exec", ns(host), sys.executable, "-m", "htcd", "master", "-f"],
                                   env=pool.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE)


def htcd(pool: Pool, host: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """A tool run on ``host`` (local daemons through their Unix sockets, as root)."""
    proc = subprocess.run(["ip", "netns", "exec", ns(host), sys.executable, "-m", "htcd", *args], env=pool.env,
                          cwd=pool.jobs_dir, capture_output=True, text=True, timeout=120)
    if check and proc.returncode != 0:
        raise AssertionError(f"htcd {' '.join(args)} on {host} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


def host_config(host: str, daemons: str, root: Path) -> str:
    return "\n".join([f"CONDOR_HOST = {ip('ap')}", "COLLECTOR_HOST = $(CONDOR_HOST):9618",
                      f"NETWORK_INTERFACE = {ip(host)}", f"DAEMON_LIST = {daemons}", "NUM_CPUS = 1",
                      "use SECURITY : Recommended", f"SEC_TOKEN_DIRECTORY = {root / 'usertokens'}"]) + "\n"

"""Two hosts in network namespaces, A's inbound TCP filtered (nft) to port 9618 only: with the
shared port, host B reaches A's collector (COLLECTOR_HOST = A:9618, no sock=: the default id)
and A's schedd (its sock=schedd address); without it, the same queries are refused by the
filter.  Needs root, ip and nft; marked ``netns`` (CI's lane 2)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from htcd.testing import stop_master, wait_for

pytestmark = [pytest.mark.netns, pytest.mark.slow, pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("nft"), reason="needs root, ip and nft")]

# a veth pair straight between the two namespaces, in the test hosts' range (no bridge involved)
A_IP, B_IP = "10.213.0.249", "10.213.0.250"
FILTER = """table inet htcd_only_9618 {
  chain input {
    type filter hook input priority 0; policy accept;
    iifname "lo" accept
    tcp flags & (syn | ack) == syn tcp dport != 9618 reject with tcp reset
  }
}
"""


def sh(*argv: str, ns: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    cmd = ["ip", "netns", "exec", ns, *argv] if ns else list(argv)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=check)


@pytest.fixture(scope="module")
def hosts() -> Iterator[tuple[str, str]]:
    tag = f"{os.getpid() % 100000}"
    a, b = f"htcdsp-a{tag}", f"htcdsp-b{tag}"
    va, vb = f"spa{tag}", f"spb{tag}"
    try:
        sh("ip", "netns", "add", a)
        sh("ip", "netns", "add", b)
        sh("ip", "link", "add", va, "netns", a, "type", "veth", "peer", "name", vb, "netns", b)
        for ns, dev, ip in ((a, va, A_IP), (b, vb, B_IP)):
            sh("ip", "addr", "add", f"{ip}/30", "dev", dev, ns=ns)
            sh("ip", "link", "set", dev, "up", ns=ns)
            sh("ip", "link", "set", "lo", "up", ns=ns)
        proc = subprocess.run(["ip", "netns", "exec", a, "nft", "-f", "-"], input=FILTER, text=True,
                              capture_output=True, timeout=30)
        assert proc.returncode == 0, proc.stderr
        yield a, b
    finally:
        for ns in (a, b):  # the veth pair goes with its namespaces
            sh("ip", "netns", "del", ns, check=False)


class HostPool:
    """htcd's collector and schedd (and master) on host A, in a directory of their own."""

    def __init__(self, ns: str, root: Path, shared: bool) -> None:
        self.ns = ns
        self.root = root
        port = "9618" if shared else "9620"
        knobs = {
            "CONDOR_HOST": A_IP, "NETWORK_INTERFACE": A_IP, "COLLECTOR_HOST": f"{A_IP}:{port}",
            "LOCAL_DIR": str(root / "local"), "DAEMON_LIST": "MASTER COLLECTOR SCHEDD",
            "UPDATE_INTERVAL": "5", "USE_SHARED_PORT": "true" if shared else "false",
            "PREFER_UNIX_SOCKET": "false",
        }
        self.config = root / "htcd_config"
        self.config.write_text("use ROLE : Personal\n" + "".join(f"{k} = {v}\n" for k, v in knobs.items()))
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("_CONDOR_", "_HTCD_")) and k not in ("HTCD_CONFIG", "CONDOR_CONFIG")}
        self.env["HTCD_CONFIG"] = str(self.config)
        # ip netns exec enters the namespace and executes the master: this PID is the master's
        self.master = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-m", "htcd", "master", "-f"],
                                       env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)

    def htcd(self, ns: str, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-m", "htcd", *args], env=self.env,
                              capture_output=True, text=True, timeout=120)

    def log(self, name: str) -> str:
        path = self.root / "local" / "log" / name
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def stop(self) -> None:
        stop_master(self.master)


@pytest.fixture
def pool_on_a(hosts: tuple[str, str]) -> Iterator[Callable[[bool], HostPool]]:
    made: list[HostPool] = []
    dirs: list[str] = []

    def start(shared: bool) -> HostPool:
        root = Path(tempfile.mkdtemp(prefix="htcd-sp-"))
        dirs.append(str(root))
        pool = HostPool(hosts[0], root, shared)
        made.append(pool)
        # from A itself (its loopback is not filtered, nor its own address): the schedd is up
        wait_for(lambda: pool.htcd(hosts[0], "status", "-schedd", "-af", "Name").stdout.strip(), 60,
                 lambda: f"A's schedd in A's collector\n{pool.log('MasterLog')}")
        return pool

    try:
        yield start
    finally:
        try:
            for pool in made:
                pool.stop()
        finally:
            for d in dirs:
                shutil.rmtree(d, ignore_errors=True)


def test_host_b_reaches_a_only_through_the_shared_port(hosts: tuple[str, str], pool_on_a: Callable[[bool], HostPool]) -> None:
    _a, b = hosts
    pool = pool_on_a(True)
    status = pool.htcd(b, "status", "-schedd", "-af", "Name", "MyAddress")
    assert status.returncode == 0, status.stderr
    assert f"<{A_IP}:9618?sock=schedd" in status.stdout
    queue = pool.htcd(b, "q")  # the schedd's address (sock=schedd) from A's address file
    assert queue.returncode == 0, queue.stderr
    assert "Schedd: " in queue.stdout and f"{A_IP}:9618?sock=schedd" in queue.stdout


def test_without_the_shared_port_the_filter_refuses(hosts: tuple[str, str], pool_on_a: Callable[[bool], HostPool]) -> None:
    _a, b = hosts
    pool = pool_on_a(False)
    status = pool.htcd(b, "status", "-schedd", "-af", "Name")
    assert status.returncode != 0
    assert "refused" in status.stderr.lower(), status.stderr
    queue = pool.htcd(b, "q")
    assert queue.returncode != 0 and "refused" in queue.stderr.lower(), queue.stderr

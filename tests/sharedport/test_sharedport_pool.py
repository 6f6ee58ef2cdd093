"""A loopback pool with USE_SHARED_PORT = true: every daemon is reached through the one shared
port (the daemons among themselves too: PREFER_UNIX_SOCKET is false for them), a job runs, the
tools work over TCP, and nothing but the shared port listens on TCP or UDP."""

from __future__ import annotations

import socket
import subprocess
import sys

import psutil
import pytest
from pooltools import Pool

from htcd.testing import wait_for
from htcd.wire.address import Address
from htcd.wire.client import Connection
from htcd.wire.errors import RemoteError


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# the daemons talk to each other over TCP, through the shared port, not over their Unix sockets
DAEMONS_OVER_TCP = "\n".join(f"{d}.PREFER_UNIX_SOCKET = false"
                             for d in ("MASTER", "COLLECTOR", "NEGOTIATOR", "SCHEDD", "STARTD"))


@pytest.fixture(scope="module")
def shared(module_pool) -> tuple[Pool, int]:
    port = free_port()
    pool = module_pool({"USE_SHARED_PORT": "true", "SHARED_PORT_PORT": str(port)}, DAEMONS_OVER_TCP)
    return pool, port


def tcp_env(pool: Pool) -> dict[str, str]:
    return {**pool.env, "_HTCD_PREFER_UNIX_SOCKET": "false"}


def test_daemons_advertise_the_shared_port(shared: tuple[Pool, int]) -> None:
    pool, port = shared
    kinds = {"Scheduler", "Negotiator", "DaemonMaster", "Collector"}

    def advertised() -> dict[str, Address] | None:
        ads = pool.collector_ads("Any", ["MyType", "MyAddress"]) or []
        found = {ad["MyType"].strip('"'): Address.parse(ad["MyAddress"].strip('"')) for ad in ads
                 if ad.get("MyType", "").strip('"') in kinds}
        return found if set(found) == kinds else None

    # each daemon advertises on its own timer: the negotiator's ad may follow the others'
    addresses = wait_for(advertised, 60, lambda: f"the ads of {sorted(kinds)}")
    for kind, addr in addresses.items():
        assert addr.port == port and addr.sock and addr.unix, (kind, addr)
    assert addresses["Scheduler"].sock == "schedd" and addresses["Collector"].sock == "collector"


def test_only_the_shared_port_listens(shared: tuple[Pool, int]) -> None:
    pool, port = shared
    assert pool.master is not None
    procs = [psutil.Process(pool.master.pid), *psutil.Process(pool.master.pid).children(recursive=True)]
    listening = []
    for proc in procs:
        for c in proc.net_connections(kind="inet"):
            if c.status == psutil.CONN_LISTEN or c.type == socket.SOCK_DGRAM:
                listening.append((proc.cmdline()[3] if len(proc.cmdline()) > 3 else proc.name(), c.type, c.laddr.port))
    assert listening == [("shared_port", socket.SOCK_STREAM, port)]
    unix = {c.laddr for proc in procs for c in proc.net_connections(kind="unix") if c.laddr}
    assert any(str(path).endswith("/schedd.sock") for path in unix)


def test_tools_and_a_job_through_the_shared_port(shared: tuple[Pool, int]) -> None:
    pool, port = shared
    env = tcp_env(pool)

    def tool(*args: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([sys.executable, "-m", "htcd", *args], env=env, cwd=pool.jobs_dir,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        return proc

    assert "slot1@" in tool("status").stdout
    assert f"127.0.0.1:{port}?sock=schedd" in tool("q").stdout
    assert "succeeded" in tool("ping").stdout
    # submitted over the Unix socket (FS: the job is the caller's); the schedd claims and runs it
    # on the startd, and the startd reports to the collector, all through the shared port
    cluster = pool.submit("executable = /bin/echo\narguments = through one port\noutput = out.txt\nqueue\n")
    wait_for(lambda: pool.htcd("q", str(cluster), "-af", "JobStatus").stdout.strip() == "",
             120, lambda: f"job {cluster} to finish\n{pool.log('SchedLog')[-2000:]}")
    assert (pool.jobs_dir / "out.txt").read_text() == "through one port\n"
    assert f"shared port listening on 127.0.0.1:{port}" in pool.log("SharedPortLog")


def test_unknown_id_is_refused_by_name(shared: tuple[Pool, int]) -> None:
    pool, port = shared
    with pytest.raises(RemoteError) as err:
        Connection(Address.parse(f"<127.0.0.1:{port}?sock=nosuch>"), timeout=10).close()
    assert "no daemon with id 'nosuch'" in str(err.value) and err.value.code == "UNKNOWN_ENDPOINT"
    with pytest.raises(RemoteError) as err:
        Connection(Address.parse(f"<127.0.0.1:{port}?sock=../schedd>"), timeout=10).close()
    assert "'../schedd'" in str(err.value) and "not a valid id" in str(err.value)
    # the daemons behind it still answer after the refusals
    from htcd.wire.authn import ClientSecurity

    security = ClientSecurity.from_config(pool.tool_config(), "CLIENT")
    with Connection(Address(host="127.0.0.1", port=port, sock="schedd"), timeout=10, security=security) as conn:
        assert conn.call("PING")["daemon"] == "SCHEDD"

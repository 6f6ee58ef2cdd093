"""Too many connections (issue 21, point 5): over MAX_OPEN_CONNECTIONS a new connection is
refused with the reason, which the client prints, and a log line; the daemon carries on and takes
connections again once they close.  Out of descriptors (accept() failing with EMFILE), it neither
spins nor dies."""

from __future__ import annotations

import re
import resource
import socket
import time

import psutil
import pytest
from overloadtools import collector_address, own_ad, start_collector_pool
from pooltools import wait_for

from htcd.wire.client import Connection
from htcd.wire.errors import Refused

LIMIT = 8


def tcp_env(pool) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The pool's environment for a tool that connects over TCP (as from another host)."""
    return {**pool.env, "_HTCD_PREFER_UNIX_SOCKET": "false"}


def test_connections_over_the_limit_are_refused_with_the_reason_and_logged(make_pool) -> None:
    pool = start_collector_pool(make_pool, {"MAX_OPEN_CONNECTIONS": str(LIMIT), "SEC_TCP_SESSION_TIMEOUT": "300"})
    addr = collector_address(pool)
    assert addr is not None
    pid = pool.daemon_pids()["COLLECTOR"]
    held = []
    try:
        for _ in range(LIMIT):  # connections that say nothing: each holds a place until it closes
            held.append(socket.create_connection((addr.host, addr.port), timeout=30))
        # the next one over TCP is turned away, saying why, in the client library and in the tool
        with pytest.raises(Refused) as refused:
            Connection(f"<{addr.host}:{addr.port}>", timeout=30)
        assert refused.value.code == "TOO_MANY_CONNECTIONS"
        assert f"refused the connection: too many connections ({LIMIT} open, limit {LIMIT})" in str(refused.value)
        pool.env, saved = tcp_env(pool), pool.env
        try:
            out = pool.htcd("status", "-collector", "-af", "Name", check=False)
        finally:
            pool.env = saved
        assert out.returncode != 0
        assert re.search(rf"the collector at <{re.escape(addr.host)}:{addr.port}[^>]*> refused the connection: "
                         rf"too many connections \({LIMIT} open, limit {LIMIT}\)", out.stderr), out.stderr
        assert "Traceback" not in out.stderr
        # the pool's own user on the local socket still gets in (an admin is not locked out)
        assert own_ad(addr)["Name"]
        assert re.search(rf"refused 1 connection\(s\) \(latest tcp 127\.0\.0\.1:\d+\): too many connections "
                         rf"\({LIMIT} open, limit {LIMIT}\) \(MAX_OPEN_CONNECTIONS", pool.log("CollectorLog"))
    finally:
        for s in held:
            s.close()
    # once they close, TCP clients get in again; the same process all along
    pool.env, saved = tcp_env(pool), pool.env
    try:
        wait_for(lambda: pool.htcd("status", "-collector", "-af", "Name", check=False).returncode == 0, 60,
                 "the collector to take TCP connections again")
    finally:
        pool.env = saved
    assert pool.daemon_pids()["COLLECTOR"] == pid


def test_out_of_descriptors_the_daemon_neither_spins_nor_dies_and_recovers(make_pool) -> None:
    pool = start_collector_pool(make_pool, {"MAX_OPEN_CONNECTIONS": "100000"})  # past the fd limit on purpose
    addr = collector_address(pool)
    assert addr is not None
    pid = pool.daemon_pids()["COLLECTOR"]
    proc = psutil.Process(pid)
    hard = resource.prlimit(pid, resource.RLIMIT_NOFILE)[1]
    soft = proc.num_fds() + 16
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (soft, hard))
    held = []
    try:
        for _ in range(40):  # more than the daemon has descriptors left: the rest wait in the backlog
            held.append(socket.create_connection((addr.host, addr.port), timeout=30))
        wait_for(lambda: "cannot accept connections: Too many open files" in pool.log("CollectorLog"), 60,
                 "the collector to say it cannot accept")
        assert proc.num_fds() <= soft
        cpu = sum(proc.cpu_times()[:2])
        time.sleep(3.0)  # a measurement window: a daemon retrying accept() in a loop would use it all
        used = sum(proc.cpu_times()[:2]) - cpu
        assert used < 0.5, f"the collector used {used:.2f} s of CPU in 3 s while out of descriptors"
        log = pool.log("CollectorLog")
        assert log.count("cannot accept connections") == 1, "one line a minute, not one per retry"
        assert "Traceback" not in log
    finally:
        for s in held:
            s.close()
    assert proc.is_running() and pool.daemon_pids()["COLLECTOR"] == pid
    wait_for(lambda: _answers(addr), 60, "the collector to answer again")


def _answers(addr) -> bool:  # type: ignore[no-untyped-def]
    try:
        return bool(own_ad(addr)["Name"])
    except Exception:
        return False

"""Hostile input at the protocol, against a real pool: oversized, truncated and garbage frames,
slow clients, idle half-open connections, deep or lying msgpack, wrong argument types.  Each is
refused with a clear error (to the client when it can still be told, always in the daemon's
log), another client is answered promptly while the attack goes on, and nothing is written."""

from __future__ import annotations

import socket
import sqlite3
import struct
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import msgpack
import pytest
from fuzz.fuzztools import RawConnection
from pooltools import Pool, wait_for

from htcd.wire.address import Address
from htcd.wire.framing import MAX_FRAME, encode, recv_frame

KNOBS = {"MESSAGE_READ_TIMEOUT": "3", "SEC_TCP_SESSION_TIMEOUT": "3", "MAX_UNAUTHENTICATED_CONNECTIONS": "4"}
HELLO = encode({"hello": "htcd", "version": 1, "methods": ["FS"]})


@pytest.fixture
def hostile_pool(make_pool) -> Pool:
    return make_pool(KNOBS)


def _socket_of(pool: Pool, daemon: str) -> Path:
    return next(p for p in pool.local.rglob(f"{daemon}.sock"))


def _tcp_of(pool: Pool, daemon: str) -> tuple[str, int]:
    files = {"schedd": pool.local / "spool" / ".schedd_address", "collector": pool.local / "log" / ".collector_address"}
    addr = Address.parse(files[daemon].read_text().splitlines()[0])
    return addr.host, addr.port


def _ping_time(pool: Pool, daemon: str) -> float:
    """Seconds a fresh client needs to connect, authenticate and be answered PING."""
    started = time.monotonic()
    conn = RawConnection(_socket_of(pool, daemon), timeout=10)
    try:
        reply = conn.batch([{"cmd": "PING", "args": {}}])[0]
    finally:
        conn.close()
    assert reply["ok"], reply
    return time.monotonic() - started


def _authenticated(pool: Pool, daemon: str) -> socket.socket:
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(30)
    s.connect(str(_socket_of(pool, daemon)))
    s.sendall(HELLO)
    assert recv_frame(s)["ok"]
    return s


def _refusal(s: socket.socket) -> dict[str, Any] | None:
    """The daemon's last word on a connection it drops (None if it just closed)."""
    try:
        return recv_frame(s)
    except Exception:
        return None


def _queue_rows(pool: Pool) -> list[Any]:
    path = pool.local / "spool" / "job_queue.log"
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return [(t, sorted(map(repr, db.execute(f"SELECT * FROM {t}")))) for t in tables]
    finally:
        db.close()


def _ads(pool: Pool) -> set[tuple[str, str]]:
    conn = RawConnection(_socket_of(pool, "collector"))
    try:
        reply = conn.batch([{"cmd": "QUERY_ADS", "args": {"ad_type": "Any", "projection": ["MyType", "Name"]}}])
    finally:
        conn.close()
    assert reply[0]["ok"], reply
    return {(a.get("MyType", ""), a.get("Name", "")) for a in reply[0]["result"]}


def test_slow_clients_are_cut_off_while_others_are_served(hostile_pool: Pool) -> None:
    """Slowloris: a frame header and then a byte now and then; and a handshake never finished.
    Both end at their deadline with the reason, and meanwhile others are answered at once."""
    pool = hostile_pool
    with ExitStack() as stack:
        trickle = stack.enter_context(_authenticated(pool, "schedd"))
        trickle.sendall(struct.pack(">I", 100) + b"\x81")
        silent = stack.enter_context(socket.socket(socket.AF_UNIX))
        silent.settimeout(30)
        silent.connect(str(_socket_of(pool, "schedd")))
        silent.sendall(HELLO[:3])  # a handshake begun and never finished
        started = time.monotonic()
        while time.monotonic() - started < 2.0:  # the attack goes on: others are served promptly
            assert _ping_time(pool, "schedd") < 2.0
            try:
                trickle.sendall(b"\xa1")
            except OSError:
                break
            time.sleep(0.2)
        told = _refusal(trickle)
        assert told is not None and told["code"] == "PROTOCOL" and "not finished within 3 s" in told["error"]
        told = _refusal(silent)
        assert told is not None and told["code"] == "PROTOCOL" and "SEC_TCP_SESSION_TIMEOUT" in told["error"]
        assert time.monotonic() - started < 20
    log = wait_for(lambda: (lambda t: t if "MESSAGE_READ_TIMEOUT" in t and "SEC_TCP_SESSION_TIMEOUT" in t
                            else None)(pool.log("SchedLog")), 30, "the drops in the SchedLog")
    assert "dropped connection" in log


def test_idle_half_open_connections_are_capped(hostile_pool: Pool) -> None:
    """Connections that never authenticate (over TCP) are held at most MAX_UNAUTHENTICATED_CONNECTIONS
    at once; the next is refused BUSY, and the daemon's own users on its socket are still served."""
    pool = hostile_pool
    host, port = _tcp_of(pool, "collector")
    with ExitStack() as stack:
        idle = []
        for _ in range(4):
            s = stack.enter_context(socket.create_connection((host, port), timeout=30))
            idle.append(s)
        wait_for(lambda: "" or _busy(host, port), 20, "a refusal over the cap")
        assert _ping_time(pool, "collector") < 2.0
        for s in idle:  # each ends at the handshake deadline, with the reason
            told = _refusal(s)
            assert told is not None and "handshake not finished within 3 s" in told["error"]
    wait_for(lambda: "MAX_UNAUTHENTICATED_CONNECTIONS" in pool.log("CollectorLog"), 30, "the refusal logged")


def _busy(host: str, port: int) -> bool:
    with socket.create_connection((host, port), timeout=30) as s:
        told = _refusal(s)
    return bool(told and told.get("code") == "BUSY")


@pytest.mark.parametrize("where", ["unix", "tcp"])
def test_big_frames_before_authentication_are_refused_unread(hostile_pool: Pool, where: str) -> None:
    """Nobody unauthenticated makes a daemon read more than 64 KiB: a 1 MiB hello, a 4 GiB claim."""
    pool = hostile_pool
    for length in (1 << 20, 2 ** 32 - 1):
        if where == "unix":
            s = socket.socket(socket.AF_UNIX)
            s.connect(str(_socket_of(pool, "collector")))
        else:
            s = socket.create_connection(_tcp_of(pool, "collector"))
        with s:
            s.settimeout(30)
            s.sendall(struct.pack(">I", length) + b"\x80")
            told = _refusal(s)
        assert told is not None and told["code"] == "PROTOCOL"
        assert f"frame of {length} bytes exceeds the limit of 65536 before authentication" in told["error"]
    huge = msgpack.packb({"hello": "htcd", "version": 1, "methods": ["FS"], "x": {str(i): i for i in range(10 ** 6)}})
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(30)
        s.connect(str(_socket_of(pool, "collector")))
        s.sendall(struct.pack(">I", len(huge)) + huge[:1000])
        told = _refusal(s)
    assert told is not None and "exceeds the limit of 65536" in told["error"]
    assert _ping_time(pool, "collector") < 2.0


@pytest.mark.parametrize("body,reason", [
    (b"\x81\xa3cmd" + b"\x91" * 40 + b"\xc0", "nested deeper than 32"),
    (b"\x82\xa3cmd\xa4PING\xa4args\xdd" + struct.pack(">I", 2 ** 32 - 1), "exceeds max_array_len"),
    (b"\x82\xa3cmd\xa4PING\xa4args\xdb" + struct.pack(">I", 2 ** 32 - 1) + b"x", "undecodable frame"),
    (b"\x93\x01\x02\x03", "not a map"),
    (b"\xc1\xc1", "undecodable"),
])
def test_garbage_after_authentication_is_refused_with_the_reason(hostile_pool: Pool, body: bytes,
                                                               reason: str) -> None:
    pool = hostile_pool
    with _authenticated(pool, "collector") as s:
        s.sendall(struct.pack(">I", len(body)) + body)
        told = _refusal(s)
    assert told is not None and told["code"] == "PROTOCOL" and reason in told["error"], told
    with _authenticated(pool, "collector") as s:  # a frame header over the limit for everyone
        s.sendall(struct.pack(">I", MAX_FRAME + 1))
        told = _refusal(s)
    assert told is not None and f"exceeds the limit of {MAX_FRAME}" in told["error"]
    assert _ping_time(pool, "collector") < 2.0
    assert "Traceback" not in pool.log("CollectorLog")


def test_truncated_or_malformed_submit_writes_nothing(hostile_pool: Pool) -> None:
    pool = hostile_pool
    conn = RawConnection(_socket_of(pool, "schedd"))
    try:
        cid = conn.batch([{"cmd": "RESERVE_CLUSTER", "args": {}}])[0]["result"]["cluster_id"]
        before = _queue_rows(pool)
        good = {"cluster_id": cid, "cluster_ad": {"Cmd": '"/bin/true"', "JobUniverse": "5"},
                "proc_ads": [{"ProcId": "0"}]}
        bad_args = [
            ({**good, "cluster_id": str(cid)}, "'cluster_id' must be an integer, not a string"),
            ({**good, "cluster_ad": {"Cmd": 5}}, "'cluster_ad' must be a ClassAd"),
            ({**good, "proc_ads": [{"ProcId": ["0"]}]}, "'proc_ads' must be a list of ClassAds"),
            ({**good, "proc_ads": "0"}, "'proc_ads' must be a list of ClassAds"),
            ({k: v for k, v in good.items() if k != "cluster_ad"}, "missing argument 'cluster_ad'"),
        ]
        replies = conn.batch([{"cmd": "SUBMIT", "args": a} for a, _ in bad_args])
        for (_, why), reply in zip(bad_args, replies, strict=True):
            assert reply["ok"] is False and reply["code"] == "BAD_REQUEST" and why in reply["error"], reply
    finally:
        conn.close()
    with _authenticated(pool, "schedd") as s:  # the same SUBMIT, cut off half way
        frame = encode({"cmd": "SUBMIT", "args": good})
        s.sendall(frame[:len(frame) // 2])
        s.shutdown(socket.SHUT_WR)
        told = _refusal(s)  # a half-closed client can still be told
        assert told is not None and told["error"] == "connection closed inside a frame"
    assert _ping_time(pool, "schedd") < 2.0
    assert _queue_rows(pool) == before
    log = pool.log("SchedLog")
    assert "Traceback" not in log and "bad request from" in log and "'cluster_id' must be an integer" in log


def test_garbage_updates_leave_the_collector_unchanged(hostile_pool: Pool) -> None:
    pool = hostile_pool
    before = _ads(pool)
    conn = RawConnection(_socket_of(pool, "collector"))
    try:
        bad = [
            {"ad_type": "Machine", "ad": {"Name": 1}},
            {"ad_type": ["Machine"], "ad": {"Name": '"x"'}},
            {"ad_type": "Machine", "ad": [["Name", '"x"']]},
            {"ad_type": "Machine", "names": b"\xc1", "values": ['"x"']},
            {"ad_type": "Machine", "names": msgpack.packb(["Name", "Cpus"]), "values": ['"x"']},
            {"updates": "everything"},
        ]
        replies = conn.batch([{"cmd": "UPDATE_AD", "args": a} for a in bad])
        query = conn.batch([{"cmd": "QUERY_ADS", "args": {"ad_type": 7}},
                            {"cmd": "QUERY_ADS", "args": {"ad_type": "Any", "limit": "10"}}])
    finally:
        conn.close()
    for args, reply in zip(bad, replies, strict=True):
        assert reply["ok"] is False and reply["code"] in ("BAD_REQUEST", "BAD_AD"), (args, reply)
        assert reply["error"]
    assert query[0]["code"] == "BAD_REQUEST" and "'ad_type' must be a string, not an integer" in query[0]["error"]
    assert query[1]["code"] == "BAD_REQUEST" and "'limit' must be an integer" in query[1]["error"]
    assert _ads(pool) == before
    assert "Traceback" not in pool.log("CollectorLog")


def test_malformed_requests_get_bad_request_and_the_connection_goes_on(hostile_pool: Pool) -> None:
    pool = hostile_pool
    conn = RawConnection(_socket_of(pool, "negotiator"))
    try:
        replies = conn.batch([{"cmd": 5, "args": {}}, {"cmd": "PING", "args": [1]},
                              {"cmd": "SET_PRIORITYFACTOR", "args": {"name": "a@b", "factor": "2"}},
                              {"cmd": "SET_PRIORITYFACTOR", "args": {"name": "a@b", "factor": float("nan")}},
                              {"cmd": "PING", "args": {}}])
    finally:
        conn.close()
    assert [r.get("code") for r in replies[:4]] == ["BAD_REQUEST"] * 4
    assert "{cmd: <string>, args: <map>}" in replies[0]["error"]
    assert "'factor' must be a finite number, not a string" in replies[2]["error"]
    assert replies[4]["ok"]


@pytest.mark.parametrize("where", ["unix", "tcp"])
def test_wrong_version_and_foreign_protocols_are_told_why(hostile_pool: Pool, where: str) -> None:
    pool = hostile_pool
    cases = [
        (encode({"hello": "htcd", "version": 99, "methods": ["FS"]}), "VERSION", "protocol version 99"),
        (b"GET / HTTP/1.0\r\n\r\n", "PROTOCOL", "exceeds the limit of 65536 before authentication"),
        (struct.pack(">I", 6) + msgpack.packb({"a": 1}) + b"\x00" * 3, "PROTOCOL", "undecodable frame"),
        (encode({"hello": "ssh", "version": 1}), "PROTOCOL", "not an htcd handshake"),
    ]
    for data, code, why in cases:
        if where == "unix":
            s = socket.socket(socket.AF_UNIX)
            s.connect(str(_socket_of(pool, "schedd")))
        else:
            s = socket.create_connection(_tcp_of(pool, "schedd"))
        with s:
            s.settimeout(30)
            s.sendall(data)
            told = _refusal(s)
        assert told is not None and told["ok"] is False, (data, told)
        assert told["code"] == code and why in told["error"], (data, told)
    assert _ping_time(pool, "schedd") < 2.0


def test_commands_that_stop_or_drain_refuse_wrong_types_and_do_nothing(hostile_pool: Pool) -> None:
    """The commands the fuzzer leaves out (they would stop the pool when well formed) check their
    argument types before acting: nothing stops, drains or is persisted."""
    pool = hostile_pool
    cases = {
        "master": [("RESTART", {"daemon": 0}, "'daemon' must be a string, not an integer"),
                   ("DAEMON_OFF", {"daemon": ["SCHEDD"]}, "'daemon' must be a string, not a list"),
                   ("DAEMONS_OFF", {"fast": "yes"}, "'fast' must be a boolean, not a string"),
                   ("DC_CHILDALIVE", {"pid": "1", "timeout_secs": 5}, "'pid' must be an integer"),
                   ("DC_OFF_GRACEFUL", {"peaceful": [1]}, "'peaceful' must be a boolean")],
        "startd": [("DRAIN_JOBS", {"how_fast": 1}, "'how_fast' must be a string, not an integer"),
                   ("DRAIN_JOBS", {"check": ["true"]}, "'check' must be a string, not a list"),
                   ("DC_CONFIG_PERSIST", {"set": "START = false"}, "'set' must be a list of strings")],
    }
    pids = pool.daemon_pids()
    for daemon, requests in cases.items():
        conn = RawConnection(_socket_of(pool, daemon))
        try:
            replies = conn.batch([{"cmd": c, "args": a} for c, a, _ in requests] + [{"cmd": "PING", "args": {}}])
        finally:
            conn.close()
        for (cmd, _, why), reply in zip(requests, replies, strict=False):
            assert reply["code"] == "BAD_REQUEST" and why in reply["error"], (cmd, reply)
        assert replies[-1]["ok"]
    assert pool.daemon_pids() == pids
    assert "Draining" not in pool.htcd("status", "-af", "Activity").stdout


def test_idle_connections_are_closed_quietly(make_pool) -> None:
    """An authenticated client silent for CONNECTION_IDLE_TIMEOUT is disconnected without a last
    word (its next request sees a closed connection, which clients handle by reconnecting), and
    the pool's own daemons, whose connections idle too, go on working."""
    pool = make_pool({"CONNECTION_IDLE_TIMEOUT": "2"})
    with _authenticated(pool, "collector") as s:
        started = time.monotonic()
        assert s.recv(4096) == b""  # closed, nothing said
        assert 1.5 < time.monotonic() - started < 20
    wait_for(lambda: "idle for 2 s (CONNECTION_IDLE_TIMEOUT)" in pool.log("CollectorLog"), 30, "the drop logged")
    # the daemons' own idle connections were closed as well; they reconnect:
    closed_at = time.time()

    def heard_since() -> bool:
        out = pool.htcd("status", "-af", "LastHeardFrom", check=False).stdout.split()
        return len(out) >= 2 and all(int(t) > closed_at + 2 for t in out)

    wait_for(heard_since, 60, "fresh slot updates after the idle connections were closed")
    assert pool.htcd("q", check=False).returncode == 0
    assert _ping_time(pool, "schedd") < 2.0


def test_a_million_key_map_is_decoded_in_slices_while_others_are_served(make_pool) -> None:
    """An authenticated client may send big frames (up to 256 MiB): a map with a million keys is
    decoded a slice at a time, so another client is answered meanwhile, and a wrong-typed huge
    ad is refused whole with nothing stored.  The frame (~10 MB) gets a read timeout it can be
    read in on a loaded machine; the 3 s of the other tests is for the slow clients they play."""
    pool = make_pool({**KNOBS, "MESSAGE_READ_TIMEOUT": "30"})
    before = _ads(pool)
    huge = {f"A{i}": "1" for i in range(10 ** 6)}
    with _authenticated(pool, "collector") as big:
        big.sendall(encode({"cmd": "UPDATE_AD", "args": {"ad_type": "Machine", "ad": {**huge, "Name": 7}}}))
        assert _ping_time(pool, "collector") < 5.0
        reply = recv_frame(big)
        assert reply["code"] == "BAD_REQUEST" and "UPDATE_AD" in reply["error"], reply
        big.sendall(encode({"cmd": "PING", "args": huge}))
        assert recv_frame(big)["ok"]
    assert _ads(pool) == before
    assert "Traceback" not in pool.log("CollectorLog")


def test_claim_ids_that_are_not_ascii_are_refused_as_unknown(hostile_pool: Pool) -> None:
    """Claim ids are compared in constant time; a non-ASCII one (found by the fuzzer) is an
    unknown claim, not an internal error."""
    conn = RawConnection(_socket_of(hostile_pool, "startd"))
    try:
        replies = conn.batch([{"cmd": "REQUEST_CLAIM", "args": {"claim_id": "\U00060de1\u00a5", "job_ad": {}}},
                              {"cmd": "DEACTIVATE_CLAIM", "args": {"claim_id": "\u00e9t\u00e9"}},
                              {"cmd": "PING", "args": {}}])
    finally:
        conn.close()
    assert all(r.get("code") in ("BAD_CLAIM", "BAD_REQUEST") for r in replies[:2]), replies
    assert replies[2]["ok"]

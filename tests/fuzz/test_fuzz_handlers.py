"""Fuzzing every daemon's command handlers in a real pool, over real sockets, and the collector's
UDP listener with signed and unsigned datagrams.  No input may make a daemon answer INTERNAL,
write a traceback to its log, or stop answering."""

from __future__ import annotations

import re
import socket
import time
from pathlib import Path
from typing import Any

import msgpack
from fuzz.fuzztools import ATOMS, VALUES, RawConnection, requests_for, variants
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import scaled
from pooltools import Pool, wait_for

from htcd.wire import udp
from htcd.wire.address import Address
from htcd.wire.errors import WireError
from htcd.wire.framing import encode, recv_frame

DAEMONS = ("MASTER", "COLLECTOR", "NEGOTIATOR", "SCHEDD", "STARTD")
LOGS = {"MASTER": "MasterLog", "COLLECTOR": "CollectorLog", "NEGOTIATOR": "NegotiatorLog",
        "SCHEDD": "SchedLog", "STARTD": "StartLog"}
BATCH = 12
EXAMPLES = scaled(100)  # per daemon, each a batch of up to 12 generated requests and 12 variants of each


def _sockets(pool: Pool) -> dict[str, Path]:
    """Every daemon's command socket; the pool is up once its schedd and slots answer, and a
    daemon that has not got that far on a busy machine may still be making its socket."""
    def found() -> dict[str, Path]:
        return {p.stem.upper(): p for p in pool.local.rglob("*.sock")}
    wait_for(lambda: set(DAEMONS) <= set(found()), 60,
             lambda: f"a command socket for each daemon; none yet for {set(DAEMONS) - set(found())}")
    return found()


def _tracebacks(pool: Pool) -> dict[str, int]:
    return {d: len(re.findall(r"^Traceback|\nTraceback", pool.log(LOGS[d]))) for d in DAEMONS}


def _fuzz_daemon(conn: RawConnection, daemon: str, counts: dict[str, int], internal: list[str]) -> None:
    @settings(max_examples=EXAMPLES, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(requests_for(daemon), min_size=BATCH // 2, max_size=BATCH))
    def run(generated: list[dict[str, Any]]) -> None:
        requests = list(generated)
        for n, r in enumerate(generated):
            requests += variants(r, n * 7)
        replies = conn.batch(requests)
        counts[daemon] = counts.get(daemon, 0) + len(requests)
        for request, reply in zip(requests, replies, strict=True):
            assert isinstance(reply, dict) and "ok" in reply, reply
            if reply.get("code") == "INTERNAL":
                internal.append(f"{daemon} {str(request)[:300]} -> {reply['error'][:300]}")
            if not reply["ok"]:
                assert reply.get("error"), f"a refusal without a reason: {reply}"

    run()


def test_every_daemon_survives_fuzzed_commands(pool: Pool) -> None:
    # jobs in the queue (held, so they start only if a fuzzed release lets them), so that job
    # commands get past "no jobs matched"
    pool.submit("executable = /bin/sleep\narguments = 300\nhold = true\nqueue 3\n")
    socks = _sockets(pool)
    before = _tracebacks(pool)
    counts: dict[str, int] = {}
    internal: list[str] = []
    started = time.monotonic()
    for daemon in DAEMONS:
        conn = RawConnection(socks[daemon])
        try:
            _fuzz_daemon(conn, daemon, counts, internal)
        finally:
            conn.close()
    print(f"handler fuzz: {sum(counts.values())} requests in {time.monotonic() - started:.1f} s: {counts}")
    assert not internal, "INTERNAL replies:\n" + "\n".join(internal[:20])
    for daemon in DAEMONS:  # every daemon still answers, promptly
        conn = RawConnection(socks[daemon], timeout=30)
        try:
            reply = conn.batch([{"cmd": "PING", "args": {}}])[0]
            assert reply["ok"] and reply["result"]["daemon"] == daemon
        finally:
            conn.close()
    after = _tracebacks(pool)
    assert after == before, f"tracebacks in the daemon logs: {after} (before: {before})"
    assert sum(counts.values()) >= 5 * EXAMPLES


def _collector_self(pool: Pool) -> dict[str, Any]:
    conn = RawConnection(_sockets(pool)["COLLECTOR"])
    try:
        reply = conn.batch([{"cmd": "DC_QUERY_SELF", "args": {}}])[0]
    finally:
        conn.close()
    assert reply["ok"], reply
    return reply["result"][0]


def test_collector_survives_fuzzed_datagrams(pool: Pool) -> None:
    conn = RawConnection(_sockets(pool)["COLLECTOR"])
    try:
        session = conn.batch([{"cmd": "UPDATE_SESSION", "args": {}}])[0]["result"]
        names_before = conn.batch([{"cmd": "QUERY_ADS", "args": {"ad_type": "Machine", "projection": ["Name"]}}])
    finally:
        conn.close()
    sid, key, (host, port) = session["id"], session["key"], session["udp"]
    target = (host, port)
    sent = {"signed": 0, "unsigned": 0}
    payloads = st.one_of(
        st.builds(lambda c, a: {"cmd": c, "args": a}, st.sampled_from(["UPDATE_AD", "INVALIDATE_AD", "PING"]
                                                                       ), VALUES),
        st.builds(lambda a: {"cmd": "UPDATE_AD", "args": {"updates": a}}, st.lists(VALUES, max_size=3)),
        ATOMS.map(lambda a: {"cmd": "UPDATE_AD", "args": {"ad_type": a, "ad": {"Name": a}}}),
    )
    raw = st.one_of(st.binary(max_size=200), st.binary(max_size=60).map(lambda b: udp.MAGIC + b),
                    st.binary(max_size=80).map(lambda b: udp.MAGIC + sid + b))

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        @settings(max_examples=scaled(150), database=None, deadline=None, suppress_health_check=list(HealthCheck))
        @given(st.lists(payloads, min_size=20, max_size=20), st.lists(raw, min_size=20, max_size=20))
        def run(signed: list[dict[str, Any]], unsigned: list[bytes]) -> None:
            for message in signed:
                payload = msgpack.packb(message, use_bin_type=True)
                s.sendto(udp.MAGIC + sid + udp._mac(key, sid, payload) + payload, target)
            for data in unsigned:
                s.sendto(data, target)
            sent["signed"] += len(signed)
            sent["unsigned"] += len(unsigned)

        run()
    print(f"datagram fuzz: {sent}")
    total = sum(sent.values())

    def all_counted() -> dict[str, Any] | None:  # loopback UDP may drop a few under load
        ad = _collector_self(pool)
        return ad if int(ad["DatagramsReceived"]) >= 0.9 * total else None

    ad = wait_for(all_counted, 30, f"the collector to count {total} datagrams")
    assert int(ad["DatagramsDroppedMalformed"]) > 0 and int(ad["DatagramsAccepted" if "DatagramsAccepted" in ad
                                                                 else "DatagramsRejected"]) > 0
    assert total >= scaled(6000)
    conn = RawConnection(_sockets(pool)["COLLECTOR"])
    try:
        reply = conn.batch([{"cmd": "PING", "args": {}}])[0]
        assert reply["ok"]
    finally:
        conn.close()
    assert "Traceback" not in pool.log("CollectorLog")
    assert names_before[0]["ok"]


def _hello_reply(target: Any, data: bytes) -> dict[str, Any] | None:
    family = socket.AF_UNIX if isinstance(target, str) else socket.AF_INET
    with socket.socket(family) as s:
        s.settimeout(30)
        s.connect(target)
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
            return recv_frame(s)
        except (OSError, WireError):
            return None


def test_handshakes_survive_fuzzed_hellos(pool: Pool) -> None:
    """Garbage before authentication, over the Unix socket and TCP: hello maps with generated
    fields and values, and raw bytes.  Each connection is refused or closed, never served by
    mistake, and the daemons go on."""
    targets = {}
    for daemon in ("COLLECTOR", "SCHEDD"):
        path = _sockets(pool)[daemon]
        addr_file = pool.local / ("spool/.schedd_address" if daemon == "SCHEDD" else "log/.collector_address")
        addr = Address.parse(addr_file.read_text().splitlines()[0])
        targets[daemon] = (str(path), (addr.host, addr.port))
    hellos = st.one_of(
        st.fixed_dictionaries({"hello": st.one_of(st.just("htcd"), ATOMS)},
                              optional={"version": st.one_of(st.just(1), ATOMS), "methods": VALUES,
                                        "encryption": VALUES, "authentication": VALUES, "auth": VALUES}
                              ).map(lambda m: encode(m)),
        st.binary(max_size=40),
    )
    counts = {"unix": 0, "tcp": 0, "refused": 0}

    @settings(max_examples=scaled(300), database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(hellos, min_size=4, max_size=4))
    def run(datas: list[bytes]) -> None:
        for unix, tcp in targets.values():
            for data in datas:
                for where, target in (("unix", unix), ("tcp", tcp)):
                    reply = _hello_reply(target, data)
                    counts[where] += 1
                    if reply is not None and not reply.get("ok"):
                        counts["refused"] += 1
                        assert reply.get("error"), reply

    run()
    print(f"hello fuzz: {counts}")
    assert counts["refused"] > 0
    for daemon in ("COLLECTOR", "SCHEDD"):
        conn = RawConnection(_sockets(pool)[daemon], timeout=30)
        try:
            assert conn.batch([{"cmd": "PING", "args": {}}])[0]["ok"]
        finally:
            conn.close()
        assert "Traceback" not in pool.log(LOGS[daemon])

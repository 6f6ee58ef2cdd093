"""The protocol against a real server on real sockets: handshake, auth, hostile input."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import socket
import struct
from pathlib import Path

import msgpack
import pytest
from pooltools import LoopThread

from htcd.wire import auth
from htcd.wire.address import Address
from htcd.wire.client import AsyncConnection, Connection
from htcd.wire.commands import COMMANDS
from htcd.wire.errors import CommandError, ProtocolError, RemoteError, WireError
from htcd.wire.framing import MAX_FRAME, decode_body, encode
from htcd.wire.server import Request, Server


class Harness(LoopThread):
    """A server in its own event loop thread, so blocking clients can talk to it."""

    def __init__(self, sock_dir: Path) -> None:

        super().__init__()

        async def echo(req: Request) -> object:
            return {"args": req.args, "who": str(req.identity)}

        async def fail(req: Request) -> object:
            raise CommandError("no, because reasons", "NOPE")

        async def crash(req: Request) -> object:
            raise RuntimeError("bug")

        async def stream(req: Request) -> object:
            for i in range(3):
                await req.send_partial([i])
            return [3]

        handlers = {"PING": echo, "QUERY_ADS": stream, "SUBMIT": fail, "QUERY_JOBS": crash,
                    "DAEMONS_OFF": echo}
        self.server = Server("testd", "test.domain", handlers, logging.getLogger("test"))
        self.address = self.run(self.server.start(str(sock_dir / "t.sock"), "127.0.0.1", 0))



@pytest.fixture
def harness(pool_dir: Path):
    h = Harness(pool_dir)
    yield h
    h.close()


def test_fs_authentication_and_echo(harness: Harness) -> None:
    with Connection(harness.address) as conn:
        assert conn.hello["method"] == "FS"
        reply = conn.call("PING", x=1, blob=b"\x00\x01")
    assert reply["args"] == {"x": 1, "blob": b"\x00\x01"}
    import pwd
    assert reply["who"] == f"{pwd.getpwuid(os.geteuid()).pw_name}@test.domain"


def test_streamed_reply_is_merged(harness: Harness) -> None:
    with Connection(harness.address) as conn:
        assert conn.call("QUERY_ADS") == [0, 1, 2, 3]
        assert list(conn.stream("QUERY_ADS")) == [[0], [1], [2], [3]]


def test_refusal_and_handler_bug_are_reported_and_connection_survives(harness: Harness) -> None:
    with Connection(harness.address) as conn:
        with pytest.raises(RemoteError) as err:
            conn.call("SUBMIT")
        assert err.value.code == "NOPE" and "because reasons" in str(err.value)
        with pytest.raises(RemoteError) as err:
            conn.call("QUERY_JOBS")
        assert err.value.code == "INTERNAL"
        with pytest.raises(RemoteError) as err:
            conn.call("NO_SUCH_COMMAND")
        assert err.value.code == "UNKNOWN_COMMAND"
        assert conn.call("PING")["who"]  # still usable


def test_tcp_is_refused_with_the_reason(harness: Harness) -> None:
    """FS over TCP fails with the reason (network methods: tests/security/test_auth*.py)."""
    from htcd.wire.authn import ClientSecurity

    tcp_only = Address(host="127.0.0.1", port=harness.address.port)
    with pytest.raises(RemoteError) as err:
        Connection(tcp_only, security=ClientSecurity(methods=["FS"]))
    assert err.value.code == "AUTHENTICATION"
    assert "FS: only on the daemon's Unix socket" in str(err.value)


def test_wrong_protocol_version(harness: Harness) -> None:
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(harness.address.unix)
        s.sendall(encode({"hello": "htcd", "version": 99, "methods": ["FS"]}))
        from htcd.wire.framing import recv_frame
        reply = recv_frame(s)
    assert reply["ok"] is False and reply["code"] == "VERSION" and "99" in reply["error"]


@pytest.mark.parametrize("junk", [
    b"GET / HTTP/1.0\r\n\r\n",                           # not our protocol at all
    struct.pack(">I", MAX_FRAME + 1),                   # an oversized frame header
    struct.pack(">I", 10) + b"\xc1" * 10,               # undecodable msgpack
    struct.pack(">I", 100) + b"abc",                    # truncated frame
    encode({"hello": "htcd", "version": 1, "methods": ["FS"]}) + struct.pack(">I", 3) + msgpack.packb([1, 2]),
])
def test_garbage_ends_only_that_connection(harness: Harness, junk: bytes) -> None:
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(harness.address.unix)
        s.sendall(junk)
        s.shutdown(socket.SHUT_WR)
        s.settimeout(10)
        while s.recv(4096):
            pass
    with Connection(harness.address) as conn:
        assert conn.call("PING")["who"]


def test_denied_command_says_why(harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    me = auth.Identity("someone", "test.domain", 12345, "FS")
    reason = auth.authorize(me, "ADMINISTRATOR")
    assert reason and "someone@test.domain" in reason and "FS" in reason and "ADMINISTRATOR" in reason
    assert auth.authorize(me, "READ") is None


def test_async_client(harness: Harness) -> None:
    async def go() -> object:
        conn = await AsyncConnection.open(harness.address)
        try:
            return await conn.call("QUERY_ADS")
        finally:
            await conn.close()
    assert asyncio.run(go()) == [0, 1, 2, 3]


def test_unreachable_daemon_is_a_clear_error(pool_dir: Path) -> None:
    with pytest.raises(WireError) as err:
        Connection(Address(host="127.0.0.1", port=1, unix=str(pool_dir / "gone.sock")))
    assert "cannot connect" in str(err.value)


def test_frame_decoding_rejects_non_maps() -> None:
    with pytest.raises(ProtocolError):
        decode_body(msgpack.packb([1, 2, 3]))


@pytest.mark.parametrize("text,expect", [
    ("<127.0.0.1:9618?unix=/tmp/a%20b.sock>", Address("127.0.0.1", 9618, "/tmp/a b.sock")),
    ("host.example:9618", Address("host.example", 9618, None)),
    ("[::1]:9618", Address("::1", 9618, None)),
    ("/run/x.sock", Address("", 0, "/run/x.sock")),
])
def test_addresses_round_trip(text: str, expect: Address) -> None:
    addr = Address.parse(text)
    assert addr == expect
    assert Address.parse(str(addr)) == addr


def test_bad_address_is_a_clear_error() -> None:
    with pytest.raises(WireError):
        Address.parse("host:notaport")


def test_protocol_doc_lists_every_command() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "protocol.md").read_text()
    listed = set(re.findall(r"^\| `([A-Z_]+)` \|", doc, re.M))
    assert listed == set(COMMANDS), f"docs/protocol.md and the command table differ: {listed ^ set(COMMANDS)}"

"""The signed datagram format: what verifies, what does not."""

from __future__ import annotations

import secrets

import pytest

from htcd.wire import udp
from htcd.wire.errors import ProtocolError


def test_a_signed_datagram_verifies_and_decodes() -> None:
    sid, key = secrets.token_bytes(16), secrets.token_bytes(32)
    msg = {"cmd": "UPDATE_AD", "args": {"ad_type": "Machine", "ad": {"Name": '"x"'}}}
    data = udp.encode(sid, key, msg)
    assert udp.session_of(data) == sid
    payload = udp.verify(data, key)
    assert payload is not None and udp.decode_payload(payload) == msg


@pytest.mark.parametrize("where", ["payload", "mac", "sid"])
def test_a_changed_byte_or_another_key_fails(where: str) -> None:
    sid, key = secrets.token_bytes(16), secrets.token_bytes(32)
    data = bytearray(udp.encode(sid, key, {"cmd": "UPDATE_AD", "args": {}}))
    pos = {"payload": len(data) - 1, "mac": udp.HEADER_BYTES - 1, "sid": 5}[where]
    data[pos] ^= 1
    assert udp.verify(bytes(data), key) is None
    assert udp.verify(udp.encode(sid, key, {"cmd": "x"}), secrets.token_bytes(32)) is None


def test_garbage_and_notices_are_told_apart() -> None:
    assert udp.session_of(b"junk") is None and udp.session_of(b"HTU1" + bytes(10)) is None
    sid = secrets.token_bytes(16)
    assert udp.notice_session(udp.notice(sid)) == sid
    assert udp.notice_session(b"HTU1" + sid) is None
    with pytest.raises(ProtocolError):
        udp.decode_payload(b"\xc1")
    with pytest.raises(ProtocolError, match="too big"):
        udp.encode(sid, secrets.token_bytes(32), {"cmd": "x", "args": {"blob": "y" * 70_000}})

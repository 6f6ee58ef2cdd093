"""Signed UDP datagrams: how daemons send ad updates without a connection.

A datagram carries no peer credentials, so it is authenticated by a session opened over an
authenticated connection (``UPDATE_SESSION``), as HTCondor does with its security sessions: the
collector hands the daemon a session id and a random key, and every datagram is

    b"HTU1" | session id (16 bytes) | HMAC-SHA256(key, b"HTU1" + session id + payload) | payload

where the payload is one msgpack map ``{"cmd": ..., "args": ...}`` like a request frame.  A
collector that does not know the session answers the sender with a notice,

    b"HTN1" | session id (16 bytes)

which carries no secret: it only tells the daemon to open a new session over its connection
(a forged notice costs the daemon one extra round trip, nothing more).
"""

from __future__ import annotations

import hmac
from typing import Any

import msgpack

from htcd.wire.errors import ProtocolError

MAGIC = b"HTU1"
NOTICE = b"HTN1"
SID_BYTES = 16
KEY_BYTES = 32
MAC_BYTES = 32
HEADER_BYTES = len(MAGIC) + SID_BYTES + MAC_BYTES
#: The largest datagram sent; bigger updates go over the connection instead.  IPv4 allows
#: 65,507 bytes of UDP payload; staying under 60,000 leaves room for any encapsulation.
MAX_DATAGRAM = 60_000


def _mac(key: bytes, sid: bytes, payload: bytes) -> bytes:
    return hmac.digest(key, MAGIC + sid + payload, "sha256")


def encode(sid: bytes, key: bytes, message: dict[str, Any]) -> bytes:
    """One signed datagram holding ``message``; ProtocolError if it would be too big."""
    payload = msgpack.packb(message, use_bin_type=True)
    if HEADER_BYTES + len(payload) > MAX_DATAGRAM:
        raise ProtocolError(f"message of {len(payload)} bytes is too big for a datagram")
    return MAGIC + sid + _mac(key, sid, payload) + payload


def session_of(datagram: bytes) -> bytes | None:
    """The session id of a signed datagram, or None if it is not one."""
    if len(datagram) <= HEADER_BYTES or datagram[:4] != MAGIC:
        return None
    return datagram[4:4 + SID_BYTES]


def verify(datagram: bytes, key: bytes) -> bytes | None:
    """The payload if the MAC is right for ``key``, else None."""
    sid = datagram[4:4 + SID_BYTES]
    mac = datagram[4 + SID_BYTES:HEADER_BYTES]
    payload = datagram[HEADER_BYTES:]
    if not hmac.compare_digest(mac, _mac(key, sid, payload)):
        return None
    return payload


def decode_payload(payload: bytes) -> dict[str, Any]:
    """The message of a verified datagram (arrays decode as tuples)."""
    from htcd.wire.framing import check_depth, unpack_limits

    try:
        message = msgpack.unpackb(payload, raw=False, strict_map_key=False, use_list=False,
                                  **unpack_limits(len(payload)))
    except Exception as exc:  # msgpack raises several types for garbage
        raise ProtocolError(f"undecodable datagram: {exc}") from None
    if not isinstance(message, dict):
        raise ProtocolError("datagram is not a map")
    check_depth(message, tuple_keys=True)
    return message


_NAMES: dict[tuple[str, ...], bytes] = {}


def compact(ad: dict[str, str]) -> dict[str, Any]:
    """An ad in UPDATE_AD's compact form (over a connection or in a datagram): its attribute
    names as one msgpack blob, the same for every ad a daemon sends alike, and its expression
    texts in the same order.  Decoding it costs a fifth of decoding the ad as a map, and the
    collector finds the ad's layout from the blob without reading a name."""
    names = tuple(ad)
    blob = _NAMES.get(names)
    if blob is None:
        if len(_NAMES) >= 256:
            _NAMES.clear()
        blob = _NAMES[names] = msgpack.packb(list(names), use_bin_type=True)
    return {"names": blob, "values": list(ad.values())}


def notice(sid: bytes) -> bytes:
    """The collector's "I do not know this session" answer."""
    return NOTICE + sid


def notice_session(datagram: bytes) -> bytes | None:
    """The session id a notice names, or None if ``datagram`` is not a notice."""
    if len(datagram) != len(NOTICE) + SID_BYTES or datagram[:4] != NOTICE:
        return None
    return datagram[4:]

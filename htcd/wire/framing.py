"""Length-prefixed msgpack frames, and the limits that keep hostile input cheap.

A frame is a 4-byte big-endian unsigned length followed by that many bytes of one msgpack
value (always a map at the top level).  The length is checked against the limit in force
before anything is read, so a hostile peer cannot make a daemon allocate without bound: before
authentication the limit is small (``Limits.unauth_frame``, 64 KiB), after it ``MAX_FRAME``.
The decoder bounds every string, binary, array and map by the frame's own length (a 4 GiB
length claim in a 10-byte frame fails at once) and the nesting by ``MAX_DEPTH``.
"""

from __future__ import annotations

import contextvars
import socket
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import msgpack

from htcd.wire.errors import ProtocolError, WireError

if TYPE_CHECKING:  # asyncio is imported by the async readers only: a tool's start does not pay for it
    import asyncio

HEADER = struct.Struct(">I")
MAX_FRAME = 256 * 1024 * 1024  # bounds one frame; big files travel as streams of CHUNK-sized frames
#: Deepest nesting of maps and arrays in a frame (requests use 4 or 5 levels); msgpack's own
#: decoder stops at 1024, deep enough to make later recursive code fail, so we stop far earlier.
MAX_DEPTH = 32
_CONTAINERS = (dict, list, tuple)

#: The frame limit of the connection being served: small until the handshake has authenticated
#: the peer (the server sets it per connection task), ``MAX_FRAME`` otherwise (clients).
frame_limit: contextvars.ContextVar[int] = contextvars.ContextVar("frame_limit", default=MAX_FRAME)


class _IntConfig(Protocol):
    def get_int(self, name: str, default: int) -> int: ...


@dataclass
class Limits:
    """What a daemon's server allows a peer, set from the config (knobs in param_table.tsv)."""

    unauth_frame: int = 64 * 1024  # MAX_UNAUTHENTICATED_MESSAGE_SIZE: frames before authentication
    handshake_timeout: float = 20.0  # SEC_TCP_SESSION_TIMEOUT: the whole handshake, from accept
    frame_timeout: float = 60.0  # MESSAGE_READ_TIMEOUT: a frame, once its first byte came
    idle_timeout: float = 3600.0  # CONNECTION_IDLE_TIMEOUT: between requests
    max_unauthenticated: int = 256  # MAX_UNAUTHENTICATED_CONNECTIONS: connections in handshake at once
    max_connections: int = 0  # MAX_OPEN_CONNECTIONS: connections open at once (0: fd_safety_limit())

    @classmethod
    def from_config(cls, config: _IntConfig) -> Limits:
        """The limits the config sets; a value below 1 is raised to 1 (a zero limit would refuse all)."""
        d = cls()
        return cls(
            unauth_frame=max(1024, config.get_int("MAX_UNAUTHENTICATED_MESSAGE_SIZE", d.unauth_frame)),
            handshake_timeout=max(1, config.get_int("SEC_TCP_SESSION_TIMEOUT", int(d.handshake_timeout))),
            frame_timeout=max(1, config.get_int("MESSAGE_READ_TIMEOUT", int(d.frame_timeout))),
            idle_timeout=max(1, config.get_int("CONNECTION_IDLE_TIMEOUT", int(d.idle_timeout))),
            max_unauthenticated=max(1, config.get_int("MAX_UNAUTHENTICATED_CONNECTIONS",
                                                      d.max_unauthenticated)),
            max_connections=max(0, config.get_int("MAX_OPEN_CONNECTIONS", d.max_connections)),
        )


def fd_safety_limit() -> int:
    """HTCondor's file-descriptor safety level: 80% of the process's open-file limit (the soft
    RLIMIT_NOFILE, which MAX_FILE_DESCRIPTORS sets), so that a daemon refusing connections still
    has descriptors for its files, logs and its own connections; never below 20."""
    import resource

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY or soft <= 0:
        soft = 1 << 20
    return max(20, soft - soft // 5)


def encode(message: dict[str, Any]) -> bytes:
    body = msgpack.packb(message, use_bin_type=True)
    if len(body) > MAX_FRAME:
        raise ProtocolError(f"message of {len(body)} bytes exceeds the frame limit of {MAX_FRAME}")
    return HEADER.pack(len(body)) + body


def unpack_limits(size: int) -> dict[str, int]:
    """msgpack decoder limits for a body of ``size`` bytes: nothing in it can be longer than it
    (a map entry takes at least two bytes), so a lying length fails before any allocation."""
    size = max(size, 1)
    return {"max_str_len": size, "max_bin_len": size, "max_array_len": size, "max_map_len": size // 2 + 1,
            "max_ext_len": size}


def check_depth(value: Any, limit: int = MAX_DEPTH, tuple_keys: bool = False) -> None:
    """ProtocolError if maps and arrays nest deeper than ``limit``.  Only containers are walked
    (the types in a map or array are collected at C speed), so a flat ad costs little.  Map keys
    are looked at only with ``tuple_keys`` (decoding with ``use_list=False`` makes array keys
    tuples; otherwise an array key fails to decode, being unhashable)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            raise ProtocolError(f"undecodable frame: maps and arrays nested deeper than {limit} levels")
        if type(item) is dict:
            children = item.values()
            if tuple_keys and tuple in set(map(type, item)):
                stack.extend((k, depth + 1) for k in item if type(k) is tuple)
        else:
            children = item
        if not set(map(type, children)).isdisjoint(_CONTAINERS):
            stack.extend((c, depth + 1) for c in children if isinstance(c, _CONTAINERS))


def decode_body(body: bytes, nesting: bool = True) -> dict[str, Any]:
    """One frame's map.  ``nesting=False`` skips the depth walk (a fifth of the decoding time of a
    big reply): for replies a client reads from the daemon it authenticated, where msgpack's own
    limit (1024 levels) is enough."""
    try:
        message = msgpack.unpackb(body, raw=False, strict_map_key=False, **unpack_limits(len(body)))
    except Exception as exc:  # msgpack raises several types for garbage
        raise ProtocolError(f"undecodable frame: {_reason(exc)}") from None
    if not isinstance(message, dict):
        raise ProtocolError("frame is not a map")
    if nesting:
        check_depth(message)
    return message


def _reason(exc: BaseException) -> str:
    if isinstance(exc, msgpack.StackError):
        return "nested too deep"
    return str(exc) or type(exc).__name__


def check_length(length: int, limit: int | None = None) -> int:
    """The limit in force (``limit`` or the connection's); ProtocolError if ``length`` is over it."""
    limit = frame_limit.get() if limit is None else limit
    if length > limit:
        before = " before authentication" if limit < MAX_FRAME else ""
        raise ProtocolError(f"frame of {length} bytes exceeds the limit of {limit}{before}")
    return limit



async def read_frame(reader: asyncio.StreamReader, limit: int | None = None) -> dict[str, Any] | None:
    """Read one frame; None on a clean end of stream before a header.  ``limit`` defaults to the
    connection's (``frame_limit``); under the unauthenticated limit (a daemon's handshake) the
    nesting is checked too, not in what clients read from daemons."""
    import asyncio

    try:
        header = await reader.readexactly(HEADER.size)
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        raise ProtocolError("connection closed inside a frame header") from None
    (length,) = HEADER.unpack(header)
    limit = check_length(length, limit)
    try:
        body = await reader.readexactly(length)
    except asyncio.IncompleteReadError:
        raise ProtocolError("connection closed inside a frame") from None
    return decode_body(body, nesting=limit < MAX_FRAME)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            raise WireError("connection closed by the daemon")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def recv_frame(sock: socket.socket) -> dict[str, Any]:
    """Blocking read of one frame (the CLI side)."""
    (length,) = HEADER.unpack(_recv_exact(sock, HEADER.size))
    check_length(length, MAX_FRAME)
    return decode_body(_recv_exact(sock, length), nesting=False)

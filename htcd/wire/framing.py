"""Length-prefixed msgpack frames.

A frame is a 4-byte big-endian unsigned length followed by that many bytes of one msgpack
value (always a map at the top level).  The length is checked against ``MAX_FRAME`` before
anything is read, so a hostile peer cannot make a daemon allocate without bound.
"""

from __future__ import annotations

import asyncio
import socket
import struct
from typing import Any

import msgpack

from htcd.wire.errors import ProtocolError, WireError

HEADER = struct.Struct(">I")
MAX_FRAME = 256 * 1024 * 1024  # file transfer rides in frames until chunked transfer exists


def encode(message: dict[str, Any]) -> bytes:
    body = msgpack.packb(message, use_bin_type=True)
    if len(body) > MAX_FRAME:
        raise ProtocolError(f"message of {len(body)} bytes exceeds the frame limit of {MAX_FRAME}")
    return HEADER.pack(len(body)) + body


def decode_body(body: bytes) -> dict[str, Any]:
    try:
        message = msgpack.unpackb(body, raw=False, strict_map_key=False)
    except Exception as exc:  # msgpack raises several types for garbage
        raise ProtocolError(f"undecodable frame: {exc}") from None
    if not isinstance(message, dict):
        raise ProtocolError("frame is not a map")
    return message


def _check_length(length: int) -> None:
    if length > MAX_FRAME:
        raise ProtocolError(f"frame of {length} bytes exceeds the limit of {MAX_FRAME}")


async def read_frame(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    """Read one frame; None on a clean end of stream before a header."""
    try:
        header = await reader.readexactly(HEADER.size)
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        raise ProtocolError("connection closed inside a frame header") from None
    (length,) = HEADER.unpack(header)
    _check_length(length)
    try:
        body = await reader.readexactly(length)
    except asyncio.IncompleteReadError:
        raise ProtocolError("connection closed inside a frame") from None
    return decode_body(body)


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
    _check_length(length)
    return decode_body(_recv_exact(sock, length))

"""Clients of the protocol: blocking (tools, where start-up time matters) and asyncio (daemons)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

from htcd.wire.address import Address
from htcd.wire.errors import ProtocolError, RemoteError, WireError
from htcd.wire.framing import encode, read_frame, recv_frame

PROTOCOL_VERSION = 1
HELLO = {"hello": "htcd", "version": PROTOCOL_VERSION, "methods": ["FS"]}


def _check_hello(reply: dict[str, Any] | None, address: Address) -> dict[str, Any]:
    if reply is None:
        raise ProtocolError(f"daemon at {address} closed the connection during the handshake")
    if not reply.get("ok"):
        raise RemoteError(str(reply.get("error", "handshake refused")), str(reply.get("code", "FAILED")))
    return reply


def _merge(parts: list[Any]) -> Any:
    """A streamed reply's parts (lists) as one list; a one-part reply as itself."""
    if len(parts) == 1:
        return parts[0]
    merged: list[Any] = []
    for p in parts:
        merged.extend(p or [])
    return merged


def _result(reply: dict[str, Any]) -> Any:
    if not reply.get("ok"):
        raise RemoteError(str(reply.get("error", "command failed")), str(reply.get("code", "FAILED")))
    return reply.get("result")


class Connection:
    """A blocking connection; use as a context manager."""

    def __init__(self, address: Address | str, timeout: float | None = 30.0) -> None:
        self.address = Address.parse(address) if isinstance(address, str) else address
        path = self.address.local_socket()
        try:
            if path:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.settimeout(timeout)
                self.sock.connect(path)
            elif self.address.host and self.address.port:
                self.sock = socket.create_connection((self.address.host, self.address.port), timeout)
            else:
                raise WireError(f"cannot reach {self.address}: no socket on this host and no TCP port")
        except OSError as exc:
            raise WireError(f"cannot connect to {self.address}: {exc.strerror or exc}") from None
        try:
            self.sock.sendall(encode(HELLO))
            self.hello = _check_hello(recv_frame(self.sock), self.address)
        except OSError as exc:
            self.close()
            raise WireError(f"handshake with {self.address} failed: {exc}") from None
        except Exception:
            self.close()
            raise

    @property
    def identity(self) -> str:
        return str(self.hello.get("identity", ""))

    def call(self, command: str, **args: Any) -> Any:
        """Send one command and return its result (partial replies are concatenated lists)."""
        return _merge(list(self.stream(command, **args)))

    def stream(self, command: str, **args: Any) -> Iterator[Any]:
        try:
            self.sock.sendall(encode({"cmd": command, "args": args}))
            while True:
                reply = recv_frame(self.sock)
                result = _result(reply)
                yield result
                if not reply.get("more"):
                    return
        except OSError as exc:
            raise WireError(f"connection to {self.address} failed: {exc}") from None

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncConnection:
    """An asyncio connection for daemons talking to daemons."""

    def __init__(self, address: Address, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 hello: dict[str, Any]) -> None:
        self.address = address
        self.reader = reader
        self.writer = writer
        self.hello = hello
        self._lock = asyncio.Lock()

    @classmethod
    async def open(cls, address: Address | str, timeout: float = 30.0) -> AsyncConnection:
        addr = Address.parse(address) if isinstance(address, str) else address
        path = addr.local_socket()
        try:
            if path:
                coro = asyncio.open_unix_connection(path, limit=1 << 20)
            elif addr.host and addr.port:
                coro = asyncio.open_connection(addr.host, addr.port, limit=1 << 20)
            else:
                raise WireError(f"cannot reach {addr}: no socket on this host and no TCP port")
            reader, writer = await asyncio.wait_for(coro, timeout)
            writer.write(encode(HELLO))
            await writer.drain()
            hello = _check_hello(await asyncio.wait_for(read_frame(reader), timeout), addr)
        except (TimeoutError, OSError) as exc:
            raise WireError(f"cannot connect to {addr}: {exc or 'timed out'}") from None
        return cls(addr, reader, writer, hello)

    async def call(self, command: str, timeout: float | None = 60.0, **args: Any) -> Any:
        return _merge([p async for p in self.stream(command, timeout=timeout, **args)])

    async def stream(self, command: str, timeout: float | None = 60.0, **args: Any) -> AsyncIterator[Any]:
        async with self._lock:
            try:
                self.writer.write(encode({"cmd": command, "args": args}))
                await self.writer.drain()
                while True:
                    reply = await asyncio.wait_for(read_frame(self.reader), timeout)
                    if reply is None:
                        raise WireError(f"{self.address} closed the connection during {command}")
                    yield _result(reply)
                    if not reply.get("more"):
                        return
            except (OSError, asyncio.IncompleteReadError) as exc:
                raise WireError(f"connection to {self.address} failed during {command}: {exc}") from None
            except TimeoutError:
                raise WireError(f"{self.address} did not answer {command} in time") from None

    async def close(self) -> None:
        self.writer.close()
        try:
            await self.writer.wait_closed()
        except (OSError, asyncio.CancelledError):
            pass

    async def __aenter__(self) -> AsyncConnection:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def acall(address: Address | str, command: str, timeout: float = 60.0, **args: Any) -> Any:
    """One command on a fresh connection."""
    conn = await AsyncConnection.open(address, timeout=timeout)
    try:
        return await conn.call(command, timeout=timeout, **args)
    finally:
        await conn.close()

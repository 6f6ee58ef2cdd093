"""The asyncio protocol server every daemon runs.

One connection: handshake (protocol version, authentication), then any number of requests,
each answered in order.  A handler that streams sends partial replies before its final one.
Every failure of one connection (garbage, a slow client, a handler bug) ends that connection
only; the daemon keeps serving the others.

Logging follows HTCondor's categories: each command at D_COMMAND (its return and time at
D_COMMAND:2), connections at D_NETWORK, authentication at D_SECURITY.  While a handler runs, its
task is named ``command <NAME>``, so a long loop iteration can be traced to the command.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any

import msgpack

from htcd.wire import auth
from htcd.wire.address import Address
from htcd.wire.commands import COMMANDS
from htcd.wire.errors import CommandError, ProtocolError
from htcd.wire.framing import HEADER, MAX_FRAME, decode_body, encode, read_frame

PROTOCOL_VERSIONS = (1,)
HANDSHAKE_TIMEOUT = 20.0
IDLE_TIMEOUT = 3600.0
BIG_FRAME = 1 << 20  # requests from this size on are decoded in slices (a 100,000-proc SUBMIT)

Handler = Callable[["Request"], Awaitable[Any]]


@dataclass
class Connection:
    """Per-connection state a handler may use: callbacks run when the connection ends."""

    reader: asyncio.StreamReader = field(repr=False)
    on_close: list[Callable[[], None]] = field(default_factory=list)

    async def closed_by_peer(self) -> None:
        """Return when the client closes (for a handler that waits long and expects no input)."""
        while await self.reader.read(4096):
            pass


@dataclass
class Request:
    command: str
    args: dict[str, Any]
    identity: auth.Identity
    writer: asyncio.StreamWriter = field(repr=False)
    conn: Connection = field(repr=False, default=None)  # type: ignore[assignment]

    async def send_partial(self, result: Any) -> None:
        """Stream part of a reply; the final part is the handler's return value."""
        self.writer.write(encode({"ok": True, "more": True, "result": result}))
        await self.writer.drain()

    def arg(self, name: str, default: Any = None) -> Any:
        return self.args.get(name, default)

    def require(self, name: str) -> Any:
        if name not in self.args:
            raise CommandError(f"{self.command}: missing argument {name!r}", "BAD_REQUEST")
        return self.args[name]


async def read_request(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    """One request frame (None at a clean end of stream); a big one is decoded a slice at a time
    so that decoding it never holds the event loop for long."""
    try:
        header = await reader.readexactly(HEADER.size)
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        raise ProtocolError("connection closed inside a frame header") from None
    (length,) = HEADER.unpack(header)
    if length > MAX_FRAME:
        raise ProtocolError(f"frame of {length} bytes exceeds the limit of {MAX_FRAME}")
    try:
        body = await reader.readexactly(length)
    except asyncio.IncompleteReadError:
        raise ProtocolError("connection closed inside a frame") from None
    if length < BIG_FRAME:
        return decode_body(body)
    return await decode_paced(body)


_MAPS = {0xDE, 0xDF, *range(0x80, 0x90)}
_ARRAYS = {0xDC, 0xDD, *range(0x90, 0xA0)}


async def decode_paced(body: bytes, depth: int = 3) -> dict[str, Any]:
    """msgpack ``body`` decoded like ``decode_body``, walking the maps and arrays of the first
    ``depth`` levels element by element (their elements decoded whole) and giving the loop a turn
    whenever the slice's time is used up."""
    from htcd.daemon.stats import Pacer

    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False, max_buffer_size=max(len(body), 1))
    unpacker.feed(body)
    pacer = Pacer()
    count = 0

    async def value(level: int) -> Any:
        nonlocal count
        count += 1
        if count & 127 == 0 and pacer.due():
            await pacer.pause()
        if level >= depth or unpacker.tell() >= len(body):
            return unpacker.unpack()
        kind = body[unpacker.tell()]
        if kind in _MAPS:
            out = {}
            for _ in range(unpacker.read_map_header()):
                key = unpacker.unpack()
                out[key] = await value(level + 1)
            return out
        if kind not in _ARRAYS:
            return unpacker.unpack()
        n = unpacker.read_array_header()
        if level + 1 < depth:
            return [await value(level + 1) for _ in range(n)]
        items = []
        for i in range(n):  # the deepest level walked: whole elements, no coroutine each
            if i & 127 == 0 and pacer.due():
                await pacer.pause()
            items.append(unpacker.unpack())
        return items

    try:
        message = await value(0)
    except (ValueError, msgpack.UnpackException, msgpack.OutOfData, TypeError) as exc:
        raise ProtocolError(f"undecodable frame: {exc}") from None
    if unpacker.tell() != len(body):
        raise ProtocolError("undecodable frame: extra data after the message")
    if not isinstance(message, dict):
        raise ProtocolError("frame is not a map")
    return message


class Server:
    def __init__(self, name: str, uid_domain: str, handlers: dict[str, Handler],
                 log: logging.Logger, on_command: Callable[[str, float, bool], None] | None = None) -> None:
        self.name = name
        self.uid_domain = uid_domain
        self.handlers = handlers
        self.log = log
        self.on_command = on_command  # (name, seconds, handled) after each request: statistics
        # (identity, level) -> None when authorized, else the one-line reason; the daemon sets its policy
        self.authorizer: Callable[[auth.Identity, str], str | None] = auth.authorize
        from htcd.daemon.log import dprintf, enabled  # here: htcd.daemon imports this module

        self._dprintf = dprintf
        self._enabled = enabled
        self._servers: list[asyncio.AbstractServer] = []
        self._conns: set[asyncio.Task[None]] = set()
        self._closing = False
        self.address = Address()

    async def start(self, unix_path: str | None, tcp_host: str | None, tcp_port: int = 0) -> Address:
        port = 0
        if unix_path:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(unix_path)
            srv = await asyncio.start_unix_server(self._on_unix, path=unix_path, limit=1 << 20)
            os.chmod(unix_path, 0o777)  # anyone may connect; FS says who they are
            self._servers.append(srv)
        if tcp_host is not None:
            srv = await asyncio.start_server(self._on_tcp, host=tcp_host, port=tcp_port,
                                             reuse_address=True, limit=1 << 20)
            port = srv.sockets[0].getsockname()[1]
            self._servers.append(srv)
        self.address = Address(host=tcp_host or "", port=port, unix=unix_path)
        return self.address

    @property
    def connections(self) -> int:
        """Connections open now (MonitorSelfRegisteredSocketCount)."""
        return len(self._conns)

    async def close(self) -> None:
        """Stop listening and end every connection.  A connection's task is cancelled again until
        it ends: asyncio's wait_for may swallow a cancellation that meets a completing read, and a
        connection accepted just now only joins ``_conns`` on its first step (it sees ``_closing``).
        Not ``wait_closed()``: it would wait for every accepted transport, however idle."""
        self._closing = True
        for srv in self._servers:
            srv.close()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 10.0
        while self._conns and loop.time() < deadline:
            for task in list(self._conns):
                task.cancel()
            await asyncio.wait(set(self._conns), timeout=0.5)
        if self._conns:
            self.log.warning("%d connection(s) did not end at shutdown", len(self._conns))
        if self.address.unix:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.address.unix)

    async def _on_unix(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock: socket.socket = writer.get_extra_info("socket")
        try:
            identity = auth.fs_identity(sock, self.uid_domain)
        except OSError as exc:
            identity = None
            self.log.warning("cannot read peer credentials: %s", exc)
        await self._serve(reader, writer, identity, "unix")

    async def _on_tcp(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        await self._serve(reader, writer, None, f"tcp {peer[0]}:{peer[1]}" if peer else "tcp")

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                     fs_identity: auth.Identity | None, via: str) -> None:
        task = asyncio.current_task()
        assert task is not None
        if self._closing:
            writer.close()
            return
        self._conns.add(task)
        conn = Connection(reader)
        self._dprintf(self.log, "D_NETWORK", "accepted a %s connection", via)
        try:
            identity = await self._handshake(reader, writer, fs_identity, via)
            if identity is not None:
                await self._requests(conn, writer, identity, via)
        except (TimeoutError, ProtocolError) as exc:
            self.log.info("dropped connection (%s): %s", via, exc or "timed out")
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            pass
        finally:
            self._conns.discard(task)
            self._dprintf(self.log, "D_NETWORK", "closing the %s connection", via)
            for callback in conn.on_close:
                try:
                    callback()
                except Exception:
                    self.log.exception("connection close callback failed")
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _handshake(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                         fs_identity: auth.Identity | None, via: str) -> auth.Identity | None:
        hello = await asyncio.wait_for(read_frame(reader), HANDSHAKE_TIMEOUT)
        if hello is None:
            return None
        if hello.get("hello") != "htcd":
            raise ProtocolError("not an htcd handshake")
        version = hello.get("version")
        if version not in PROTOCOL_VERSIONS:
            await self._refuse(writer, "VERSION",
                               f"protocol version {version!r} is not supported by this {self.name} "
                               f"(it speaks {', '.join(map(str, PROTOCOL_VERSIONS))})")
            return None
        offered = [str(m).upper() for m in hello.get("methods") or []]
        tried = []
        if "FS" in offered:
            if fs_identity is not None:
                self._dprintf(self.log, "D_SECURITY", "authenticated %s by FS (%s)", fs_identity, via)
                writer.write(encode({"ok": True, "version": version, "method": "FS",
                                     "identity": str(fs_identity), "daemon": self.name}))
                await writer.drain()
                return fs_identity
            tried.append("FS: only on the daemon's Unix socket (this is a " + via.split()[0] + " connection)")
        for m in offered:
            if m != "FS":
                tried.append(f"{m}: not offered by this daemon")
        reason = "; ".join(tried) or "the client offered no method"
        self.log.warning("authentication failed (%s): %s", via, reason)
        await self._refuse(writer, "AUTHENTICATION",
                           f"authentication with {self.name} failed: {reason}")
        return None

    async def _refuse(self, writer: asyncio.StreamWriter, code: str, message: str) -> None:
        writer.write(encode({"ok": False, "code": code, "error": message}))
        with contextlib.suppress(ConnectionError):
            await writer.drain()

    async def _requests(self, conn: Connection, writer: asyncio.StreamWriter,
                        identity: auth.Identity, via: str = "") -> None:
        while True:
            msg = await asyncio.wait_for(read_request(conn.reader), IDLE_TIMEOUT)
            if msg is None:
                return
            name = msg.get("cmd")
            args = msg.get("args") or {}
            if not isinstance(name, str) or not isinstance(args, dict):
                raise ProtocolError("request without a command name or with bad arguments")
            reply = await self._dispatch(name, args, identity, writer, conn, via)
            writer.write(encode(reply))
            await writer.drain()

    async def _dispatch(self, name: str, args: dict[str, Any], identity: auth.Identity,
                        writer: asyncio.StreamWriter, conn: Connection, via: str = "") -> dict[str, Any]:
        handler = self.handlers.get(name)
        command = COMMANDS.get(name)
        if handler is None or command is None:
            self.log.info("Received %s command %r from %s: %s has no handler for it", via, name, identity,
                          self.name)
            self._count(name, 0.0, False)
            return {"ok": False, "code": "UNKNOWN_COMMAND",
                    "error": f"{self.name} does not know the command {name!r}"}
        if self._enabled(self.log, "D_COMMAND"):
            self._dprintf(self.log, "D_COMMAND", "Received %s command %s from %s, access level %s", via, name,
                    identity, command.level)
        denied = self.authorizer(identity, command.level)
        if denied:
            self.log.warning("denied %s to %s: %s", name, identity, denied)
            self._count(name, 0.0, False)
            return {"ok": False, "code": "DENIED", "error": f"{name} refused: {denied}"}
        task = asyncio.current_task()
        task_name = task.get_name() if task is not None else ""
        if task is not None:
            task.set_name(f"command {name}")
        started = perf_counter()
        try:
            result = await handler(Request(name, args, identity, writer, conn))
        except CommandError as exc:
            return {"ok": False, "code": exc.code, "error": str(exc)}
        except (ConnectionError, asyncio.CancelledError):
            raise
        except Exception as exc:
            self.log.exception("command %s from %s failed", name, identity)
            return {"ok": False, "code": "INTERNAL", "error": f"{self.name} failed on {name}: {exc!r}"}
        finally:
            elapsed = perf_counter() - started
            if task is not None:
                task.set_name(task_name)
            self._count(name, elapsed, True)
            self._dprintf(self.log, "D_COMMAND:2", "Return from handler %s (handler: %.6f s)", name, elapsed)
        return {"ok": True, "result": result}

    def _count(self, name: str, seconds: float, handled: bool) -> None:
        if self.on_command is not None:
            self.on_command(name, seconds, handled)

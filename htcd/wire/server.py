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
from typing import Any, Literal, overload

import msgpack

from htcd.debug import dprintf, enabled
from htcd.pacer import Pacer
from htcd.wire import auth
from htcd.wire.address import Address
from htcd.wire.authn import ServerSecurity
from htcd.wire.commands import COMMANDS
from htcd.wire.errors import CommandError, ProtocolError
from htcd.wire.framing import (
    HEADER,
    MAX_DEPTH,
    MAX_FRAME,
    Limits,
    check_depth,
    check_length,
    decode_body,
    encode,
    fd_safety_limit,
    frame_limit,
    read_frame,
    unpack_limits,
)
from htcd.wire.sharedport import HandoverListener

PROTOCOL_VERSIONS = (1,)
HANDSHAKE_TIMEOUT = 20.0  # a single handshake read; the whole handshake is bounded by Limits
BIG_FRAME = 1 << 20  # requests from this size on are decoded in slices (a 100,000-proc SUBMIT)
REFUSING_AT_ONCE = 64  # refused connections kept for a second to read their hello; more are closed at once

Handler = Callable[["Request"], Awaitable[Any]]


@dataclass
class Connection:
    """Per-connection state a handler may use: callbacks run when the connection ends."""

    reader: asyncio.StreamReader = field(repr=False)
    on_close: list[Callable[[], None]] = field(default_factory=list)
    _watchers: set[asyncio.Task[Any]] = field(default_factory=set, repr=False)

    async def closed_by_peer(self) -> None:
        """Return when the client closes (for a handler that waits long and expects no input)."""
        task = asyncio.current_task()
        if task is not None:
            self._watchers.add(task)
        try:
            while await self.reader.read(4096):
                pass
        finally:
            if task is not None:
                self._watchers.discard(task)

    async def settle(self) -> None:
        """End the watchers a finished handler left reading (a cancelled one ends only on its
        next step), so that the next request's read is the stream's only reader."""
        watchers = list(self._watchers)
        for task in watchers:
            task.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)


@dataclass
class Request:
    command: str
    args: dict[str, Any]
    identity: auth.Identity
    writer: asyncio.StreamWriter = field(repr=False)
    conn: Connection = field(repr=False)

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

    # Typed accessors: a missing or wrongly typed argument is the client's mistake, answered with
    # BAD_REQUEST naming the argument and the type expected (never a handler's TypeError).
    def _typed(self, name: str, ok: Callable[[Any], bool], what: str, default: Any, required: bool) -> Any:
        value = self.args.get(name)
        if value is None:
            if required:
                raise CommandError(f"{self.command}: missing argument {name!r} ({what})", "BAD_REQUEST")
            return default
        if not ok(value):
            raise CommandError(f"{self.command}: argument {name!r} must be {what}, not {_kind(value)}",
                               "BAD_REQUEST")
        return value

    def arg_str(self, name: str, default: str | None = None, required: bool = False) -> str:
        return self._typed(name, lambda v: type(v) is str, "a string", default, required)

    def arg_int(self, name: str, default: int | None = None, required: bool = False) -> int:
        return self._typed(name, lambda v: type(v) is int, "an integer", default, required)

    @overload
    def arg_float(self, name: str, default: float, required: bool = False) -> float: ...

    @overload
    def arg_float(self, name: str, default: None = None, *, required: Literal[True]) -> float: ...

    @overload
    def arg_float(self, name: str, default: None = None, required: bool = False) -> float | None: ...

    def arg_float(self, name: str, default: float | None = None, required: bool = False) -> float | None:
        """A number (integer or float, finite) as a float; None only when absent without a default."""
        value = self._typed(name, lambda v: type(v) in (int, float) and v == v and abs(v) != float("inf"),
                            "a finite number", default, required)
        return value if value is None else float(value)

    def arg_bool(self, name: str, default: bool = False) -> bool:
        return bool(self._typed(name, lambda v: type(v) in (bool, int), "a boolean", default, False))

    def arg_list(self, name: str, item: type | tuple[type, ...] | None = None, default: list[Any] | None = None,
                 required: bool = False) -> list[Any]:
        """A list (or an empty default); with ``item``, every element must be of that type."""
        what = "a list" if item is None else f"a list of {_names(item)}"
        value = self._typed(name, lambda v: isinstance(v, (list, tuple)) and (
            item is None or all(_is(x, item) for x in v)), what, None, required)
        return list(default or []) if value is None else list(value)

    def arg_map(self, name: str, required: bool = False) -> dict[Any, Any]:
        return self._typed(name, lambda v: type(v) is dict, "a map", {}, required)

    def arg_ad(self, name: str, required: bool = False) -> dict[str, str] | None:
        """A ClassAd in wire form: a map of attribute name to expression text (both strings)."""
        return self._typed(name, is_wire_ad, "a ClassAd (a map of attribute name to expression text)", None,
                           required)


def is_wire_ad(value: Any) -> bool:
    """Whether ``value`` is a ClassAd in wire form (every key and value a string); C-speed checks."""
    return (type(value) is dict and set(map(type, value)) <= {str}
            and set(map(type, value.values())) <= {str})


def _is(value: Any, kinds: type | tuple[type, ...]) -> bool:
    return isinstance(value, kinds) and not (type(value) is bool and bool not in (
        kinds if isinstance(kinds, tuple) else (kinds,)))


def _names(kinds: type | tuple[type, ...]) -> str:
    names = {str: "strings", int: "integers", float: "numbers", dict: "maps", list: "lists", bytes: "bytes"}
    return " or ".join(names.get(k, k.__name__) for k in (kinds if isinstance(kinds, tuple) else (kinds,)))


def _kind(value: Any) -> str:
    names = {str: "a string", int: "an integer", float: "a float", bool: "a boolean", bytes: "binary data",
             dict: "a map", list: "a list", tuple: "a list"}
    return names.get(type(value), type(value).__name__)


class IdleTimeout(ProtocolError):
    """The client sent nothing for CONNECTION_IDLE_TIMEOUT: closed without a last word (a client
    that kept an idle connection did nothing wrong, and its next request should see a closed
    connection, not a refusal)."""


async def read_request(reader: asyncio.StreamReader, limits: Limits | None = None) -> dict[str, Any] | None:
    """One request frame (None at a clean end of stream); a big one is decoded a slice at a time
    so that decoding it never holds the event loop for long.  The peer may stay silent between
    requests for ``idle_timeout``, but a frame once begun must be whole within ``frame_timeout``
    (a client sending a byte a minute is cut off)."""
    limits = limits or Limits()
    try:
        async with asyncio.timeout(limits.idle_timeout):  # a context, not a task per read: cheap
            first = await reader.readexactly(1)
    except asyncio.IncompleteReadError:
        return None
    except TimeoutError:
        raise IdleTimeout(f"idle for {limits.idle_timeout:g} s (CONNECTION_IDLE_TIMEOUT)") from None
    try:
        async with asyncio.timeout(limits.frame_timeout):
            return await _rest_of_frame(reader, first)
    except TimeoutError:
        raise ProtocolError(f"a frame not finished within {limits.frame_timeout:g} s "
                            "(MESSAGE_READ_TIMEOUT)") from None


async def _rest_of_frame(reader: asyncio.StreamReader, first: bytes) -> dict[str, Any]:
    try:
        header = first + await reader.readexactly(HEADER.size - 1)
    except asyncio.IncompleteReadError:
        raise ProtocolError("connection closed inside a frame header") from None
    (length,) = HEADER.unpack(header)
    check_length(length)
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
    """msgpack ``body`` decoded like ``decode_body`` (same limits), walking the maps and arrays of
    the first ``depth`` levels element by element (their elements decoded whole) and giving the
    loop a turn whenever the slice's time is used up."""
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False, max_buffer_size=max(len(body), 1),
                                **unpack_limits(len(body)))
    unpacker.feed(body)
    pacer = Pacer()
    count = 0

    def whole(level: int) -> Any:
        item = unpacker.unpack()
        if isinstance(item, (dict, list, tuple)):
            check_depth(item, MAX_DEPTH - level)
        return item

    async def value(level: int) -> Any:
        nonlocal count
        count += 1
        if count & 127 == 0 and pacer.due():
            await pacer.pause()
        if level >= depth or unpacker.tell() >= len(body):
            return whole(level)
        kind = body[unpacker.tell()]
        if kind in _MAPS:
            out = {}
            for _ in range(unpacker.read_map_header()):
                key = whole(level + 1)
                out[key] = await value(level + 1)
            return out
        if kind not in _ARRAYS:
            return whole(level)
        n = unpacker.read_array_header()
        if level + 1 < depth:
            return [await value(level + 1) for _ in range(n)]
        items = []
        for i in range(n):  # the deepest level walked: whole elements, no coroutine each
            if i & 127 == 0 and pacer.due():
                await pacer.pause()
            items.append(whole(level + 1))
        return items

    try:
        message = await value(0)
    except (ValueError, msgpack.UnpackException, msgpack.OutOfData, TypeError) as exc:
        raise ProtocolError(f"undecodable frame: {exc or type(exc).__name__}") from None
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
        # what the handshake accepts and each level requires (SEC_*); the daemon sets it from its config
        self.security = ServerSecurity(None, uid_domain, log)
        self._dprintf = dprintf
        self._enabled = enabled
        self._servers: list[asyncio.AbstractServer] = []
        self._conns: set[asyncio.Task[None]] = set()
        self._closing = False
        self.address = Address()
        self.limits = Limits()  # the daemon sets them from its config (and on reconfig)
        self._unauthenticated = 0  # connections in the handshake now
        self._refused_busy = 0  # refused over MAX_UNAUTHENTICATED_CONNECTIONS since the last log line
        self._busy_logged = -1e9
        self._full_logged, self._full_unlogged = -1e9, 0  # refusals over MAX_OPEN_CONNECTIONS: logging
        self._refusing = 0  # refused connections whose hello is being read before closing
        self._accept_failed = 0  # accept() failures for want of descriptors since the last log line
        self._accept_logged = -1e9
        self._default_handler: Callable[[asyncio.AbstractEventLoop, dict[str, Any]], object] | None = None
        self._handover: HandoverListener | None = None
        self._adopting: set[asyncio.Task[None]] = set()  # handed-over sockets not yet in _serve

    async def start(self, unix_path: str | None, tcp_host: str | None, tcp_port: int = 0) -> Address:
        loop = asyncio.get_running_loop()
        self._default_handler = loop.get_exception_handler()
        loop.set_exception_handler(self._loop_exception)
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

    def behind_shared_port(self, host: str, port: int, endpoint: str, handover_path: str) -> Address:
        """Also accept the TCP connections the host's shared port hands over (``endpoint`` is this
        daemon's id there), and advertise ``<host:port?sock=endpoint&unix=...>``.  A handed-over
        connection is served as one accepted on a TCP port of our own."""
        listener = HandoverListener(handover_path, self._adopt, self.log.warning)
        asyncio.get_running_loop().add_reader(listener.sock.fileno(), listener.readable)
        self._handover = listener
        self.address = Address(host=host, port=port, unix=self.address.unix, sock=endpoint)
        return self.address

    def _adopt(self, conn: socket.socket) -> None:
        if self._closing:
            conn.close()
            return
        task = asyncio.get_running_loop().create_task(self._serve_adopted(conn))
        self._adopting.add(task)
        task.add_done_callback(self._adopting.discard)

    async def _serve_adopted(self, conn: socket.socket) -> None:
        # as start_server builds its connections: a protocol with a connected-callback is a
        # server's, which start_tls (TLS on this connection) needs
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 20, loop=loop)
        protocol = asyncio.StreamReaderProtocol(reader, self._on_tcp, loop=loop)
        try:
            await loop.connect_accepted_socket(lambda: protocol, sock=conn)
        except OSError as exc:
            self.log.info("a connection handed over by the shared port failed: %s", exc)
            conn.close()

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
        if self._handover is not None:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(self._handover.sock.fileno())
            self._handover.close()
            self._handover = None
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

    def _loop_exception(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """asyncio's accept loop meeting EMFILE/ENFILE (out of descriptors) stops accepting for a
        second and reports it here: one log line a minute says so, with how often it happened,
        instead of a traceback a second.  Anything else goes to the previous handler."""
        exc = context.get("exception")
        if context.get("message") == "socket.accept() out of system resource" and isinstance(exc, OSError):
            self._accept_failed += 1
            now = loop.time()
            if now - self._accept_logged >= 60.0:
                import resource

                soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
                self.log.error("cannot accept connections: %s (open-file limit %d, %d connections open; "
                               "MAX_FILE_DESCRIPTORS); accepting again in a second (%d time(s) since the last "
                               "report)", exc.strerror or exc, soft, len(self._conns), self._accept_failed)
                self._accept_logged, self._accept_failed = now, 0
            return
        if self._default_handler is not None:
            self._default_handler(loop, context)
        else:
            loop.default_exception_handler(context)

    def _full(self, via: str) -> str | None:
        """The refusal for a new connection when MAX_OPEN_CONNECTIONS are open, else None; logged
        at once, then at most once a minute with the count refused meanwhile."""
        open_now = len(self._conns)
        limit = self.limits.max_connections
        if not limit:  # from the open-file limit as it is now (below 20 there is no limit to read)
            if open_now < 20:
                return None
            limit = fd_safety_limit()
        if open_now < limit:
            return None
        reason = f"too many connections ({open_now} open, limit {limit})"
        self._full_unlogged += 1
        now = asyncio.get_running_loop().time()
        if now - self._full_logged >= 60.0:
            self.log.warning("refused %d connection(s) (latest %s): %s (MAX_OPEN_CONNECTIONS, default 80%% of the "
                             "open-file limit)", self._full_unlogged, via, reason)
            self._full_logged, self._full_unlogged = now, 0
        return reason

    async def _refuse_full(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, reason: str) -> None:
        """Say why, and read the client's hello before closing: a socket closed with unread
        input sends a reset, which could reach the client before the reason."""
        self._tell(writer, "TOO_MANY_CONNECTIONS", reason)
        if self._refusing >= REFUSING_AT_ONCE:  # a flood of silent peers must not hold descriptors
            return
        self._refusing += 1
        try:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(1.0):
                    await writer.drain()
                    await reader.read(self.limits.unauth_frame)
        finally:
            self._refusing -= 1

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

    async def serve_reverse(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, via: str) -> None:
        """Serve a connection this daemon opened itself (a CCB reverse connection,
        ``htcd/wire/ccb.py``) exactly as an accepted one: the peer sends the hello."""
        await self._serve(reader, writer, None, via)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                     fs_identity: auth.Identity | None, via: str) -> None:
        task = asyncio.current_task()
        assert task is not None
        if self._closing:
            writer.close()
            return
        trusted = fs_identity is not None and fs_identity.uid in (0, os.geteuid())
        refusal = None if trusted else self._full(via)  # the pool's own uid on the Unix socket always gets in
        if refusal is not None:
            try:
                await self._refuse_full(reader, writer, refusal)
            finally:
                writer.close()
            return
        self._conns.add(task)
        conn = Connection(reader)
        self._dprintf(self.log, "D_NETWORK", "accepted a %s connection", via)
        try:
            identity = await self._authenticate(reader, writer, fs_identity, via)
            if identity is not None:
                frame_limit.set(MAX_FRAME)
                await self._requests(conn, writer, identity, via)
        except (TimeoutError, ProtocolError) as exc:
            self.log.info("dropped connection (%s): %s", via, exc or "timed out")
            if not isinstance(exc, IdleTimeout):
                self._tell(writer, "PROTOCOL", str(exc) or "timed out")
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
        """Version, method negotiation, TLS and authentication: ``htcd/wire/handshake.py``."""
        from htcd.wire import handshake

        async def read(r: asyncio.StreamReader) -> dict[str, Any] | None:
            return await asyncio.wait_for(read_frame(r), HANDSHAKE_TIMEOUT)

        return await handshake.serve(self.security, self.name, self.log, self._dprintf, read, reader, writer,
                                     fs_identity, via)

    def authorized(self, identity: auth.Identity, level: str) -> str | None:
        """None if ``identity`` on its connection may run commands of ``level``: the connection's
        method, encryption and token scope suit the level's SEC_* settings, and the authorizer
        (the daemon's policy) grants it; else the one-line reason."""
        reason = self.security.check(identity, level)
        if reason is not None:
            where = f" from {identity.host}" if identity.host else ""
            return f"{identity} (authenticated by {identity.method}{where}) is refused {level}: {reason}"
        return self.authorizer(identity, level)

    async def _refuse(self, writer: asyncio.StreamWriter, code: str, message: str) -> None:
        writer.write(encode({"ok": False, "code": code, "error": message}))
        with contextlib.suppress(ConnectionError):
            await writer.drain()

    async def _authenticate(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                            fs_identity: auth.Identity | None, via: str) -> auth.Identity | None:
        """The handshake under the limits for peers not yet authenticated: frames of at most
        ``limits.unauth_frame`` bytes, the whole handshake within ``limits.handshake_timeout``, and at
        most ``limits.max_unauthenticated`` such connections at once (root and the daemons' own user
        on the Unix socket are not counted: an attacker cannot lock the pool out of itself)."""
        limits = self.limits
        trusted = fs_identity is not None and fs_identity.uid in (0, os.geteuid())
        if not trusted and self._unauthenticated >= limits.max_unauthenticated:
            self._refused_busy += 1
            now = asyncio.get_running_loop().time()
            if now - self._busy_logged >= 60.0:
                self.log.warning("refused %d connection(s) (latest %s): %d unauthenticated connections "
                                 "already open (MAX_UNAUTHENTICATED_CONNECTIONS)", self._refused_busy, via,
                                 self._unauthenticated)
                self._busy_logged, self._refused_busy = now, 0
            self._tell(writer, "BUSY", f"{self.name} has {self._unauthenticated} connections in authentication "
                       "already; try again later")
            return None
        frame_limit.set(limits.unauth_frame)
        if not trusted:
            self._unauthenticated += 1
        try:
            return await asyncio.wait_for(self._handshake(reader, writer, fs_identity, via),
                                          limits.handshake_timeout)
        except TimeoutError:
            raise ProtocolError(f"handshake not finished within {limits.handshake_timeout:g} s "
                                "(SEC_TCP_SESSION_TIMEOUT)") from None
        finally:
            if not trusted:
                self._unauthenticated -= 1

    def _tell(self, writer: asyncio.StreamWriter, code: str, message: str) -> None:
        """Best effort: send a refusal to a peer that is about to be dropped."""
        with contextlib.suppress(Exception):
            if not writer.is_closing():
                writer.write(encode({"ok": False, "code": code, "error": message}))

    async def _requests(self, conn: Connection, writer: asyncio.StreamWriter,
                        identity: auth.Identity, via: str = "") -> None:
        while True:
            if conn._watchers:
                await conn.settle()
            msg = await read_request(conn.reader, self.limits)
            if msg is None:
                return
            name = msg.get("cmd")
            args = msg.get("args")
            args = {} if args is None else args
            if not isinstance(name, str) or not isinstance(args, dict):
                self.log.info("bad request from %s (%s): a command name (string) and arguments (map) expected, "
                              "got %s and %s", identity, via, type(name).__name__, type(args).__name__)
                reply = {"ok": False, "code": "BAD_REQUEST",
                         "error": "a request is {cmd: <string>, args: <map>}; got cmd of type "
                                  f"{type(name).__name__} and args of type {type(args).__name__}"}
            else:
                reply = await self._dispatch(name, args, identity, writer, conn, via)
            writer.write(encode(reply))
            try:
                async with asyncio.timeout(self.limits.idle_timeout):  # a client that reads no reply
                    await writer.drain()
            except TimeoutError:
                raise ProtocolError(f"the client read no reply for {self.limits.idle_timeout:g} s") from None

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
        denied = self.authorized(identity, command.level)
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
            if exc.code == "BAD_REQUEST":  # a malformed request is worth a line: bug or probe
                self.log.info("bad request from %s (%s): %s", identity, via, exc)
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

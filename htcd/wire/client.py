"""Clients of the protocol: blocking (tools, where start-up time matters) and asyncio (daemons)."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any

from htcd.wire.address import Address
from htcd.wire.authn import REQUIRED, UNAUTHENTICATED, ClientSecurity
from htcd.wire.errors import REFUSAL_CODES, ProtocolError, Refused, RemoteError, WireError
from htcd.wire.framing import encode, read_frame, recv_frame
from htcd.wire.sharedport import request as shared_port_request

PROTOCOL_VERSION = 1

_SECURITY: ClientSecurity | None = None
_FROM_CONFIG: tuple[int, ClientSecurity] | None = None


if TYPE_CHECKING:  # asyncio is for the daemons' AsyncConnection: the tools' Connection does not load it
    import asyncio

def configure(security: ClientSecurity | None) -> None:
    """Set what this process's clients offer (a daemon: from its config, at start and reconfig);
    None: tools' default, read from the config (SEC_CLIENT_*) when first needed."""
    global _SECURITY
    _SECURITY = security


def current_security() -> ClientSecurity:
    """The process's client security settings."""
    global _FROM_CONFIG
    if _SECURITY is not None:
        return _SECURITY
    try:
        from htcd.config import load

        cfg = load("TOOL")
    except Exception:  # no usable config: FS on Unix sockets still works
        return ClientSecurity()
    if _FROM_CONFIG is None or _FROM_CONFIG[0] != id(cfg):
        _FROM_CONFIG = (id(cfg), ClientSecurity.from_config(cfg, "CLIENT"))
    return _FROM_CONFIG[1]


def _hello(sec: ClientSecurity) -> dict[str, Any]:
    return {"hello": "htcd", "version": PROTOCOL_VERSION, "methods": sec.methods,
            "encryption": sec.encryption, "authentication": sec.authentication}


def _unix_path(addr: Address, sec: ClientSecurity) -> str | None:
    return addr.local_socket() if sec.prefer_unix else None


def _first(addr: Address, sec: ClientSecurity, tcp: bool) -> bytes:
    """What a client sends first: over TCP to a daemon behind a shared port (``sock=``), the
    request naming it, then the hello (in one write: the shared port reads only its frame).  A
    reverse connection through CCB comes from the daemon itself: the hello alone."""
    hello = encode(_hello(sec))
    return shared_port_request(addr.sock) + hello if tcp and addr.sock and not addr.ccbid else hello


def _check_final(reply: dict[str, Any], address: Address, sec: ClientSecurity, tcp: bool) -> dict[str, Any]:
    """The client's own requirements (SEC_CLIENT_AUTHENTICATION / _ENCRYPTION) on the result."""
    if sec.authentication == REQUIRED and reply.get("method") == UNAUTHENTICATED:
        raise WireError(f"{address} did not authenticate this client, and "
                        f"{sec.knobs.get('authentication', 'SEC_CLIENT_AUTHENTICATION')} = REQUIRED")
    if tcp and sec.encryption == REQUIRED and not reply.get("encrypted"):
        raise WireError(f"the connection to {address} is not encrypted, and "
                        f"{sec.knobs.get('encryption', 'SEC_CLIENT_ENCRYPTION')} = REQUIRED")
    return reply


def _tls_error(address: Address, exc: Exception) -> WireError:
    verify = getattr(exc, "verify_message", None)
    detail = f"the daemon's certificate does not verify: {verify}" if verify else getattr(exc, "reason", None) or exc
    return WireError(f"TLS with {address} failed: {detail}")


def _check_hello(reply: dict[str, Any] | None, address: Address) -> dict[str, Any]:
    if reply is None:
        raise ProtocolError(f"daemon at {address} closed the connection during the handshake")
    if not reply.get("ok"):
        code = str(reply.get("code", "FAILED"))
        if code in REFUSAL_CODES:
            raise Refused(address, str(reply.get("error", "refused")), code)
        raise RemoteError(str(reply.get("error", "handshake refused")), code)
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


def _ccb_ask(timeout: float | None, sec: ClientSecurity) -> Callable[[Address, dict[str, Any]], object]:
    """CCB_REQUEST to a CCB server on a connection of its own (``htcd/wire/ccb.py``)."""
    def ask(server: Address, args: dict[str, Any]) -> object:
        with Connection(server, timeout=timeout, security=sec) as conn:
            return conn.call("CCB_REQUEST", **args)
    return ask


def _ccb_aask(timeout: float, sec: ClientSecurity) -> Callable[[Address, dict[str, Any]], Awaitable[object]]:
    async def ask(server: Address, args: dict[str, Any]) -> object:
        conn = await AsyncConnection.open(server, timeout=timeout, security=sec)
        try:
            return await conn.call("CCB_REQUEST", timeout=timeout, **args)
        finally:
            await conn.close()
    return ask


class Connection:
    """A blocking connection; use as a context manager."""

    def __init__(self, address: Address | str, timeout: float | None = 30.0,
                 security: ClientSecurity | None = None) -> None:
        self.address = Address.parse(address) if isinstance(address, str) else address
        sec = security or current_security()
        path = _unix_path(self.address, sec)
        try:
            if path:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.settimeout(timeout)
                self.sock.connect(path)
            elif self.address.ccbid:  # behind a firewall: its reverse connection (htcd/wire/ccb.py)
                from htcd.wire import ccb

                self.sock = ccb.reverse_connect(self.address, timeout, _ccb_ask(timeout, sec))
            elif self.address.host and self.address.port:
                self.sock = socket.create_connection((self.address.host, self.address.port), timeout)
            else:
                raise WireError(f"cannot reach {self.address}: no socket on this host and no TCP port")
        except OSError as exc:
            raise WireError(f"cannot connect to {self.address}: {exc.strerror or exc}") from None
        try:
            self.sock.sendall(_first(self.address, sec, not path))
            reply = _check_hello(recv_frame(self.sock), self.address)
            if reply.get("stage") == "auth":
                if reply.get("tls"):
                    import ssl  # only for TLS: a tool on the local socket does not load it

                    try:
                        self.sock = sec.ssl_context().wrap_socket(self.sock, server_hostname=self.address.host)
                    except (ssl.SSLError, ssl.CertificateError) as exc:
                        raise _tls_error(self.address, exc) from None
                creds = sec.credentials(reply.get("trust_domain"), list(reply.get("methods") or []),
                                        secure=bool(path) or bool(reply.get("tls")))
                self.sock.sendall(encode({"auth": creds}))
                reply = _check_hello(recv_frame(self.sock), self.address)
            self.hello = _check_final(reply, self.address, sec, not path)
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
        import asyncio

        self.address = address
        self.reader = reader
        self.writer = writer
        self.hello = hello
        self._lock = asyncio.Lock()

    @classmethod
    async def open(cls, address: Address | str, timeout: float = 30.0,
                   security: ClientSecurity | None = None) -> AsyncConnection:
        import asyncio

        addr = Address.parse(address) if isinstance(address, str) else address
        sec = security or current_security()
        path = _unix_path(addr, sec)
        writer = None
        try:
            if path:
                coro = asyncio.open_unix_connection(path, limit=1 << 20)
            elif addr.ccbid:  # behind a firewall: its reverse connection (bounded by its own deadlines)
                from htcd.wire import ccb

                coro = ccb.areverse_connect(addr, timeout, _ccb_aask(timeout, sec))
            elif addr.host and addr.port:
                coro = asyncio.open_connection(addr.host, addr.port, limit=1 << 20)
            else:
                raise WireError(f"cannot reach {addr}: no socket on this host and no TCP port")
            reader, writer = await (coro if not path and addr.ccbid else asyncio.wait_for(coro, timeout))
            writer.write(_first(addr, sec, not path))
            await writer.drain()
            hello = _check_hello(await asyncio.wait_for(read_frame(reader), timeout), addr)
            if hello.get("stage") == "auth":
                if hello.get("tls"):
                    import ssl

                    try:
                        await asyncio.wait_for(writer.start_tls(sec.ssl_context(), server_hostname=addr.host),
                                               timeout)
                    except (ssl.SSLError, ssl.CertificateError) as exc:
                        raise _tls_error(addr, exc) from None
                creds = sec.credentials(hello.get("trust_domain"), list(hello.get("methods") or []),
                                        secure=bool(path) or bool(hello.get("tls")))
                writer.write(encode({"auth": creds}))
                await writer.drain()
                hello = _check_hello(await asyncio.wait_for(read_frame(reader), timeout), addr)
            hello = _check_final(hello, addr, sec, not path)
        except (TimeoutError, OSError) as exc:
            if writer is not None:
                writer.close()
            raise WireError(f"cannot connect to {addr}: {str(exc) or 'timed out'}") from None
        except Exception:
            if writer is not None:
                writer.close()
            raise
        return cls(addr, reader, writer, hello)

    async def call(self, command: str, timeout: float | None = 60.0, **args: Any) -> Any:
        return _merge([p async for p in self.stream(command, timeout=timeout, **args)])

    async def stream(self, command: str, timeout: float | None = 60.0, **args: Any) -> AsyncGenerator[Any, None]:
        import asyncio

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
        import asyncio

        self.writer.close()
        with contextlib.suppress(OSError, asyncio.CancelledError):
            await self.writer.wait_closed()

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

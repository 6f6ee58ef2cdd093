"""The handshake, server side: version, method negotiation, TLS, authentication.

1. The client's hello: ``{hello: "htcd", version, methods, encryption, authentication}``.
2. On the Unix socket, when the client's first method is FS, the server answers at once with
   the final reply (one round trip: the personal pool's path).  Otherwise it answers
   ``{ok, stage: "auth", tls, trust_domain, methods}``; with ``tls`` both ends run TLS on the same
   connection (the server's certificate from the pool CA) and the client then sends
   ``{auth: {TOKEN: "...", CLAIMTOBE: "user"}}`` -- a token only inside TLS or on a Unix socket.
3. The final reply ``{ok, version, method, identity, daemon, encrypted}``, or a refusal naming
   every method tried and why it failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Awaitable, Callable
from typing import Any

from htcd.wire import auth
from htcd.wire.authn import UNAUTHENTICATED, ServerSecurity
from htcd.wire.errors import ProtocolError
from htcd.wire.framing import encode

PROTOCOL_VERSIONS = (1,)
MAX_METHODS = 16

Dprintf = Callable[..., None]


async def serve(sec: ServerSecurity, name: str, log: logging.Logger, dprintf: Dprintf,
                read_frame: Callable[[asyncio.StreamReader], Awaitable[dict[str, Any] | None]],
                reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                fs_identity: auth.Identity | None, via: str) -> auth.Identity | None:
    """Run the handshake; the identity, or None after a refusal (already sent)."""
    hello = await read_frame(reader)
    if hello is None:
        return None
    if hello.get("hello") != "htcd":
        raise ProtocolError("not an htcd handshake")
    version = hello.get("version")
    if version not in PROTOCOL_VERSIONS:
        await refuse(writer, "VERSION", f"protocol version {version!r} is not supported by this {name} "
                                        f"(it speaks {', '.join(map(str, PROTOCOL_VERSIONS))})")
        return None
    methods = hello.get("methods")
    offered = [str(m).upper() for m in methods[:MAX_METHODS]] if isinstance(methods, list) else []
    agreed = sec.agreed(offered)
    client_auth = str(hello.get("authentication") or "OPTIONAL").upper()
    sock = writer.get_extra_info("socket")
    tcp = sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6)
    peer = writer.get_extra_info("peername") if tcp else None
    host = str(peer[0]) if peer else None

    if not tcp and agreed[:1] == ["FS"] and "FS" in sec.methods and fs_identity is not None:
        return await accept(writer, sec, name, log, dprintf, fs_identity, version, via, [])

    tls = False
    if tcp:
        tls, problem = sec.wants_tls(hello, agreed)
        if problem:
            log.warning("authentication failed (%s): %s", via, problem)
            await refuse(writer, "AUTHENTICATION", f"authentication with {name} failed: {problem}")
            return None
    writer.write(encode({"ok": True, "stage": "auth", "tls": tls, "trust_domain": sec.trust_domain,
                         "methods": [m for m in agreed if m in sec.methods]}))
    await writer.drain()
    peer_cert = None
    if tls:
        assert sec.tls is not None
        try:
            await writer.start_tls(sec.tls)
        except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
            dprintf(log, "D_SECURITY", "TLS with %s failed: %s", via, exc)
            raise ProtocolError(f"TLS handshake failed: {exc}") from None
        peer_cert = writer.get_extra_info("peercert")
    frame = await read_frame(reader)
    if frame is None:
        return None
    creds = frame.get("auth")
    creds = creds if isinstance(creds, dict) else {}
    identity, failures = sec.authenticate(offered, creds, fs_identity if not tcp else None, host, tls,
                                          peer_cert, client_auth)
    if identity is None:
        reason = "; ".join(failures)
        log.warning("authentication failed (%s): %s", via, reason)
        dprintf(log, "D_SECURITY", "refused %s: %s", via, reason)
        await refuse(writer, "AUTHENTICATION", f"authentication with {name} failed: {reason}")
        return None
    return await accept(writer, sec, name, log, dprintf, identity, version, via, failures)


async def accept(writer: asyncio.StreamWriter, sec: ServerSecurity, name: str, log: logging.Logger,
                 dprintf: Dprintf, identity: auth.Identity, version: int, via: str,
                 failures: list[str]) -> auth.Identity:
    if identity.method == "CLAIMTOBE":
        dprintf(log, "D_SECURITY", "%s CLAIMS to be %s (CLAIMTOBE: not verified)", via, identity)
    elif identity.method == UNAUTHENTICATED:
        dprintf(log, "D_SECURITY", "%s is unauthenticated%s", via,
                f" ({'; '.join(failures)})" if failures else "")
    else:
        dprintf(log, "D_SECURITY", "authenticated %s by %s (%s%s)", identity, identity.method, via,
                ", TLS" if identity.encrypted else "")
    writer.write(encode({"ok": True, "version": version, "method": identity.method, "identity": str(identity),
                         "daemon": name, "encrypted": identity.encrypted,
                         "scopes": sorted(identity.scopes) if identity.scopes is not None else None}))
    await writer.drain()
    return identity


async def refuse(writer: asyncio.StreamWriter, code: str, message: str) -> None:
    writer.write(encode({"ok": False, "code": code, "error": message}))
    with contextlib.suppress(ConnectionError):
        await writer.drain()

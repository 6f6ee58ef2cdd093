"""CCB (HTCondor's Condor Connection Brokering): reaching a daemon that accepts no inbound connection.

A daemon behind a firewall or NAT (CCB_ADDRESS set) keeps a connection open to a CCB server (the
collector) and advertises ``CCBID=<server>#<id>`` in its address.  A client that wants to talk
to it does not connect to it: it listens on a port of its own, asks the CCB server (CCB_REQUEST)
to have daemon ``<id>`` connect there, and the daemon connects back and sends the request's
nonce.  From then on the socket is used as if the client had connected: the client still sends
the hello and authenticates, the daemon still serves.  As in HTCondor, an address with a CCBID
is always reached through CCB (a daemon on this host still prefers its Unix socket): the
CCBID says the direct route does not work.
"""

from __future__ import annotations

import secrets
import socket
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from htcd.wire.address import Address
from htcd.wire.errors import WireError
from htcd.wire.framing import encode, recv_frame

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable, Callable

#: the first frame a target sends on a reverse connection: ``{NONCE_KEY: <the request's nonce>}``
NONCE_KEY = "ccb_nonce"


@dataclass(frozen=True)
class Contact:
    """One CCB contact of an address: the CCB server's address and the target's id there."""

    server: Address
    ccbid: int

    def __str__(self) -> str:
        return f"{self.server.host}:{self.server.port}#{self.ccbid}"


def contact_text(server: Address, ccbid: int) -> str:
    """The CCBID value for ``server`` and ``ccbid`` (the server's TCP endpoint: its Unix socket
    would name a path on the CCB server's host)."""
    host = f"[{server.host}]" if ":" in server.host else server.host
    return f"{host}:{server.port}#{ccbid}"


def parse_contacts(text: str) -> list[Contact]:
    """The contacts of a CCBID value (HTCondor separates several with spaces)."""
    contacts = []
    for word in text.split():
        server, sep, ident = word.rpartition("#")
        if not sep or not server or not ident.isdigit():
            raise WireError(f"bad CCBID {word!r} in a daemon address: <ccb-server>#<id> expected")
        contacts.append(Contact(Address.parse(server), int(ident)))
    if not contacts:
        raise WireError("empty CCBID in a daemon address")
    return contacts


def _no_route(contact: Contact, reason: str) -> WireError:
    return WireError(f"no route through CCB server {contact.server.host}:{contact.server.port} "
                     f"to ccbid {contact.ccbid}: {reason}")


def _return_host(server: Address) -> str:
    """This host's address on the route to the CCB server: the target, which can reach the CCB
    server, can reach it (a routing lookup: a UDP socket's connect sends nothing)."""
    infos = socket.getaddrinfo(server.host, server.port or 9618, type=socket.SOCK_DGRAM)
    family, _, _, _, sockaddr = infos[0]
    with socket.socket(family, socket.SOCK_DGRAM) as probe:
        probe.connect(sockaddr)
        return str(probe.getsockname()[0])


def _listener(server: Address) -> tuple[socket.socket, Address]:
    host = _return_host(server)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    lsock = socket.socket(family, socket.SOCK_STREAM)
    try:
        lsock.bind((host, 0))
        lsock.listen(8)
    except OSError:
        lsock.close()
        raise
    return lsock, Address(host=host, port=lsock.getsockname()[1])


def _request_args(contact: Contact, ret: Address, nonce: str, target: Address, timeout: float | None
                  ) -> dict[str, Any]:
    return {"ccbid": contact.ccbid, "return_address": str(ret), "nonce": nonce, "target": str(target),
            "wait": timeout if timeout is not None else 60.0}


def reverse_connect(address: Address, timeout: float | None, ask: Callable[[Address, dict[str, Any]], object]
                    ) -> socket.socket:
    """A connected socket to the daemon at ``address`` (which has a CCBID), by its reverse
    connection; tried through each of its contacts in turn.  ``ask(server, args)`` sends
    CCB_REQUEST to a CCB server (the client module's connection: this module is below it)."""
    assert address.ccbid
    errors = []
    for contact in parse_contacts(address.ccbid):
        deadline = time.monotonic() + (timeout if timeout is not None else 60.0)
        try:
            lsock, ret = _listener(contact.server)
        except OSError as exc:
            errors.append(_no_route(contact, f"cannot listen for the reverse connection: {exc}"))
            continue
        nonce = secrets.token_hex(16)
        try:
            ask(contact.server, _request_args(contact, ret, nonce, address, timeout))
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                lsock.settimeout(left)
                sock, _peer = lsock.accept()
                sock.settimeout(max(0.1, deadline - time.monotonic()))
                try:
                    first = recv_frame(sock)
                except (OSError, WireError):
                    sock.close()
                    continue
                if isinstance(first, dict) and secrets.compare_digest(str(first.get(NONCE_KEY, "")), nonce):
                    sock.settimeout(timeout)
                    return sock
                sock.close()  # not the daemon we asked for: keep waiting
        except TimeoutError:
            errors.append(_no_route(contact, f"the daemon did not connect back to {ret} within "
                                             f"{timeout if timeout is not None else 60.0:g} s"))
        except WireError as exc:
            errors.append(_no_route(contact, str(exc)))
        except OSError as exc:
            errors.append(_no_route(contact, exc.strerror or str(exc)))
        finally:
            lsock.close()
    raise errors[0] if len(errors) == 1 else WireError("; ".join(map(str, errors)))


async def areverse_connect(address: Address, timeout: float,
                           ask: Callable[[Address, dict[str, Any]], Awaitable[object]]
                           ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """``reverse_connect`` for asyncio: the reader and writer of the reverse connection."""
    assert address.ccbid
    errors = []
    for contact in parse_contacts(address.ccbid):
        try:
            return await _areverse_one(contact, address, timeout, ask)
        except TimeoutError:
            errors.append(_no_route(contact, f"the daemon did not connect back within {timeout:g} s"))
        except WireError as exc:
            errors.append(_no_route(contact, str(exc)))
        except OSError as exc:
            errors.append(_no_route(contact, exc.strerror or str(exc)))
    raise errors[0] if len(errors) == 1 else WireError("; ".join(map(str, errors)))


async def _areverse_one(contact: Contact, address: Address, timeout: float,
                        ask: Callable[[Address, dict[str, Any]], Awaitable[object]]) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    import asyncio

    from htcd.wire.framing import read_frame

    try:
        lsock, ret = _listener(contact.server)
    except OSError as exc:
        raise WireError(f"cannot listen for the reverse connection: {exc}") from None
    nonce = secrets.token_hex(16)
    loop = asyncio.get_running_loop()
    lsock.setblocking(False)
    try:
        await ask(contact.server, _request_args(contact, ret, nonce, address, timeout))
        async with asyncio.timeout(timeout):
            while True:  # accepted by hand: the streams must be a client's (this end starts TLS as client)
                sock, _peer = await loop.sock_accept(lsock)
                reader, writer = await asyncio.open_connection(sock=sock, limit=1 << 20)
                try:
                    first = await read_frame(reader)
                except (OSError, WireError, asyncio.IncompleteReadError):
                    first = None
                if isinstance(first, dict) and secrets.compare_digest(str(first.get(NONCE_KEY, "")), nonce):
                    return reader, writer
                writer.close()  # not the daemon asked for: keep waiting
    finally:
        lsock.close()


async def connect_back(return_address: str, nonce: str, timeout: float
                       ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """The target's side: connect to the requester's return address and present the nonce.  The
    streams are made as an accepted connection's are (a connected callback on the protocol), so
    that the server's end of TLS is taken on this connection too."""
    import asyncio

    ret = Address.parse(return_address)
    if not ret.host or not ret.port:
        raise WireError(f"bad return address {return_address!r} in a CCB request")
    loop = asyncio.get_running_loop()
    made: asyncio.Future[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = loop.create_future()
    reader = asyncio.StreamReader(limit=1 << 20, loop=loop)

    def connected(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        if not made.done():
            made.set_result((r, w))

    await asyncio.wait_for(loop.create_connection(
        lambda: asyncio.StreamReaderProtocol(reader, connected, loop=loop), ret.host, ret.port), timeout)
    reader, writer = await made
    writer.write(encode({NONCE_KEY: nonce}))
    await writer.drain()
    return reader, writer

"""How a daemon tells the collector(s) about itself: updates and invalidations of its ads.

Every daemon goes through one ``Advertiser`` so that transport (TCP or UDP), sequence numbers and
the list of collectors live in one place:

- every collector of ``COLLECTOR_HOST`` gets every update (a pool keeps working when one dies);
  queries (``call``) fail over from one to the next;
- each ad carries ``UpdateSequenceNumber`` (counted here, per ad) and ``DaemonStartTime``, from
  which the collector counts lost updates;
- updates go over the daemon's persistent connection to each collector, or, when
  ``UPDATE_COLLECTOR_WITH_TCP`` is false (and the collector is not in ``TCP_UPDATE_COLLECTORS``),
  as signed UDP datagrams (``htcd/wire/udp.py``) under a session opened over that connection.

``CollectorLink`` is one collector as seen by a sender; the collector uses it too, to forward
updates to ``CONDOR_VIEW_HOST``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any, Protocol

from htcd.errors import UserError
from htcd.wire import locate, udp
from htcd.wire.address import Address
from htcd.wire.client import AsyncConnection, acall
from htcd.wire.errors import ProtocolError, RemoteError, WireError

if TYPE_CHECKING:
    from htcd.config import Config
    from htcd.wire.server import Server


class Daemon(Protocol):
    """What the advertiser uses of its daemon (:class:`htcd.daemon.core.Daemon`)."""

    @property
    def config(self) -> Config: ...

    @property
    def log(self) -> logging.Logger: ...

    @property
    def start_time(self) -> int: ...

    @property
    def server(self) -> Server: ...

LOG_EVERY = 60.0  # seconds between two log lines about the same unreachable collector


class _Notices(asyncio.DatagramProtocol):
    """The sender's UDP socket: hears the collector's "unknown session" notices."""

    def __init__(self, link: CollectorLink) -> None:
        self.link = link

    def datagram_received(self, data: bytes, addr: Any) -> None:
        sid = udp.notice_session(data)
        if sid is not None and self.link.session is not None and sid == self.link.session[0]:
            self.link.drop_session("the collector does not know the session")

    def error_received(self, exc: Exception) -> None:
        self.link.drop_session(f"the collector's UDP port refused a datagram ({exc})")


class CollectorLink:
    """One collector as a sender sees it: a persistent connection and, for UDP, a session."""

    def __init__(self, address: Address, use_tcp: bool, log: logging.Logger, timeout: float = 20.0) -> None:
        self.address = address
        self.use_tcp = use_tcp
        self.log = log
        self.timeout = timeout
        self.session: tuple[bytes, bytes, float] | None = None  # id, key, renew after (monotonic)
        self._conn: AsyncConnection | None = None
        self._transport: asyncio.DatagramTransport | None = None
        self._lock = asyncio.Lock()
        self._failing_since: float | None = None
        self._last_log = 0.0
        self.datagrams = 0

    async def request(self, command: str, **args: Any) -> Any:
        """One command on the persistent connection, reconnecting once if it was broken."""
        async with self._lock:
            for attempt in (1, 2):
                if self._conn is None:
                    self._conn = await AsyncConnection.open(self.address, timeout=self.timeout)
                try:
                    return await self._conn.call(command, timeout=self.timeout, **args)
                except RemoteError:
                    raise
                except WireError:
                    await self._close_conn()
                    if attempt == 2:
                        raise
        raise AssertionError("unreachable")

    async def _close_conn(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()

    def drop_session(self, why: str) -> None:
        if self.session is not None:
            self.log.debug("UDP session with %s dropped: %s", self.address, why)
        self.session = None

    async def _udp_ready(self) -> bool:
        """A live session and a socket to send datagrams on (opened over the connection)."""
        if self.session is not None and self._transport is not None and time.monotonic() < self.session[2]:
            return True
        reply = await self.request("UPDATE_SESSION")
        host, port = reply["udp"]
        if self._transport is None or self._transport.get_extra_info("peername") != (host, port):
            if self._transport is not None:
                self._transport.close()
            loop = asyncio.get_running_loop()
            self._transport, _ = await loop.create_datagram_endpoint(lambda: _Notices(self), remote_addr=(host, port))
        duration = float(reply.get("duration") or 3600)
        self.session = (bytes(reply["id"]), bytes(reply["key"]), time.monotonic() + duration * 0.9)
        return True

    def send_datagram(self, message: dict[str, Any]) -> bool:
        """Send now if a session is open (no waiting); False if it is not, or too big."""
        if self.session is None or self._transport is None or time.monotonic() >= self.session[2]:
            return False
        try:
            data = udp.encode(self.session[0], self.session[1], message)
        except ProtocolError:
            return False
        self._transport.sendto(data)
        self.datagrams += 1
        return True

    async def send(self, command: str, args: dict[str, Any]) -> None:
        """An update or invalidation: a datagram when this link uses UDP (and it fits), else a
        request on the connection.  Raises WireError if the collector cannot be reached."""
        message = {"cmd": command, "args": args}
        if not self.use_tcp and (self.send_datagram(message) or (await self._udp_ready()
                                                                  and self.send_datagram(message))):
            return
        await self.request(command, **args)

    def report(self, exc: Exception | None, what: str) -> None:
        """Log a failure at most once a minute per collector, and the recovery once."""
        now = time.monotonic()
        if exc is None:
            if self._failing_since is not None:
                self.log.info("the collector at %s answers again", self.address)
            self._failing_since = None
            return
        if self._failing_since is None:
            self._failing_since = now
        if now - self._last_log >= LOG_EVERY:
            self._last_log = now
            self.log.info("cannot %s the collector at %s: %s", what, self.address, exc)

    async def close(self) -> None:
        await self._close_conn()
        if self._transport is not None:
            self._transport.close()
            self._transport = None
        self.session = None


def uses_tcp(config: Any, address: Address, view: bool = False) -> bool:
    """``UPDATE_COLLECTOR_WITH_TCP`` (``UPDATE_VIEW_COLLECTOR_WITH_TCP`` for view collectors),
    with ``TCP_UPDATE_COLLECTORS`` naming collectors that get TCP all the same.  A collector behind
    a shared port (``sock=`` in its address, or COLLECTOR_USES_SHARED_PORT in this pool) always
    gets TCP, as in HTCondor: the shared port carries no UDP."""
    if address.sock or locate.collector_uses_shared_port(config):
        return True
    if config.get_bool("UPDATE_VIEW_COLLECTOR_WITH_TCP" if view else "UPDATE_COLLECTOR_WITH_TCP", not view):
        return True
    named = {x.lower() for x in config.get_list("TCP_UPDATE_COLLECTORS")}
    return address.host.lower() in named or f"{address.host}:{address.port}".lower() in named


class Advertiser:
    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self._links: dict[tuple[str, bool], CollectorLink] = {}
        self._seq: dict[tuple[str, str], int] = {}

    def collectors(self) -> list[Address]:
        return locate.collectors(self.daemon.config)

    def links(self) -> list[CollectorLink]:
        """One link per collector of COLLECTOR_HOST (found again each time: a collector on
        port 0 gets a new address when it restarts)."""
        cfg = self.daemon.config
        out = []
        for addr in self.collectors():
            key = (str(addr), uses_tcp(cfg, addr))
            link = self._links.get(key)
            if link is None:
                link = self._links[key] = CollectorLink(addr, key[1], self.daemon.log)
            out.append(link)
        return out

    async def call(self, command: str, **args: Any) -> Any:
        """One command (a query, usually) at the first collector that answers."""
        problems = []
        for addr in self.collectors():
            try:
                return await acall(addr, command, timeout=20.0, **args)
            except RemoteError:
                raise
            except WireError as exc:
                problems.append(str(exc))
        raise WireError("no collector answered: " + "; ".join(problems))

    async def update(self, ad_type: str, ad: dict[str, str], private: dict[str, str] | None = None) -> bool:
        """Send one ad (wire form) to every collector; False, logged, if none took it."""
        ad = dict(ad)
        seq_key = (ad_type, ad.get("Name", ""))
        seq = self._seq[seq_key] = self._seq.get(seq_key, 0) + 1
        ad["UpdateSequenceNumber"] = str(seq)
        ad.setdefault("DaemonStartTime", str(self.daemon.start_time))
        args: dict[str, Any] = {"ad_type": ad_type, **udp.compact(ad)}
        if private is not None:
            args["private"] = private
        return await self._to_all("UPDATE_AD", args, "update")

    async def invalidate(self, ad_type: str, name: str) -> None:
        """Remove this daemon's ad ``name`` from every collector at once (graceful shutdown); a
        schedd's submitter ads go with its Scheduler ad."""
        address = str(self.daemon.server.address)
        self._seq.pop((ad_type, f'"{name}"'), None)
        await self._to_all("INVALIDATE_AD", {"ad_type": ad_type, "name": name, "address": address},
                           "invalidate at", tcp=True)
        if ad_type == "Scheduler":
            await self._to_all("INVALIDATE_AD", {"ad_type": "Submitter", "schedd_name": name, "address": address},
                               "invalidate at", tcp=True)

    async def _to_all(self, command: str, args: dict[str, Any], what: str, tcp: bool = False) -> bool:
        try:
            links = self.links()
        except UserError as exc:
            self.daemon.log.info("cannot %s the collector: %s", what, exc)
            return False

        async def one(link: CollectorLink) -> bool:
            try:
                if tcp:
                    await link.request(command, **args)
                else:
                    await link.send(command, args)
            except (WireError, UserError, KeyError, TypeError, ValueError) as exc:
                link.report(exc, what)
                return False
            link.report(None, what)
            return True

        if len(links) == 1:
            return await one(links[0])
        return any(await asyncio.gather(*(one(link) for link in links)))

    async def close(self) -> None:
        for link in self._links.values():
            with contextlib.suppress(Exception):
                await link.close()
        self._links.clear()

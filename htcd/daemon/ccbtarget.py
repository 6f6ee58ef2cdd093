"""A daemon's registration with its CCB server (CCB_ADDRESS): the daemon accepts no inbound
connection, so it keeps one open to the CCB server and connects back to whoever asks.

The registration's first reply gives the ccbid; the daemon's address then carries
``CCBID=<server>#<id>`` (in every ad, claim id and address file from then on).  Heartbeats come
every CCB_HEARTBEAT_INTERVAL; when none comes for twice that (plus a margin), or the connection
fails, the daemon registers again, asking for the same id (kept in memory: CCB_RECONNECT_FILE is
not read, so a restarted daemon gets a new id, as it also gets a new port).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from typing import TYPE_CHECKING, Any

from htcd.errors import UserError
from htcd.wire import locate
from htcd.wire.address import Address
from htcd.wire.ccb import connect_back
from htcd.wire.client import AsyncConnection
from htcd.wire.errors import WireError
from htcd.wire.framing import encode

if TYPE_CHECKING:
    from htcd.daemon.core import Daemon

RETRY_FIRST, RETRY_MAX = 2.0, 60.0  # seconds between registration attempts: doubling up to the maximum
CONNECT_TIMEOUT = 20.0  # connecting back to a requester
FIRST_WAIT = 10.0  # how long a starting daemon (not the master) waits for its ccbid before it advertises


class CCBTarget:
    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self.ccbid = 0
        self.registered = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._children: set[asyncio.Task[Any]] = set()
        self._warned_many = False
        self._got_id = False  # the registration under way has given an id

    @staticmethod
    def wanted(daemon: Daemon) -> bool:
        return bool((daemon.config.get("CCB_ADDRESS") or "").strip()) and daemon.subsystem != "COLLECTOR"

    def servers(self) -> list[Address]:
        try:
            return locate.collector_addresses(self.daemon.config, "CCB_ADDRESS")
        except UserError as exc:
            raise UserError(f"CCB_ADDRESS: {exc}") from None

    def heartbeat(self) -> float:
        return float(max(0, self.daemon.config.get_int("CCB_HEARTBEAT_INTERVAL", 300)))

    async def start(self) -> None:
        """Register in the background; wait a little for the first ccbid, so that the daemon's
        first ads already carry it."""
        self._task = asyncio.create_task(self._run(), name="CCB registration")
        if self.daemon.subsystem == "MASTER":  # it starts the collector: it must not wait for it
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.registered.wait(), FIRST_WAIT)
        if not self.registered.is_set():
            self.daemon.log.warning("CCB: not registered with %s yet; advertising without a CCBID meanwhile",
                                    self.daemon.config.get("CCB_ADDRESS"))

    async def stop(self) -> None:
        tasks = [t for t in (self._task, *self._children) if t is not None]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _run(self) -> None:
        log = self.daemon.log
        delay = RETRY_FIRST
        while not self.daemon.stopping.is_set():
            for server in self._servers_or_log():
                self._got_id = False
                try:
                    await self._register(server)
                except (WireError, OSError) as exc:
                    log.warning("CCB: registration with %s %s: %s", server, "lost" if self._got_id else "failed", exc)
                except Exception:
                    log.exception("CCB: registration with %s failed", server)
                if self._got_id:  # it worked for a while: try again soon
                    delay = RETRY_FIRST
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.daemon.stopping.wait(), delay)
            delay = min(RETRY_MAX, delay * 2)

    def _servers_or_log(self) -> list[Address]:
        try:
            servers = self.servers()
        except UserError as exc:
            self.daemon.log.warning("%s", exc)
            return []
        if len(servers) > 1 and not self._warned_many:  # HTCondor registers with each (docs/networking.md)
            self._warned_many = True
            self.daemon.log.warning("CCB_ADDRESS lists %d CCB servers; htcd registers with the first only (%s)",
                                    len(servers), servers[0])
        return servers[:1]

    async def _register(self, server: Address) -> None:
        hb = self.heartbeat()
        conn = await AsyncConnection.open(server, timeout=30.0)
        try:
            silence = 2 * hb + 30 if hb else None
            async for part in conn.stream("CCB_REGISTER", timeout=silence, ccbid=self.ccbid, heartbeat=hb,
                                          name=f"{self.daemon.subsystem.lower()} {self.daemon.name}"):
                if not isinstance(part, dict):
                    continue
                if "ccbid" in part:
                    self.ccbid = int(part["ccbid"])
                    self._got_id = True
                    self._set_address(str(part.get("contact", "")))
                    self.daemon.log.info("CCB: registered with %s as ccbid %d; advertising %s", server,
                                         self.ccbid, self.daemon.server.address)
                elif isinstance(part.get("request"), dict):
                    task = asyncio.create_task(self._connect_back(part["request"], conn),
                                               name="CCB reverse connection")
                    self._children.add(task)
                    task.add_done_callback(self._children.discard)
            raise WireError("the CCB server ended the registration")
        finally:
            await conn.close()

    def _set_address(self, contact: str) -> None:
        """Advertise ``contact``; until a new registration the old CCBID stays (a requester
        then learns that the target is not registered, rather than trying its direct route)."""
        server = self.daemon.server
        new = dataclasses.replace(server.address, ccbid=contact or None)
        self.registered.set()
        if new != server.address:
            server.address = new
            self.daemon.address_changed()

    async def _connect_back(self, request: dict[str, Any], conn: AsyncConnection) -> None:
        ret, nonce = str(request.get("return_address", "")), str(request.get("nonce", ""))
        try:
            reader, writer = await connect_back(ret, nonce, CONNECT_TIMEOUT)
        except (WireError, OSError, TimeoutError) as exc:
            reason = str(exc) or "timed out"
            self.daemon.log.warning("CCB: cannot connect back to %s for %s: %s", ret,
                                    request.get("requester", "?"), reason)
            self._report(conn, nonce, False, reason)
            return
        self.daemon.log.info("CCB: connected back to %s for %s", ret, request.get("requester", "?"))
        self._report(conn, nonce, True, "")
        await self.daemon.server.serve_reverse(reader, writer, f"ccb reverse {ret}")

    @staticmethod
    def _report(conn: AsyncConnection, nonce: str, ok: bool, error: str) -> None:
        with contextlib.suppress(Exception):
            conn.writer.write(encode({"nonce": nonce, "ok": ok, "error": error}))

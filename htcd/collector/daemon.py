"""The collector daemon: stores updates (TCP and signed UDP), answers queries, expires stale ads,
forwards to CONDOR_VIEW_HOST.

The event loop is never held long: queries stream in chunks and yield between them, index
builds and the expiry sweep work in slices, and the UDP listener reads within a time budget.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
from collections.abc import AsyncGenerator, Iterator
from typing import Any

from htcd.classad import ClassAd
from htcd.collector import metrics, query
from htcd.collector.ccb import CCBServer
from htcd.collector.forward import Forwarder
from htcd.collector.keys import string_value
from htcd.collector.store import HISTORY_SIZE, AdStore, Entry
from htcd.collector.udp import Session, Sessions, UdpListener
from htcd.collector.view import history as view_history
from htcd.daemon import Daemon
from htcd.daemon.gcpauses import GcPauses
from htcd.errors import UserError
from htcd.pacer import Pacer
from htcd.wire import auth, locate
from htcd.wire.errors import CommandError
from htcd.wire.server import Handler, Request

# the level an ad's sender must hold, by ad type (HTCondor's UPDATE_<TYPE>_AD commands); others DAEMON
ADVERTISE_LEVEL = {"machine": auth.ADVERTISE_STARTD, "startd": auth.ADVERTISE_STARTD,
                   "scheduler": auth.ADVERTISE_SCHEDD, "submitter": auth.ADVERTISE_SCHEDD,
                   "daemonmaster": auth.ADVERTISE_MASTER, "master": auth.ADVERTISE_MASTER,
                   "negotiator": auth.NEGOTIATOR, "accounting": auth.NEGOTIATOR}
ADVERTISE_LEVELS = frozenset({auth.ADVERTISE_STARTD, auth.ADVERTISE_SCHEDD, auth.ADVERTISE_MASTER,
                              auth.NEGOTIATOR, auth.DAEMON})

CHUNK = 1000  # ads per streamed reply
SLICE = 0.01  # seconds of work before yielding the loop to other requests (several may share one loop turn)
UPDATE_BATCH_CHECK = 64  # updates of one batched UPDATE_AD between two looks at the clock
YOUNG_GC_EVERY = 500  # updates between two collections of Python's youngest generation


def _check_ad(wire: Any, what: str) -> dict[str, str]:
    if not isinstance(wire, dict) or not set(map(type, wire)) <= {str} or not set(map(type, wire.values())) <= {str}:
        raise CommandError(f"{what}: the ad must be a map of attribute name to expression text", "BAD_REQUEST")
    return wire


class Collector(Daemon):
    subsystem = "COLLECTOR"
    ad_type = "Collector"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.store = AdStore()
        self._configure_store()
        self.sessions = Sessions()
        self.udp: UdpListener | None = None
        self.forwarder: Forwarder | None = None
        self.updates = 0  # accepted, over TCP and UDP
        self.queries = 0
        self._own_seq = 0
        self.gc_pauses = GcPauses(self.log)  # the longest collection; stored ads kept out of its walks
        self._build_wake = asyncio.Event()
        self.history: view_history.PoolHistory | None = None  # KEEP_POOL_HISTORY (htcd.collector.view)
        self.ccb = CCBServer(self.server.address, self.log)  # its address is set once the server listens

    def _configure_store(self) -> None:
        self.store.history_size = max(0, self.config.get_int("COLLECTOR_DAEMON_HISTORY_SIZE", HISTORY_SIZE))
        self.store.daemon_stats = self.config.get_bool("COLLECTOR_DAEMON_STATS", True)
        self.store.default_lifetime = self.lifetime()

    def lifetime(self) -> int:
        return max(1, self.config.get_int("CLASSAD_LIFETIME"))

    def command_handlers(self) -> dict[str, Handler]:
        return {"UPDATE_AD": self.cmd_update, "INVALIDATE_AD": self.cmd_invalidate,
                "QUERY_ADS": self.cmd_query, "QUERY_PRIVATE_ADS": self.cmd_query_private,
                "UPDATE_SESSION": self.cmd_session,
                "CCB_REGISTER": lambda req: self.ccb.cmd_register(req),
                "CCB_REQUEST": lambda req: self.ccb.cmd_request(req)}

    def default_name(self) -> str:
        return self.config.get("COLLECTOR_NAME") or self.hostname

    def tcp_bind(self) -> tuple[str | None, int]:
        return locate.bind_host(self.config), locate.collector_port(self.config)

    def shared_port_id(self) -> str | None:
        """``collector`` (HTCondor's socket name for it) when COLLECTOR_USES_SHARED_PORT too: the
        shared port sends it the connections that name no daemon (SHARED_PORT_DEFAULT_ID)."""
        if not locate.collector_uses_shared_port(self.config):
            return None
        return f"collector_{self.config.local_name.lower()}" if self.config.local_name else "collector"

    def socket_path(self) -> str:
        """A collector on a fixed port listens on ``collector-<port>.sock``, where the others
        find it from its COLLECTOR_HOST entry (two collectors can share a host)."""
        port = locate.collector_port(self.config)
        if port == 0 and not self.config.local_name:
            return super().socket_path()
        name = f"collector-{port}.sock" if port else f"collector-{self.config.local_name}.sock"
        path = os.path.join(locate.socket_dir(self.config), name)
        os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
        if len(path.encode()) > 107:
            raise UserError(f"the socket path {path} is longer than the 107 bytes Unix sockets allow; "
                            "set DAEMON_SOCKET_DIR to a shorter directory")
        return path

    # -- lifecycle ---------------------------------------------------------------------------
    async def startup(self) -> None:
        self.ccb.address = self.server.address
        host = self.server.address.host or locate.bind_host(self.config)
        if self.server.address.sock:  # as HTCondor's: the shared port carries no UDP, updates come over TCP
            self.log.info("behind the shared port: no UDP port; daemons send their updates over TCP")
        else:
            self.udp = UdpListener.bind(host, self.server.address.port,
                                        self.config.get_size("COLLECTOR_SOCKET_BUFSIZE", 10_240_000),
                                        self.sessions, self._on_datagram, self.log)
            self.udp.start()
            self.log.info("listening for UDP updates on %s:%d (receive buffer %d bytes)", *self.udp.address,
                          self.udp.buffer_size)
        self.forwarder = Forwarder(self.config, self.server.address, self.log)
        self.forwarder.start()
        self.every(self.lifetime, self._sweep, "expire ads", first=self.lifetime())
        self.every(lambda: 60.0, self._housekeeping, "sessions and drop counts", first=60.0)
        self.every(lambda: 2.0, self._freeze, "exempt stored ads from garbage collection", first=2.0)
        self._timers.append(asyncio.create_task(self._build_indexes(), name="index builder"))
        view_history.install(self)  # samples the pool when KEEP_POOL_HISTORY is true
        self._metrics = await metrics.start(self)  # the optional HTTP endpoint (COLLECTOR_METRICS_PORT)

    async def shutdown(self, fast: bool) -> None:
        await metrics.stop(getattr(self, "_metrics", None))
        await view_history.stop(self)
        if self.forwarder is not None:
            await self.forwarder.stop()
        if self.udp is not None:
            self.udp.close()
            self.udp = None

    def reconfigured(self) -> None:
        self._configure_store()
        self.spawn(self._restart_forwarder(), "restart forwarding")
        self.spawn(view_history.reconfigure(self), "reconfigure pool history")

    async def _restart_forwarder(self) -> None:
        if self.forwarder is not None:
            await self.forwarder.stop()
        self.forwarder = Forwarder(self.config, self.server.address, self.log)
        self.forwarder.start()

    async def _sweep(self) -> None:
        """Remove ads whose ClassAdLifetime ran out (every CLASSAD_LIFETIME seconds, as HTCondor's
        housekeeper; queries never show an expired ad even before the sweep)."""
        removed = 0
        pacer = Pacer(SLICE)
        for item in self.store.expired():
            if item is None:
                await pacer.step()
                continue
            table, entry = item
            self.store.remove(table, entry)
            removed += 1
        if removed:
            self.log.info("expired %d ads", removed)

    async def _freeze(self) -> None:
        """Keep the stored ads out of the cyclic garbage collector's walks (``htcd/daemon/gcpauses.py``):
        a full collection walks every stored ad (some 70 ms at 100,000 ads)."""
        self.gc_pauses.kept(self.store.count())

    async def _housekeeping(self) -> None:
        self.sessions.sweep()
        if self.udp is not None:
            self.udp.kernel()
            self.udp._log_drops()

    async def _build_indexes(self) -> None:
        """Build the indexes queries asked for, in slices, as they are asked for."""
        while not self.stopping.is_set():
            for table, idx in self.store.pending_builds():
                pacer = Pacer(SLICE)
                for _ in self.store.build_steps(table, idx, chunk=500):
                    if pacer.due():
                        self.gc_pauses.freeze()  # the new buckets hold many ads: keep the collector from walking them
                        await pacer.pause()
                self.gc_pauses.freeze()
                self.log.info("built the %s index of %s ads (%d ads)", idx.attr, table.ad_type, len(table.entries))
            self._build_wake.clear()
            await self._build_wake.wait()

    # -- the collector's own ad ----------------------------------------------------------------
    async def publish(self) -> None:
        wire = self._store_own_ad()
        if self.forwarder is not None:
            self.forwarder.forward("UPDATE_AD", {"ad_type": "Collector", "ad": wire}, "Collector")

    async def invalidate(self) -> None:
        """Nothing to tell: the collector's own ads go with it."""

    def _store_own_ad(self) -> dict[str, str]:
        wire = self.make_ad().to_wire()
        self._own_seq += 1
        wire["UpdateSequenceNumber"] = str(self._own_seq)
        self.store.update("Collector", wire, counted=False)
        return wire

    def make_ad(self) -> ClassAd:
        ad = self.base_ad("Collector")
        ad["CollectorIpAddr"] = str(self.server.address)
        for k, v in self.store.statistics().items():
            ad[k] = v
        machines = self.store.table("Machine")
        ad["HostsTotal"] = ad["StartdAds"] = len(machines.entries)
        ad["SubmitterAds"] = self.store.count("Submitter")
        state = machines.indexes.get("state")
        if state is not None and state.ready:
            ad["HostsClaimed"] = state.count("claimed")
            ad["HostsUnclaimed"] = state.count("unclaimed")
            ad["HostsOwner"] = state.count("owner")
        ad["UpdatesAccepted"] = self.updates
        ad["QueriesTotal"] = self.queries
        ad["GcLongestPauseMs"] = round(self.gc_pauses.longest * 1000, 1)
        ad["ActiveUdpSessions"] = len(self.sessions)
        self.ccb.publish(ad)
        if self.udp is not None:
            c = self.udp.counters
            ad["UdpPort"] = self.udp.address[1]
            ad["DatagramsReceived"] = c.received
            ad["DatagramsDroppedUnknownSession"] = c.unknown_session
            ad["DatagramsDroppedBadMAC"] = c.bad_mac
            ad["DatagramsDroppedMalformed"] = c.malformed
            ad["DatagramsRejected"] = c.rejected
            kernel = self.udp.kernel()
            if kernel is not None:  # HTCondor's DaemonCore figure, and what the kernel dropped
                ad["DCUdpQueueDepth"] = kernel.queued
                ad["DCUdpQueueDepthPeak"] = self.udp.queue_peak
                ad["DatagramsDroppedReceiveBuffer"] = kernel.drops
                self.udp._log_drops()
        if self.forwarder is not None and self.forwarder.active:
            ad["UpdatesForwarded"] = self.forwarder.forwarded
            ad["ForwardsDropped"] = self.forwarder.dropped
        return ad

    # -- the in-process read API ---------------------------------------------------------------
    def ads(self, ad_type: str, constraint: str | None = None) -> Iterator[ClassAd]:
        """The stored ads of one type ("Any": every type) matching ``constraint``: the in-process
        read API (the metrics endpoint uses it), independent of how the store keeps ads."""
        plan = query.plan(constraint)
        if ad_type.lower() in ("collector", "any"):
            self._store_own_ad()  # its figures (losses, drops) as of now, as a query over the wire sees them
        if query.want_indexes(self.store, ad_type, plan):
            self._build_wake.set()
        for e in query.select(self.store, ad_type, plan):
            if e is not None:
                yield ClassAd.from_wire(self.store.wire(e))

    # -- updates -------------------------------------------------------------------------------
    def _may_advertise(self, who: auth.Identity, command: str, ad_type: str) -> None:
        """Refuse (DENIED) ``command`` for an ad of ``ad_type`` unless ``who`` holds its
        ADVERTISE_* level: an execute point's token may advertise slots, not schedds."""
        level = ADVERTISE_LEVEL.get(ad_type.lower(), auth.DAEMON)
        reason = self.server.authorized(who, level)
        if reason is not None:
            self.log.warning("denied %s of a %s ad to %s: %s", command, ad_type, who, reason)
            raise CommandError(f"{command} of a {ad_type} ad refused: {reason}", "DENIED")

    def _apply_update(self, args: dict[str, Any], who: auth.Identity) -> Entry:
        if not isinstance(args, dict):
            raise CommandError("UPDATE_AD: an update must be a map {ad_type, ad, private?}", "BAD_REQUEST")
        ad_type = args.get("ad_type")
        if not isinstance(ad_type, str) or not ad_type:
            raise CommandError("UPDATE_AD: missing argument 'ad_type'", "BAD_REQUEST")
        self._may_advertise(who, "UPDATE_AD", ad_type)
        identity, method = str(who), who.method
        private = args.get("private")
        if private is not None:
            private = _check_ad(private, "UPDATE_AD (private ad)")
        names = args.get("names")
        try:
            if names is None:
                entry = self.store.update(ad_type, _check_ad(args.get("ad"), "UPDATE_AD"), private, identity, method)
            else:
                values = args.get("values")
                if type(names) is not bytes or not isinstance(values, (list, tuple)) \
                        or not set(map(type, values)) <= {str}:
                    raise CommandError("UPDATE_AD: 'names' must be a msgpack blob and 'values' a list of "
                                       "expression texts", "BAD_REQUEST")
                entry = self.store.update_compact(ad_type, names, values, private, identity, method)
        except UserError as exc:
            raise CommandError(f"UPDATE_AD: bad ad from {identity}: {exc}", "BAD_AD") from None
        self.updates += 1
        if not self.updates % YOUNG_GC_EVERY:
            # Each update swaps an ad's tuple of texts for a new one: the young generation grows
            # by one tuple per update while its allocation count does not (the old tuple is
            # freed), so Python would collect 20,000 of them at once; a little and often instead.
            gc.collect(0)
        if self.forwarder is not None and self.forwarder.links:
            self.forwarder.forward("UPDATE_AD", args, ad_type)
        return entry

    async def cmd_update(self, req: Request) -> Any:
        """``UPDATE_AD {ad_type, ad | names + values, private?}``, or a batch of those:
        ``{updates: [...]}``."""
        updates = req.arg("updates")
        if updates is None:
            self._apply_update(req.args, req.identity)
            return "ok"
        if not isinstance(updates, list) or not all(isinstance(u, dict) for u in updates):
            raise CommandError("UPDATE_AD: 'updates' must be a list of {ad_type, ad, private}", "BAD_REQUEST")
        stored, errors = 0, []
        pacer = Pacer(SLICE)
        for n, u in enumerate(updates, 1):
            try:
                self._apply_update(u, req.identity)
                stored += 1
            except CommandError as exc:
                errors.append(f"update {n}: {exc}")
            if n % UPDATE_BATCH_CHECK == 0:
                await pacer.step()
        return {"stored": stored, "errors": errors[:20]}

    def _on_datagram(self, message: dict[str, Any], session: Session) -> None:
        cmd, args = message.get("cmd"), message.get("args")
        if not isinstance(args, dict):
            raise CommandError("a datagram without arguments", "BAD_REQUEST")
        if cmd == "UPDATE_AD":
            for u in args["updates"] if isinstance(args.get("updates"), (list, tuple)) else [args]:
                self._apply_update(u, session.who)
        elif cmd == "INVALIDATE_AD":
            self._invalidate(args, session.who)
        else:
            raise CommandError(f"{cmd!r} cannot come in a datagram", "BAD_REQUEST")

    def _invalidate(self, args: dict[str, Any], who: auth.Identity) -> int:
        ad_type = args.get("ad_type")
        if not isinstance(ad_type, str) or not ad_type:
            raise CommandError("INVALIDATE_AD: missing argument 'ad_type'", "BAD_REQUEST")
        self._may_advertise(who, "INVALIDATE_AD", ad_type)
        name, schedd = args.get("name"), args.get("schedd_name")
        if name is None and schedd is None:
            raise CommandError("INVALIDATE_AD needs a name, a schedd_name or a constraint", "BAD_REQUEST")
        address = args.get("address")
        if address is not None and not isinstance(address, str):
            raise CommandError("INVALIDATE_AD: argument 'address' must be a string", "BAD_REQUEST")
        gone = self.store.invalidate(ad_type, None if name is None else str(name), address,
                                     None if schedd is None else str(schedd))
        if gone and self.forwarder is not None and self.forwarder.links:
            self.forwarder.forward("INVALIDATE_AD", args, ad_type)
        return len(gone)

    async def cmd_invalidate(self, req: Request) -> int:
        """``INVALIDATE_AD {ad_type, name?, address?, schedd_name?, constraint?}``."""
        constraint = req.arg_str("constraint")
        if not constraint:
            return self._invalidate(req.args, req.identity)
        ad_type = req.arg_str("ad_type", required=True)
        self._may_advertise(req.identity, "INVALIDATE_AD", ad_type)
        plan = self._plan(req)
        gone = [e async for e in self._select(ad_type, plan)]
        for e in gone:
            for table in self.store.tables_for(ad_type):
                if table.entries.get(e.key) is e:
                    self.store.remove(table, e)
        if gone and self.forwarder is not None and self.forwarder.links:
            self.forwarder.forward("INVALIDATE_AD", dict(req.args), ad_type)
        return len(gone)

    async def cmd_session(self, req: Request) -> dict[str, Any]:
        """Open a session for signed UDP updates: its id, key, lifetime and where to send."""
        if self.udp is None:
            raise CommandError("this collector is not listening for UDP updates", "REFUSED")
        reasons = [self.server.authorized(req.identity, lv) for lv in sorted(ADVERTISE_LEVELS)]
        if all(reasons):
            raise CommandError(f"UPDATE_SESSION refused: {req.identity} holds none of "
                               f"{', '.join(sorted(ADVERTISE_LEVELS))} ({reasons[0]})", "DENIED")
        duration = max(60, self.config.get_int("SEC_DEFAULT_SESSION_DURATION", 86400))
        lease = max(60, self.config.get_int("SEC_DEFAULT_SESSION_LEASE", 3600))
        s = self.sessions.open(req.identity, duration, lease)
        host, port = self.udp.address
        return {"id": s.sid, "key": s.key, "udp": [host, port], "duration": duration}

    # -- queries -------------------------------------------------------------------------------
    def _plan(self, req: Request) -> query.Plan:
        text = req.arg_str("constraint")
        try:
            plan = query.plan(text or None)
        except UserError as exc:
            raise CommandError(f"bad constraint: {exc}", "BAD_CONSTRAINT") from None
        return plan

    async def _select(self, ad_type: str, plan: query.Plan) -> AsyncGenerator[Entry, None]:
        """The matching entries, yielding the loop whenever a slice of work is used up."""
        self.queries += 1
        if ad_type.lower() in ("collector", "any"):
            self._store_own_ad()
        if query.want_indexes(self.store, ad_type, plan):
            self._build_wake.set()
        found = query.select(self.store, ad_type, plan)
        pacer = Pacer(SLICE)  # the consumer's work between two entries counts too
        for e in found:
            if e is not None:
                yield e
            await pacer.step()

    async def cmd_query(self, req: Request) -> list[dict[str, str]]:
        """``QUERY_ADS {ad_type, constraint?, projection?, limit?}``, streamed in chunks."""
        ad_type = req.arg_str("ad_type", required=True)
        plan = self._plan(req)
        projection = req.arg_list("projection", str)
        proj = tuple(p.lower() for p in projection) if projection else None
        limit = req.arg_int("limit", 0)
        batch: list[dict[str, str]] = []
        sent = 0
        store = self.store
        async with contextlib.aclosing(self._select(ad_type, plan)) as found:
            async for e in found:
                batch.append(store.project(e, proj) if proj else store.wire(e))
                sent += 1
                if limit and sent >= limit:
                    break
                if len(batch) >= CHUNK:
                    await req.send_partial(batch)
                    batch = []
        return batch

    async def cmd_query_private(self, req: Request) -> list[dict[str, Any]]:
        ad_type = req.arg_str("ad_type", required=True)
        plan = self._plan(req)
        return [{"name": string_value(e.get("name")), "private": e.private}
                async for e in self._select(ad_type, plan) if e.private]

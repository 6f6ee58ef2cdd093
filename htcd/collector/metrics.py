"""The collector's optional HTTP endpoint: the pool as OpenMetrics at ``/metrics``, ads as JSON at
``/ads?type=Machine&constraint=...&projection=Name,State&limit=N``.

Off unless ``COLLECTOR_METRICS_PORT`` is set (0: any free port, logged); it listens on
``COLLECTOR_METRICS_ADDRESS`` (default 127.0.0.1).  Reading it is READ access to the collector,
but plain HTTP carries none of htcd's authentication (tokens and certificates, docs/security.md,
are for its own protocol), so READ over HTTP is granted by host, to the entries of
``COLLECTOR_METRICS_ALLOW_READ`` (HTCondor's ALLOW_READ syntax; default loopback only); anyone else
gets 403 with the reason.  A small HTTP/1.1 handler on asyncio (one request per connection), reading
ads only through ``Collector.ads()`` and yielding to the loop between chunks so queries and updates
go on while a big pool is rendered.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import inspect
import ipaddress
import json
import logging
import re
import socket
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from htcd.classad import ClassAd
from htcd.config import Config
from htcd.errors import UserError
from htcd.pacer import Pacer


class Collector(Protocol):
    """What the endpoint needs of the collector daemon: its config and log, and its ads."""

    @property
    def config(self) -> Config: ...

    @property
    def log(self) -> logging.Logger: ...

    def ads(self, ad_type: str, constraint: str | None = None) -> Iterator[ClassAd]: ...

DEFAULT_ALLOW = "127.0.0.0/8, ::1"
OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8"
AD_TYPES = ("Machine", "Scheduler", "Submitter", "Negotiator", "DaemonMaster", "Collector", "Accounting",
            "Generic", "Any")
DAEMONS = {"Machine": "startd", "Scheduler": "schedd", "Negotiator": "negotiator", "DaemonMaster": "master",
           "Collector": "collector"}
REQUEST_TIMEOUT = 10.0
MAX_REQUEST = 16 * 1024
YIELD_EVERY = 0.002  # seconds of work between returns to the loop (a request needs several passes)
STATUS_TEXT = {200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
               408: "Request Timeout", 413: "Payload Too Large", 500: "Internal Server Error"}


# ------------------------------------------------------------------------------- access

@dataclass
class HostList:
    """Hosts allowed READ, from an ALLOW_READ-style list: ``*``, IP addresses, networks
    (``10.0.0.0/8``), wildcards (``192.168.*``, ``*.example.org``), host names, and the
    ``user@domain/host`` form (only ``*`` users can match: an HTTP request names no user)."""

    text: str
    networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = field(default_factory=list)
    ip_patterns: list[str] = field(default_factory=list)
    name_patterns: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    anyone: bool = False
    ignored: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, text: str) -> HostList:
        hl = cls(text)
        for raw in (e.strip() for e in text.replace(",", " ").split()):
            if not raw:
                continue
            entry = raw
            if "/" in raw:
                left, right = raw.split("/", 1)
                try:
                    hl.networks.append(ipaddress.ip_network(raw, strict=False))
                    continue
                except ValueError:
                    pass
                if left != "*":  # a named user: needs authentication to be known
                    hl.ignored.append(raw)
                    continue
                entry = right
            if entry == "*":
                hl.anyone = True
            elif _is_ip(entry):
                hl.networks.append(ipaddress.ip_network(entry))
            elif "*" in entry and (re.fullmatch(r"[0-9.*]+", entry) or ":" in entry):
                hl.ip_patterns.append(entry)
            elif "*" in entry:
                hl.name_patterns.append(entry.lower())
            else:
                hl.names.append(entry.lower())
        return hl

    async def resolve(self) -> None:
        """Host names become their addresses once, at start."""
        loop = asyncio.get_running_loop()
        for name in self.names:
            try:
                infos = await loop.getaddrinfo(name, None, type=socket.SOCK_STREAM)
            except OSError:
                continue
            for info in infos:
                with contextlib.suppress(ValueError):
                    self.networks.append(ipaddress.ip_network(info[4][0]))

    async def allows(self, peer: str) -> bool:
        if self.anyone:
            return True
        try:
            ip = ipaddress.ip_address(peer.split("%", 1)[0])
        except ValueError:
            return False
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        if any(ip in net for net in self.networks):
            return True
        if any(fnmatch.fnmatchcase(str(ip), p) for p in self.ip_patterns):
            return True
        if self.name_patterns:
            try:
                host, _ = await asyncio.wait_for(asyncio.get_running_loop().getnameinfo((str(ip), 0)), 2.0)
            except (OSError, TimeoutError):
                return False
            return any(fnmatch.fnmatchcase(host.lower(), p) for p in self.name_patterns)
        return False


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


# ------------------------------------------------------------------------------- start / stop

@dataclass
class Handle:
    """A running endpoint: the server, its URL and the access list."""

    server: asyncio.Server
    url: str
    allow: HostList
    clients: set[asyncio.Task[None]] = field(default_factory=set)


async def start(collector: Collector) -> Handle | None:
    """Start the endpoint if ``COLLECTOR_METRICS_PORT`` is set; None when off or when it cannot
    start (the reason is logged; the collector runs on without it)."""
    cfg = collector.config
    log = collector.log
    if not (cfg.get("COLLECTOR_METRICS_PORT") or "").strip():
        return None
    try:
        port = cfg.get_int("COLLECTOR_METRICS_PORT", 0)
        if not 0 <= port <= 65535:
            raise UserError(f"COLLECTOR_METRICS_PORT {port} is not a port number (0-65535)")
    except UserError as exc:
        log.error("metrics endpoint not started: %s", exc)
        return None
    host = (cfg.get("COLLECTOR_METRICS_ADDRESS") or "127.0.0.1").strip()
    allow = HostList.parse(cfg.get("COLLECTOR_METRICS_ALLOW_READ") or DEFAULT_ALLOW)
    for entry in allow.ignored:
        log.warning("COLLECTOR_METRICS_ALLOW_READ entry %s names a user: it cannot match until network "
                    "authentication exists", entry)
    await allow.resolve()
    handle: Handle | None = None

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert handle is not None and task is not None
        handle.clients.add(task)
        try:
            await serve(collector, handle, reader, writer)
        finally:
            handle.clients.discard(task)

    try:
        server = await asyncio.start_server(client, host, port, limit=MAX_REQUEST)
    except OSError as exc:
        log.error("metrics endpoint not started: cannot listen on %s port %d: %s", host, port,
                  exc.strerror or exc)
        return None
    bound = server.sockets[0].getsockname()
    shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
    handle = Handle(server, f"http://{shown}:{bound[1]}", allow)
    log.info("metrics endpoint listening at %s/metrics (READ from: %s)", handle.url, allow.text)
    return handle


async def stop(handle: Handle | None) -> None:
    """Stop listening and end the requests in flight."""
    if handle is None:
        return
    handle.server.close()
    for task in list(handle.clients):
        task.cancel()
    await asyncio.gather(*handle.clients, return_exceptions=True)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(handle.server.wait_closed(), 5.0)


# ------------------------------------------------------------------------------- HTTP

class HttpError(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


async def read_request(reader: asyncio.StreamReader) -> tuple[str, str]:
    """(method, target) of one request; its headers are read and ignored (GET has no body)."""
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), REQUEST_TIMEOUT)
    except asyncio.LimitOverrunError:
        raise HttpError(413, "request headers too long") from None
    except asyncio.IncompleteReadError:
        raise HttpError(400, "incomplete request") from None
    except TimeoutError:
        raise HttpError(408, f"no complete request within {REQUEST_TIMEOUT:.0f} s") from None
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = line.split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise HttpError(400, f"not an HTTP/1.x request line: {line[:100]!r}")
    return parts[0], parts[1]


async def serve(collector: Collector, handle: Handle, reader: asyncio.StreamReader,
                writer: asyncio.StreamWriter) -> None:
    peer = writer.get_extra_info("peername")
    host = str(peer[0]) if peer else "?"
    method, target = "GET", "?"
    try:
        try:
            method, target = await read_request(reader)
            if method not in ("GET", "HEAD"):
                raise HttpError(405, f"{method} is not supported; use GET")
            if not await handle.allow.allows(host):
                raise HttpError(403, f"{host} may not read the collector: READ access over HTTP is granted "
                                     f"to the hosts in COLLECTOR_METRICS_ALLOW_READ ({handle.allow.text}) "
                                     "until network authentication exists")
            status, ctype, body = await route(collector, target)
        except HttpError as exc:
            status, ctype, body = exc.status, "text/plain; charset=utf-8", f"{exc.status} {exc.reason}\n".encode()
        except Exception:
            collector.log.exception("metrics endpoint: request from %s failed", host)
            status, ctype, body = 500, "text/plain; charset=utf-8", b"500 internal error (see the CollectorLog)\n"
        collector.log.debug("metrics endpoint: %s %s from %s: %d", method, target, host, status)
        headers = (f"HTTP/1.1 {status} {STATUS_TEXT.get(status, '')}\r\nContent-Type: {ctype}\r\n"
                   f"Content-Length: {len(body)}\r\nCache-Control: no-cache\r\nConnection: close\r\n")
        if status == 405:
            headers += "Allow: GET, HEAD\r\n"
        writer.write((headers + "\r\n").encode("latin-1"))
        if method != "HEAD":
            writer.write(body)
        await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()


async def route(collector: Collector, target: str) -> tuple[int, str, bytes]:
    url = urlsplit(target)
    if url.path == "/metrics":
        return 200, OPENMETRICS, (await render_metrics(collector)).encode()
    if url.path == "/ads":
        return 200, "application/json", (await render_ads(collector, parse_qs(url.query))).encode()
    if url.path == "/view" or url.path.startswith("/view/"):
        return await route_view(collector, url.path, parse_qs(url.query))
    if url.path == "/":
        return 200, "text/plain; charset=utf-8", (
            b"htcd collector\n/metrics  the pool in OpenMetrics text\n"
            b"/ads?type=Machine&constraint=EXPR&projection=A,B&limit=N  ads as JSON\n"
            b"/view/  the pool's history (KEEP_POOL_HISTORY), JSON under /view/api/\n")
    raise HttpError(404, f"no such page {url.path}; try /metrics or /ads")


async def route_view(collector: Collector, path: str, query: dict[str, list[str]]) -> tuple[int, str, bytes]:
    """The pool view: ``/view/api/*`` to htcd.collector.view.api, the rest of ``/view/`` to
    htcd.collector.view.web's ``serve(path) -> (status, content type, body)`` when it exists.
    Only while the collector keeps pool history (KEEP_POOL_HISTORY)."""
    history = getattr(collector, "history", None)
    if history is None:
        if path.startswith("/view/api/"):
            return 404, "application/json", json.dumps(
                {"error": "this collector keeps no pool history (KEEP_POOL_HISTORY is false)"}).encode()
        raise HttpError(404, f"no such page {path}: this collector keeps no pool history (KEEP_POOL_HISTORY "
                             "is false)")
    from htcd.collector.view import api

    if path.startswith("/view/api/"):
        return await api.handle(history, collector, path[len("/view/api/"):], query)
    try:
        from htcd.collector.view import web  # type: ignore[attr-defined,unused-ignore]
    except ImportError:
        raise HttpError(404, f"no such page {path}: the view's page is not installed; its JSON is under "
                             "/view/api/") from None
    result = web.serve(path)
    if inspect.isawaitable(result):
        result = await result
    status, ctype, body = result
    if status >= 400:
        raise HttpError(status, body.decode(errors="replace").strip() or f"cannot serve {path}")
    return status, ctype, body


async def paced(ads: Iterable[ClassAd], pacer: Pacer) -> AsyncIterator[ClassAd]:
    """The ads one by one, returning to the loop every YIELD_EVERY seconds of work (taking and
    using them both count)."""
    for i, ad in enumerate(ads):
        yield ad
        if i % 20 == 19:
            await pacer.step()


# ------------------------------------------------------------------------------- /ads

async def render_ads(collector: Collector, query: dict[str, list[str]]) -> str:
    """The ads of one type matching the constraint, projected, as a JSON array (HTCondor's JSON
    form of ClassAds)."""
    want = (query.get("type") or ["Machine"])[-1]
    ad_type = next((t for t in AD_TYPES if t.lower() == want.lower()), None)
    if ad_type is None:
        raise HttpError(400, f"unknown ad type {want!r}; known: {', '.join(AD_TYPES)}")
    constraint = (query.get("constraint") or [""])[-1].strip() or None
    projection = [p for text in query.get("projection", []) for p in text.replace(",", " ").split()]
    try:
        limit = int((query.get("limit") or ["0"])[-1])
    except ValueError:
        raise HttpError(400, f"limit must be a number, not {(query.get('limit') or [''])[-1]!r}") from None
    pacer = Pacer(YIELD_EVERY)
    wanted = {p.lower() for p in projection}
    parts = []
    try:
        ads = collector.ads(ad_type, constraint)
        if limit > 0:
            ads = (ad for _, ad in zip(range(limit), ads, strict=False))
        async for ad in paced(ads, pacer):
            if wanted:
                ad = ClassAd.from_wire({k: v for k, v in ad.to_wire().items() if k.lower() in wanted})
            parts.append(json.dumps(ad.to_json()))
    except UserError as exc:
        raise HttpError(400, f"bad constraint {constraint!r}: {exc}") from None
    return "[\n" + ",\n".join(parts) + "\n]\n"


# ------------------------------------------------------------------------------- /metrics

def _value(ad: ClassAd, name: str) -> Any:
    """An attribute's value; plain strings and numbers come from the wire text unparsed (nothing
    parsed is left cached on the collector's ads)."""
    return ad.plain_value(name)


def _number(ad: ClassAd, name: str) -> float | None:
    v = _value(ad, name)
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _text(ad: ClassAd, name: str, default: str = "") -> str:
    v = _value(ad, name)
    return v if isinstance(v, str) else default


class Family:
    """One metric family of the exposition: type, help, unit and samples."""

    def __init__(self, name: str, kind: str, help_text: str, unit: str = "") -> None:
        self.name, self.kind, self.help, self.unit = name, kind, help_text, unit
        self.samples: dict[tuple[tuple[str, str], ...], float] = {}

    def set(self, value: float, **labels: str) -> None:
        self.samples[tuple(labels.items())] = value

    def add(self, value: float, **labels: str) -> None:
        key = tuple(labels.items())
        self.samples[key] = self.samples.get(key, 0) + value

    def lines(self) -> Iterator[str]:
        yield f"# TYPE {self.name} {self.kind}"
        if self.unit:
            yield f"# UNIT {self.name} {self.unit}"
        yield f"# HELP {self.name} {_escape(self.help)}"
        suffix = "_total" if self.kind == "counter" else ""
        for labels, value in sorted(self.samples.items()):
            text = ",".join(f'{k}="{_escape(v)}"' for k, v in labels)
            yield f"{self.name}{suffix}{{{text}}} {_number_text(value)}" if text else \
                f"{self.name}{suffix} {_number_text(value)}"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number_text(v: float) -> str:
    if isinstance(v, int) or (float(v).is_integer() and abs(v) < 1e15):
        return str(int(v))
    return repr(float(v))


SCHEDD_JOBS = {"TotalIdleJobs": "idle", "TotalRunningJobs": "running", "TotalHeldJobs": "held",
               "TotalRemovedJobs": "removed"}
SUBMITTER_JOBS = {"IdleJobs": "idle", "RunningJobs": "running", "HeldJobs": "held"}
NEGOTIATOR_GAUGES = (
    ("LastNegotiationCycleDuration0", "htcd_negotiation_cycle_duration_seconds", "seconds",
     "How long the last negotiation cycle took."),
    ("LastNegotiationCycleTime0", "htcd_negotiation_cycle_start_timestamp_seconds", "seconds",
     "When the last negotiation cycle started (Unix time)."),
    ("LastNegotiationCycleEnd0", "htcd_negotiation_cycle_end_timestamp_seconds", "seconds",
     "When the last negotiation cycle ended (Unix time)."),
    ("LastNegotiationCycleMatches0", "htcd_negotiation_cycle_matches", "", "Matches made in the last cycle."),
    ("LastNegotiationCycleRejections0", "htcd_negotiation_cycle_rejections", "",
     "Jobs rejected in the last cycle."),
    ("LastNegotiationCycleCandidateSlots0", "htcd_negotiation_cycle_candidate_slots", "",
     "Slots considered in the last cycle."),
)
NEGOTIATOR_COUNTERS = (("NegotiationCycles", "htcd_negotiation_cycles", "Negotiation cycles run."),
                       ("MatchesTotal", "htcd_negotiation_matches", "Matches made since the negotiator started."))
DAEMON_GAUGES = (("RecentDaemonCoreDutyCycle", "htcd_daemon_recent_duty_cycle",
                  "Fraction of the recent window the daemon's event loop was busy."),
                 ("DaemonCoreDutyCycle", "htcd_daemon_duty_cycle",
                  "Fraction of its life the daemon's event loop was busy."))
UPDATE_ATTRS = (("UpdatesTotal", "htcd_ad_updates", "Updates received for the ads held, by ad type."),
                ("UpdatesSequenced", "htcd_ad_updates_sequenced",
                 "Updates received with a sequence number, for the ads held, by ad type."),
                ("UpdatesLost", "htcd_ad_updates_lost",
                 "Updates lost (gaps in the sequence numbers) for the ads held, by ad type."))


async def render_metrics(collector: Collector) -> str:
    """The pool as an OpenMetrics exposition.  Families whose source attributes no daemon
    publishes yet are simply absent."""
    started = time.monotonic()
    pacer = Pacer(YIELD_EVERY)
    fam: dict[str, Family] = {}

    def family(name: str, kind: str, help_text: str, unit: str = "") -> Family:
        f = fam.get(name)
        if f is None:
            f = fam[name] = Family(name, kind, help_text, unit)
        return f

    ads_by_type: dict[str, int] = defaultdict(int)
    update_sums: dict[tuple[str, str], float] = defaultdict(float)
    seen_startds: set[str] = set()

    def daemon_stats(ad: ClassAd, ad_type: str, name: str) -> None:
        for attr, metric, help_text in DAEMON_GAUGES:
            v = _number(ad, attr)
            if v is not None:
                family(metric, "gauge", help_text).set(v, daemon=DAEMONS[ad_type], name=name)

    def updates(ad: ClassAd, ad_type: str) -> None:
        for attr, _metric, _help in UPDATE_ATTRS:
            v = _number(ad, attr)
            if v is not None:
                update_sums[(attr, ad_type)] += v

    slots = family("htcd_slots", "gauge", "Slots by state and activity.")
    cpus = family("htcd_slot_cpus", "gauge", "CPUs of the slots, by state and activity.")
    async for ad in paced(collector.ads("Machine"), pacer):
        state, activity = _text(ad, "State", "Unknown"), _text(ad, "Activity", "Unknown")
        slots.add(1, state=state, activity=activity)
        cpus.add(_number(ad, "Cpus") or 0, state=state, activity=activity)
        ads_by_type["Machine"] += 1
        updates(ad, "Machine")
        machine = _text(ad, "Machine") or _text(ad, "Name")
        if machine not in seen_startds:
            seen_startds.add(machine)
            daemon_stats(ad, "Machine", machine)
    family("htcd_machines", "gauge", "Machines with at least one slot ad.").set(len(seen_startds))

    jobs = family("htcd_schedd_jobs", "gauge", "Jobs in each schedd's queue, by state.")
    async for ad in paced(collector.ads("Scheduler"), pacer):
        name = _text(ad, "Name", "?")
        ads_by_type["Scheduler"] += 1
        for attr, state in SCHEDD_JOBS.items():
            v = _number(ad, attr)
            if v is not None:
                jobs.set(v, schedd=name, state=state)
        v = _number(ad, "TotalJobAds")
        if v is not None:
            family("htcd_schedd_job_ads", "gauge", "Job ads in each schedd's queue.").set(v, schedd=name)
        updates(ad, "Scheduler")
        daemon_stats(ad, "Scheduler", name)

    sub = family("htcd_submitter_jobs", "gauge", "Jobs of each submitter, by schedd and state.")
    async for ad in paced(collector.ads("Submitter"), pacer):
        ads_by_type["Submitter"] += 1
        for attr, state in SUBMITTER_JOBS.items():
            v = _number(ad, attr)
            if v is not None:
                sub.set(v, submitter=_text(ad, "Name", "?"), schedd=_text(ad, "ScheddName"), state=state)
        updates(ad, "Submitter")

    async for ad in paced(collector.ads("Negotiator"), pacer):
        name = _text(ad, "Name", "?")
        ads_by_type["Negotiator"] += 1
        for attr, metric, unit, help_text in NEGOTIATOR_GAUGES:
            v = _number(ad, attr)
            if v is not None:
                family(metric, "gauge", help_text, unit).set(v, negotiator=name)
        for attr, metric, help_text in NEGOTIATOR_COUNTERS:
            v = _number(ad, attr)
            if v is not None:
                family(metric, "counter", help_text).set(v, negotiator=name)
        updates(ad, "Negotiator")
        daemon_stats(ad, "Negotiator", name)

    for ad_type in ("DaemonMaster", "Collector"):
        async for ad in paced(collector.ads(ad_type), pacer):
            ads_by_type[ad_type] += 1
            name = _text(ad, "Name", "?")
            daemon_stats(ad, ad_type, name)
            if ad_type == "Collector":
                collector_figures(ad, name, family)
            else:
                updates(ad, ad_type)

    counts = family("htcd_collector_ads", "gauge", "Ads held by the collector, by type.")
    for ad_type, n in ads_by_type.items():
        counts.set(n, ad_type=ad_type)
    for (attr, ad_type), total in sorted(update_sums.items()):
        metric, help_text = next((m, h) for a, m, h in UPDATE_ATTRS if a == attr)
        family(metric, "gauge", help_text).set(total, ad_type=ad_type)
    family("htcd_metrics_render_seconds", "gauge", "Time taken to build this exposition.", "seconds").set(
        round(time.monotonic() - started, 6))
    lines = [line for f in fam.values() if f.samples for line in f.lines()]
    return "\n".join(lines) + "\n# EOF\n"


def collector_figures(ad: ClassAd, name: str, family: Any) -> None:
    """The collector's own update counts (totals and per ad type ``Updates<Kind>_<Type>``) and
    loss ratio, as its ad publishes them."""
    for kind, help_text in (("Total", "Updates the collector received."),
                            ("Sequenced", "Updates that carried a sequence number."),
                            ("Lost", "Updates the collector missed (gaps in sequence numbers).")):
        metric = f"htcd_collector_updates{'' if kind == 'Total' else '_' + kind.lower()}"
        v = _number(ad, f"Updates{kind}")
        if v is not None:
            family(metric, "counter", help_text).set(v, collector=name)
        for attr in ad:
            prefix = f"Updates{kind}_"
            if attr.startswith(prefix) and len(attr) > len(prefix):
                v = _number(ad, attr)
                if v is not None:
                    family(f"{metric}_by_type", "counter", help_text + " By ad type.").set(
                        v, collector=name, ad_type=attr[len(prefix):])
    ratio = _number(ad, "UpdatesLostRatio")
    if ratio is not None:
        family("htcd_collector_updates_lost_ratio", "gauge", "Fraction of updates lost.").set(ratio, collector=name)
    v = _number(ad, "DatagramsReceived")
    if v is not None:
        family("htcd_collector_datagrams_received", "counter", "UDP update datagrams received.").set(
            v, collector=name)
    for attr in ad:
        if attr.startswith("DatagramsDropped") and len(attr) > len("DatagramsDropped"):
            v = _number(ad, attr)
            if v is not None:
                family("htcd_collector_datagrams_dropped", "counter",
                       "UDP update datagrams dropped, by reason.").set(
                    v, collector=name, reason=attr[len("DatagramsDropped"):])
    for attr, metric, help_text in (
            ("DCUdpQueueDepth", "htcd_collector_udp_queue_depth_bytes",
             "Bytes of update datagrams waiting in the kernel's receive queue."),
            ("DCUdpQueueDepthPeak", "htcd_collector_udp_queue_depth_peak_bytes",
             "The most bytes seen waiting in the receive queue.")):
        v = _number(ad, attr)
        if v is not None:
            family(metric, "gauge", help_text, "bytes").set(v, collector=name)
    v = _number(ad, "ForwardsDropped")
    if v is not None:
        family("htcd_collector_forwards_dropped", "counter", "Updates not forwarded to CONDOR_VIEW_HOST.").set(
            v, collector=name)


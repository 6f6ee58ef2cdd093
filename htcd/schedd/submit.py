"""Submit at the schedd: RESERVE_CLUSTER hands out a cluster id, SUBMIT checks the cluster's ads
against the limits and the submit requirements, commits them (durable before the client hears),
writes the submit events and only then lets the jobs be seen and matched."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from htcd.classad import ClassAdSyntaxError, parse_expr, unparse
from htcd.pacer import Pacer
from htcd.schedd import limits, ownership, userlog
from htcd.schedd.factory import Factory
from htcd.schedd.jobs import HELD, IDLE, RUNNING, Cluster, Job
from htcd.schedd.local import ap_universe
from htcd.schedd.queue import JobId, insert_cluster, insert_factory
from htcd.submit.errors import SubmitError
from htcd.wire.errors import CommandError
from htcd.wire.server import Request, is_wire_ad

if TYPE_CHECKING:
    import sqlite3

    from htcd.schedd.daemon import Schedd

# Attributes a client may not set at submit: the schedd owns them.
PROTECTED = {"owner", "user", "clusterid", "procid", "jobstatus", "globaljobid"}
# and, for a factory, the materialization state the schedd keeps
FACTORY_OWNED = {"totalsubmitprocs", "jobmaterializenextprocid", "jobmaterializepaused", "jobmaterializepausereason"}


def _asks_hold(ad: dict[str, str]) -> bool:
    status = next((v for k, v in ad.items() if k.lower() == "jobstatus"), None)
    return status is not None and status.strip() == str(HELD)


async def validate(cluster_ad: dict[str, str], proc_ads: list[dict[str, str]], seen: set[str] | None = None) -> None:
    """Every expression must parse; each distinct text is parsed once (``seen``: the texts
    already parsed, shared by the clusters of one batch), and the loop is given a turn every few
    thousand procs so queries are answered while a large cluster is checked."""
    if seen is None:
        seen = set()
    pacer = Pacer()
    for i, ad in enumerate((cluster_ad, *proc_ads)):
        if i & 63 == 0 and pacer.due():
            await pacer.pause()
        for k, v in ad.items():
            if v in seen:
                continue
            try:
                parse_expr(v)
            except ClassAdSyntaxError as exc:
                raise CommandError(f"attribute {k} = {v}: {exc}", "BAD_AD") from None
            except TypeError:
                raise CommandError(f"attribute {k}: the value is not text", "BAD_AD") from None
            seen.add(v)


async def _all_wire_ads(ads: list[Any], pacer: Pacer, chunk: int = 1024) -> bool:
    """Whether every item is a ClassAd in wire form, checked a chunk at a time (100,000 ads take
    tens of milliseconds)."""
    for start in range(0, len(ads), chunk):
        if not all(map(is_wire_ad, ads[start:start + chunk])):
            return False
        await pacer.step()
    return True


@dataclass
class Prepared:
    """One cluster checked and built, waiting for its commit."""

    cid: int
    cluster_ad: dict[str, str]
    proc_ads: list[dict[str, str]]
    cluster: Cluster
    jobs: list[Job]
    room: int | None  # procs the cluster may have now (max_materialize / max_idle); None: all
    warnings: list[str]

    @property
    def now_count(self) -> int:
        return len(self.jobs) if self.room is None else min(self.room, len(self.jobs))


class Submits:
    def __init__(self, schedd: Schedd) -> None:
        self.schedd = schedd
        self.next_cluster = 1  # the queue file says where to go on (Schedd._load)
        self.reserved: dict[int, str] = {}
        self.submitting = 0  # procs of submits being committed (counted against the limits)

    async def cmd_reserve(self, req: Request) -> dict[str, int]:
        cid = self.next_cluster
        self.next_cluster += 1
        self.reserved[cid] = str(req.identity)
        return {"cluster_id": cid}

    async def cmd_submit(self, req: Request) -> dict[str, Any]:
        cid = req.arg_int("cluster_id", required=True)
        if self.reserved.get(cid) != str(req.identity):
            raise CommandError(f"cluster {cid} was not reserved by {req.identity}", "BAD_CLUSTER")
        cluster_ad = dict(req.arg_ad("cluster_ad", required=True) or {})  # (required: never None)
        if req.arg("digest") is not None:
            return await self._submit_factory(req, cid, cluster_ad)
        one = await self.prepare(req, cid, cluster_ad, req.require("proc_ads"))  # fresh from the wire: ours
        await self.commit([one])
        await self.admit([one], req)
        self.schedd.publish_soon()
        self.schedd.negotiation.reschedule()
        return {"cluster_id": cid, "procs": len(one.jobs), "warnings": one.warnings}

    async def prepare(self, req: Request, cid: Any, cluster_ad: Any, proc_ads: Any, *, adding: int = 0,
                      seen: set[str] | None = None) -> Prepared:
        """SUBMIT's checks of one cluster (reservation, ads, owner, limits, expressions, submit
        requirements) and its jobs, not yet committed.  SUBMIT and SUBMIT_CLUSTERS both come here;
        ``adding`` counts the procs of a batch's clusters accepted before this one, and ``seen``
        the expression texts a batch has already parsed (the nodes of a DAG share most of them)."""
        schedd = self.schedd
        if not isinstance(cid, int) or self.reserved.get(cid) != str(req.identity):
            raise CommandError(f"cluster {cid} was not reserved by {req.identity}", "BAD_CLUSTER")
        pacer = Pacer()
        if not isinstance(cluster_ad, dict) or not is_wire_ad(cluster_ad):
            raise CommandError(f"{req.command}: 'cluster_ad' must be a ClassAd (a map of attribute name to "
                               "expression text)", "BAD_REQUEST")
        if not isinstance(proc_ads, list) or not await _all_wire_ads(proc_ads, pacer):
            raise CommandError(f"{req.command}: argument 'proc_ads' must be a list of ClassAds (maps of attribute "
                               "name to expression text)", "BAD_REQUEST")
        if not proc_ads:
            raise CommandError("a submit needs at least one proc", "BAD_REQUEST")
        cluster_ad = dict(cluster_ad)
        try:
            user, user_at = ownership.submit_owner(schedd.config, req.identity, cluster_ad)
        except PermissionError as exc:
            raise CommandError(str(exc), "DENIED") from None
        limits.check_counts(schedd.config, len(proc_ads) + adding, len(schedd.jobs) + self.submitting,
                            schedd.counters.jobs(user))
        # ``hold = true`` in the submit file: the job starts held (the only status a client may ask for)
        on_hold = _asks_hold(cluster_ad)
        for i, ad in enumerate((cluster_ad, *proc_ads)):
            if i & 255 == 0 and pacer.due():
                await pacer.pause()
            held = i > 0 and _asks_hold(ad)
            for k in [k for k in ad if k.lower() in PROTECTED]:
                del ad[k]
            if held:
                ad["JobStatus"] = str(HELD)
        cluster_ad.update({"ClusterId": str(cid), "Owner": unparse(user), "User": unparse(user_at),
                           "JobStatus": str(HELD if on_hold else IDLE), "TotalSubmitProcs": str(len(proc_ads))})
        await validate(cluster_ad, proc_ads, seen)
        cluster = Cluster(cid, cluster_ad)
        jobs = []
        for i, p in enumerate(proc_ads):
            if i & 255 == 0 and pacer.due():
                await pacer.pause()
            jobs.append(Job(cluster, i, p))
        warnings = limits.check_requirements(schedd.config, schedd.make_ad(), (j.ad for j in jobs)) \
            if schedd.config.get("SUBMIT_REQUIREMENT_NAMES") or schedd.config.get("SUBMIT_WARNING_NAMES") else []
        # max_materialize / max_idle: the rest waits in the queue file
        return Prepared(cid, cluster_ad, proc_ads, cluster, jobs, cluster.materialize_room(), warnings)

    async def commit(self, ready: list[Prepared]) -> None:
        """The clusters' rows in one transaction, durable (with every job change before it) before
        anyone is answered; the commit runs in a thread so queries are served meanwhile."""
        adding = sum(len(r.jobs) for r in ready)

        def insert_all(cur: sqlite3.Cursor) -> None:
            for r in ready:
                insert_cluster(cur, r.cid, r.cluster_ad, r.proc_ads, None if r.room is None else r.now_count)

        self.submitting += adding
        try:
            await self.schedd.store.commit(insert_all)
        finally:
            self.submitting -= adding

    async def admit(self, ready: list[Prepared], req: Request, via: str = "") -> None:
        """After the commit: the clusters' submit events (a batch's together: one write per log),
        then their jobs seen and matchable."""
        shared: list[tuple[Cluster, list[Job], list[str]]] = []
        for r in ready:
            self.reserved.pop(r.cid, None)
            r.cluster.pending = len(r.jobs) - r.now_count
            if r.now_count:
                await self._submit_events(r.cluster, r.jobs[:r.now_count], shared)
        if shared:
            await asyncio.to_thread(self._write_submit_events, shared)
        for r in ready:  # only now can any of them be matched and run
            await self._register(r.cluster, r.jobs[:r.now_count], req, via)

    async def _submit_factory(self, req: Request, cid: int, cluster_ad: dict[str, str]) -> dict[str, Any]:
        """A late-materialization factory: the cluster ad, a submit digest and item data; the
        schedd builds the procs itself, the first ones now (as many as the limits allow)."""
        schedd = self.schedd
        if not schedd.config.get_bool("SCHEDD_ALLOW_LATE_MATERIALIZE", True):
            raise CommandError("this schedd does not accept late materialization (SCHEDD_ALLOW_LATE_MATERIALIZE "
                               "is false)", "NO_FACTORY")
        digest, items, total = req.arg("digest"), req.require("items"), req.arg_int("total", required=True)
        if not isinstance(digest, dict) or not isinstance(items, list) or not all(
                isinstance(r, dict) and all(isinstance(v, str) for v in r.values()) for r in items):
            raise CommandError("SUBMIT: a factory needs 'digest' (a map), 'items' (a list of maps of text) and "
                               "'total'", "BAD_REQUEST")
        if total is None or total <= 0:
            raise CommandError("a submit needs at least one proc", "BAD_REQUEST")
        count = digest.get("count")
        if not isinstance(count, int) or total != count * len(items):
            raise CommandError(f"SUBMIT: 'total' ({total}) is not the digest's count times its {len(items)} items",
                               "BAD_REQUEST")
        try:
            user, user_at = ownership.submit_owner(schedd.config, req.identity, cluster_ad)
        except PermissionError as exc:
            raise CommandError(str(exc), "DENIED") from None
        for k in [k for k in cluster_ad if k.lower() in PROTECTED | FACTORY_OWNED]:
            del cluster_ad[k]
        on_hold = _asks_hold(cluster_ad)
        cluster_ad.update({"ClusterId": str(cid), "Owner": unparse(user), "User": unparse(user_at),
                           "JobStatus": str(HELD if on_hold else IDLE), "TotalSubmitProcs": str(total),
                           "JobMaterializeNextProcId": "0"})
        await validate(cluster_ad, [])
        cluster = Cluster(cid, cluster_ad)
        cluster.factory = factory = Factory(cid, digest, items, 0, total)
        cluster.pending = total
        room = schedd.materializer.room(cluster)
        try:
            built = await asyncio.to_thread(factory.build, cluster_ad, room)
        except (SubmitError, LookupError, TypeError, ValueError) as exc:
            raise CommandError(f"the submit digest cannot build its procs: {exc}", "BAD_SUBMIT") from None
        jobs = [Job(cluster, p, own) for p, own in built]
        warnings = limits.check_requirements(schedd.config, schedd.make_ad(), (j.ad for j in jobs)) \
            if schedd.config.get("SUBMIT_REQUIREMENT_NAMES") or schedd.config.get("SUBMIT_WARNING_NAMES") else []
        cluster_ad["JobMaterializeNextProcId"] = str(len(built))
        self.submitting += len(jobs)
        try:
            await schedd.store.commit(lambda cur: insert_factory(cur, cid, cluster_ad, digest, items,
                                                                 [own for _, own in built]))
        finally:
            self.submitting -= len(jobs)
        self.reserved.pop(cid, None)
        factory.next_proc = len(built)
        cluster.pending = factory.left
        if not cluster.pending:
            cluster.factory = None
        shared: list[tuple[Cluster, list[Job], list[str]]] = []
        if jobs:
            await self._submit_events(cluster, jobs, shared)
            if shared:
                await asyncio.to_thread(self._write_submit_events, shared)
        await self._register(cluster, jobs, req)
        schedd.publish_soon()
        schedd.negotiation.reschedule()
        return {"cluster_id": cid, "procs": total, "warnings": warnings}

    async def _register(self, cluster: Cluster, jobs: list[Job], req: Request, via: str = "") -> None:
        """Let the jobs be seen and matched (all at once), their submit events written; the caller
        publishes and asks for a negotiation (once for a batch of clusters)."""
        schedd, cid = self.schedd, cluster.id
        pacer = Pacer()
        new: dict[JobId, Job] = {}
        statuses: Counter[int] = Counter()
        on_ap: list[Job] = []  # local and scheduler universe jobs, which the AP runs itself
        for i, job in enumerate(jobs):
            if i & 255 == 0 and pacer.due():
                await pacer.pause()
            new[job.id] = job
            statuses[job.status] += 1
            if ap_universe(job):
                on_ap.append(job)
        # all at once (no await from here): queries never see part of a cluster
        schedd.clusters[cid] = cluster
        schedd.jobs.update(new)
        cluster.live += len(new)
        cluster.idle += len(new) - statuses[RUNNING]
        for status, n in statuses.items():
            schedd.counters.add(cluster.owner, status, n)
        schedd.local.note(on_ap)
        schedd.log.info("submitted cluster %d: %d procs by %s%s%s", cid, len(jobs) + cluster.pending, req.identity,
                        f" ({cluster.pending} to be materialized later)" if cluster.pending else "",
                        f" (with {via})" if via else "")

    async def _submit_events(self, cluster: Cluster, jobs: list[Job],
                             together: list[tuple[Cluster, list[Job], list[str]]]) -> None:
        """The cluster's submit events.  When the log is a cluster attribute (no proc has a log or
        a directory of its own) the cluster joins ``together``, whose events the caller writes with
        ``_write_submit_events`` (one write per log from a worker thread, however many clusters);
        else each job's event is written now."""
        events = self.schedd.events
        host = str(self.schedd.server.address)
        now = time.time()
        pacer = Pacer()
        shared = True  # no proc has a log or a directory of its own
        for i, job in enumerate(jobs):
            if i & 255 == 0 and pacer.due():
                await pacer.pause()
            if any(k.lower() in ("userlog", "iwd") for k in job.proc):
                shared = False
                break
        if not shared:
            for i, job in enumerate(jobs):
                if i & 15 == 0 and pacer.due():
                    await pacer.pause()
                events.event(job, userlog.submit(cluster.id, job.proc_id, host, when=now,
                                                           **userlog.submit_notes(job.text, job.get)))
            return
        targets = events.targets(jobs[0])
        if targets:
            together.append((cluster, jobs, targets))

    def _write_submit_events(self, shared: list[tuple[Cluster, list[Job], list[str]]]) -> None:
        """(In a worker thread.)  The submit events of these clusters, one write per log."""
        events = self.schedd.events
        host = str(self.schedd.server.address)
        now = time.time()
        writes: dict[tuple[str, int | None, int | None], list[str]] = {}
        for cluster, jobs, targets in shared:
            text = "".join(events.with_information(j, userlog.submit(cluster.id, j.proc_id, host, when=now,
                                                                     **userlog.submit_notes(j.text, j.get)))
                           for j in jobs)
            events.collect(jobs[0], text, targets, writes)
        events.append_all(writes)

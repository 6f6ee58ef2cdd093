"""Several clusters submitted in one call and committed in one transaction (one fsync): a DAGMan
with many ready nodes submits each node's cluster this way instead of paying a durable commit
per node.  ``RESERVE_CLUSTERS {count}`` hands out that many cluster ids; ``SUBMIT_CLUSTERS
{clusters: [{cluster_id, cluster_ad, proc_ads}]}`` checks every cluster as SUBMIT does, commits
those that pass together, and answers for each in order: ``{cluster_id, procs, warnings}``, or
``{cluster_id, error, code}`` for one refused (the others are not affected)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from htcd.classad import unparse
from htcd.pacer import Pacer
from htcd.schedd import limits, ownership
from htcd.schedd.jobs import HELD, IDLE, Cluster, Job
from htcd.schedd.local import ap_universe
from htcd.schedd.queue import JobId, insert_cluster
from htcd.schedd.submit import PROTECTED, validate
from htcd.wire.errors import CommandError
from htcd.wire.server import Request, is_wire_ad

if TYPE_CHECKING:
    import sqlite3

    from htcd.schedd.submit import Submits

MAX_CLUSTERS = 1000  # per call: a reply stays small and the loop is not held long


@dataclass
class _Ready:
    """One cluster checked and built, waiting for the shared commit."""

    cid: int
    cluster_ad: dict[str, str]
    proc_ads: list[dict[str, str]]
    cluster: Cluster
    jobs: list[Job]
    room: int | None
    warnings: list[str]


async def cmd_reserve_clusters(submits: Submits, req: Request) -> dict[str, list[int]]:
    count = req.arg_int("count", required=True)
    if not 1 <= count <= MAX_CLUSTERS:
        raise CommandError(f"RESERVE_CLUSTERS: count must be 1 to {MAX_CLUSTERS}, not {count}", "BAD_REQUEST")
    ids = list(range(submits.next_cluster, submits.next_cluster + count))
    submits.next_cluster += count
    for cid in ids:
        submits.reserved[cid] = str(req.identity)
    return {"cluster_ids": ids}


async def cmd_submit_clusters(submits: Submits, req: Request) -> dict[str, list[dict[str, Any]]]:
    schedd = submits.schedd
    items = req.require("clusters")
    if not isinstance(items, list) or not items or len(items) > MAX_CLUSTERS:
        raise CommandError(f"SUBMIT_CLUSTERS: 'clusters' must be a list of 1 to {MAX_CLUSTERS} "
                           "{cluster_id, cluster_ad, proc_ads}", "BAD_REQUEST")
    answers: list[dict[str, Any]] = []
    ready: list[_Ready] = []
    adding = 0  # procs of this call's clusters accepted so far (counted against the limits)
    for item in items:
        cid = item.get("cluster_id") if isinstance(item, dict) else None
        try:
            one = await _prepare(submits, req, item, adding)
        except CommandError as exc:
            answers.append({"cluster_id": cid, "error": str(exc), "code": exc.code})
            continue
        adding += len(one.jobs)
        ready.append(one)
        answers.append({"cluster_id": one.cid})
    if ready:
        def insert_all(cur: sqlite3.Cursor) -> None:
            for r in ready:
                insert_cluster(cur, r.cid, r.cluster_ad, r.proc_ads,
                               None if r.room is None else min(r.room, len(r.jobs)))
        submits.submitting += adding
        try:
            await schedd.store.commit(insert_all)  # one transaction, durable before the answer
        finally:
            submits.submitting -= adding
    by_id = {r.cid: r for r in ready}
    for answer in answers:
        r = by_id.get(answer["cluster_id"]) if "error" not in answer else None
        if r is not None:
            procs = await _publish(submits, req, r)
            answer.update({"procs": procs, "warnings": r.warnings})
    if ready:
        schedd.publish_soon()
        schedd.negotiation.reschedule()
    return {"results": answers}


async def _prepare(submits: Submits, req: Request, item: Any, adding: int) -> _Ready:
    """SUBMIT's checks of one cluster (reservation, ads, owner, limits, requirements) and its jobs."""
    schedd = submits.schedd
    if not isinstance(item, dict):
        raise CommandError("each cluster is {cluster_id, cluster_ad, proc_ads}", "BAD_REQUEST")
    cid = item.get("cluster_id")
    if not isinstance(cid, int) or submits.reserved.get(cid) != str(req.identity):
        raise CommandError(f"cluster {cid} was not reserved by {req.identity}", "BAD_CLUSTER")
    cluster_ad, proc_ads = item.get("cluster_ad"), item.get("proc_ads")
    pacer = Pacer()
    if not isinstance(cluster_ad, dict) or not is_wire_ad(cluster_ad) or not isinstance(proc_ads, list) \
            or not await _wire_ads(proc_ads, pacer):
        raise CommandError("cluster_ad and proc_ads must be ClassAds (maps of attribute name to expression "
                           "text)", "BAD_REQUEST")
    if not proc_ads:
        raise CommandError("a submit needs at least one proc", "BAD_REQUEST")
    cluster_ad = dict(cluster_ad)
    try:
        user, user_at = ownership.submit_owner(schedd.config, req.identity, cluster_ad)
    except PermissionError as exc:
        raise CommandError(str(exc), "DENIED") from None
    limits.check_counts(schedd.config, len(proc_ads) + adding, len(schedd.jobs) + submits.submitting,
                        schedd.counters.jobs(user))
    on_hold = _asks_hold(cluster_ad)
    for i, ad in enumerate((cluster_ad, *proc_ads)):
        held = i > 0 and _asks_hold(ad)
        for k in [k for k in ad if k.lower() in PROTECTED]:
            del ad[k]
        if held:
            ad["JobStatus"] = str(HELD)
    cluster_ad.update({"ClusterId": str(cid), "Owner": unparse(user), "User": unparse(user_at),
                       "JobStatus": str(HELD if on_hold else IDLE), "TotalSubmitProcs": str(len(proc_ads))})
    await validate(cluster_ad, proc_ads)
    cluster = Cluster(cid, cluster_ad)
    jobs = [Job(cluster, i, p) for i, p in enumerate(proc_ads)]
    warnings = limits.check_requirements(schedd.config, schedd.make_ad(), (j.ad for j in jobs)) \
        if schedd.config.get("SUBMIT_REQUIREMENT_NAMES") or schedd.config.get("SUBMIT_WARNING_NAMES") else []
    return _Ready(cid, cluster_ad, proc_ads, cluster, jobs, cluster.materialize_room(), warnings)


def _asks_hold(ad: dict[str, str]) -> bool:
    """``hold = true``: the only JobStatus a client may ask for."""
    status = next((v for k, v in ad.items() if k.lower() == "jobstatus"), None)
    return status is not None and status.strip() == str(HELD)


async def _wire_ads(ads: list[Any], pacer: Pacer, chunk: int = 1024) -> bool:
    for start in range(0, len(ads), chunk):
        if not all(map(is_wire_ad, ads[start:start + chunk])):
            return False
        await pacer.step()
    return True


async def _publish(submits: Submits, req: Request, r: _Ready) -> int:
    """After the commit, as SUBMIT does: the submit events, then the jobs seen and matchable."""
    schedd = submits.schedd
    submits.reserved.pop(r.cid, None)
    now_count = len(r.jobs) if r.room is None else min(r.room, len(r.jobs))
    r.cluster.pending = len(r.jobs) - now_count
    jobs = r.jobs[:now_count]
    await submits._submit_events(r.cluster, jobs)  # before any job can be matched and run
    new: dict[JobId, Job] = {job.id: job for job in jobs}
    statuses: Counter[int] = Counter(job.status for job in jobs)
    schedd.clusters[r.cid] = r.cluster
    schedd.jobs.update(new)
    r.cluster.live += len(new)
    r.cluster.idle += statuses[IDLE]
    for status, n in statuses.items():
        schedd.counters.add(r.cluster.owner, status, n)
    schedd.local.note([job for job in jobs if ap_universe(job)])
    schedd.log.info("submitted cluster %d: %d procs by %s (with %s)", r.cid, len(r.jobs), req.identity,
                    "SUBMIT_CLUSTERS")
    return len(r.jobs)

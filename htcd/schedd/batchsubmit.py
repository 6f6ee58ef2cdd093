"""Several clusters submitted in one call and committed in one transaction (one fsync): a DAGMan
with many ready nodes submits each node's cluster this way instead of paying a durable commit
per node.  ``RESERVE_CLUSTERS {count}`` hands out that many cluster ids; ``SUBMIT_CLUSTERS
{clusters: [{cluster_id, cluster_ad, proc_ads}]}`` checks every cluster as SUBMIT does, commits
those that pass together, and answers for each in order: ``{cluster_id, procs, warnings}``, or
``{cluster_id, error, code}`` for one refused (the others are not affected)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from htcd.wire.errors import CommandError
from htcd.wire.server import Request

if TYPE_CHECKING:
    from htcd.schedd.submit import Prepared, Submits

MAX_CLUSTERS = 1000  # per call: a reply stays small and the loop is not held long


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
    """Each cluster through SUBMIT's own checks (``Submits.prepare``), the expressions the
    clusters share parsed once; those that pass committed together."""
    schedd = submits.schedd
    items = req.require("clusters")
    if not isinstance(items, list) or not items or len(items) > MAX_CLUSTERS:
        raise CommandError(f"SUBMIT_CLUSTERS: 'clusters' must be a list of 1 to {MAX_CLUSTERS} "
                           "{cluster_id, cluster_ad, proc_ads}", "BAD_REQUEST")
    answers: list[dict[str, Any]] = []
    ready: list[Prepared] = []
    adding = 0  # procs of this call's clusters accepted so far (counted against the limits)
    seen: set[str] = set()
    for item in items:
        cid = item.get("cluster_id") if isinstance(item, dict) else None
        try:
            if not isinstance(item, dict):
                raise CommandError("each cluster is {cluster_id, cluster_ad, proc_ads}", "BAD_REQUEST")
            one = await submits.prepare(req, cid, item.get("cluster_ad"), item.get("proc_ads"), adding=adding,
                                        seen=seen)
        except CommandError as exc:
            answers.append({"cluster_id": cid, "error": str(exc), "code": exc.code})
            continue
        adding += len(one.jobs)
        ready.append(one)
        answers.append({"cluster_id": one.cid})
    if ready:
        await submits.commit(ready)  # one transaction, durable before the answer
        await submits.admit(ready, req, "SUBMIT_CLUSTERS")
    by_id = {r.cid: r for r in ready}
    for answer in answers:
        r = by_id.get(answer["cluster_id"]) if "error" not in answer else None
        if r is not None:
            answer.update({"procs": len(r.jobs), "warnings": r.warnings})
    if ready:
        schedd.publish_soon()
        schedd.negotiation.reschedule()
    return {"results": answers}

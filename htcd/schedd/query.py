"""Answering QUERY_JOBS: totals from the counters, projections straight from wire text, and
results streamed in chunks so the event loop keeps serving while a large answer goes out.

Every walk over the queue is paced (``htcd.daemon.stats.Pacer``): it gives the loop a turn every
few milliseconds, so a query over 100,000 jobs never holds the schedd for long.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from htcd.classad import ClassAd, ClassAdSyntaxError, Expr, is_true, parse_expr
from htcd.pacer import Pacer
from htcd.wire.errors import CommandError
from htcd.wire.server import Request

if TYPE_CHECKING:
    from htcd.schedd.jobs import Job

CHUNK = 2000  # job ads per streamed part
# Private attributes (HTCondor's): a running job's claim secret is never in an answer, and a
# constraint cannot look at it.
PRIVATE = ("ClaimId",)


def has_private(job: Job) -> bool:
    return any(k in job.proc for k in PRIVATE)


def public_ad(job: Job) -> ClassAd:
    """The job's ad as queries see it: without its private attributes."""
    ad = job.ad
    if has_private(job):
        for k in PRIVATE:
            if k in ad:
                del ad[k]
    return ad


def strip_private(wire: dict[str, str]) -> dict[str, str]:
    for k in [k for k in wire if k.lower() in _PRIVATE_LOWER]:
        del wire[k]
    return wire


_PRIVATE_LOWER = {k.lower() for k in PRIVATE}


def parse_constraint(text: Any) -> Expr | None:
    try:
        return parse_expr(str(text)) if text else None
    except ClassAdSyntaxError as exc:
        raise CommandError(f"bad constraint: {exc}", "BAD_CONSTRAINT") from None


def selected(jobs: list[Job], constraint: Expr | None) -> Any:
    """Jobs satisfying the constraint (evaluated on each job's view, never a stored full ad)."""
    if constraint is None or is_everything(constraint):
        yield from jobs
        return
    for job in jobs:
        if is_true(constraint.eval(public_ad(job))):
            yield job


def is_everything(constraint: Expr) -> bool:
    """``true`` (what ``-all`` sends): no need to build a view of each job to know."""
    return constraint.is_literal() and constraint.eval() is True


async def select(jobs: list[Job], constraint: Expr | None, pacer: Pacer | None = None) -> list[Job]:
    """``selected`` as a list, giving the event loop a turn whenever the pacer says so."""
    if constraint is None or is_everything(constraint):
        return list(jobs)
    pacer = pacer or Pacer()
    out = []
    for i, job in enumerate(jobs):
        if i & 63 == 0 and pacer.due():
            await pacer.pause()
        if is_true(constraint.eval(public_ad(job))):
            out.append(job)
    return out


AUTOCLUSTER_ATTRS = {"autoclusterid", "autoclusterattrs"}


async def stream_jobs(req: Request, jobs: list[Job], constraint: Expr | None,
                      computed: Callable[[Job], dict[str, str]]) -> list[dict[str, str]]:
    """Stream the selected jobs; ``computed`` gives the attributes the schedd derives (autocluster)
    for a job, added when the client asks for them or for whole ads."""
    projection = req.arg_list("projection", str)
    add = not projection or any(p.lower() in AUTOCLUSTER_ATTRS for p in projection)
    limit = req.arg_int("limit", 0)
    chunk: list[dict[str, str]] = []
    n = 0
    wanted: dict[int, list[str]] = {}  # per cluster: the projection plus what its expressions reference
    pacer = Pacer()
    test = None if constraint is None or is_everything(constraint) else constraint
    for i, job in enumerate(jobs):
        if i & 63 == 0 and pacer.due():
            await pacer.pause()
        if test is not None and not is_true(test.eval(public_ad(job))):
            continue
        if projection:
            names = wanted.get(job.cluster_id)
            if names is None:
                names = wanted[job.cluster_id] = with_references(job, projection)
            wire = job.project(names)
        else:
            wire = job.wire()
        if add:
            wire.update(computed(job))
        if has_private(job):
            strip_private(wire)
        chunk.append(wire)
        n += 1
        if limit and n >= limit:
            break
        if len(chunk) >= CHUNK:
            await req.send_partial(chunk)
            chunk = []
            await pacer.pause()  # drain() does not yield while the client keeps up
    return chunk


def with_references(job: Job, names: list[str]) -> list[str]:
    """The names, then every attribute their expressions reference (transitively), so a projected
    ad evaluates them as the whole ad would."""
    from htcd.schedd.autocluster import references

    out = list(names)
    seen = {n.lower() for n in names}
    todo = list(names)
    while todo:
        text = job.text(todo.pop())
        if text is None:
            continue
        try:
            e = parse_expr(text)
        except ClassAdSyntaxError:
            continue
        if e.is_literal():
            continue
        for ref in references(e)[0]:
            if ref not in seen and job.text(ref) is not None:
                seen.add(ref)
                out.append(ref)
                todo.append(ref)
    return out


async def totals(jobs: list[Job], constraint: Expr | None) -> dict[str, int]:
    out: dict[str, int] = {}
    for job in await select(jobs, constraint):
        key = str(job.status)
        out[key] = out.get(key, 0) + 1
    return out

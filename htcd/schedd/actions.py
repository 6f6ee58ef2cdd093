"""What clients ask of the queue once jobs are in it: queries (``htcd q``), and the actions on
chosen jobs -- remove, hold, release (``htcd rm/hold/release``), attribute edits (``htcd qedit``)
and vacating (``htcd vacate_job``) -- each allowed to the jobs' owner or a queue superuser."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from htcd.classad import is_true
from htcd.pacer import Pacer
from htcd.schedd import holdcodes, ownership, query, userlog
from htcd.schedd.attrcheck import check_edit
from htcd.schedd.events import EventBatch
from htcd.schedd.factory import HELD_BY_USER
from htcd.schedd.jobs import COMPLETED, HELD, IDLE, REMOVED, RUNNING, Cluster, Job, has_accounting_group
from htcd.schedd.local import LocalShadow
from htcd.schedd.queue import JobId, update_procs
from htcd.schedd.shadow import Shadow
from htcd.wire.errors import CommandError
from htcd.wire.server import Request

if TYPE_CHECKING:
    from htcd.schedd.daemon import Schedd

FLUSH_EVERY = 20000  # events one command collects before they are written


class JobActions:
    def __init__(self, schedd: Schedd) -> None:
        self.schedd = schedd

    # -- queries -----------------------------------------------------------------------------
    def _jobs_for(self, req: Request) -> list[Job]:
        """The jobs a query looks at: one owner's or one cluster's when the client says so."""
        cluster = req.arg_int("cluster")
        if cluster is not None:
            return [j for j in self.schedd.jobs.values() if j.cluster_id == cluster]
        return list(self.schedd.jobs.values())

    async def cmd_query(self, req: Request) -> Any:
        schedd = self.schedd
        constraint = query.parse_constraint(req.arg_str("constraint"))
        # a job this answer no longer shows is in the history already (as in HTCondor, whose
        # schedd writes the record as the job leaves): `htcd q` then `htcd history` never misses it
        await schedd.store.departures_recorded()
        if req.arg_bool("totals"):
            everyone = schedd.counters.of()
            owner = req.arg_str("owner")
            if owner is not None and constraint is None:
                mine = schedd.counters.of(owner)
            else:
                mine = everyone if constraint is None else await query.totals(self._jobs_for(req), constraint)
            return {"query": mine, "all": everyone}
        if req.arg_bool("autoclusters"):
            return schedd.autoclusters.summary(list(schedd.jobs.values()), constraint)
        return await query.stream_jobs(req, self._jobs_for(req), constraint, schedd.autoclusters.attributes)

    async def select(self, req: Request) -> list[Job]:
        """The jobs a command names: by id (``cluster`` or ``cluster.proc``) and by constraint."""
        jobs = self.schedd.jobs
        ids = req.arg_list("ids", (str, int))
        constraint = req.arg_str("constraint")
        chosen: list[Job] = []
        for text in ids:
            c, _, p = str(text).partition(".")
            try:
                if p:
                    job = jobs.get((int(c), int(p)))
                    chosen += [job] if job else []
                else:
                    chosen += [j for j in jobs.values() if j.cluster_id == int(c)]
            except ValueError:
                raise CommandError(f"bad job id {text!r}", "BAD_REQUEST") from None
        if constraint:
            matching = await query.select(list(jobs.values()), query.parse_constraint(constraint))
            if not chosen:
                return matching
            chosen += matching
        seen: set[JobId] = set()
        unique = []
        for j in chosen:
            if j.id not in seen:
                seen.add(j.id)
                unique.append(j)
        return unique

    def may_act(self, req: Request, job: Job) -> bool:
        return self.may_act_for(req, job.owner, job.cluster)

    def may_act_for(self, req: Request, owner: str, cluster: Cluster | None = None) -> bool:
        """The owner of the jobs (same user@domain), a queue superuser, or anyone when
        QUEUE_ALL_USERS_TRUSTED (htcd/schedd/ownership.py)."""
        return ownership.may_act(self.schedd.config, req.identity, owner,
                                 ownership.cluster_user(cluster) if cluster is not None else None)

    # -- actions -----------------------------------------------------------------------------
    async def cmd_act(self, req: Request) -> dict[str, Any]:
        schedd = self.schedd
        action = req.arg_str("action", required=True).lower()
        acts: dict[str, Callable[[Job, str], str]] = {"remove": self.remove, "hold": self.hold,
                                                       "release": self.release}
        act = acts.get(action)
        if act is None:
            raise CommandError(f"unknown action {action!r}", "BAD_REQUEST")
        reason = req.arg_str("reason") or f"via htcd {action} (by user {req.identity.user})"
        results: dict[str, str] = {}
        selected = await self.select(req)
        if action == "remove":
            # removing a cluster by id, or every job it has in the queue, removes the procs it
            # has yet to materialize too
            named = {int(str(t)) for t in req.arg("ids") or [] if str(t).isdigit()}
            pending = any(c.pending for c in schedd.clusters.values())
            taken = Counter(j.cluster_id for j in selected if self.may_act(req, j)) if pending else Counter()
            for cid, cluster in list(schedd.clusters.items()):
                if cluster.pending and (cid in named or 0 < cluster.live <= taken[cid]) \
                        and self.may_act_for(req, cluster.owner, cluster):
                    schedd.materializer.cancel(cluster)
                    results[f"{cid}.*"] = "unmaterialized procs removed"
        elif action in ("hold", "release"):
            # condor_hold of a factory's cluster (by id, or by a constraint its cluster ad matches, as
            # `condor_hold 12` sends "ClusterId == 12") pauses its materialization
            # (JobMaterializePaused = 1); condor_release resumes it, as HTCondor
            named = {int(str(t)) for t in req.arg("ids") or [] if str(t).isdigit()}
            expr = query.parse_constraint(req.arg_str("constraint"))
            for factory_cluster in list(schedd.clusters.values()):
                if factory_cluster.factory is None or not (
                        factory_cluster.id in named
                        or (expr is not None and is_true(expr.eval(factory_cluster.ad)))) \
                        or not self.may_act_for(req, factory_cluster.owner, factory_cluster):
                    continue
                if action == "hold":
                    schedd.materializer.pause(factory_cluster, HELD_BY_USER, reason)
                else:
                    schedd.materializer.resume(factory_cluster)
                results[f"{factory_cluster.id}.*"] = f"materialization {'paused' if action == 'hold' else 'resumed'}"
        allowed: dict[int, bool] = {}  # cluster -> may the caller act on its jobs
        pacer = Pacer()
        events = schedd.events
        batch = events.batch = EventBatch()  # queue, event-log and history writes: together, off the loop
        try:
            for i, job in enumerate(selected):
                if i & 15 == 0 and pacer.due():
                    events.batch = None  # other work may run now: it writes for itself
                    if len(batch) >= FLUSH_EVERY:
                        await events.flush(batch)
                        batch = EventBatch()
                    await pacer.pause()
                    events.batch = batch
                if job.id not in schedd.jobs:  # gone while the loop had a turn
                    continue
                ok = allowed.get(job.cluster_id)
                if ok is None:
                    ok = allowed[job.cluster_id] = self.may_act(req, job)
                if not ok:
                    results[job.id_text] = f"denied: {req.identity} is not the owner ({job.owner}) or a queue superuser"
                    continue
                results[job.id_text] = act(job, reason)
        finally:
            events.batch = None
            await events.flush(batch)
        if not results:
            raise CommandError("no jobs matched", "NO_MATCH")
        schedd.publish_soon()
        return {"results": results}

    async def cmd_set_attributes(self, req: Request) -> dict[str, Any]:
        """qedit: set attributes of the selected jobs, all in one transaction."""
        attrs = dict(req.arg_ad("attrs", required=True) or {})  # (required: never None)
        for k, v in attrs.items():
            why = check_edit(k, v)
            if why:
                raise CommandError(why, "BAD_REQUEST")
        jobs = await self.select(req)
        if not jobs:
            raise CommandError("no jobs matched", "NO_MATCH")
        denied = [j.id_text for j in jobs if not self.may_act(req, j)]
        if denied:
            raise CommandError(f"{req.identity} may not edit job {denied[0]}", "DENIED")
        changed = {j.id: {**j.proc, **attrs} for j in jobs}
        await self.schedd.store.commit(lambda cur: update_procs(cur, changed))  # with the pending changes, off the loop
        for j in jobs:
            j.proc.update(attrs)  # (a change made meanwhile, pending, is kept and commits with these)
            j.cluster.proc_groups |= has_accounting_group(attrs)  # it negotiates as its group now
            j.cluster.proc_prios |= any(k.lower() == "jobprio" for k in attrs)  # condor_prio
        return {"jobs": len(jobs)}

    async def cmd_vacate_jobs(self, req: Request) -> dict[str, Any]:
        """``htcd vacate_job``: running jobs leave their execute points and go back to idle (their
        claims are released); graceful (KillSig, then killed after the vacate time) or ``fast``."""
        schedd = self.schedd
        fast = req.arg_bool("fast")
        reason = str(req.arg_str("reason") or f"via htcd vacate_job{' -fast' if fast else ''} (by user "
                     f"{req.identity.user})")
        results: dict[str, str] = {}
        for job in await self.select(req):
            if not self.may_act(req, job):
                results[job.id_text] = f"denied: {req.identity} is not the owner ({job.owner}) or a queue superuser"
                continue
            shadow = schedd.shadows.get(job.id)
            if job.status != RUNNING or not isinstance(shadow, Shadow) or not shadow.running:
                results[job.id_text] = "not running"
                continue
            schedd.log.info("job %s: vacating (%s)", job.id_text, reason)
            schedd.spawn(shadow.kill(graceful=not fast, evict=reason), f"vacate {job.id_text}")
            results[job.id_text] = "fast-vacated" if fast else "vacated"
        if not results:
            raise CommandError("no jobs matched", "NO_MATCH")
        return {"results": results}

    def remove(self, job: Job, reason: str) -> str:
        schedd = self.schedd
        if job.status == REMOVED and not job.removing:
            return "already removed"
        shadow = schedd.shadows.get(job.id)
        if shadow is not None:
            job.removing = True
            holdcodes.keep_as_last(job, holdcodes.HOLD_REASON)
            schedd.set_status(job, REMOVED, RemoveReason=reason)
            schedd.store.persist(job)
            # WantGracefulRemoval: the soft kill and the vacate time, as for an eviction; else SIGKILL
            graceful = job.text("WantGracefulRemoval") is not None and job.get("WantGracefulRemoval") is True
            schedd.spawn(shadow.kill(graceful=graceful) if isinstance(shadow, Shadow)
                         else shadow.kill("remove") if isinstance(shadow, LocalShadow) else shadow.kill(),
                         f"kill {job.id_text}")
            return "removing"
        holdcodes.keep_as_last(job, holdcodes.HOLD_REASON)
        schedd.set_status(job, REMOVED, RemoveReason=reason)
        schedd.store.persist(job)
        schedd.events.event(job, userlog.aborted(job.cluster_id, job.proc_id, reason))
        schedd.leave_queue(job)
        return "removed"

    def hold(self, job: Job, reason: str, code: int = 1) -> str:
        schedd = self.schedd
        if job.status in (HELD, REMOVED, COMPLETED):
            return f"not held: status {job.status}"
        shadow = schedd.shadows.get(job.id)
        if shadow is not None:
            schedd.spawn(shadow.kill("hold") if isinstance(shadow, LocalShadow) else shadow.kill(),
                         f"kill {job.id_text}")
        schedd.lifecycle.hold(job, reason, code=code)
        return "held"

    def release(self, job: Job, reason: str) -> str:
        schedd = self.schedd
        if job.status != HELD:
            return "not held"
        holdcodes.keep_as_last(job, holdcodes.HOLD_REASON)
        schedd.set_status(job, IDLE, ReleaseReason=reason)
        schedd.store.persist(job)
        schedd.events.event(job, userlog.released(job.cluster_id, job.proc_id, reason))
        schedd.negotiation.reschedule()
        return "released"

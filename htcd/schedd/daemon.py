"""The schedd daemon: the job queue as a database, shadows, submitter ads, negotiation."""

from __future__ import annotations

import asyncio
import contextlib
import os
import pwd
import time
from collections import Counter
from typing import Any

from htcd.classad import ClassAd, ClassAdSyntaxError, is_true, parse_expr, unparse
from htcd.daemon import Daemon
from htcd.errors import UserError
from htcd.schedd import history, userlog
from htcd.schedd.jobs import COMPLETED, HELD, IDLE, REMOVED, RUNNING, Job
from htcd.schedd.queue import JobId, JobQueue
from htcd.schedd.shadow import Shadow, fits
from htcd.wire.client import acall
from htcd.wire.errors import CommandError, WireError
from htcd.wire.server import Handler, Request

# Attributes a client may not set at submit: the schedd owns them.
PROTECTED = {"owner", "user", "clusterid", "procid", "jobstatus", "globaljobid"}


class Schedd(Daemon):
    subsystem = "SCHEDD"
    ad_type = "Scheduler"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.shadow_log = self.open_log("SHADOW")
        spool = self.config.get("SPOOL") or "."
        path = self.config.get("JOB_QUEUE_LOG") or os.path.join(spool, "job_queue.log")
        self.queue = JobQueue(path)
        self.jobs: dict[JobId, Job] = {}
        self.clusters: dict[int, dict[str, str]] = {}
        self.next_cluster = 1
        self.reserved: dict[int, str] = {}
        self.shadows: dict[JobId, Shadow] = {}
        self.shadow_tasks: set[asyncio.Task[Any]] = set()
        self._reschedule: asyncio.Task[None] | None = None
        self._owners_seen: set[str] = set()
        self._load()

    def default_name(self) -> str:
        return self.config.get("SCHEDD_NAME") or self.hostname

    def command_handlers(self) -> dict[str, Handler]:
        return {"RESERVE_CLUSTER": self.cmd_reserve, "SUBMIT": self.cmd_submit, "QUERY_JOBS": self.cmd_query,
                "ACT_ON_JOBS": self.cmd_act, "NEGOTIATE": self.cmd_negotiate, "MATCHES": self.cmd_matches}

    # -- the queue in memory ---------------------------------------------------------------
    def _load(self) -> None:
        clusters, procs, self.next_cluster = self.queue.load()
        self.clusters = clusters
        requeued: dict[JobId, dict[str, str]] = {}
        for (c, p), proc in procs.items():
            job = Job(c, p, clusters.get(c, {}), proc)
            self.jobs[job.id] = job
            if job.status == RUNNING:  # its shadow died with the old schedd
                job.set(JobStatus=IDLE, LastJobStatus=RUNNING, EnteredCurrentStatus=int(time.time()))
                requeued[job.id] = job.proc
        if requeued:
            self.queue.set_proc_ads(requeued)
        self.log.info("job queue %s: %d clusters, %d jobs (%d were running, now idle)",
                      self.queue.path, len(clusters), len(self.jobs), len(requeued))

    def _persist(self, *jobs: Job) -> None:
        self.queue.set_proc_ads({j.id: j.proc for j in jobs})

    def _set_status(self, job: Job, status: int, **attrs: Any) -> None:
        job.set(LastJobStatus=job.status, JobStatus=status, EnteredCurrentStatus=int(time.time()), **attrs)

    def _owner_ids(self, owner: str) -> tuple[int | None, int | None]:
        with contextlib.suppress(KeyError):
            pw = pwd.getpwnam(owner)
            return pw.pw_uid, pw.pw_gid
        return None, None

    def _event(self, job: Job, text: str) -> None:
        path = job.get("UserLog")
        targets = [p for p in (path if isinstance(path, str) else None, self.config.get("EVENT_LOG")) if p]
        for target in targets:
            full = target if os.path.isabs(target) else os.path.join(str(job.get("Iwd", "")), target)
            try:
                userlog.append(full, text, *self._owner_ids(job.owner))
            except OSError as exc:
                self.log.error("job %s: cannot write event log %s: %s", job.id_text, full, exc)

    def write_as_owner(self, job: Job, path: str, data: bytes) -> None:
        uid, gid = self._owner_ids(job.owner)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            if os.geteuid() == 0 and uid is not None:
                os.fchown(fd, uid, gid if gid is not None else -1)
            os.write(fd, data)
        finally:
            os.close(fd)

    def _leave_queue(self, job: Job) -> None:
        self.queue.delete([job.id])
        self.jobs.pop(job.id, None)
        if not any(c == job.cluster_id for c, _ in self.jobs):
            self.clusters.pop(job.cluster_id, None)
        with contextlib.suppress(OSError):
            history.append(self.config.get("HISTORY"), job.ad)
        self.publish_soon()

    # -- submit ----------------------------------------------------------------------------
    async def cmd_reserve(self, req: Request) -> dict[str, int]:
        cid = self.next_cluster
        self.next_cluster += 1
        self.reserved[cid] = str(req.identity)
        return {"cluster_id": cid}

    async def cmd_submit(self, req: Request) -> dict[str, Any]:
        cid = int(req.require("cluster_id"))
        if self.reserved.get(cid) != str(req.identity):
            raise CommandError(f"cluster {cid} was not reserved by {req.identity}", "BAD_CLUSTER")
        cluster_ad = dict(req.require("cluster_ad"))
        proc_ads = [dict(p) for p in req.require("proc_ads")]
        if not proc_ads:
            raise CommandError("a submit needs at least one proc", "BAD_REQUEST")
        for ad in (cluster_ad, *proc_ads):
            for k in [k for k in ad if k.lower() in PROTECTED]:
                del ad[k]
        user = req.identity.user
        cluster_ad.update({"ClusterId": str(cid), "Owner": unparse(user), "User": unparse(str(req.identity)),
                           "JobStatus": str(IDLE)})
        for i, p in enumerate(proc_ads):
            p["ProcId"] = str(i)
        for ad in (cluster_ad, *proc_ads):
            for k, v in ad.items():
                try:
                    parse_expr(v)
                except ClassAdSyntaxError as exc:
                    raise CommandError(f"attribute {k} = {v}: {exc}", "BAD_AD") from None
        self.queue.submit(cid, cluster_ad, proc_ads)  # durable before we answer
        del self.reserved[cid]
        self.clusters[cid] = cluster_ad
        host = str(self.server.address)
        now = time.time()
        for p in proc_ads:
            job = Job(cid, int(p["ProcId"]), cluster_ad, p)
            self.jobs[job.id] = job
            self._event(job, userlog.submit(cid, job.proc_id, host, when=now))
        self.log.info("submitted cluster %d: %d procs by %s", cid, len(proc_ads), req.identity)
        self.publish_soon()
        self.reschedule()
        return {"cluster_id": cid, "procs": len(proc_ads)}

    # -- queries and actions ---------------------------------------------------------------
    async def cmd_query(self, req: Request) -> list[dict[str, str]]:
        text = req.arg("constraint")
        try:
            constraint = parse_expr(str(text)) if text else None
        except ClassAdSyntaxError as exc:
            raise CommandError(f"bad constraint: {exc}", "BAD_CONSTRAINT") from None
        projection = {p.lower() for p in req.arg("projection") or []}
        limit = int(req.arg("limit") or 0)
        out: list[dict[str, str]] = []
        for job in list(self.jobs.values()):
            if constraint is not None and not is_true(constraint.eval(job.ad)):
                continue
            wire = job.wire()
            out.append({k: v for k, v in wire.items() if k.lower() in projection} if projection else wire)
            if limit and len(out) >= limit:
                break
        return out

    def _select(self, req: Request) -> list[Job]:
        ids = req.arg("ids") or []
        constraint = req.arg("constraint")
        chosen: list[Job] = []
        for text in ids:
            c, _, p = str(text).partition(".")
            try:
                if p:
                    job = self.jobs.get((int(c), int(p)))
                    chosen += [job] if job else []
                else:
                    chosen += [j for j in self.jobs.values() if j.cluster_id == int(c)]
            except ValueError:
                raise CommandError(f"bad job id {text!r}", "BAD_REQUEST") from None
        if constraint:
            try:
                expr = parse_expr(str(constraint))
            except ClassAdSyntaxError as exc:
                raise CommandError(f"bad constraint: {exc}", "BAD_CONSTRAINT") from None
            chosen += [j for j in self.jobs.values() if is_true(expr.eval(j.ad))]
        seen: set[JobId] = set()
        return [j for j in chosen if not (j.id in seen or seen.add(j.id))]  # type: ignore[func-returns-value]

    def _may_act(self, req: Request, job: Job) -> bool:
        supers = {s.lower() for s in self.config.get_list("QUEUE_SUPER_USERS", ["root", "condor"])}
        if req.identity.uid in (0, os.geteuid()) or req.identity.user.lower() in supers:
            return True
        return job.owner == req.identity.user

    async def cmd_act(self, req: Request) -> dict[str, Any]:
        action = str(req.require("action")).lower()
        if action not in ("remove", "hold", "release"):
            raise CommandError(f"unknown action {action!r}", "BAD_REQUEST")
        reason = str(req.arg("reason") or f"via htcd {action} (by user {req.identity.user})")
        results: dict[str, str] = {}
        for job in self._select(req):
            if not self._may_act(req, job):
                results[job.id_text] = f"denied: {req.identity} is not the owner ({job.owner}) or a queue superuser"
                continue
            results[job.id_text] = getattr(self, f"_{action}")(job, reason)
        if not results:
            raise CommandError("no jobs matched", "NO_MATCH")
        self.publish_soon()
        return {"results": results}

    def _remove(self, job: Job, reason: str) -> str:
        if job.status == REMOVED and not job.removing:
            return "already removed"
        if job.id in self.shadows:
            job.removing = True
            self._set_status(job, REMOVED, RemoveReason=reason)
            self._persist(job)
            self.spawn(self.shadows[job.id].kill(), f"kill {job.id_text}")
            return "removing"
        self._set_status(job, REMOVED, RemoveReason=reason)
        self._persist(job)
        self._event(job, userlog.aborted(job.cluster_id, job.proc_id, reason))
        self._leave_queue(job)
        return "removed"

    def _hold(self, job: Job, reason: str) -> str:
        if job.status in (HELD, REMOVED, COMPLETED):
            return f"not held: status {job.status}"
        if job.id in self.shadows:
            self.spawn(self.shadows[job.id].kill(), f"kill {job.id_text}")
        self.hold(job, reason, code=1)
        return "held"

    def _release(self, job: Job, reason: str) -> str:
        if job.status != HELD:
            return "not held"
        self._set_status(job, IDLE, ReleaseReason=reason)
        job.proc.pop("HoldReason", None)
        self._persist(job)
        self._event(job, userlog.released(job.cluster_id, job.proc_id, reason))
        self.reschedule()
        return "released"

    # -- job lifecycle, called by shadows ---------------------------------------------------
    def hold(self, job: Job, reason: str, code: int = 0) -> None:
        self._set_status(job, HELD, HoldReason=reason, HoldReasonCode=code)
        self._persist(job)
        job.matched = False
        self._event(job, userlog.held(job.cluster_id, job.proc_id, reason, code))
        self.log.info("job %s held: %s", job.id_text, reason)
        self.publish_soon()

    def job_started(self, job: Job, slot_ad: ClassAd, shadow: Shadow) -> None:
        now = int(time.time())
        self.shadows[job.id] = shadow
        self._set_status(job, RUNNING, JobStartDate=job.get("JobStartDate") or now, JobCurrentStartDate=now,
                         NumJobStarts=int(job.get("NumJobStarts", 0) or 0) + 1,
                         RemoteHost=str(slot_ad.get_value("Name", "")), StartdIpAddr=shadow.startd)
        self._persist(job)
        self._event(job, userlog.execute(job.cluster_id, job.proc_id, shadow.startd,
                                         str(slot_ad.get_value("Name", ""))))
        self.publish_soon()

    def job_exited(self, job: Job, result: dict[str, Any], bytes_received: int, bytes_sent: int) -> None:
        self.shadows.pop(job.id, None)
        now = int(time.time())
        sig = result.get("signal")
        attrs: dict[str, Any] = {"CompletionDate": now, "ExitBySignal": sig is not None,
                                 "RemoteUserCpu": float(result.get("user_cpu") or 0.0),
                                 "RemoteSysCpu": float(result.get("sys_cpu") or 0.0),
                                 "ResidentSetSize": int(result.get("max_rss_kb") or 0),
                                 "RemoteWallClockTime": float(now - int(job.get("JobCurrentStartDate", now) or now))}
        if sig is None:
            attrs["ExitCode"] = int(result.get("exit_code") or 0)
        else:
            attrs["ExitSignal"] = int(sig)
        self._set_status(job, COMPLETED, **attrs)
        self._persist(job)
        self._event(job, userlog.terminated(job.cluster_id, job.proc_id, exit_code=result.get("exit_code"),
                                            signal=sig, user_cpu=attrs["RemoteUserCpu"],
                                            sys_cpu=attrs["RemoteSysCpu"], sent=bytes_sent,
                                            received=bytes_received))
        self.log.info("job %s completed: %s", job.id_text, f"signal {sig}" if sig is not None
                      else f"exit code {attrs['ExitCode']}")
        self._leave_queue(job)

    def finish_removal(self, job: Job) -> None:
        self.shadows.pop(job.id, None)
        self._event(job, userlog.aborted(job.cluster_id, job.proc_id, str(job.get("RemoveReason", ""))))
        self._leave_queue(job)

    def job_lost(self, job: Job, why: str) -> None:
        """The claim broke under a running job: back to idle, or finish a pending removal."""
        self.shadows.pop(job.id, None)
        job.matched = False
        if job.removing:
            self.finish_removal(job)
            return
        if job.status == RUNNING:
            self._set_status(job, IDLE, LastVacateTime=int(time.time()))
            self._persist(job)
            self._event(job, userlog.evicted(job.cluster_id, job.proc_id, why))
        self.reschedule()

    def job_vacated(self, job: Job) -> None:
        """The job was stopped by a hold while running; it stays held."""
        self.shadows.pop(job.id, None)
        job.matched = False

    def unmatch(self, job: Job) -> None:
        job.matched = False
        self.reschedule()

    def next_job_for_claim(self, slot_ad: ClassAd, owner: str) -> Job | None:
        """Reuse a claim: the owner's next idle job that fits the slot."""
        if self.stopping.is_set():
            return None
        for job in self.jobs.values():
            if job.status == IDLE and not job.matched and job.owner == owner and fits(job, slot_ad):
                job.matched = True
                return job
        return None

    # -- negotiation -------------------------------------------------------------------------
    async def cmd_negotiate(self, req: Request) -> list[dict[str, Any]]:
        submitter = str(req.require("submitter"))
        owner = submitter.split("@", 1)[0]
        limit = int(req.arg("limit") or 1000)
        out = []
        for job in self.jobs.values():
            if job.status == IDLE and not job.matched and job.owner == owner:
                out.append({"id": job.id_text, "ad": job.wire()})
                if len(out) >= limit:
                    break
        return out

    async def cmd_matches(self, req: Request) -> int:
        started = 0
        for m in req.require("matches"):
            c, _, p = str(m["id"]).partition(".")
            job = self.jobs.get((int(c), int(p)))
            if job is None or job.status != IDLE or job.matched:
                continue
            job.matched = True
            shadow = Shadow(self, job, ClassAd.from_wire(m["slot_ad"]), str(m["claim_id"]))
            task = self.spawn(shadow.run(), f"shadow {job.id_text}")
            self.shadow_tasks.add(task)
            task.add_done_callback(self.shadow_tasks.discard)
            started += 1
        return started

    def reschedule(self) -> None:
        """Ask the negotiator for a cycle soon (coalescing bursts of submits)."""
        if self._reschedule is None or self._reschedule.done():
            self._reschedule = self.spawn(self._send_reschedule(), "reschedule")

    async def _send_reschedule(self) -> None:
        await asyncio.sleep(0.1)
        await self.publish()
        try:
            negs = await self.send_to_collector("QUERY_ADS", ad_type="Negotiator", projection=["MyAddress"])
            for ad in negs:
                addr = ClassAd.from_wire(ad).get_value("MyAddress")
                if addr:
                    await acall(str(addr), "RESCHEDULE", timeout=10.0)
        except (WireError, UserError) as exc:
            self.log.info("cannot ask the negotiator to reschedule: %s", exc)

    # -- ads ---------------------------------------------------------------------------------
    def make_ad(self) -> ClassAd:
        counts = Counter(j.status for j in self.jobs.values())
        ad = self.base_ad("Scheduler")
        ad["ScheddIpAddr"] = str(self.server.address)
        ad["TotalIdleJobs"], ad["TotalRunningJobs"] = counts[IDLE], counts[RUNNING]
        ad["TotalHeldJobs"], ad["TotalRemovedJobs"] = counts[HELD], counts[REMOVED]
        ad["TotalJobAds"] = len(self.jobs)
        return ad

    def submitter_ads(self) -> list[ClassAd]:
        per: dict[str, Counter[int]] = {}
        for job in self.jobs.values():
            per.setdefault(job.owner, Counter())[job.status] += 1
        ads = []
        for owner in sorted(set(per) | self._owners_seen):
            c = per.get(owner, Counter())
            ad = self.base_ad("Submitter")
            ad["Name"] = f"{owner}@{self.uid_domain}"
            ad["Owner"] = owner
            ad["ScheddName"] = self.name
            ad["ScheddIpAddr"] = str(self.server.address)
            ad["IdleJobs"], ad["RunningJobs"], ad["HeldJobs"] = c[IDLE], c[RUNNING], c[HELD]
            ads.append(ad)
        self._owners_seen = set(per)
        return ads

    async def publish(self) -> None:
        await super().publish()
        for ad in self.submitter_ads():
            try:
                await self.send_to_collector("UPDATE_AD", ad_type="Submitter", ad=ad.to_wire())
            except (WireError, UserError) as exc:
                self.log.info("cannot update the collector: %s", exc)
                return

    async def startup(self) -> None:
        if any(j.status == IDLE for j in self.jobs.values()):
            self.reschedule()

    async def shutdown(self, fast: bool) -> None:
        """End the shadows (their claims close, so the startds stop the jobs); running jobs stay
        RUNNING in the queue and are requeued when the schedd starts again."""
        for task in list(self.shadow_tasks):
            task.cancel()
        await asyncio.gather(*self.shadow_tasks, return_exceptions=True)
        self.queue.close()

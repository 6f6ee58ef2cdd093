"""The schedd daemon: the job queue in memory, and the parts that serve it.

Each concern has its own module, and the daemon holds one of each: the queue store's group
commit (``groupcommit``), event-log writes (``events``), late materialization
(``materialize``), submit (``submit``), queries and actions on jobs (``actions``), job policy
(``policy``), negotiation and matches (``negotiation``), the ads it publishes (``ads``), and the
job lifecycle its shadows report to (``lifecycle``, the interface ``shadow_api`` types)."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

from htcd.classad import ClassAd
from htcd.daemon import Daemon
from htcd.daemon.gcpauses import GcPauses
from htcd.errors import UserError
from htcd.schedd import batchsubmit, dagjobs, history_query
from htcd.schedd.actions import JobActions
from htcd.schedd.ads import ScheddAds
from htcd.schedd.alive import KeepAlive
from htcd.schedd.autocluster import AutoClusters
from htcd.schedd.chirp import Chirp
from htcd.schedd.counters import Counters
from htcd.schedd.events import EventLogs
from htcd.schedd.factory import Factory
from htcd.schedd.groupcommit import GroupCommit
from htcd.schedd.jobs import IDLE, RUNNING, Cluster, Job
from htcd.schedd.lifecycle import JobLifecycle, forget_claim
from htcd.schedd.local import LocalJobs, ap_universe
from htcd.schedd.materialize import Materializer
from htcd.schedd.negotiation import Negotiation
from htcd.schedd.policy import JobPolicy
from htcd.schedd.queue import JobId, JobQueue
from htcd.schedd.shadow import Shadow
from htcd.schedd.shadow_api import RunningShadow
from htcd.schedd.spool import Spool
from htcd.schedd.submit import Submits
from htcd.transfer.paths import Owner, open_as_owner
from htcd.wire.server import Handler, Request


class Schedd(Daemon):
    subsystem = "SCHEDD"
    ad_type = "Scheduler"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # the command handlers' holders first: Daemon.__init__ registers the commands (they keep
        # only this reference until they run)
        self.submits = Submits(self)
        self.actions = JobActions(self)
        self.chirp = Chirp(self)
        self.negotiation = Negotiation(self)
        super().__init__(*args, **kwargs)
        self.gc_pauses = GcPauses(self.log)
        self.shadow_log = self.open_log("SHADOW")
        spool = self.config.get("SPOOL") or "."
        path = self.config.get("JOB_QUEUE_LOG") or os.path.join(spool, "job_queue.log")
        self.queue = JobQueue(path)
        Job.schedd_name = self.name
        self.jobs: dict[JobId, Job] = {}  # in (cluster, proc) order: clusters arrive in id order
        self.clusters: dict[int, Cluster] = {}
        self.counters = Counters()
        self.autoclusters = AutoClusters(self.config)
        self.shadows: dict[JobId, RunningShadow] = {}  # jobs being run, by what runs them
        self.allocated: dict[JobId, dict[str, Any]] = {}  # slot resources of running jobs, for event 005
        self.shadow_tasks: set[asyncio.Task[Any]] = set()
        self.claim_holders: set[Shadow] = set()  # shadows holding a claim (kept alive by ALIVE)
        self._reconnects: list[Job] = []  # RUNNING jobs found at start-up, to be reconnected
        self.lifecycle = JobLifecycle(self)  # the schedd as its shadows see it
        self.store = GroupCommit(self)  # job changes, committed together once per loop turn
        self.events = EventLogs(self)
        self.materializer = Materializer(self)
        self.job_policy = JobPolicy(self)
        self.ads = ScheddAds(self)
        self.local = LocalJobs(self)  # local and scheduler universe jobs, run here without negotiation
        self.keepalive = KeepAlive(self)
        self.spool = Spool(self)  # spooled input and output (submit -spool, transfer_data)
        self._load()

    def default_name(self) -> str:
        return self.config.get("SCHEDD_NAME") or self.hostname

    def command_handlers(self) -> dict[str, Handler]:
        submits, actions, negotiation = self.submits, self.actions, self.negotiation
        return {"RESERVE_CLUSTER": submits.cmd_reserve, "SUBMIT": submits.cmd_submit,
                "RESERVE_CLUSTERS": lambda req: batchsubmit.cmd_reserve_clusters(submits, req),
                "SUBMIT_CLUSTERS": lambda req: batchsubmit.cmd_submit_clusters(submits, req),
                "QUERY_JOBS": actions.cmd_query, "ACT_ON_JOBS": actions.cmd_act,
                "NEGOTIATE": negotiation.cmd_negotiate, "MATCHES": negotiation.cmd_matches,
                "QUERY_SCHEDD_HISTORY": history_query.handler(self),
                "SET_ATTRIBUTES": actions.cmd_set_attributes, "VACATE_JOBS": actions.cmd_vacate_jobs,
                "CHIRP_JOB": self.chirp.cmd_chirp_job,
                "SPOOL_JOB_FILES": self._acknowledged(lambda req: self.spool.cmd_spool_job_files(req)),
                "TRANSFER_DATA": self._acknowledged(lambda req: self.spool.cmd_transfer_data(req))}

    def _acknowledged(self, handler: Callable[[Request], Awaitable[Any]]) -> Handler:
        """A command whose job changes are committed before its client hears it succeeded."""
        async def run(req: Request) -> Any:
            result = await handler(req)
            await self.store.commit()
            return result
        return run

    # -- the queue in memory ---------------------------------------------------------------
    def add_job(self, job: Job) -> None:
        self.jobs[job.id] = job
        job.cluster.live += 1
        job.cluster.idle += job.status != RUNNING
        self.counters.add(job.owner, job.status)
        self.local.note((job,))

    def _load(self) -> None:
        try:
            recovered = self.queue.recover_history(self.config.get("HISTORY"), *self.store.history_limits())
        except (OSError, UserError) as exc:
            recovered = 0
            self.log.error("cannot write the history file: %s", exc)
        if recovered:
            self.log.info("history: appended %d job(s) that left the queue just before the schedd stopped", recovered)
        wires, procs, self.submits.next_cluster = self.queue.load()
        self.clusters = {cid: Cluster(cid, wire) for cid, wire in wires.items()}
        requeued: dict[JobId, dict[str, str]] = {}
        now = int(time.time())
        for c, p, proc in procs:
            cluster = self.clusters.get(c)
            if cluster is None:
                continue
            proc.pop("ProcId", None)
            job = Job(cluster, p, proc)
            if job.status == RUNNING and self._reconnectable(job):
                job.matched = True  # its shadow reconnects to it (startup)
                self._reconnects.append(job)
            elif job.status == RUNNING:  # its shadow died with the old schedd, and nothing can find it again
                job.set(JobStatus=IDLE, LastJobStatus=RUNNING, EnteredCurrentStatus=now)
                forget_claim(job)
                requeued[job.id] = job.proc
            if "ClaimId" in job.proc:
                self.store.durable_claims.add(job.id)
            self.add_job(job)
        if requeued:
            self.queue.set_proc_ads(requeued)
        for cid, n in self.queue.pending_counts().items():
            if cid in self.clusters:
                self.clusters[cid].pending = n  # materialized further once the loop runs (startup)
        for cid, digest, items, next_proc in self.queue.factories():
            if cid in self.clusters:  # goes on at JobMaterializeNextProcId
                self.clusters[cid].factory = factory = Factory(cid, digest, items, next_proc, int(
                    self.clusters[cid].text("TotalSubmitProcs") or 0))
                self.clusters[cid].pending = factory.left
        self.log.info("job queue %s: %d clusters, %d jobs (%d were running, now idle; %d running, to be "
                      "reconnected)", self.queue.path, len(self.clusters), len(self.jobs), len(requeued),
                      len(self._reconnects))

    @staticmethod
    def _reconnectable(job: Job) -> bool:
        """A job that ran on an execute point with a lease: its claim is in its ad."""
        return bool(job.proc.get("ClaimId") and job.proc.get("StartdIpAddr")) and not ap_universe(job) \
            and float(job.get("JobLeaseDuration", 0) or 0) > 0

    def set_status(self, job: Job, status: int, **attrs: Any) -> None:
        self.counters.move(job.owner, job.status, status)
        job.cluster.idle += (status != RUNNING) - (job.status != RUNNING)
        if status == RUNNING and job.status != RUNNING and job.cluster.pending:
            self.materializer.soon(job.cluster)
        job.set(LastJobStatus=job.status, JobStatus=status, EnteredCurrentStatus=int(time.time()), **attrs)

    def leave_queue(self, job: Job) -> None:
        """The job leaves the queue: gone from memory now, from the disk with the next commits."""
        self.store.left(job)
        if self.jobs.pop(job.id, None) is not None:
            dagjobs.remove_node_jobs(self, job)
            self.counters.remove(job.owner, job.status)
            job.cluster.live -= 1
            job.cluster.idle -= job.status != RUNNING
            if job.cluster.pending:
                self.materializer.soon(job.cluster)
            elif job.cluster.live <= 0:
                self.forget_cluster(job.cluster_id)
            self.spool.forget(job)
        self.publish_soon()

    def reconfigured(self) -> None:
        """SIGNIFICANT_ATTRIBUTES and SCHEDD_ROUND_ATTR_* take effect at a reconfig."""
        super().reconfigured()
        self.autoclusters.configure(self.config)

    def forget_cluster(self, cluster_id: int) -> None:
        """A cluster with no job left and none to materialize: gone from memory, with what the
        autoclusters cached of it."""
        self.clusters.pop(cluster_id, None)
        self.autoclusters.forget_cluster(cluster_id)

    def write_as_owner(self, job: Job, path: str, data: bytes) -> None:
        """Write ``path`` doing only what the job's owner could (the schedd may be root): no
        symbolic link followed at the file, permissions checked as the owner on the way."""
        fd = open_as_owner(path, Owner.named(job.owner), write=True)
        with os.fdopen(fd, "wb") as f:
            f.write(data)

    def may_start(self) -> bool:
        """MAX_JOBS_RUNNING and JOB_START_COUNT jobs per JOB_START_DELAY seconds."""
        return self.job_policy.may_start()

    def reschedule(self) -> None:
        """Ask the negotiator for a cycle soon; local and scheduler universe jobs start here."""
        self.negotiation.reschedule()

    # -- ads ---------------------------------------------------------------------------------
    def make_ad(self) -> ClassAd:
        return self.ads.scheduler_ad()

    async def publish(self) -> None:
        await super().publish()
        for ad in self.ads.submitter_ads():
            if not await self.advertiser.update("Submitter", ad.to_wire()):
                return

    # -- start-up and shutdown ---------------------------------------------------------------
    async def startup(self) -> None:
        interval = lambda: max(1, self.knob_int("PERIODIC_EXPR_INTERVAL", 60))  # noqa: E731
        self.every(interval, self.job_policy.periodic, "periodic job policy", first=interval())
        self.every(interval, self.spool.sweep_completed, "completed jobs left in the queue", first=interval())
        self.every(lambda: 2.0, self._keep_jobs_from_gc, "exempt queued jobs from garbage collection")
        self.spool.sweep_stages()
        for cluster in list(self.clusters.values()):
            if cluster.pending:
                self.materializer.soon(cluster)
        self.every(lambda: float(self.lifecycle.alive_interval()), self.keepalive.send, "claim keep-alives",
                   first=float(self.lifecycle.alive_interval()))
        jobs, self._reconnects = self._reconnects, []
        self.negotiation.start_reconnects(jobs)
        if self.counters.total[IDLE]:
            self.reschedule()

    async def _keep_jobs_from_gc(self) -> None:
        """A full garbage collection walks every queued job (~50 ms at 100,000, on the loop, in
        the middle of whatever runs): once the queue has grown, its jobs are frozen out of it."""
        self.gc_pauses.kept(len(self.jobs))

    async def shutdown(self, fast: bool) -> None:
        """Graceful or fast, as HTCondor's schedd (condor_off: "a graceful shutdown of a schedd is
        functionally the same as a fast shutdown"): the shadows end, and running jobs go on running
        on their startds, RUNNING in the queue, for their job lease; a schedd that starts again
        within it reconnects to them, one that does not finds them requeued.

        Peaceful (``htcd off -peaceful``): start no new job (MaxJobsRunning becomes 0, as
        HTCondor's schedd does on shutdown) and wait, however long it takes, for the running ones
        to finish; a later fast request cuts the wait short."""
        if self.peaceful and not fast:
            prefix = self.config.local_name or self.subsystem
            cfg = self.config.copy()
            cfg.define(f"{prefix}.MAX_JOBS_RUNNING", "0", "<peaceful shutdown>", 0)
            self.config = cfg
            while self.shadow_tasks:
                self.log.info("peaceful shutdown: waiting for %d running job(s) to finish", len(self.shadow_tasks))
                await asyncio.wait(set(self.shadow_tasks), return_when=asyncio.FIRST_COMPLETED)
            self.log.info("peaceful shutdown: no job is running")
        running = sum(1 for s in self.claim_holders if s.running)
        if running:
            self.log.info("%s shutdown: leaving %d running job(s) to run on for their job lease; a schedd "
                          "started within it reconnects to them", "fast" if fast else "graceful", running)
        for task in list(self.shadow_tasks):
            task.cancel()
        await asyncio.gather(*self.shadow_tasks, return_exceptions=True)
        self.lifecycle.flush_usage()
        await self.store.close()  # a SIGTERM loses no job change

"""The schedd daemon: the job queue as a database, shadows, submitter ads, negotiation."""

from __future__ import annotations

import asyncio
import contextlib
import os
import pwd
import sqlite3
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from htcd.classad import ClassAd, ClassAdSyntaxError, parse_expr, unparse
from htcd.daemon import Daemon
from htcd.daemon.log import parse_size
from htcd.errors import UserError
from htcd.pacer import Pacer
from htcd.schedd import history, limits, ownership, periodic, query, userlog
from htcd.schedd.alive import KeepAlive
from htcd.schedd.attrcheck import check_edit
from htcd.schedd.autocluster import AutoClusters, group_submitters, submitter_name
from htcd.schedd.counters import Counters
from htcd.schedd.jobs import COMPLETED, HELD, IDLE, REMOVED, RUNNING, Cluster, Job, has_accounting_group
from htcd.schedd.local import LocalJobs, ap_universe
from htcd.schedd.queue import JobId, JobQueue, Writes, insert_cluster, update_procs
from htcd.schedd.shadow import Shadow, fits
from htcd.schedd.spool import Spool, is_spooled
from htcd.transfer.paths import Owner, open_as_owner
from htcd.wire.client import acall
from htcd.wire.errors import CommandError, WireError
from htcd.wire.server import Handler, Request, is_wire_ad

# Attributes a client may not set at submit: the schedd owns them.
PROTECTED = {"owner", "user", "clusterid", "procid", "jobstatus", "globaljobid"}
FLUSH_EVERY = 20000  # events one command collects before they are written
USAGE_FLUSH_DELAY = 5.0  # seconds usage samples of running jobs are gathered before one commit
# The claim's secret and its public part: never logged, never in a query's answer or the history.
CLAIM_ATTRS = ("ClaimId", "PublicClaimId")
# What a running job's usage samples set in its ad (sizes in KiB, MemoryUsage in MB, CPU in s).
USAGE_ATTRS = ("ImageSize", "ResidentSetSize", "MemoryUsage", "RemoteUserCpu", "RemoteSysCpu", "DiskUsage")


def _asks_hold(ad: dict[str, str]) -> bool:
    status = next((v for k, v in ad.items() if k.lower() == "jobstatus"), None)
    return status is not None and status.strip() == str(HELD)


def _good_match(m: dict[str, Any]) -> bool:
    """Whether a match of MATCHES has the shape the schedd relies on (checked before any is used)."""
    c, dot, p = m.get("id", "").partition(".") if type(m.get("id")) is str else ("", "", "")
    return (dot == "." and c.isdigit() and p.isdigit() and type(m.get("claim_id")) is str
            and is_wire_ad(m.get("slot_ad")) and m.get("preempt") in (None, "rank", "priority")
            and (m.get("autocluster") is None or type(m.get("autocluster")) is int))


T = TypeVar("T")
HISTORY_STEP = 128  # history records formatted per slice of the loop (~7 ms)
FORGET_DELAY = 1.0  # seconds the rows of jobs in the history wait for a commit to delete them


class _Changes:
    """Job changes not yet committed: the jobs whose ads changed (their ads are read when the
    transaction is built, so the latest state goes) and the jobs that left the queue."""

    __slots__ = ("procs", "left")

    def __init__(self) -> None:
        self.procs: dict[JobId, Job] = {}
        self.left: dict[JobId, Job] = {}

    def __bool__(self) -> bool:
        return bool(self.procs or self.left)


class _Batch:
    """Event-log writes collected while one command changes many jobs (``htcd rm -all``): each
    event log gets one write, from a worker thread, so the event loop is never held by 100,000
    small writes.  (Their queue changes go with the pending changes: ``Schedd._commit``.)"""

    def __init__(self) -> None:
        self.events: dict[tuple[str, int | None, int | None], list[str]] = defaultdict(list)
        self.count = 0

    def __len__(self) -> int:
        return self.count


class Schedd(Daemon):
    subsystem = "SCHEDD"
    ad_type = "Scheduler"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.shadow_log = self.open_log("SHADOW")
        spool = self.config.get("SPOOL") or "."
        path = self.config.get("JOB_QUEUE_LOG") or os.path.join(spool, "job_queue.log")
        self.queue = JobQueue(path)
        self.jobs: dict[JobId, Job] = {}  # in (cluster, proc) order: clusters arrive in id order
        self.clusters: dict[int, Cluster] = {}
        self.counters = Counters()
        self.autoclusters = AutoClusters(self.config)
        self.next_cluster = 1
        self.reserved: dict[int, str] = {}
        self.submitting = 0  # procs of submits being committed (counted against the limits)
        self.shadows: dict[JobId, Shadow] = {}
        self._to_materialize: set[int] = set()
        self._allocated: dict[JobId, dict[str, Any]] = {}  # slot resources of running jobs, for event 005
        self.shadow_tasks: set[asyncio.Task[Any]] = set()
        self._reschedule: asyncio.Task[None] | None = None
        self._owners_seen: set[str] = set()
        self._starts: list[float] = []  # recent job starts, for JOB_START_DELAY/JOB_START_COUNT
        self._ids_cache: dict[str, tuple[float, tuple[int | None, int | None]]] = {}
        self._batch: _Batch | None = None  # set only between two awaits of a command changing many jobs
        # Job changes wait in _pending and are committed together once per loop turn (_commit):
        # one async commit at a time (_turn), and every commit -- async in a worker thread, or on
        # the loop at a claim's reuse -- takes and stores its snapshot under _order, so the disk
        # gets the changes in the order memory had them.
        self._pending = _Changes()
        self._turn = asyncio.Lock()
        self._order = threading.Lock()
        self._committer: asyncio.Task[None] | None = None
        self._inflight: Writes | None = None  # the async commit's writes while its thread runs
        self._durable_claims: set[JobId] = set()  # jobs whose stored ad names a claim
        self._history_written: list[JobId] = []  # gone jobs now in the history: deleted by the next commit
        self._forget_timer: asyncio.TimerHandle | None = None
        self._queue_closed = False
        self._commit_counts = Counter[str]()  # commits, job changes, commits on the loop (claim reuse)
        self.local = LocalJobs(self)  # local and scheduler universe jobs, run here without negotiation
        self.claim_holders: set[Shadow] = set()  # shadows holding a claim (kept alive by ALIVE)
        self.keepalive = KeepAlive(self)
        self._reconnects: list[Job] = []  # RUNNING jobs found at start-up, to be reconnected
        self._usage_dirty: dict[JobId, Job] = {}
        self._usage_flush: asyncio.TimerHandle | None = None
        self.spool = Spool(self)  # spooled input and output (submit -spool, transfer_data)
        self._load()

    def default_name(self) -> str:
        return self.config.get("SCHEDD_NAME") or self.hostname

    def command_handlers(self) -> dict[str, Handler]:
        return {"RESERVE_CLUSTER": self.cmd_reserve, "SUBMIT": self.cmd_submit, "QUERY_JOBS": self.cmd_query,
                "ACT_ON_JOBS": self.cmd_act, "NEGOTIATE": self.cmd_negotiate, "MATCHES": self.cmd_matches,
                "SET_ATTRIBUTES": self.cmd_set_attributes, "VACATE_JOBS": self.cmd_vacate_jobs,
                "SPOOL_JOB_FILES": self._acknowledged(lambda req: self.spool.cmd_spool_job_files(req)),
                "TRANSFER_DATA": self._acknowledged(lambda req: self.spool.cmd_transfer_data(req))}

    def _acknowledged(self, handler: Handler) -> Handler:
        """A command whose job changes are committed before its client hears it succeeded."""
        async def run(req: Request) -> Any:
            result = await handler(req)
            await self._commit()
            return result
        return run

    # -- the queue in memory ---------------------------------------------------------------
    def _add_job(self, job: Job) -> None:
        self.jobs[job.id] = job
        job.cluster.live += 1
        job.cluster.idle += job.status == IDLE
        self.counters.add(job.owner, job.status)
        self.local.note((job,))

    def _load(self) -> None:
        try:
            recovered = self.queue.recover_history(self.config.get("HISTORY"), *self._history_limits())
        except (OSError, UserError) as exc:
            recovered = 0
            self.log.error("cannot write the history file: %s", exc)
        if recovered:
            self.log.info("history: appended %d job(s) that left the queue just before the schedd stopped", recovered)
        wires, procs, self.next_cluster = self.queue.load()
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
                for k in CLAIM_ATTRS:
                    job.proc.pop(k, None)
                requeued[job.id] = job.proc
            if "ClaimId" in job.proc:
                self._durable_claims.add(job.id)
            self._add_job(job)
        if requeued:
            self.queue.set_proc_ads(requeued)
        for cid, n in self.queue.pending_counts().items():
            if cid in self.clusters:
                self.clusters[cid].pending = n  # materialized further once the loop runs (startup)
        self.log.info("job queue %s: %d clusters, %d jobs (%d were running, now idle; %d running, to be "
                      "reconnected)", self.queue.path, len(self.clusters), len(self.jobs), len(requeued),
                      len(self._reconnects))

    @staticmethod
    def _reconnectable(job: Job) -> bool:
        """A job that ran on an execute point with a lease: its claim is in its ad."""
        return bool(job.proc.get("ClaimId") and job.proc.get("StartdIpAddr")) and not ap_universe(job) \
            and float(job.get("JobLeaseDuration", 0) or 0) > 0

    def _persist(self, *jobs: Job) -> None:
        """The jobs' ads changed: committed with the other changes of this loop turn (a client
        command commits them before it answers)."""
        for j in jobs:
            self._pending.procs[j.id] = j
        self._commit_soon()

    def _set_status(self, job: Job, status: int, **attrs: Any) -> None:
        self.counters.move(job.owner, job.status, status)
        job.cluster.idle += (status == IDLE) - (job.status == IDLE)
        if job.status == IDLE and status != IDLE and job.cluster.pending:
            self._materialize_soon(job.cluster)
        job.set(LastJobStatus=job.status, JobStatus=status, EnteredCurrentStatus=int(time.time()), **attrs)

    def _owner_ids(self, owner: str) -> tuple[int | None, int | None]:
        """The owner's uid and gid (looked up once a minute at most: every event write asks)."""
        now = time.monotonic()
        hit = self._ids_cache.get(owner)
        if hit is not None and now - hit[0] < 60:
            return hit[1]
        ids: tuple[int | None, int | None] = (None, None)
        with contextlib.suppress(KeyError):
            pw = pwd.getpwnam(owner)
            ids = (pw.pw_uid, pw.pw_gid)
        self._ids_cache[owner] = (now, ids)
        return ids

    def _log_targets(self, job: Job) -> list[str]:
        path = job.get("UserLog")
        targets = [p for p in (path if isinstance(path, str) else None, self.config.get("EVENT_LOG")) if p]
        iwd = str(job.get("Iwd", "") or "")
        return [t if os.path.isabs(t) else os.path.join(iwd, t) for t in targets]

    def _write_events(self, job: Job, text: str, targets: list[str] | None = None) -> None:
        if self._batch is not None:
            for full in targets if targets is not None else self._log_targets(job):
                self._batch.events[(full, *self._owner_ids(job.owner))].append(text)
                self._batch.count += 1
            return
        for full in targets if targets is not None else self._log_targets(job):
            try:
                userlog.append(full, text, *self._owner_ids(job.owner))
            except OSError as exc:
                self.log.error("job %s: cannot write event log %s: %s", job.id_text, full, exc)

    def _event(self, job: Job, text: str) -> None:
        self._write_events(job, self._with_information(job, text))

    @staticmethod
    def _with_information(job: Job, text: str) -> str:
        """A job with ``job_ad_information_attrs`` gets a job ad information event (028) after
        each of its events, in the same write, so the pair is never split."""
        if "JobAdInformationAttrs" not in job.cluster.wire and "JobAdInformationAttrs" not in job.proc:
            return text
        attrs = userlog.information_attrs(job.wire())
        return text + userlog.job_ad_information(job.cluster_id, job.proc_id, attrs) if attrs else text

    def write_as_owner(self, job: Job, path: str, data: bytes) -> None:
        """Write ``path`` doing only what the job's owner could (the schedd may be root): no
        symbolic link followed at the file, permissions checked as the owner on the way."""
        fd = open_as_owner(path, Owner.named(job.owner), write=True)
        with os.fdopen(fd, "wb") as f:
            f.write(data)

    def _leave_queue(self, job: Job) -> None:
        """The job leaves the queue: gone from memory now; on disk it is marked gone by the next
        commit and deleted once its history record is written (``htcd/schedd/queue.py``)."""
        self._pending.procs.pop(job.id, None)
        self._pending.left[job.id] = job
        self._commit_soon()
        if self.jobs.pop(job.id, None) is not None:
            self.counters.remove(job.owner, job.status)
            job.cluster.live -= 1
            job.cluster.idle -= job.status == IDLE
            if job.cluster.pending:
                self._materialize_soon(job.cluster)
            elif job.cluster.live <= 0:
                self.clusters.pop(job.cluster_id, None)
            self.spool.forget(job)
        self.publish_soon()

    async def _flush(self, batch: _Batch) -> None:
        """Write the events a command collected (one write per log, from a worker thread), then
        commit its job changes with everything pending: durable before the client hears."""
        if batch.events:
            def write() -> None:
                for (full, uid, gid), texts in batch.events.items():
                    try:
                        userlog.append(full, "".join(texts), uid, gid)
                    except OSError as exc:
                        self.log.error("cannot write event log %s: %s", full, exc)

            await asyncio.to_thread(write)
        await self._commit()

    # -- committing the queue --------------------------------------------------------------
    def _commit_soon(self) -> None:
        """Commit the pending changes at the next loop turn (and again while more arrive)."""
        if self._committer is None and not self._queue_closed:
            self._committer = self.spawn(self._commit_pending(), "commit job changes")

    async def _commit_pending(self, once: bool = False) -> None:
        try:
            while (once or self._pending) and not self._queue_closed:
                once = False
                try:
                    await self._commit()
                except (sqlite3.Error, OSError) as exc:
                    self.log.error("cannot commit job changes to %s (trying again in 1 s): %s", self.queue.path, exc)
                    await asyncio.sleep(1.0)
        finally:
            self._committer = None

    def _take(self) -> tuple[Writes, list[Job]]:
        """The pending changes as one transaction's writes (the ads copied now, on the loop), and
        the jobs that left; pending starts afresh.  Call with ``_order`` held."""
        pending, self._pending = self._pending, _Changes()
        w = Writes()
        for jid, job in pending.procs.items():
            w.procs[jid] = dict(job.proc)
        left = list(pending.left.values())
        keep = bool(self.config.get("HISTORY"))
        for job in left:
            w.procs.pop(job.id, None)
            if keep:
                w.gone[job.id] = dict(job.proc)
            else:
                w.forget.append(job.id)
        w.forget += self._history_written
        self._history_written = []
        claims = self._durable_claims
        w.frees_claim = any(jid in claims and "ClaimId" not in ad for jid, ad in w.procs.items()) \
            or any(jid in claims for jid in w.gone) or any(jid in claims for jid in w.forget)
        return w, left

    def _store(self, w: Writes, then: Callable[[sqlite3.Cursor], T] | None = None) -> T | None:
        """One transaction (with ``_order`` held, in a worker thread or on the loop)."""
        result = self.queue.write(w, then)
        claims = self._durable_claims
        for jid, ad in w.procs.items():
            if "ClaimId" in ad:
                claims.add(jid)
            else:
                claims.discard(jid)
        for jid in (*w.gone, *w.forget):
            claims.discard(jid)
        self._commit_counts["commits"] += 1
        self._commit_counts["changes"] += len(w.procs) + len(w.gone)
        return result

    def _restore(self, w: Writes, left: list[Job]) -> None:
        """A commit failed: its changes are pending again (memory still has them)."""
        for jid in w.procs:
            job = self.jobs.get(jid)
            if job is not None:
                self._pending.procs.setdefault(jid, job)
        for job in left:
            self._pending.left.setdefault(job.id, job)
        self._history_written[:0] = w.forget
        self._commit_soon()

    async def _commit(self, then: Callable[[sqlite3.Cursor], T] | None = None) -> T | None:
        """Commit everything pending -- and ``then``'s writes, in the same transaction -- from a
        worker thread; returns once it is durable (and once anything committed before is).  A
        caller cancelled meanwhile does not stop it: the commit and its history records finish."""
        task = asyncio.ensure_future(self._commit_in_turn(then))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())  # its caller hears of a failure
        return await asyncio.shield(task)

    async def _commit_in_turn(self, then: Callable[[sqlite3.Cursor], T] | None) -> T | None:
        async with self._turn:
            if self._queue_closed:
                if then is None:  # (a commit of a shadow's change after the last one: nothing left to do)
                    return None
                raise CommandError("the schedd is shutting down", "SHUTTING_DOWN")
            self._order.acquire()  # free: async commits take turns, and one on the loop ends before it returns
            try:
                w, left = self._take()
                if not len(w) and then is None:
                    self._order.release()
                    return None
                self._inflight = w

                def run() -> T | None:
                    try:
                        return self._store(w, then)
                    finally:
                        self._inflight = None
                        self._order.release()

                done = asyncio.get_running_loop().run_in_executor(None, run)
            except BaseException:
                self._inflight = None
                self._order.release()
                raise
            try:
                result = await done
            except (sqlite3.Error, OSError):
                self._restore(w, left)
                raise
            await self._write_history(left)
            return result

    def _commit_now(self) -> None:
        """Commit what is pending at once, on the loop (after a commit in flight, if any)."""
        with self._order:
            w, left = self._take()
            if not len(w):
                return
            try:
                self._store(w)
            except (sqlite3.Error, OSError) as exc:
                self.log.error("cannot commit job changes to %s: %s", self.queue.path, exc)
                self._restore(w, left)
                return
        self._commit_counts["on the loop"] += 1
        self._append_history(left)

    async def claims_settled(self) -> None:
        """Returns once no change that took a claim off a job is waiting to be committed: a
        shadow that awaits this before running its claim's next job spares the loop the commit
        ``next_job_for_claim`` would otherwise make at once."""
        while self._claim_change_uncommitted() and not self._queue_closed:
            await self._commit()

    def _claim_change_uncommitted(self) -> bool:
        """Whether a change that took a claim off a job (it exited, was evicted, held, removed)
        is not yet on disk, where the job still names the claim."""
        inflight = self._inflight
        if inflight is not None and inflight.frees_claim:
            return True
        claims = self._durable_claims
        return any(jid in claims and "ClaimId" not in job.proc for jid, job in self._pending.procs.items()) \
            or any(jid in claims for jid in self._pending.left)

    def _history_limits(self) -> tuple[int, int]:
        return (parse_size(self.config.get("MAX_HISTORY_LOG"), 20 * 1024 * 1024),
                self.knob_int("MAX_HISTORY_ROTATIONS", 2))

    def _append_history(self, jobs: list[Job]) -> None:
        """Append committed jobs' records to the history; the next commit deletes their rows."""
        path = self.config.get("HISTORY")
        if not jobs or not path:
            return
        try:
            history.append(path, [j.ad for j in jobs], *self._history_limits())
        except (OSError, UserError) as exc:  # their rows stay: a restarted schedd tries again
            self.log.error("cannot write the history file: %s", exc)
            return
        self._history_written += [j.id for j in jobs]
        if self._forget_timer is None:  # the next commit deletes their rows; if none comes soon, one is made
            self._forget_timer = asyncio.get_running_loop().call_later(FORGET_DELAY, self._forget_soon)

    def _forget_soon(self) -> None:
        self._forget_timer = None
        if not self._history_written or self._queue_closed:
            return
        if self._committer is not None:  # busy: it may take them; look again later
            self._forget_timer = asyncio.get_running_loop().call_later(FORGET_DELAY, self._forget_soon)
            return
        self._committer = self.spawn(self._commit_pending(once=True), "commit job changes")

    async def _write_history(self, jobs: list[Job]) -> None:
        """As ``_append_history``, formatting a slice at a time on the loop (Python work a
        thread would not do sooner) when many jobs left at once (``htcd rm -all``)."""
        for i in range(0, len(jobs), HISTORY_STEP):
            if i:
                await asyncio.sleep(0)
            self._append_history(jobs[i:i + HISTORY_STEP])

    # -- late materialization ------------------------------------------------------------
    def _materialize_soon(self, cluster: Cluster) -> None:
        """Materialize more of ``cluster`` once the current step is over (never in the middle of
        a status change or a walk over the queue)."""
        if cluster.id in self._to_materialize:
            return
        self._to_materialize.add(cluster.id)
        asyncio.get_running_loop().call_soon(self._materialize, cluster)

    def _materialize(self, cluster: Cluster) -> None:
        self._to_materialize.discard(cluster.id)
        room = cluster.materialize_room()
        count = cluster.pending if room is None else min(room, cluster.pending)
        if count <= 0 or self.clusters.get(cluster.id) is not cluster:
            return
        rows = self.queue.materialize(cluster.id, count)  # durable before the jobs exist
        cluster.pending -= len(rows)
        host, now = str(self.server.address), time.time()
        for proc_id, proc in rows:
            job = Job(cluster, proc_id, proc)
            self._add_job(job)
            self._event(job, userlog.submit(cluster.id, proc_id, host, when=now))
        self.log.info("cluster %d: materialized %d procs, %d still to come", cluster.id, len(rows),
                      cluster.pending)
        self.publish_soon()
        self.reschedule()

    def _cancel_pending(self, cluster: Cluster) -> None:
        """A removed cluster's unmaterialized procs are dropped with it."""
        if cluster.pending:
            self.queue.drop_pending(cluster.id)
            cluster.pending = 0
            if cluster.live <= 0:
                self.clusters.pop(cluster.id, None)

    # -- submit ----------------------------------------------------------------------------
    async def cmd_reserve(self, req: Request) -> dict[str, int]:
        cid = self.next_cluster
        self.next_cluster += 1
        self.reserved[cid] = str(req.identity)
        return {"cluster_id": cid}

    async def _validate(self, cluster_ad: dict[str, str], proc_ads: list[dict[str, str]]) -> None:
        """Every expression must parse; each distinct text is parsed once, and the loop is given a
        turn every few thousand procs so queries are answered while a large cluster is checked."""
        seen: set[str] = set()
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

    async def cmd_submit(self, req: Request) -> dict[str, Any]:
        cid = req.arg_int("cluster_id", required=True)
        if self.reserved.get(cid) != str(req.identity):
            raise CommandError(f"cluster {cid} was not reserved by {req.identity}", "BAD_CLUSTER")
        cluster_ad = dict(req.arg_ad("cluster_ad", required=True))
        proc_ads = req.require("proc_ads")  # fresh from the wire: ours to change
        if not isinstance(proc_ads, list) or not all(map(is_wire_ad, proc_ads)):
            raise CommandError("SUBMIT: argument 'proc_ads' must be a list of ClassAds (maps of attribute name "
                               "to expression text)", "BAD_REQUEST")
        if not proc_ads:
            raise CommandError("a submit needs at least one proc", "BAD_REQUEST")
        try:
            user, user_at = ownership.submit_owner(self.config, req.identity, cluster_ad)
        except PermissionError as exc:
            raise CommandError(str(exc), "DENIED") from None
        limits.check_counts(self.config, len(proc_ads), len(self.jobs) + self.submitting,
                            self.counters.jobs(user))
        pacer = Pacer()
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
        await self._validate(cluster_ad, proc_ads)
        cluster = Cluster(cid, cluster_ad)
        jobs = []
        for i, p in enumerate(proc_ads):
            if i & 255 == 0 and pacer.due():
                await pacer.pause()
            jobs.append(Job(cluster, i, p))
        room = cluster.materialize_room()  # max_materialize / max_idle: the rest waits in the queue file
        now_count = len(jobs) if room is None else min(room, len(jobs))
        warnings = limits.check_requirements(self.config, self.make_ad(), (j.ad for j in jobs)) \
            if self.config.get("SUBMIT_REQUIREMENT_NAMES") or self.config.get("SUBMIT_WARNING_NAMES") else []
        self.submitting += len(jobs)
        try:
            # durable (with every job change before it) before we answer; the commit runs in a
            # thread so queries are served meanwhile
            await self._commit(lambda cur: insert_cluster(cur, cid, cluster_ad, proc_ads,
                                                          None if room is None else now_count))
        finally:
            self.submitting -= len(jobs)
        self.reserved.pop(cid, None)
        cluster.pending = len(jobs) - now_count
        jobs = jobs[:now_count]
        await self._submit_events(cluster, jobs)  # before any job can be matched and run
        new: dict[JobId, Job] = {}
        statuses: Counter[int] = Counter()
        for i, job in enumerate(jobs):
            if i & 255 == 0 and pacer.due():
                await pacer.pause()
            new[job.id] = job
            statuses[job.status] += 1
        # all at once (no await from here): queries never see part of a cluster
        self.clusters[cid] = cluster
        self.jobs.update(new)
        cluster.live += len(new)
        cluster.idle += statuses[IDLE]
        for status, n in statuses.items():
            self.counters.add(cluster.owner, status, n)
        self.local.note(new.values())
        self.log.info("submitted cluster %d: %d procs by %s%s", cid, len(jobs) + cluster.pending, req.identity,
                      f" ({cluster.pending} to be materialized later)" if cluster.pending else "")
        self.publish_soon()
        self.reschedule()
        return {"cluster_id": cid, "procs": len(jobs) + cluster.pending, "warnings": warnings}

    async def _submit_events(self, cluster: Cluster, jobs: list[Job]) -> None:
        """One write per log file for the whole cluster when the log is a cluster attribute."""
        host = str(self.server.address)
        now = time.time()
        shared = not any(k.lower() in ("userlog", "iwd") for j in jobs for k in j.proc)
        if not shared:
            pacer = Pacer()
            for i, job in enumerate(jobs):
                if i & 15 == 0 and pacer.due():
                    await pacer.pause()
                self._event(job, userlog.submit(cluster.id, job.proc_id, host, when=now))
            return
        targets = self._log_targets(jobs[0])

        def write() -> None:
            text = "".join(self._with_information(j, userlog.submit(cluster.id, j.proc_id, host, when=now))
                           for j in jobs)
            self._write_events(jobs[0], text, targets)

        if targets:
            await asyncio.to_thread(write)

    # -- queries and actions ---------------------------------------------------------------
    def _jobs_for(self, req: Request) -> list[Job]:
        """The jobs a query looks at: one owner's or one cluster's when the client says so."""
        cluster = req.arg_int("cluster")
        if cluster is not None:
            return [j for j in self.jobs.values() if j.cluster_id == cluster]
        return list(self.jobs.values())

    async def cmd_query(self, req: Request) -> Any:
        constraint = query.parse_constraint(req.arg_str("constraint"))
        if req.arg_bool("totals"):
            everyone = self.counters.of()
            owner = req.arg_str("owner")
            if owner is not None and constraint is None:
                mine = self.counters.of(owner)
            else:
                mine = everyone if constraint is None else await query.totals(self._jobs_for(req), constraint)
            return {"query": mine, "all": everyone}
        if req.arg_bool("autoclusters"):
            return self.autoclusters.summary(list(self.jobs.values()), constraint)
        return await query.stream_jobs(req, self._jobs_for(req), constraint, self.autoclusters.attributes)

    async def _select(self, req: Request) -> list[Job]:
        ids = req.arg_list("ids", (str, int))
        constraint = req.arg_str("constraint")
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
            matching = await query.select(list(self.jobs.values()), query.parse_constraint(constraint))
            if not chosen:
                return matching
            chosen += matching
        seen: set[JobId] = set()
        return [j for j in chosen if not (j.id in seen or seen.add(j.id))]  # type: ignore[func-returns-value]

    def _may_act(self, req: Request, job: Job) -> bool:
        return self._may_act_for(req, job.owner, job.cluster)

    def _may_act_for(self, req: Request, owner: str, cluster: Cluster | None = None) -> bool:
        """The owner of the jobs (same user@domain), a queue superuser, or anyone when
        QUEUE_ALL_USERS_TRUSTED (htcd/schedd/ownership.py)."""
        return ownership.may_act(self.config, req.identity, owner,
                                 ownership.cluster_user(cluster) if cluster is not None else None)

    async def cmd_act(self, req: Request) -> dict[str, Any]:
        action = req.arg_str("action", required=True).lower()
        if action not in ("remove", "hold", "release"):
            raise CommandError(f"unknown action {action!r}", "BAD_REQUEST")
        reason = req.arg_str("reason") or f"via htcd {action} (by user {req.identity.user})"
        results: dict[str, str] = {}
        selected = await self._select(req)
        if action == "remove":
            # removing a cluster by id, or every job it has in the queue, removes the procs it
            # has yet to materialize too
            named = {int(str(t)) for t in req.arg("ids") or [] if str(t).isdigit()}
            pending = any(c.pending for c in self.clusters.values())
            taken = Counter(j.cluster_id for j in selected if self._may_act(req, j)) if pending else Counter()
            for cid, cluster in list(self.clusters.items()):
                if cluster.pending and (cid in named or 0 < cluster.live <= taken[cid]) \
                        and self._may_act_for(req, cluster.owner, cluster):
                    self._cancel_pending(cluster)
                    results[f"{cid}.*"] = "unmaterialized procs removed"
        act = getattr(self, f"_{action}")
        allowed: dict[int, bool] = {}  # cluster -> may the caller act on its jobs
        pacer = Pacer()
        batch = self._batch = _Batch()  # queue, event-log and history writes: together, off the loop
        try:
            for i, job in enumerate(selected):
                if i & 15 == 0 and pacer.due():
                    self._batch = None  # other work may run now: it writes for itself
                    if len(batch) >= FLUSH_EVERY:
                        await self._flush(batch)
                        batch = _Batch()
                    await pacer.pause()
                    self._batch = batch
                if job.id not in self.jobs:  # gone while the loop had a turn
                    continue
                ok = allowed.get(job.cluster_id)
                if ok is None:
                    ok = allowed[job.cluster_id] = self._may_act(req, job)
                if not ok:
                    results[job.id_text] = f"denied: {req.identity} is not the owner ({job.owner}) or a queue superuser"
                    continue
                results[job.id_text] = act(job, reason)
        finally:
            self._batch = None
            await self._flush(batch)
        if not results:
            raise CommandError("no jobs matched", "NO_MATCH")
        self.publish_soon()
        return {"results": results}

    async def cmd_set_attributes(self, req: Request) -> dict[str, Any]:
        """qedit: set attributes of the selected jobs, all in one transaction."""
        attrs = dict(req.arg_ad("attrs", required=True))
        for k, v in attrs.items():
            why = check_edit(k, v)
            if why:
                raise CommandError(why, "BAD_REQUEST")
        jobs = await self._select(req)
        if not jobs:
            raise CommandError("no jobs matched", "NO_MATCH")
        denied = [j.id_text for j in jobs if not self._may_act(req, j)]
        if denied:
            raise CommandError(f"{req.identity} may not edit job {denied[0]}", "DENIED")
        changed = {j.id: {**j.proc, **attrs} for j in jobs}
        await self._commit(lambda cur: update_procs(cur, changed))  # with the pending changes, off the loop
        for j in jobs:
            j.proc.update(attrs)  # (a change made meanwhile, pending, is kept and commits with these)
            j.cluster.proc_groups |= has_accounting_group(attrs)  # it negotiates as its group now
        return {"jobs": len(jobs)}

    async def cmd_vacate_jobs(self, req: Request) -> dict[str, Any]:
        """``htcd vacate_job``: running jobs leave their execute points and go back to idle (their
        claims are released); graceful (KillSig, then killed after the vacate time) or ``fast``."""
        fast = req.arg_bool("fast")
        reason = str(req.arg_str("reason") or f"via htcd vacate_job{' -fast' if fast else ''} (by user "
                     f"{req.identity.user})")
        results: dict[str, str] = {}
        for job in await self._select(req):
            if not self._may_act(req, job):
                results[job.id_text] = f"denied: {req.identity} is not the owner ({job.owner}) or a queue superuser"
                continue
            shadow = self.shadows.get(job.id)
            if job.status != RUNNING or not isinstance(shadow, Shadow) or not shadow.running:
                results[job.id_text] = "not running"
                continue
            self.log.info("job %s: vacating (%s)", job.id_text, reason)
            self.spawn(shadow.kill(graceful=not fast, evict=reason), f"vacate {job.id_text}")
            results[job.id_text] = "fast-vacated" if fast else "vacated"
        if not results:
            raise CommandError("no jobs matched", "NO_MATCH")
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

    def _hold(self, job: Job, reason: str, code: int = 1) -> str:
        if job.status in (HELD, REMOVED, COMPLETED):
            return f"not held: status {job.status}"
        if job.id in self.shadows:
            self.spawn(self.shadows[job.id].kill(), f"kill {job.id_text}")
        self.hold(job, reason, code=code)
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

    # -- policy ------------------------------------------------------------------------------
    async def periodic_policy(self) -> None:
        """Evaluate periodic_hold/release/remove and their SYSTEM_ versions over the queue."""
        acted = 0
        pacer = Pacer()
        for i, job in enumerate(list(self.jobs.values())):
            if i & 15 == 0 and pacer.due():
                await pacer.pause()
            if job.id not in self.jobs or job.removing:
                continue
            decision = periodic.decide(self.config, job)
            if decision is None:
                continue
            acted += 1
            shadow = self.shadows.get(job.id)
            if decision.action == "remove" and isinstance(shadow, Shadow):
                shadow.kill_code = 113  # JOB_SHOULD_REMOVE: removed by policy while running
            if decision.action == "hold":
                self._hold(job, decision.reason, code=periodic.PERIODIC_HOLD_CODE)
            else:
                getattr(self, f"_{decision.action}")(job, decision.reason)
        if acted:
            self.publish_soon()

    def may_start(self) -> bool:
        """MAX_JOBS_RUNNING and JOB_START_COUNT jobs per JOB_START_DELAY seconds."""
        if max(len(self.shadows), len(self.shadow_tasks)) >= self.knob_int("MAX_JOBS_RUNNING", 10000):
            return False
        delay = self.knob_int("JOB_START_DELAY", 0)
        if delay <= 0:
            return True
        now = time.monotonic()
        self._starts = [t for t in self._starts if now - t < delay]
        return len(self._starts) < max(1, self.knob_int("JOB_START_COUNT", 1))

    # -- job lifecycle, called by shadows ---------------------------------------------------
    def hold(self, job: Job, reason: str, code: int = 0, subcode: int = 0) -> None:
        self._set_status(job, HELD, HoldReason=reason, HoldReasonCode=code, HoldReasonSubCode=subcode)
        self._forget_claim(job)
        self._persist(job)
        job.matched = False
        self._event(job, userlog.held(job.cluster_id, job.proc_id, reason, code, subcode))
        self.log.info("job %s held: %s", job.id_text, reason)
        self.publish_soon()

    def job_activating(self, job: Job, shadow: Shadow) -> None:
        """A shadow asks the startd to run ``job``: removals and holds go through the shadow now."""
        self.shadows[job.id] = shadow

    def job_started(self, job: Job, slot_ad: ClassAd, shadow: Shadow) -> None:
        """The job runs: RUNNING, the execute event, and (for a claim) the claim in the durable ad,
        so that a restarted schedd finds the job again."""
        now = int(time.time())
        self.shadows[job.id] = shadow
        claim: dict[str, Any] = {}
        claim_id = str(getattr(shadow, "claim_id", "") or "")
        if claim_id:
            claim = {"ClaimId": claim_id, "PublicClaimId": "#".join(claim_id.split("#")[:3]),
                     "LastJobLeaseRenewal": now}
        self._set_status(job, RUNNING, JobStartDate=job.get("JobStartDate") or now, JobCurrentStartDate=now,
                         NumJobStarts=int(job.get("NumJobStarts", 0) or 0) + 1,
                         RemoteHost=str(slot_ad.get_value("Name", "")), StartdIpAddr=shadow.startd, **claim)
        self._persist(job)
        self._allocated[job.id] = {k: slot_ad.get_value(k) for k in ("Cpus", "Disk", "Memory")}
        self._event(job, userlog.execute(job.cluster_id, job.proc_id, shadow.startd,
                                         str(slot_ad.get_value("Name", ""))))
        self.publish_soon()

    def job_not_started(self, job: Job, why: str) -> None:
        """The startd did not start the job (activation refused or lost): it is idle again."""
        self.shadows.pop(job.id, None)
        self._allocated.pop(job.id, None)
        job.matched = False
        if job.removing:
            self.finish_removal(job)
            return
        if job.status == RUNNING:  # lost after all (should not happen): back to idle
            self._set_status(job, IDLE)
            self._forget_claim(job)
            self._persist(job)
        self.log.info("job %s did not start: %s", job.id_text, why)
        self.reschedule()

    def job_usage(self, job: Job, usage: dict[str, Any]) -> None:
        """A usage sample of a running job: into its ad at once (htcd q shows it), to disk with the
        other samples of the next few seconds (one commit), and an image size event when the
        job's image grew."""
        if job.id not in self.jobs:
            return
        attrs = {k: usage[k] for k in USAGE_ATTRS if isinstance(usage.get(k), (int, float))}
        if not attrs:
            return
        before = int(float(job.text("ImageSize") or 0))
        job.set(**attrs)
        size = int(attrs.get("ImageSize", 0) or 0)
        if size > before:
            self._event(job, userlog.image_size(job.cluster_id, job.proc_id, size,
                                                int(attrs.get("MemoryUsage", 0) or 0) or None,
                                                int(attrs.get("ResidentSetSize", 0) or 0) or None))
        self._usage_dirty[job.id] = job
        if self._usage_flush is None:
            self._usage_flush = asyncio.get_running_loop().call_later(USAGE_FLUSH_DELAY, self._flush_usage)

    def _flush_usage(self) -> None:
        self._usage_flush = None
        dirty, self._usage_dirty = self._usage_dirty, {}
        live = [j for jid, j in dirty.items() if self.jobs.get(jid) is j]
        if live:
            self._persist(*live)

    def lease_renewed(self, jobs: list[Job], when: int) -> None:
        """The startd answered the keep-alive of these running jobs' claims (LastJobLeaseRenewal)."""
        for job in jobs:
            if self.jobs.get(job.id) is job and job.status == RUNNING:
                job.set(LastJobLeaseRenewal=when)
                self._usage_dirty[job.id] = job
        if self._usage_dirty and self._usage_flush is None:
            self._usage_flush = asyncio.get_running_loop().call_later(USAGE_FLUSH_DELAY, self._flush_usage)

    def job_disconnected(self, job: Job, why: str, slot: str, startd: str) -> None:
        self._event(job, userlog.disconnected(job.cluster_id, job.proc_id, why, slot, startd))

    def job_reconnected(self, job: Job, slot: str, startd: str, starter: str) -> None:
        job.set(LastJobLeaseRenewal=int(time.time()))
        self._persist(job)
        self._event(job, userlog.reconnected(job.cluster_id, job.proc_id, slot, startd, starter))
        self.log.info("job %s: reconnected to %s", job.id_text, slot)

    def reconnect_failed(self, job: Job, reason: str, slot: str) -> None:
        """The running job could not be found again (its lease ran out): event 024, back to idle."""
        self._event(job, userlog.reconnect_failed(job.cluster_id, job.proc_id, reason, slot))
        self.log.info("job %s: reconnection to %s failed (%s); rescheduling it", job.id_text, slot, reason)
        self.job_lost(job, reason, event=False)

    def _forget_claim(self, job: Job) -> None:
        for k in CLAIM_ATTRS:
            job.proc.pop(k, None)

    def alive_interval(self) -> int:
        return max(1, self.knob_int("ALIVE_INTERVAL", 300))

    def job_exited(self, job: Job, result: dict[str, Any], bytes_received: int, bytes_sent: int) -> None:
        self.shadows.pop(job.id, None)
        self._forget_claim(job)
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
        rss = attrs["ResidentSetSize"]
        if rss:
            attrs["ImageSize"] = max(rss, int(job.get("ImageSize", 0) or 0))
            attrs["MemoryUsage"] = (rss + 1023) // 1024
        job.set(**attrs)
        wall = attrs["RemoteWallClockTime"]
        usage = {"Cpus": round((attrs["RemoteUserCpu"] + attrs["RemoteSysCpu"]) / wall, 2) if wall > 0 else 0.0,
                 "Disk": job.get("DiskUsage"), "Memory": attrs.get("MemoryUsage")}
        request = {k: job.get(f"Request{k}") for k in ("Cpus", "Disk", "Memory")}
        if rss:
            self._event(job, userlog.image_size(job.cluster_id, job.proc_id, attrs["ImageSize"],
                                                attrs["MemoryUsage"], rss))
        self._event(job, userlog.terminated(
            job.cluster_id, job.proc_id, exit_code=result.get("exit_code"), signal=sig,
            user_cpu=attrs["RemoteUserCpu"], sys_cpu=attrs["RemoteSysCpu"], sent=bytes_sent,
            received=bytes_received, usage=usage, request=request, allocated=self._allocated.pop(job.id, {})))
        outcome = periodic.on_exit(job)
        if outcome == "hold":
            self.hold(job, "The job attribute OnExitHold expression evaluated to TRUE",
                      code=periodic.ON_EXIT_HOLD_CODE)
            return
        if outcome == "requeue":
            job.matched = False
            self._set_status(job, IDLE)
            job.proc.pop("CompletionDate", None)
            self._persist(job)
            self.log.info("job %s exited; OnExitRemove is false, so it runs again", job.id_text)
            self.reschedule()
            return
        if is_spooled(job):
            self.spool.note_output(job, result)
        self._set_status(job, COMPLETED)
        self._persist(job)
        self.log.info("job %s completed: %s", job.id_text, f"signal {sig}" if sig is not None
                      else f"exit code {attrs['ExitCode']}")
        if self.spool.leave_in_queue(job):  # kept for its output (spooled) or by leave_in_queue
            self.publish_soon()
            return
        self._leave_queue(job)

    def finish_removal(self, job: Job) -> None:
        self.shadows.pop(job.id, None)
        self._allocated.pop(job.id, None)
        self._forget_claim(job)
        self._event(job, userlog.aborted(job.cluster_id, job.proc_id, str(job.get("RemoveReason", ""))))
        self._leave_queue(job)

    def job_lost(self, job: Job, why: str, event: bool = True) -> None:
        """The job's run ended without an exit (evicted, vacated, lost): back to idle, or finish a
        pending removal; ``event``: the evicted event (004)."""
        self.shadows.pop(job.id, None)
        self._allocated.pop(job.id, None)
        job.matched = False
        if job.removing:
            self.finish_removal(job)
            return
        if job.status == RUNNING:
            self._set_status(job, IDLE, LastVacateTime=int(time.time()))
            self._forget_claim(job)
            self._persist(job)
            if event:
                self._event(job, userlog.evicted(job.cluster_id, job.proc_id, why))
        self.reschedule()

    def job_vacated(self, job: Job) -> None:
        """The job was stopped by a hold while running; it stays held."""
        self.shadows.pop(job.id, None)
        self._allocated.pop(job.id, None)
        job.matched = False
        if self._forget_claim_changed(job):
            self._persist(job)

    def _forget_claim_changed(self, job: Job) -> bool:
        had = any(k in job.proc for k in CLAIM_ATTRS)
        self._forget_claim(job)
        return had

    def unmatch(self, job: Job) -> None:
        job.matched = False
        self.reschedule()

    def next_job_for_claim(self, slot_ad: ClassAd, owner: str) -> Job | None:
        """Reuse a claim: the owner's next idle job that fits the slot."""
        if self.stopping.is_set() or not self.may_start():
            return None
        for job in self.jobs.values():
            if job.status == IDLE and not job.matched and job.owner == owner and not ap_universe(job) \
                    and fits(job, slot_ad):
                job.matched = True
                self._starts.append(time.monotonic())
                if self._claim_change_uncommitted():
                    # the claim's last job still names it on disk: were the schedd to crash now, it
                    # would reconnect that job to this one's run
                    self._commit_now()
                return job
        return None

    # -- negotiation -------------------------------------------------------------------------
    async def cmd_negotiate(self, req: Request) -> list[dict[str, Any]]:
        """One resource request per autocluster of the submitter's idle jobs, with a count."""
        submitter = req.arg_str("submitter", required=True)  # owner@domain, or group.user@domain
        owner = submitter.split("@", 1)[0]
        limit = req.arg_int("limit") or 200  # NEGOTIATOR_RESOURCE_REQUEST_LIST_SIZE
        slot_ads = req.arg_list("slot_ads", dict)
        skip = req.arg_list("skip", int)
        if not all(map(is_wire_ad, slot_ads)):
            raise CommandError("NEGOTIATE: argument 'slot_ads' must be a list of ClassAds", "BAD_REQUEST")
        self.autoclusters.learn_slots([ClassAd.from_wire(w) for w in slot_ads])
        if not self.may_start():
            return []
        domain = self.uid_domain
        idle = [j for j in self.jobs.values()
                if j.status == IDLE and not j.matched and (j.owner == owner or "." in owner) and not ap_universe(j)
                and submitter_name(j, domain) == submitter]
        return self.autoclusters.requests(idle, limit, skip)

    async def cmd_matches(self, req: Request) -> int:
        started = 0
        spares: dict[int, Iterator[Job]] = {}  # per autocluster: its idle jobs, found once per call
        matches = req.arg_list("matches", dict, required=True)
        bad = next((m for m in matches if not _good_match(m)), None)
        if bad is not None:
            raise CommandError("MATCHES: each match must be {id: \"<cluster>.<proc>\", autocluster: <integer> | null, "
                               "slot_ad: <ClassAd>, claim_id: <string>, preempt: null | \"rank\" | \"priority\"}; "
                               f"got {str(bad)[:200]}", "BAD_REQUEST")
        for m in matches:
            if not self.may_start():
                delay = self.knob_int("JOB_START_DELAY", 0)
                if delay > 0:  # held back by the start pace: ask again once a start is due
                    self.spawn(self._reschedule_later(delay), "reschedule")
                break
            job = self._job_for_match(m, spares)
            if job is None:
                continue
            job.matched = True
            self._starts.append(time.monotonic())
            shadow = Shadow(self, job, ClassAd.from_wire(m["slot_ad"]), str(m["claim_id"]), preempt=m.get("preempt"))
            task = shadow.task = self.spawn(shadow.run(), f"shadow {job.id_text}")
            self.shadow_tasks.add(task)
            task.add_done_callback(self.shadow_tasks.discard)
            started += 1
        return started

    def _job_for_match(self, m: dict[str, Any], spares: dict[int, Iterator[Job]]) -> Job | None:
        """The matched job, or (for a match made for an autocluster) another idle job of it."""
        c, _, p = str(m["id"]).partition(".")
        job = self.jobs.get((int(c), int(p)))
        if job is not None and job.status == IDLE and not job.matched:
            return job
        if job is None or m.get("autocluster") is None:
            return None
        acid = int(m["autocluster"])
        if acid not in spares:
            spares[acid] = self.autoclusters.idle_members(list(self.jobs.values()), job.owner, acid)
        return next((j for j in spares[acid] if j.status == IDLE and not j.matched and not ap_universe(j)), None)

    async def _reschedule_later(self, delay: float) -> None:
        await asyncio.sleep(delay)
        self.reschedule()

    def reschedule(self) -> None:
        """Ask the negotiator for a cycle soon (coalescing bursts of submits); local and scheduler
        universe jobs need no negotiator and are started here."""
        self.local.start_soon()
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
        counts = self.counters.total
        ad = self.base_ad("Scheduler")
        ad["ScheddIpAddr"] = str(self.server.address)
        ad["TotalIdleJobs"], ad["TotalRunningJobs"] = counts[IDLE], counts[RUNNING]
        ad["TotalHeldJobs"], ad["TotalRemovedJobs"] = counts[HELD], counts[REMOVED]
        ad["TotalJobAds"] = len(self.jobs)
        for k, v in self.local.ad_attributes().items():
            ad[k] = v
        ad["NumUsers"] = len(self.counters.by_owner)
        ad["MaxJobsRunning"] = self.knob_int("MAX_JOBS_RUNNING", 10000)
        ad["MaxJobsSubmitted"] = self.knob_int("MAX_JOBS_SUBMITTED", 2**31 - 1)
        ad["MaxJobsPerOwner"] = self.knob_int("MAX_JOBS_PER_OWNER", 100000)
        ad["MaxJobsPerSubmission"] = self.knob_int("MAX_JOBS_PER_SUBMISSION", 2**31 - 1)
        ad["TotalSubmitters"] = len(self.counters.by_owner)
        if (self.config.get("SCHEDD_COLLECT_STATS_BY_Owner") or "false").lower() not in ("false", "0"):
            for owner, c in self.counters.by_owner.items():
                if owner.isidentifier():
                    ad[f"Owner_{owner}_JobsIdle"], ad[f"Owner_{owner}_JobsRunning"] = c[IDLE], c[RUNNING]
                    ad[f"Owner_{owner}_JobsHeld"] = c[HELD]
        return ad

    def submitter_ads(self) -> list[ClassAd]:
        owners = set(self.counters.by_owner)
        ads = []
        grouped = group_submitters(self.clusters.values(), self.jobs.values(),
                                   self.uid_domain)  # accounting groups negotiate as group.user@domain
        for gname, (gowner, gidle, grunning) in sorted(grouped.items()):
            ad = self.base_ad("Submitter")
            ad["Name"], ad["Owner"], ad["ScheddName"] = gname, gowner, self.name
            ad["ScheddIpAddr"] = str(self.server.address)
            ad["IdleJobs"], ad["RunningJobs"], ad["HeldJobs"] = gidle, grunning, 0
            ads.append(ad)
        for owner in sorted(owners | self._owners_seen):
            c = self.counters.by_owner.get(owner)
            ad = self.base_ad("Submitter")
            ad["Name"] = f"{owner}@{self.uid_domain}"
            ad["Owner"] = owner
            ad["ScheddName"] = self.name
            ad["ScheddIpAddr"] = str(self.server.address)
            ap = self.local.ad_attributes(owner) if self.local.jobs else {}  # AP jobs are not negotiated
            ad["IdleJobs"] = (c[IDLE] if c else 0) - ap.get("LocalJobsIdle", 0) - ap.get("SchedulerJobsIdle", 0) \
                - sum(g[1] for g in grouped.values() if g[0] == owner)
            ad["RunningJobs"] = (c[RUNNING] if c else 0) - ap.get("LocalJobsRunning", 0) \
                - ap.get("SchedulerJobsRunning", 0) - sum(g[2] for g in grouped.values() if g[0] == owner)
            for k, v in ap.items():
                ad[k] = v
            ad["HeldJobs"] = c[HELD] if c else 0
            ads.append(ad)
        self._owners_seen = owners
        return ads

    async def publish(self) -> None:
        await super().publish()
        for ad in self.submitter_ads():
            if not await self.advertiser.update("Submitter", ad.to_wire()):
                return

    async def startup(self) -> None:
        interval = lambda: max(1, self.knob_int("PERIODIC_EXPR_INTERVAL", 60))  # noqa: E731
        self.every(interval, self.periodic_policy, "periodic job policy", first=interval())
        self.every(interval, self.spool.sweep_completed, "completed jobs left in the queue", first=interval())
        self.spool.sweep_stages()
        for cluster in list(self.clusters.values()):
            if cluster.pending:
                self._materialize_soon(cluster)
        self.every(lambda: float(self.alive_interval()), self.keepalive.send, "claim keep-alives",
                   first=float(self.alive_interval()))
        self._start_reconnects()
        if self.counters.total[IDLE]:
            self.reschedule()

    def _start_reconnects(self) -> None:
        """A shadow for each job found RUNNING with a claim: it reconnects within the job's lease."""
        jobs, self._reconnects = self._reconnects, []
        for job in jobs:
            if self.jobs.get(job.id) is not job:
                continue
            shadow = Shadow.for_reconnect(self, job)
            task = shadow.task = self.spawn(shadow.reconnect(), f"shadow {job.id_text} (reconnect)")
            self.shadow_tasks.add(task)
            task.add_done_callback(self.shadow_tasks.discard)

    async def shutdown(self, fast: bool) -> None:
        """Graceful or fast: end the shadows (their claims close, so the startds stop the jobs);
        running jobs stay RUNNING in the queue and are requeued when the schedd starts again.

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
        if not fast:
            await self._vacate_for_shutdown()
        for task in list(self.shadow_tasks):
            task.cancel()
        await asyncio.gather(*self.shadow_tasks, return_exceptions=True)
        if self._usage_flush is not None:
            self._usage_flush.cancel()
            self._flush_usage()
        if self._queue_closed:  # a fast shutdown after a graceful one that got this far
            return
        await self._commit()  # a SIGTERM loses no job change
        if self._history_written:  # the rows of jobs the last commit let go
            await self._commit()
        self._queue_closed = True
        counts = self._commit_counts
        self.log.info("job queue: %d commits of %d job changes (%d on the loop, before a claim ran its next job)",
                      counts["commits"], counts["changes"], counts["on the loop"])
        self.queue.close()

    async def _vacate_for_shutdown(self) -> None:
        """Graceful shutdown: the running jobs are stopped and requeued and their claims released
        (a fast shutdown, or a crash, leaves them running for the next schedd to reconnect to)."""
        shadows = [s for s in self.claim_holders if s.task is not None and not s.task.done()]
        for shadow in shadows:
            if shadow.running:
                self.spawn(shadow.kill(evict="the schedd is shutting down"), f"vacate {shadow.job.id_text}")
        tasks = {s.task for s in shadows if s.task is not None}
        if tasks:
            self.log.info("graceful shutdown: vacating %d running job(s) and releasing their claims", len(tasks))
            await asyncio.wait(tasks, timeout=30)

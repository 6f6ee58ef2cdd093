"""The job lifecycle the shadows report to (``ScheddForShadows``, htcd/schedd/shadow_api.py):
a job activating, running, sending usage, disconnecting and reconnecting, and how its run ended
-- exited, lost, vacated, held, removed -- each with its status change, durable ad and event.

The schedd holds one (``Schedd.lifecycle``) and gives it to its shadows as their schedd."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from htcd.classad import ClassAd
from htcd.schedd import holdcodes, machineattrs, periodic, userlog
from htcd.schedd.jobs import COMPLETED, HELD, IDLE, RUNNING, Job, job_prio, top_prio
from htcd.schedd.local import ap_universe
from htcd.schedd.queue import JobId
from htcd.schedd.shadow import Shadow, fits
from htcd.schedd.shadow_api import RunningShadow
from htcd.schedd.spool import is_spooled

if TYPE_CHECKING:
    from htcd.config import Config
    from htcd.schedd.daemon import Schedd

# The claim's secret and its public part: never logged, never in a query's answer or the history.
CLAIM_ATTRS = ("ClaimId", "PublicClaimId")
# What a running job's usage samples set in its ad (sizes in KiB, MemoryUsage in MB, CPU in s).
USAGE_ATTRS = ("ImageSize", "ResidentSetSize", "MemoryUsage", "RemoteUserCpu", "RemoteSysCpu", "DiskUsage")
USAGE_FLUSH_DELAY = 5.0  # seconds usage samples of running jobs are gathered before one commit


def forget_claim(job: Job) -> bool:
    """Take the claim off the job's ad; whether it named one."""
    had = any(k in job.proc for k in CLAIM_ATTRS)
    for k in CLAIM_ATTRS:
        job.proc.pop(k, None)
    return had


def _run_resources(job: Job, now: int) -> tuple[dict[str, object], dict[str, object]]:
    """The usage and request columns of an evicted event's Partitionable Resources table: the
    run's average CPUs (its CPU time over its wall time), its disk and memory usage."""
    wall = now - int(job.get("JobCurrentStartDate", now) or now)
    cpu = float(job.get("RemoteUserCpu", 0) or 0) + float(job.get("RemoteSysCpu", 0) or 0)
    usage = {"Cpus": round(cpu / wall, 2) if wall > 0 else 0.0, "Disk": job.get("DiskUsage"),
             "Memory": job.get("MemoryUsage")}
    return usage, {k: job.get(f"Request{k}") for k in ("Cpus", "Disk", "Memory")}


def _run_wall(job: Job, now: int) -> float:
    """Seconds of the current run (since JobCurrentStartDate; 0 for a job that is not running,
    a running job being removed counting as running until its shadow is done)."""
    ran = job.status == RUNNING or (job.removing and job.get("LastJobStatus") == RUNNING)
    if not ran:
        return 0.0
    return float(max(0, now - int(job.get("JobCurrentStartDate", now) or now)))


def _wall_after_run(job: Job, now: int) -> float:
    """RemoteWallClockTime once the current run ends: HTCondor's is cumulative over every run
    (evicted, held, removed or exited), not the last run's."""
    return float(job.get("RemoteWallClockTime", 0) or 0) + _run_wall(job, now)


def _uncommitted(job: Job, now: int) -> int:
    """Seconds of the current run not committed yet: since its start or its last checkpoint."""
    since = max(int(job.get("JobLastCheckpointTime", 0) or 0), int(job.get("JobCurrentStartDate", 0) or 0))
    return max(0, now - since) if since else 0


class JobLifecycle:
    """The schedd as its shadows see it (``ScheddForShadows``)."""

    def __init__(self, schedd: Schedd) -> None:
        self.schedd = schedd
        self._usage_dirty: dict[JobId, Job] = {}
        self._usage_flush: asyncio.TimerHandle | None = None

    @property
    def config(self) -> Config:
        return self.schedd.config

    @property
    def log(self) -> logging.Logger:
        return self.schedd.log

    @property
    def shadow_log(self) -> logging.Logger:
        return self.schedd.shadow_log

    @property
    def hostname(self) -> str:
        return self.schedd.hostname

    @property
    def jobs(self) -> dict[JobId, Job]:
        return self.schedd.jobs

    @property
    def claim_holders(self) -> set[Shadow]:
        return self.schedd.claim_holders

    def spawn(self, coro: Awaitable[Any], what: str) -> asyncio.Task[Any]:
        return self.schedd.spawn(coro, what)

    def alive_interval(self) -> int:
        return max(1, self.schedd.knob_int("ALIVE_INTERVAL", 300))

    # -- the claim -------------------------------------------------------------------------
    async def claims_settled(self) -> None:
        """Returns once no change that took a claim off a job is waiting to be committed: a
        shadow that awaits this before running its claim's next job spares the loop the commit
        ``next_job_for_claim`` would otherwise make at once."""
        await self.schedd.store.claims_settled()

    def next_job_for_claim(self, slot_ad: ClassAd, owner: str) -> Job | None:
        """Reuse a claim: the owner's idle job that fits the slot, the highest JobPrio first and
        the first in the queue among equals (as HTCondor's schedd picks it).  The scan stops at
        the first fitting job no other can outrank; fits() is tried only on jobs that would."""
        if self.schedd.stopping.is_set() or not self.schedd.may_start():
            return None
        top = top_prio(self.schedd.clusters.values())
        best: Job | None = None
        best_prio = 0
        for job in self.schedd.jobs.values():
            if job.status != IDLE or job.matched or job.owner != owner or ap_universe(job):
                continue
            prio = job_prio(job)
            if best is not None and prio <= best_prio:
                continue
            if not fits(job, slot_ad):
                continue
            best, best_prio = job, prio
            if top is not None and prio >= top:
                break
        if best is not None:
            best.matched = True
            self.schedd.job_policy.started()
            if self.schedd.store.claim_change_uncommitted():
                # the claim's last job still names it on disk: were the schedd to crash now, it
                # would reconnect that job to this one's run
                self.schedd.store.commit_now()
        return best

    def unmatch(self, job: Job) -> None:
        job.matched = False
        self.schedd.negotiation.reschedule()

    # -- a job's run -----------------------------------------------------------------------
    def job_activating(self, job: Job, shadow: RunningShadow) -> None:
        """A shadow asks the startd to run ``job``: removals and holds go through the shadow now.
        ShadowBday: the run's start as AllowedJobDuration counts it (before the input goes)."""
        self.schedd.shadows[job.id] = shadow
        starts = int(job.get("NumShadowStarts", 0) or 0) + 1
        # NumShadowStarts counts shadows started for the job; JobRunCount is its older name.
        job.set(ShadowBday=int(time.time()), NumShadowStarts=starts, JobRunCount=starts)

    def job_started(self, job: Job, slot_ad: ClassAd, shadow: RunningShadow) -> None:
        """The job runs: RUNNING, the execute event, and (for a claim) the claim in the durable ad,
        so that a restarted schedd finds the job again."""
        now = int(time.time())
        self.schedd.shadows[job.id] = shadow
        claim: dict[str, Any] = {}
        claim_id = str(getattr(shadow, "claim_id", "") or "")
        if claim_id:
            claim = {"ClaimId": claim_id, "PublicClaimId": claim_id.rsplit("#", 1)[0],
                     "LastJobLeaseRenewal": now}
        machineattrs.record(job, slot_ad)
        self.schedd.set_status(job, RUNNING, JobStartDate=job.get("JobStartDate") or now, JobCurrentStartDate=now,
                        NumJobStarts=int(job.get("NumJobStarts", 0) or 0) + 1,
                        NumJobMatches=int(job.get("NumJobMatches", 0) or 0) + 1, LastMatchTime=now,
                        RemoteHost=str(slot_ad.get_value("Name", "")), StartdIpAddr=shadow.startd, **claim)
        self.schedd.store.persist(job)
        self.schedd.allocated[job.id] = {k: slot_ad.get_value(k) for k in ("Cpus", "Disk", "Memory")}
        self.schedd.events.event(job, userlog.execute(job.cluster_id, job.proc_id, shadow.startd,
                                               str(slot_ad.get_value("Name", ""))))
        self.schedd.publish_soon()

    def job_not_started(self, job: Job, why: str) -> None:
        """The startd did not start the job (activation refused or lost): it is idle again."""
        self.schedd.shadows.pop(job.id, None)
        self.schedd.allocated.pop(job.id, None)
        job.matched = False
        if job.removing:
            self.finish_removal(job)
            return
        if job.status == RUNNING:  # lost after all (should not happen): back to idle
            self.schedd.set_status(job, IDLE)
            forget_claim(job)
            self.schedd.store.persist(job)
        self.schedd.log.info("job %s did not start: %s", job.id_text, why)
        self.schedd.negotiation.reschedule()

    def job_usage(self, job: Job, usage: dict[str, Any]) -> None:
        """A usage sample of a running job: into its ad at once (htcd q shows it), to disk with the
        other samples of the next few seconds (one commit), and an image size event when the
        job's image grew."""
        if job.id not in self.schedd.jobs:
            return
        began = usage.get("JobCurrentStartExecutingDate")
        if isinstance(began, int) and not isinstance(began, bool) \
                and job.text("JobCurrentStartExecutingDate") != str(began):  # the starter started the job
            job.set(JobCurrentStartExecutingDate=began)
            self.schedd.store.persist(job)
        attrs = {k: usage[k] for k in USAGE_ATTRS if isinstance(usage.get(k), (int, float))}
        if not attrs:
            return
        before = int(float(job.text("ImageSize") or 0))
        job.set(**attrs)
        size = int(attrs.get("ImageSize", 0) or 0)
        if size > before:
            self.schedd.events.event(job, userlog.image_size(job.cluster_id, job.proc_id, size,
                                                      int(attrs.get("MemoryUsage", 0) or 0) or None,
                                                      int(attrs.get("ResidentSetSize", 0) or 0) or None))
        self._usage_dirty[job.id] = job
        if self._usage_flush is None:
            self._usage_flush = asyncio.get_running_loop().call_later(USAGE_FLUSH_DELAY, self.flush_usage)

    def job_checkpointed(self, job: Job, number: int, when: int, usage: dict[str, Any]) -> None:
        """A checkpoint of the running job is in its spool (docs/checkpoint.md): its number and
        time, and the run's time up to it is committed (``CommittedTime``), as HTCondor's shadow
        records them."""
        if job.id not in self.schedd.jobs:
            return
        job.set(CheckpointNumber=number, JobLastCheckpointTime=when,
                CommittedTime=int(job.get("CommittedTime", 0) or 0) + _uncommitted(job, when))
        self.schedd.store.persist(job)
        self.job_usage(job, usage)

    def flush_usage(self) -> None:
        """The usage samples (and lease renewals) gathered since the last flush go to disk."""
        if self._usage_flush is not None:
            self._usage_flush.cancel()
        self._usage_flush = None
        dirty, self._usage_dirty = self._usage_dirty, {}
        live = [j for jid, j in dirty.items() if self.schedd.jobs.get(jid) is j]
        if live:
            self.schedd.store.persist(*live)

    def lease_renewed(self, jobs: list[Job], when: int) -> None:
        """The startd answered the keep-alive of these running jobs' claims (LastJobLeaseRenewal)."""
        for job in jobs:
            if self.schedd.jobs.get(job.id) is job and job.status == RUNNING:
                job.set(LastJobLeaseRenewal=when)
                self._usage_dirty[job.id] = job
        if self._usage_dirty and self._usage_flush is None:
            self._usage_flush = asyncio.get_running_loop().call_later(USAGE_FLUSH_DELAY, self.flush_usage)

    def job_disconnected(self, job: Job, why: str, slot: str, startd: str) -> None:
        self.schedd.events.event(job, userlog.disconnected(job.cluster_id, job.proc_id, why, slot, startd))

    def job_reconnected(self, job: Job, slot: str, startd: str, starter: str) -> None:
        job.set(LastJobLeaseRenewal=int(time.time()))
        self.schedd.store.persist(job)
        self.schedd.events.event(job, userlog.reconnected(job.cluster_id, job.proc_id, slot, startd, starter))
        self.schedd.log.info("job %s: reconnected to %s", job.id_text, slot)

    def reconnect_failed(self, job: Job, reason: str, slot: str) -> None:
        """The running job could not be found again (its lease ran out): event 024, back to idle."""
        self.schedd.events.event(job, userlog.reconnect_failed(job.cluster_id, job.proc_id, reason, slot))
        self.schedd.log.info("job %s: reconnection to %s failed (%s); rescheduling it", job.id_text, slot, reason)
        self.job_lost(job, reason, event=False)

    # -- how it ended ----------------------------------------------------------------------
    def hold(self, job: Job, reason: str, code: int = 0, subcode: int = 0) -> None:
        ran = job.status == RUNNING
        if ran:
            job.set(RemoteWallClockTime=_wall_after_run(job, int(time.time())))
        holdcodes.keep_as_last(job, ("ReleaseReason",))
        self.schedd.set_status(job, HELD, HoldReason=reason, HoldReasonCode=code, HoldReasonSubCode=subcode)
        job.proc.update(holdcodes.counted(job.proc, code))  # NumHolds, NumHoldsByReason
        forget_claim(job)
        if ran:
            machineattrs.rotate(job)
        self.schedd.store.persist(job)
        job.matched = False
        self.schedd.events.event(job, userlog.held(job.cluster_id, job.proc_id, reason, code, subcode))
        self.schedd.log.info("job %s held: %s", job.id_text, reason)
        self.schedd.publish_soon()

    def job_exited(self, job: Job, result: dict[str, Any], bytes_received: int, bytes_sent: int) -> None:
        self.schedd.shadows.pop(job.id, None)
        forget_claim(job)
        now = int(time.time())
        sig = result.get("signal")
        # NumJobCompletions: the runs that ended in an exit, which max_retries' OnExitRemove counts
        attrs: dict[str, Any] = {"CompletionDate": now, "ExitBySignal": sig is not None,
                                 "NumJobCompletions": int(job.get("NumJobCompletions", 0) or 0) + 1,
                                 "RemoteUserCpu": float(result.get("user_cpu") or 0.0),
                                 "RemoteSysCpu": float(result.get("sys_cpu") or 0.0),
                                 "ResidentSetSize": int(result.get("max_rss_kb") or 0),
                                 "RemoteWallClockTime": _wall_after_run(job, now),
                                 # the run's time since its start or last checkpoint is committed now
                                 "CommittedTime": int(job.get("CommittedTime", 0) or 0) + _uncommitted(job, now)}
        if sig is None:
            attrs["ExitCode"] = int(result.get("exit_code") or 0)
            job.proc.pop("ExitSignal", None)
        else:  # an earlier run's exit code must not decide this run's OnExitRemove
            attrs["ExitSignal"] = int(sig)
            attrs["JobCoreDumped"] = bool(result.get("core_file"))
            job.proc.pop("ExitCode", None)
        rss = attrs["ResidentSetSize"]
        if rss:
            attrs["ImageSize"] = max(rss, int(job.get("ImageSize", 0) or 0))
            attrs["MemoryUsage"] = (rss + 1023) // 1024
        job.set(**attrs)
        wall = _run_wall(job, now)
        usage = {"Cpus": round((attrs["RemoteUserCpu"] + attrs["RemoteSysCpu"]) / wall, 2) if wall > 0 else 0.0,
                 "Disk": job.get("DiskUsage"), "Memory": attrs.get("MemoryUsage")}
        request = {k: job.get(f"Request{k}") for k in ("Cpus", "Disk", "Memory")}
        if rss:
            self.schedd.events.event(job, userlog.image_size(job.cluster_id, job.proc_id, attrs["ImageSize"],
                                                      attrs["MemoryUsage"], rss))
        self.schedd.events.event(job, userlog.terminated(
            job.cluster_id, job.proc_id, exit_code=result.get("exit_code"), signal=sig,
            user_cpu=attrs["RemoteUserCpu"], sys_cpu=attrs["RemoteSysCpu"], sent=bytes_sent,
            received=bytes_received, core_file=str(result.get("core_file") or ""), usage=usage, request=request,
            allocated=self.schedd.allocated.pop(job.id, {})))
        outcome = periodic.on_exit(job)
        if outcome == "hold":
            self.hold(job, "The job attribute OnExitHold expression evaluated to TRUE",
                      code=periodic.ON_EXIT_HOLD_CODE)
            return
        if outcome == "requeue":
            job.matched = False
            self.schedd.set_status(job, IDLE)
            job.proc.pop("CompletionDate", None)
            machineattrs.rotate(job)
            if not self.schedd.job_policy.cron(job, force=True):  # the next time of its schedule
                return
            self.schedd.store.persist(job)
            self.schedd.log.info("job %s exited; OnExitRemove is false, so it runs again", job.id_text)
            self.schedd.negotiation.reschedule()
            return
        if is_spooled(job):
            self.schedd.spool.note_output(job, result)
        self.schedd.set_status(job, COMPLETED)
        self.schedd.store.persist(job)
        self.schedd.log.info("job %s completed: %s", job.id_text, f"signal {sig}" if sig is not None
                      else f"exit code {attrs['ExitCode']}")
        if self.schedd.spool.leave_in_queue(job):  # kept for its output (spooled) or by leave_in_queue
            self.schedd.publish_soon()
            return
        self.schedd.leave_queue(job)

    def finish_removal(self, job: Job) -> None:
        if _run_wall(job, now := int(time.time())):
            job.set(RemoteWallClockTime=_wall_after_run(job, now))
        self.schedd.shadows.pop(job.id, None)
        self.schedd.allocated.pop(job.id, None)
        forget_claim(job)
        self.schedd.events.event(job, userlog.aborted(job.cluster_id, job.proc_id, str(job.get("RemoveReason", ""))))
        self.schedd.leave_queue(job)

    def job_lost(self, job: Job, why: str, event: bool = True) -> None:
        """The job's run ended without an exit (evicted, vacated, lost): back to idle, or finish a
        pending removal; ``event``: the evicted event (004)."""
        self.schedd.shadows.pop(job.id, None)
        allocated = self.schedd.allocated.pop(job.id, None)
        job.matched = False
        if job.removing:
            self.finish_removal(job)
            return
        if job.status == RUNNING:
            now = int(time.time())
            usage, request = _run_resources(job, now)  # before the run's start is forgotten
            self.schedd.set_status(job, IDLE, LastVacateTime=now, RemoteWallClockTime=_wall_after_run(job, now))
            forget_claim(job)
            machineattrs.rotate(job)
            self.schedd.store.persist(job)
            if event:
                self.schedd.events.event(job, userlog.evicted(job.cluster_id, job.proc_id, why, usage=usage,
                                                              request=request, allocated=allocated or {}))
        self.schedd.negotiation.reschedule()

    def job_vacated(self, job: Job) -> None:
        """The job was stopped by a hold while running; it stays held."""
        self.schedd.shadows.pop(job.id, None)
        self.schedd.allocated.pop(job.id, None)
        job.matched = False
        if forget_claim(job):
            self.schedd.store.persist(job)

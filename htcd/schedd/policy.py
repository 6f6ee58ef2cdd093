"""The schedd's job policy: the periodic expressions (periodic_hold/release/remove and their
SYSTEM_ versions, ``htcd/schedd/periodic.py``) evaluated over the queue, and the pace of job
starts (MAX_JOBS_RUNNING, JOB_START_COUNT jobs per JOB_START_DELAY seconds)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from htcd.pacer import Pacer
from htcd.schedd import crontab, periodic
from htcd.schedd.jobs import IDLE, Job
from htcd.schedd.shadow import JOB_SHOULD_REMOVE, Shadow

if TYPE_CHECKING:
    from htcd.schedd.daemon import Schedd


class JobPolicy:
    def __init__(self, schedd: Schedd) -> None:
        self.schedd = schedd
        self._starts: list[float] = []  # recent job starts, for JOB_START_DELAY/JOB_START_COUNT
        self._start_knobs: tuple[object, int, int, int] | None = None  # (config, the three knobs of may_start)

    async def periodic(self) -> None:
        """Evaluate periodic_hold/release/remove and their SYSTEM_ versions over the queue."""
        schedd, actions = self.schedd, self.schedd.actions
        acted = 0
        pacer = Pacer()
        for i, job in enumerate(list(schedd.jobs.values())):
            if i & 15 == 0 and pacer.due():
                await pacer.pause()
            if job.id not in schedd.jobs or job.removing:
                continue
            if job.status == IDLE and not job.matched and not self.cron(job):
                continue  # held: its schedule is invalid
            decision = periodic.decide(schedd.config, job)
            if decision is None:
                continue
            acted += 1
            shadow = schedd.shadows.get(job.id)
            if decision.action == "remove" and isinstance(shadow, Shadow):
                shadow.kill_code = JOB_SHOULD_REMOVE  # removed by policy while running
            if decision.action == "hold":
                actions.hold(job, decision.reason, code=decision.code)
            elif decision.action == "remove":
                actions.remove(job, decision.reason)
            else:
                actions.release(job, decision.reason)
        if acted:
            schedd.publish_soon()

    def cron(self, job: Job, force: bool = False) -> bool:
        """An idle job with a crontab schedule gets its next DeferralTime (htcd/schedd/crontab.py);
        False when the schedule is invalid and the job was held for it."""
        result = crontab.next_deferral(job, time.time(), force)
        if result is None:
            return True
        if isinstance(result, str):
            self.schedd.actions.hold(job, result, code=crontab.INVALID_CRON_SETTINGS)
            return False
        job.set(DeferralTime=result)
        self.schedd.store.persist(job)
        self.schedd.log.info("job %s: next run of its cron schedule at %s", job.id_text,
                             time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(result)))
        return True

    def may_start(self) -> bool:
        """MAX_JOBS_RUNNING and JOB_START_COUNT jobs per JOB_START_DELAY seconds."""
        schedd = self.schedd
        knobs = self._start_knobs
        if knobs is None or knobs[0] is not schedd.config:
            # read once per config (a reconfig makes a new one): once per match, the lookups were
            # a third of a MATCHES call of 4,000 matches
            knobs = self._start_knobs = (schedd.config, schedd.knob_int("MAX_JOBS_RUNNING"),
                                         schedd.knob_int("JOB_START_DELAY", 0),
                                         max(1, schedd.knob_int("JOB_START_COUNT", 1)))
        _, max_running, delay, count = knobs
        if max(len(schedd.shadows), len(schedd.shadow_tasks)) >= max_running:
            return False
        if delay <= 0:
            return True
        now = time.monotonic()
        self._starts = [t for t in self._starts if now - t < delay]
        return len(self._starts) < count

    def started(self) -> None:
        """A job was matched to run: it counts against JOB_START_COUNT."""
        self._starts.append(time.monotonic())

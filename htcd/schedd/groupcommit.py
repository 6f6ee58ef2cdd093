"""Group commit of the job queue: job changes made in memory wait, and are written together in one
SQLite transaction per loop turn, from a worker thread, so 100,000 changes cost a few commits, not
100,000.  A client command awaits the commit of its changes before it answers, so what it was told
is durable.  Jobs that left the queue get their history records once their leaving is committed,
and their rows go with the next commit."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from htcd.daemon.log import parse_size
from htcd.errors import UserError
from htcd.pacer import Pacer
from htcd.schedd import history
from htcd.schedd.jobs import Job
from htcd.schedd.queue import JobId, Writes
from htcd.wire.errors import CommandError

if TYPE_CHECKING:
    from htcd.schedd.daemon import Schedd

T = TypeVar("T")
HISTORY_SLICE = 0.01  # seconds of history formatting per turn of the loop
FORGET_DELAY = 1.0  # seconds the rows of jobs in the history wait for a commit to delete them


class Changes:
    """Job changes not yet committed: the jobs whose ads changed (their ads are read when the
    transaction is built, so the latest state goes) and the jobs that left the queue."""

    __slots__ = ("left", "procs")

    def __init__(self) -> None:
        self.procs: dict[JobId, Job] = {}
        self.left: dict[JobId, Job] = {}

    def __bool__(self) -> bool:
        return bool(self.procs or self.left)


class GroupCommit:
    """The schedd's pending job changes and their commits.

    Changes wait in ``pending`` and are committed together once per loop turn: one async commit
    at a time (``_turn``), and every commit -- async in a worker thread, or on the loop at a
    claim's reuse -- takes and stores its snapshot under ``_order``, so the disk gets the changes
    in the order memory had them."""

    def __init__(self, schedd: Schedd) -> None:
        self.schedd = schedd
        self.queue = schedd.queue
        self.pending = Changes()
        self._turn = asyncio.Lock()
        self._order = threading.Lock()
        self._committer: asyncio.Task[None] | None = None
        self._inflight: Writes | None = None  # the async commit's writes while its thread runs
        self.durable_claims: set[JobId] = set()  # jobs whose stored ad names a claim
        self.history_written: list[JobId] = []  # gone jobs now in the history: deleted by the next commit
        self._forget_timer: asyncio.TimerHandle | None = None
        self.closed = False
        self.counts = Counter[str]()  # commits, job changes, commits on the loop (claim reuse)

    def persist(self, *jobs: Job) -> None:
        """The jobs' ads changed: committed with the other changes of this loop turn (a client
        command commits them before it answers)."""
        for j in jobs:
            self.pending.procs[j.id] = j
        self.soon()

    def left(self, job: Job) -> None:
        """The job left the queue: on disk it is marked gone by the next commit and deleted once
        its history record is written (``htcd/schedd/queue.py``)."""
        self.pending.procs.pop(job.id, None)
        self.pending.left[job.id] = job
        self.soon()

    def soon(self) -> None:
        """Commit the pending changes at the next loop turn (and again while more arrive)."""
        if self._committer is None and not self.closed:
            self._committer = self.schedd.spawn(self._commit_pending(), "commit job changes")

    async def _commit_pending(self, once: bool = False) -> None:
        try:
            while (once or self.pending) and not self.closed:
                once = False
                try:
                    await self.commit()
                except (sqlite3.Error, OSError) as exc:
                    self.schedd.log.error("cannot commit job changes to %s (trying again in 1 s): %s",
                                          self.queue.path, exc)
                    await asyncio.sleep(1.0)
        finally:
            self._committer = None

    def _take(self) -> tuple[Writes, list[Job]]:
        """The pending changes as one transaction's writes, and the jobs that left; pending starts
        afresh.  Call with ``_order`` held.  The changed ads are copied now, on the loop, so the
        disk gets them as they were at this turn; the final ads of jobs that left are copied by
        the transaction's thread (``JobQueue.write``): nothing orders them against later changes,
        and copying 100,000 of them here held the loop ~60 ms at an ``htcd rm -all``."""
        pending, self.pending = self.pending, Changes()
        w = Writes()
        for jid, job in pending.procs.items():
            w.procs[jid] = dict(job.proc)
        left = list(pending.left.values())
        keep = bool(self.schedd.config.get("HISTORY"))
        for job in left:
            w.procs.pop(job.id, None)
            if keep:
                w.gone[job.id] = job.proc
            else:
                w.forget.append(job.id)
        w.forget += self.history_written
        self.history_written = []
        claims = self.durable_claims
        w.frees_claim = any(jid in claims and "ClaimId" not in ad for jid, ad in w.procs.items()) \
            or any(jid in claims for jid in w.gone) or any(jid in claims for jid in w.forget)
        return w, left

    def _store(self, w: Writes, then: Callable[[sqlite3.Cursor], T] | None = None) -> T | None:
        """One transaction (with ``_order`` held, in a worker thread or on the loop)."""
        result = self.queue.write(w, then)
        claims = self.durable_claims
        for jid, ad in w.procs.items():
            if "ClaimId" in ad:
                claims.add(jid)
            else:
                claims.discard(jid)
        for jid in (*w.gone, *w.forget):
            claims.discard(jid)
        self.counts["commits"] += 1
        self.counts["changes"] += len(w.procs) + len(w.gone)
        return result

    def _restore(self, w: Writes, left: list[Job]) -> None:
        """A commit failed: its changes are pending again (memory still has them)."""
        for jid in w.procs:
            job = self.schedd.jobs.get(jid)
            if job is not None:
                self.pending.procs.setdefault(jid, job)
        for job in left:
            self.pending.left.setdefault(job.id, job)
        self.history_written[:0] = w.forget
        self.soon()

    async def commit(self, then: Callable[[sqlite3.Cursor], T] | None = None) -> T | None:
        """Commit everything pending -- and ``then``'s writes, in the same transaction -- from a
        worker thread; returns once it is durable (and once anything committed before is).  A
        caller cancelled meanwhile does not stop it: the commit and its history records finish."""
        task = asyncio.ensure_future(self._commit_in_turn(then))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())  # its caller hears of a failure
        return await asyncio.shield(task)

    async def _commit_in_turn(self, then: Callable[[sqlite3.Cursor], T] | None) -> T | None:
        async with self._turn:
            if self.closed:
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

    def commit_now(self) -> None:
        """Commit what is pending at once, on the loop (after a commit in flight, if any)."""
        with self._order:
            w, left = self._take()
            if not len(w):
                return
            try:
                self._store(w)
            except (sqlite3.Error, OSError) as exc:
                self.schedd.log.error("cannot commit job changes to %s: %s", self.queue.path, exc)
                self._restore(w, left)
                return
        self.counts["on the loop"] += 1
        self.append_history(left)

    async def departures_recorded(self) -> None:
        """Returns once every job that left the queue so far has its history record written (or,
        with no HISTORY, its row deleted): the commit in progress, which writes the records of the
        jobs it took before it lets go of its turn, and the pending departures."""
        if (self.pending.left or self._turn.locked()) and not self.closed:
            await self.commit()

    async def claims_settled(self) -> None:
        """Returns once no change that took a claim off a job is waiting to be committed."""
        while self.claim_change_uncommitted() and not self.closed:
            await self.commit()

    def claim_change_uncommitted(self) -> bool:
        """Whether a change that took a claim off a job (it exited, was evicted, held, removed)
        is not yet on disk, where the job still names the claim."""
        inflight = self._inflight
        if inflight is not None and inflight.frees_claim:
            return True
        claims = self.durable_claims
        return any(jid in claims and "ClaimId" not in job.proc for jid, job in self.pending.procs.items()) \
            or any(jid in claims for jid in self.pending.left)

    def history_limits(self) -> tuple[int, int]:
        return (parse_size(self.schedd.config.get("MAX_HISTORY_LOG"), 20 * 1024 * 1024),
                self.schedd.knob_int("MAX_HISTORY_ROTATIONS", 2))

    def append_history(self, jobs: list[Job]) -> None:
        """Append committed jobs' records to the history; the next commit deletes their rows."""
        path = self.schedd.config.get("HISTORY")
        if not jobs or not path:
            return
        try:
            history.append(path, [j.ad for j in jobs], *self.history_limits())
        except (OSError, UserError) as exc:  # their rows stay: a restarted schedd tries again
            self.schedd.log.error("cannot write the history file: %s", exc)
            return
        self.history_written += [j.id for j in jobs]
        if self._forget_timer is None:  # the next commit deletes their rows; if none comes soon, one is made
            self._forget_timer = asyncio.get_running_loop().call_later(FORGET_DELAY, self._forget_soon)

    def _forget_soon(self) -> None:
        self._forget_timer = None
        if not self.history_written or self.closed:
            return
        if self._committer is not None:  # busy: it may take them; look again later
            self._forget_timer = asyncio.get_running_loop().call_later(FORGET_DELAY, self._forget_soon)
            return
        self._committer = self.schedd.spawn(self._commit_pending(once=True), "commit job changes")

    async def _write_history(self, jobs: list[Job]) -> None:
        """As ``append_history``, formatting a slice at a time on the loop (Python work a thread
        would not do sooner) when many jobs left at once (``htcd rm -all``)."""
        pacer = Pacer(HISTORY_SLICE)
        step = 32  # records a write (~0.2 ms of formatting each)
        for i in range(0, len(jobs), step):
            if i and pacer.due():
                await pacer.pause()
            self.append_history(jobs[i:i + step])

    async def close(self) -> None:
        """The last commits at shutdown (a SIGTERM loses no job change), then the queue closes."""
        if self.closed:  # a fast shutdown after a graceful one that got this far
            return
        await self.commit()
        if self.history_written:  # the rows of jobs the last commit let go
            await self.commit()
        self.closed = True
        counts = self.counts
        self.schedd.log.info("job queue: %d commits of %d job changes (%d on the loop, before a claim ran its "
                             "next job)", counts["commits"], counts["changes"], counts["on the loop"])
        self.queue.close()

"""The schedd's writes to the jobs' event logs (their ``log`` file and EVENT_LOG): as the job's
owner, with a job ad information event after each event of a job that asks for one, and -- while
one command changes many jobs -- batched into one write per log from a worker thread."""

from __future__ import annotations

import asyncio
import contextlib
import os
import pwd
import time
from collections import defaultdict
from typing import TYPE_CHECKING

from htcd.schedd import userlog
from htcd.schedd.jobs import Job

if TYPE_CHECKING:
    from htcd.schedd.daemon import Schedd


class EventBatch:
    """Event-log writes collected while one command changes many jobs (``htcd rm -all``): each
    event log gets one write, from a worker thread, so the event loop is never held by 100,000
    small writes.  (Their queue changes go with the pending changes: ``GroupCommit``.)"""

    def __init__(self) -> None:
        self.events: dict[tuple[str, int | None, int | None], list[str]] = defaultdict(list)
        self.count = 0

    def __len__(self) -> int:
        return self.count


class EventLogs:
    def __init__(self, schedd: Schedd) -> None:
        self.schedd = schedd
        self.batch: EventBatch | None = None  # set only between two awaits of a command changing many jobs
        self._ids_cache: dict[str, tuple[float, tuple[int | None, int | None]]] = {}

    def owner_ids(self, owner: str) -> tuple[int | None, int | None]:
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

    def targets(self, job: Job) -> list[str]:
        """The job's own log, a DAG node's nodes log (DAGManNodesLog, which its DAGMan follows),
        and the EVENT_LOG."""
        path, nodes = job.get("UserLog"), job.get("DAGManNodesLog")
        targets = [p for p in (path if isinstance(path, str) else None, nodes if isinstance(nodes, str) else None,
                               self.schedd.config.get("EVENT_LOG")) if p]
        iwd = str(job.get("Iwd", "") or "")
        full = [t if os.path.isabs(t) else os.path.join(iwd, t) for t in targets]
        return list(dict.fromkeys(full))  # a node whose log is the nodes log gets each event once

    def _for_target(self, job: Job, full: str, text: str) -> str:
        """The events of ``text`` that go to ``full``: all of them, except that the nodes log of a
        job with DAGManNodesMask gets only the event numbers it lists (as HTCondor's schedd)."""
        if "DAGManNodesMask" not in job.cluster.wire and "DAGManNodesMask" not in job.proc:
            return text
        nodes = job.get("DAGManNodesLog")
        if not isinstance(nodes, str):
            return text
        iwd = str(job.get("Iwd", "") or "")
        if full != (nodes if os.path.isabs(nodes) else os.path.join(iwd, nodes)):
            return text
        mask = userlog.event_mask(job.get("DAGManNodesMask"))
        return text if mask is None else userlog.only_events(text, mask)

    def write(self, job: Job, text: str, targets: list[str] | None = None) -> None:
        if self.batch is not None:
            for full in targets if targets is not None else self.targets(job):
                chosen = self._for_target(job, full, text)
                if chosen:
                    self.batch.events[(full, *self.owner_ids(job.owner))].append(chosen)
                    self.batch.count += 1
            return
        for full in targets if targets is not None else self.targets(job):
            chosen = self._for_target(job, full, text)
            if not chosen:
                continue
            try:
                userlog.append(full, chosen, *self.owner_ids(job.owner))
            except OSError as exc:
                self.schedd.log.error("job %s: cannot write event log %s: %s", job.id_text, full, exc)

    def collect(self, job: Job, text: str, targets: list[str],
                into: dict[tuple[str, int | None, int | None], list[str]]) -> None:
        """Add the job's events for these logs to ``into`` (log and owner -> texts), for
        ``append_all`` to write later: several clusters submitted together get one write per log."""
        for full in targets:
            chosen = self._for_target(job, full, text)
            if chosen:
                into.setdefault((full, *self.owner_ids(job.owner)), []).append(chosen)

    def append_all(self, writes: dict[tuple[str, int | None, int | None], list[str]]) -> None:
        """One write per log of what ``collect`` gathered (from a worker thread)."""
        for (full, uid, gid), texts in writes.items():
            try:
                userlog.append(full, "".join(texts), uid, gid)
            except OSError as exc:
                self.schedd.log.error("cannot write event log %s: %s", full, exc)

    def event(self, job: Job, text: str) -> None:
        self.write(job, self.with_information(job, text))

    @staticmethod
    def with_information(job: Job, text: str) -> str:
        """A job with ``job_ad_information_attrs`` gets a job ad information event (028) after
        each of its events, in the same write, so the pair is never split."""
        if "JobAdInformationAttrs" not in job.cluster.wire and "JobAdInformationAttrs" not in job.proc:
            return text
        attrs = userlog.information_attrs(job.wire())
        return text + userlog.job_ad_information(job.cluster_id, job.proc_id, attrs) if attrs else text

    async def flush(self, batch: EventBatch) -> None:
        """Write the events a command collected (one write per log, from a worker thread), then
        commit its job changes with everything pending: durable before the client hears."""
        if batch.events:
            def write() -> None:
                for (full, uid, gid), texts in batch.events.items():
                    try:
                        userlog.append(full, "".join(texts), uid, gid)
                    except OSError as exc:
                        self.schedd.log.error("cannot write event log %s: %s", full, exc)

            await asyncio.to_thread(write)
        await self.schedd.store.commit()

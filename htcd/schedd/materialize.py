"""Late materialization: a cluster with ``max_materialize`` or ``max_idle`` has more procs than
are jobs yet, and materializes more of them as its jobs leave the queue or start running.

Its further procs wait either as rows in the queue file (a submit that sent every proc) or as a
factory's submit digest and item data (``htcd.schedd.factory``), built a batch at a time; both are
as durable as the jobs, and a restarted schedd goes on where it was (JobMaterializeNextProcId)."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from htcd.classad import unparse
from htcd.schedd import limits, userlog
from htcd.schedd.factory import HELD_BY_USER, INVALID, RUNNING
from htcd.schedd.jobs import Cluster, Job
from htcd.submit.errors import SubmitError

if TYPE_CHECKING:
    from htcd.schedd.daemon import Schedd

BATCH = 1000  # procs a factory builds per event-loop turn (about a tenth of a second)


def paused(cluster: Cluster) -> bool:
    text = cluster.text("JobMaterializePaused")
    return text is not None and text.strip() not in ("", str(RUNNING))


class Materializer:
    def __init__(self, schedd: Schedd) -> None:
        self.schedd = schedd
        self._due: set[int] = set()

    def soon(self, cluster: Cluster) -> None:
        """Materialize more of ``cluster`` once the current step is over (never in the middle of
        a status change or a walk over the queue)."""
        if cluster.id in self._due:
            return
        self._due.add(cluster.id)
        asyncio.get_running_loop().call_soon(self._materialize, cluster)

    def room(self, cluster: Cluster) -> int:
        """How many procs ``cluster`` may materialize now: its own limits and, for a factory, the
        schedd's (MAX_JOBS_PER_OWNER... on materialized jobs, as HTCondor)."""
        schedd = self.schedd
        room = cluster.materialize_room()
        count = cluster.pending if room is None else min(room, cluster.pending)
        if cluster.factory is not None:
            system = limits.materialize_room(schedd.config, cluster.live, schedd.counters.jobs(cluster.owner),
                                             len(schedd.jobs) + schedd.submits.submitting)
            count = count if system is None else min(count, system)
        return max(0, count)

    def _materialize(self, cluster: Cluster) -> None:
        schedd = self.schedd
        self._due.discard(cluster.id)
        if schedd.clusters.get(cluster.id) is not cluster or paused(cluster):
            return
        count = self.room(cluster)
        if count <= 0:
            return
        if cluster.factory is not None:
            rows = self._build(cluster, min(count, BATCH))
            if len(rows) == BATCH and cluster.pending:
                self.soon(cluster)  # the rest at the next turn: the loop answers queries meanwhile
        else:
            rows = schedd.queue.materialize(cluster.id, count)  # durable before the jobs exist
            cluster.pending -= len(rows)
        host, now = str(schedd.server.address), time.time()
        for proc_id, proc in rows:
            job = Job(cluster, proc_id, proc)
            schedd.add_job(job)
            schedd.events.event(job, userlog.submit(cluster.id, proc_id, host, when=now, **userlog.submit_notes(job.text, job.get)))
        if not rows:
            return
        schedd.log.info("cluster %d: materialized %d procs, %d still to come", cluster.id, len(rows),
                        cluster.pending)
        schedd.publish_soon()
        schedd.negotiation.reschedule()

    def _build(self, cluster: Cluster, count: int) -> list[tuple[int, dict[str, str]]]:
        """The factory's next procs, built and committed (with JobMaterializeNextProcId); a digest
        that cannot build them pauses the factory (JobMaterializePaused = -1, with the reason)."""
        factory, schedd = cluster.factory, self.schedd
        try:
            rows = factory.build(cluster.wire, count)
        except (SubmitError, LookupError, TypeError, ValueError) as exc:  # a digest that does not fit its items
            schedd.log.error("cluster %d: cannot materialize proc %d: %s; materialization paused",
                             cluster.id, factory.next_proc, exc)
            self.pause(cluster, INVALID, f"cannot materialize proc {factory.next_proc}: {exc}")
            return []
        next_proc = rows[-1][0] + 1 if rows else factory.next_proc
        cluster.set_text("JobMaterializeNextProcId", str(next_proc))
        done = next_proc >= factory.total
        schedd.queue.materialize_factory(cluster.id, rows, next_proc, dict(cluster.wire), done)
        factory.next_proc = next_proc
        cluster.pending = factory.left
        if done:
            cluster.factory = None
        return rows

    def pause(self, cluster: Cluster, why: int, reason: str) -> None:
        """Stop materializing ``cluster`` (condor_hold of the cluster id, or a digest error)."""
        cluster.set_text("JobMaterializePaused", str(why))
        cluster.set_text("JobMaterializePauseReason", unparse(reason))
        self.schedd.queue.set_cluster_ad(cluster.id, dict(cluster.wire))

    def resume(self, cluster: Cluster) -> None:
        """condor_release of a cluster held with condor_hold: materialize again."""
        if not paused(cluster) or cluster.text("JobMaterializePaused") != str(HELD_BY_USER):
            return
        cluster.set_text("JobMaterializePaused", str(RUNNING))
        cluster.wire.pop(cluster.lower.pop("jobmaterializepausereason", "JobMaterializePauseReason"), None)
        self.schedd.queue.set_cluster_ad(cluster.id, dict(cluster.wire))
        if cluster.pending:
            self.soon(cluster)

    def cancel(self, cluster: Cluster) -> None:
        """A removed cluster's unmaterialized procs (or its factory) are dropped with it."""
        if cluster.pending:
            self.schedd.queue.drop_pending(cluster.id)
            cluster.pending = 0
            cluster.factory = None
            if cluster.live <= 0:
                self.schedd.forget_cluster(cluster.id)

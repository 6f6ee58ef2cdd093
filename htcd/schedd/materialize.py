"""Late materialization: a cluster with ``max_materialize`` or ``max_idle`` keeps its further procs
in the queue file (durable, but not jobs yet) and materializes more of them as its jobs leave the
queue or stop being idle."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from htcd.schedd import userlog
from htcd.schedd.jobs import Cluster, Job

if TYPE_CHECKING:
    from htcd.schedd.daemon import Schedd


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

    def _materialize(self, cluster: Cluster) -> None:
        schedd = self.schedd
        self._due.discard(cluster.id)
        room = cluster.materialize_room()
        count = cluster.pending if room is None else min(room, cluster.pending)
        if count <= 0 or schedd.clusters.get(cluster.id) is not cluster:
            return
        rows = schedd.queue.materialize(cluster.id, count)  # durable before the jobs exist
        cluster.pending -= len(rows)
        host, now = str(schedd.server.address), time.time()
        for proc_id, proc in rows:
            job = Job(cluster, proc_id, proc)
            schedd.add_job(job)
            schedd.events.event(job, userlog.submit(cluster.id, proc_id, host, when=now, **userlog.submit_notes(job.text, job.get)))
        schedd.log.info("cluster %d: materialized %d procs, %d still to come", cluster.id, len(rows),
                        cluster.pending)
        schedd.publish_soon()
        schedd.negotiation.reschedule()

    def cancel(self, cluster: Cluster) -> None:
        """A removed cluster's unmaterialized procs are dropped with it."""
        if cluster.pending:
            self.schedd.queue.drop_pending(cluster.id)
            cluster.pending = 0
            if cluster.live <= 0:
                self.schedd.forget_cluster(cluster.id)

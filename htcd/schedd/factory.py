"""A late-materialization job factory at the schedd: a cluster submitted as a submit digest and
item data (``htcd.submit.digest``), whose procs the schedd builds itself, a batch at a time, as
its jobs leave the queue or start running.  Only materialized procs are jobs: in memory, in the
queue file, in the limits, in the history."""

from __future__ import annotations

from typing import Any

from htcd.submit.description import QueueJobs
from htcd.submit.digest import proc_builder

# JobMaterializePaused, as HTCondor: why a factory builds no more procs
RUNNING, HELD_BY_USER, INVALID = 0, 1, -1
# what the schedd sets, never the digest: who owns the job, its ids, its status and the factory's state
SCHEDD_OWNED = frozenset({"owner", "user", "clusterid", "procid", "jobstatus", "globaljobid", "totalsubmitprocs",
                          "jobmaterializenextprocid", "jobmaterializepaused", "jobmaterializepausereason"})


class Factory:
    """One cluster's digest, items and the next proc to build; the builder is made when first
    needed (a restarted schedd pays for it only for factories with work to do)."""

    __slots__ = ("_jobs", "cluster_id", "digest", "items", "next_proc", "total")

    def __init__(self, cluster_id: int, digest: dict[str, Any], items: list[dict[str, str]], next_proc: int,
                 total: int) -> None:
        self.cluster_id = cluster_id
        self.digest = digest
        self.items = items
        self.next_proc = next_proc
        self.total = total
        self._jobs: QueueJobs | None = None

    @property
    def left(self) -> int:
        return max(0, self.total - self.next_proc)

    def build(self, cluster_ad: dict[str, str], count: int) -> list[tuple[int, dict[str, str]]]:
        """The next ``count`` procs: each what differs from the cluster ad.  Raises SubmitError
        when the digest cannot build them (the factory is then paused)."""
        if self._jobs is None:
            self._jobs = proc_builder(self.digest, self.items, self.cluster_id)
        jobs = self._jobs
        out = []
        for proc_id in range(self.next_proc, min(self.total, self.next_proc + count)):
            ad = jobs.build(proc_id)
            own = {k: v for k, v in ad.items() if cluster_ad.get(k) != v and k.lower() not in SCHEDD_OWNED}
            out.append((proc_id, own))
        return out


"""Jobs in the schedd's memory: one shared ``Cluster`` per cluster, a small ``Job`` per proc.

A queued job costs a slotted object plus a dict of the attributes that differ from its
cluster (usually none beyond what changes with its state), so 100,000 queued jobs stay within
a few hundred bytes each.  A job's ClassAd is a *view*: the cluster's parsed attributes (parsed
and compiled once per cluster) overlaid with the proc's own, built when asked and not kept.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from htcd.classad import ClassAd, unparse

IDLE, RUNNING, REMOVED, COMPLETED, HELD = 1, 2, 3, 4, 5


class Cluster:
    """A cluster's shared attributes (wire text), stored once for all its procs."""

    __slots__ = ("_ad", "factory", "id", "idle", "live", "lower", "owner", "pending", "proc_groups", "proc_prios",
                 "wire")

    def __init__(self, cluster_id: int, wire: dict[str, str]) -> None:
        self.id = cluster_id
        self.wire = wire
        self.lower = {k.lower(): k for k in wire}  # case-insensitive lookups without a ClassAd
        self._ad: ClassAd | None = None
        owner = wire.get(self.lower.get("owner", ""), '""')
        self.owner = owner[1:-1] if owner.startswith('"') else owner
        self.live = 0  # procs of this cluster still in the queue
        self.idle = 0  # of those, the ones not running: idle or held (max_idle counts them, as HTCondor)
        self.pending = 0  # procs not materialized yet (max_materialize / max_idle)
        self.proc_groups = False  # some proc has its own accounting group (it differs between procs)
        self.proc_prios = False  # some proc has its own JobPrio (priority = $(Process), qedit JobPrio)
        self.factory: Any = None  # a late-materialization factory (htcd.schedd.factory.Factory) builds the rest

    def set_text(self, name: str, text: str) -> None:
        """Set a cluster attribute (the caller persists ``wire``); the parsed ad is made again."""
        key = self.lower.setdefault(name.lower(), name)
        self.wire[key] = text
        self._ad = None

    def materialize_room(self) -> int | None:
        """How many more procs may be materialized now, or None when the cluster sets no limit:
        JobMaterializeLimit bounds the procs in the queue, JobMaterializeMaxIdle those not running."""
        room = None
        for attr, used in (("JobMaterializeLimit", self.live), ("JobMaterializeMaxIdle", self.idle)):
            text = self.text(attr)
            if text is not None and text.strip().lstrip("-").isdigit():
                free = max(0, int(text) - used)
                room = free if room is None else min(room, free)
        return room

    @property
    def ad(self) -> ClassAd:
        """The cluster ad, parsed once: every proc's view shares its parsed and compiled trees."""
        if self._ad is None:
            self._ad = ClassAd.from_wire(self.wire)
        return self._ad

    def text(self, name: str) -> str | None:
        key = self.lower.get(name.lower())
        return None if key is None else self.wire[key]


ACCOUNTING_ATTRS = frozenset({"accountinggroup", "acctgroup"})


def has_accounting_group(attrs: dict[str, str]) -> bool:
    """Whether ``attrs`` (a proc's own, or a qedit's) set the job's accounting group."""
    return any(k.lower() in ACCOUNTING_ATTRS for k in attrs)


class Job:
    """One proc: its cluster, its own attributes and the schedd's bookkeeping (memory only)."""

    __slots__ = ("cluster", "matched", "proc", "proc_id", "removing", "status")

    #: The schedd's Name, for GlobalJobId (``name#cluster.proc#qdate``, as HTCondor's schedd sets it).
    #: One schedd per process, so a class attribute rather than a field on 100,000s of jobs.
    schedd_name = ""

    def __init__(self, cluster: Cluster, proc_id: int, proc: dict[str, str]) -> None:
        self.cluster = cluster
        self.proc_id = proc_id
        self.proc = proc
        if not cluster.proc_groups and has_accounting_group(proc):
            cluster.proc_groups = True
        if not cluster.proc_prios and proc and any(k.lower() == "jobprio" for k in proc):
            cluster.proc_prios = True
        st = self.text("JobStatus")
        self.status = int(st) if st and st.isdigit() else IDLE
        self.matched = False  # a shadow owns it
        self.removing = False

    @property
    def cluster_id(self) -> int:
        return self.cluster.id

    @property
    def id(self) -> tuple[int, int]:
        return (self.cluster.id, self.proc_id)

    @property
    def id_text(self) -> str:
        return f"{self.cluster.id}.{self.proc_id}"

    @property
    def owner(self) -> str:
        return self.cluster.owner

    def text(self, name: str) -> str | None:
        """The expression text of one attribute (proc first, then cluster), without building an ad."""
        low = name.lower()
        if low == "procid":
            return str(self.proc_id)
        for k, v in self.proc.items():
            if k.lower() == low:
                return v
        text = self.cluster.text(name)
        if text is None and low == "globaljobid":
            return self.global_job_id()
        return text

    def global_job_id(self) -> str | None:
        """GlobalJobId as wire text (see ``global_job_id_value``)."""
        value = self.global_job_id_value()
        return None if value is None else unparse(value)

    def global_job_id_value(self) -> str | None:
        """GlobalJobId, derived rather than stored (it costs nothing per queued job); None before
        the schedd has a name or when the job has no QDate."""
        qdate = self.cluster.text("QDate")
        if not self.schedd_name or qdate is None:
            return None
        return f"{self.schedd_name}#{self.cluster.id}.{self.proc_id}#{qdate.strip()}"

    def wire(self) -> dict[str, str]:
        merged = dict(self.cluster.wire)
        merged.update(self.proc)
        merged["ProcId"] = str(self.proc_id)
        if "GlobalJobId" not in merged:
            gid = self.global_job_id()
            if gid is not None:
                merged["GlobalJobId"] = gid
        return merged

    def project(self, names: list[str]) -> dict[str, str]:
        """Only these attributes (those the job has), as wire text."""
        out = {}
        for n in names:
            t = self.text(n)
            if t is not None:
                out[n] = t
        return out

    @property
    def ad(self) -> ClassAd:
        """A fresh view: the cluster's parsed entries overlaid by the proc's own."""
        own = ClassAd.from_wire(self.proc)
        own["ProcId"] = self.proc_id
        if "GlobalJobId" not in own and self.cluster.text("GlobalJobId") is None:
            gid = self.global_job_id_value()
            if gid is not None:
                own["GlobalJobId"] = gid
        view = ClassAd.__new__(ClassAd)
        view._parent = None
        view._attrs = {**self.cluster.ad._attrs, **own._attrs}
        return view

    def get(self, name: str, default: Any = None) -> Any:
        return self.ad.get_value(name, default)

    def set(self, **attrs: Any) -> None:
        """Set proc attributes from Python values (the caller persists ``proc``).  ``status`` follows
        JobStatus; the schedd's counters are kept by its own ``_set_status``."""
        for k, v in attrs.items():
            self.proc[k] = unparse(v)
        if "JobStatus" in attrs:
            self.status = int(attrs["JobStatus"])


def job_prio(job: Job) -> int:
    """The job's JobPrio (``priority`` in submit, ``condor_prio``) as an integer; 0 when unset or
    not a plain integer."""
    return _prio_value(job.text("JobPrio"))


def _prio_value(text: str | None) -> int:
    return int(text) if text and text.lstrip("-").isdigit() else 0


def top_prio(clusters: Iterable[Cluster]) -> int | None:
    """The highest JobPrio a job of these clusters may have, or None when some proc sets its own
    (then only a look at every job can tell)."""
    top = 0
    for c in clusters:
        if c.proc_prios:
            return None
        top = max(top, _prio_value(c.text("JobPrio")))
    return top


def in_priority_order(jobs: list[Job]) -> list[Job]:
    """A submitter's jobs in the order HTCondor's schedd offers them for matching: higher JobPrio
    first, the queue's (cluster, proc) order among equals.  The list itself when no job sets one."""
    prios = [job_prio(j) for j in jobs]
    if not any(prios):
        return jobs
    order = sorted(range(len(jobs)), key=prios.__getitem__, reverse=True)  # stable: ties keep queue order
    return [jobs[i] for i in order]

"""A DAG's state while it runs: what the DAGMan job knows of each node, and of the whole DAG.

The engine (``htcd.dagrun``) owns and updates these; the writers of the files users read
(the node status file, the jobstate log, the status table of ``<dag>.dagman.out``, the DAG
job's ad) only read them.  The numbers are HTCondor's: ``NodeStatus`` is the node status
file's ``NodeStatus`` (STATUS_NOT_READY = 0 ... STATUS_FUTILE = 7) and ``DagStatus`` is
``DAG_Status`` (DAG_STATUS_OK = 0 ... DAG_STATUS_HALTED = 6).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum


class NodeStatus(IntEnum):
    NOT_READY = 0  # a parent has not finished, or a throttle keeps the node back
    READY = 1  # all parents finished; not yet submitted
    PRERUN = 2  # the PRE script runs
    SUBMITTED = 3  # the node's job(s) are in the queue
    POSTRUN = 4  # the POST script runs
    DONE = 5
    ERROR = 6
    FUTILE = 7  # will never run: an ancestor failed


class DagStatus(IntEnum):
    OK = 0
    ERROR = 1  # a node failed
    NODE_FAILED = 2  # a node failed (the DAG goes on with what does not depend on it)
    ABORT = 3  # ABORT-DAG-ON
    RM = 4  # the DAG job was removed
    CYCLE = 5
    HALTED = 6


@dataclass(slots=True)
class NodeRun:
    """One node's run: its status, its job's procs, and the values its scripts and rescue need."""

    status: NodeStatus = NodeStatus.NOT_READY
    status_details: str = ""  # the node status file's StatusDetails: "idle", "held", "not_idle", "PRE script failed", ...
    retry: int = 0  # retries used so far (RetryCount; $RETRY)
    cluster: int | None = None  # the node job's cluster ($JOBID is "cluster.0" for the PRE...POST of this try)
    procs_submitted: int = 0
    procs_idle: int = 0
    procs_running: int = 0
    procs_held: int = 0
    procs_done: int = 0  # terminated (successfully or not)
    procs_failed: int = 0  # terminated abnormally or with a non-zero exit code
    return_value: int | None = None  # $RETURN: the job's exit code, or -(signal), -1001..-1005 as DAGMan's
    pre_return: int | None = None  # $PRE_SCRIPT_RETURN
    hold_reason: str = ""  # the last hold reason of one of its procs (for dagman.out)
    started_at: float = 0.0  # time of the submit of the current try
    finished_at: float = 0.0

    @property
    def procs_queued(self) -> int:
        """JobProcsQueued of the node status file: procs submitted and not yet terminated."""
        return max(0, self.procs_submitted - self.procs_done)


@dataclass(slots=True)
class DagRun:
    """The whole DAG's run: the per-node runs (by node name) and the DAG-wide figures."""

    nodes: dict[str, NodeRun] = field(default_factory=dict)
    dag_files: list[str] = field(default_factory=list)
    dag_status: DagStatus = DagStatus.OK
    dagman_job_id: str = ""  # "cluster.proc" of the DAGMan job itself
    started_at: float = 0.0
    recovering: bool = False

    def count(self, status: NodeStatus) -> int:
        return sum(1 for n in self.nodes.values() if n.status == status)

"""The NODE_STATUS_FILE: the DAG's and every node's status as new-syntax ClassAds.

Format of HTCondor's manual (docs/automated-workflows/dagman-information-files.rst, "Current
Node Status File", the "Sample Node Status File Contents" sidebar): a ``DagStatus`` ad, one
``NodeStatus`` ad per node, a ``StatusEnd`` ad.  As condor_dagman writes it, the times and
statuses carry a ``/* ... */`` comment with their readable form (``Timestamp = 1399674138;
/* "Fri May  9 17:22:18 2014" */``), which ClassAd parsers skip.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time

from htcd.classad.values import quote_string
from htcd.dagman.model import Dag, NodeKind
from htcd.dagman.runstate import DagRun, DagStatus, NodeRun, NodeStatus

#: The names condor_dagman prints for a NodeStatus (and the DAG's DagStatus) value.
STATUS_NAMES = {s: f"STATUS_{s.name}" for s in NodeStatus}

_RUNNING = (NodeStatus.PRERUN, NodeStatus.SUBMITTED, NodeStatus.POSTRUN)


def node_status_text(dag: Dag, run: DagRun, now: float, next_update: float, *,
                     held: bool = False) -> str:
    """The whole file.  ``next_update`` 0 means none (the DAG has finished: NextUpdate = 0).

    ``held``: the DAGMan job is held (the DAG's status note says so).  When the DAG has
    finished unsuccessfully, been removed or aborted, nodes still running are shown as
    failed (``Was STATUS_SUBMITTED``), as condor_dagman does on its last write."""
    shown = _node_order(dag, run)
    dag_status, note, mark_error = _dag_status(dag, run, shown, held)
    counts = {s: 0 for s in NodeStatus}
    held_procs = idle_procs = 0
    for node_run in (run.nodes[name] for name in shown):
        counts[node_run.status] += 1
        held_procs += node_run.procs_held
        idle_procs += node_run.procs_idle + node_run.procs_held
    pre, queued, post = counts[NodeStatus.PRERUN], counts[NodeStatus.SUBMITTED], counts[NodeStatus.POSTRUN]
    failed = counts[NodeStatus.ERROR]
    if mark_error:
        failed += pre + queued + post
        pre = queued = post = held_procs = idle_procs = 0
    stamp = int(now)
    out = ["[", '  Type = "DagStatus";', "  DagFiles = {"]
    out.append(",\n".join(f"    {quote_string(f)}" for f in (run.dag_files or [dag.file])))
    out += [
        "  };",
        f"  Timestamp = {stamp}; /* {quote_string(_ctime(stamp))} */",
        f"  DagStatus = {int(dag_status)}; /* {quote_string(f'{STATUS_NAMES[dag_status]} ({note})')} */",
        f"  NodesTotal = {len(shown)};",
        f"  NodesDone = {counts[NodeStatus.DONE]};",
        f"  NodesPre = {pre};",
        f"  NodesQueued = {queued};",
        f"  NodesPost = {post};",
        f"  NodesReady = {counts[NodeStatus.READY]};",
        f"  NodesUnready = {counts[NodeStatus.NOT_READY]};",
        f"  NodesFutile = {counts[NodeStatus.FUTILE]};",
        f"  NodesFailed = {failed};",
        f"  JobProcsHeld = {held_procs};",
        f"  JobProcsIdle = {idle_procs}; /* includes held */",
        "]",
    ]
    for name in shown:
        out += _node_ad(name, run.nodes[name], dag, mark_error)
    nxt = int(next_update)
    out += [
        "[",
        '  Type = "StatusEnd";',
        f"  EndTime = {stamp}; /* {quote_string(_ctime(stamp))} */",
        f"  NextUpdate = {nxt}; /* {quote_string(_ctime(nxt) if nxt else 'none')} */",
        "]",
    ]
    return "\n".join(out) + "\n"


def _dag_status(dag: Dag, run: DagRun, shown: list[str], held: bool) -> tuple[NodeStatus, str, bool]:
    """(DagStatus value, its note, whether running nodes are to be shown as failed)."""
    statuses = [run.nodes[name].status for name in shown]
    if statuses and all(s == NodeStatus.DONE for s in statuses):
        return NodeStatus.DONE, "success", True
    active = any(s in _RUNNING or s == NodeStatus.READY for s in statuses)
    final_pending = dag.final is not None and dag.final.name in run.nodes and \
        run.nodes[dag.final.name].status not in (NodeStatus.DONE, NodeStatus.ERROR)
    if run.dag_status == DagStatus.CYCLE:
        return NodeStatus.ERROR, "cycle", False
    if held:
        return NodeStatus.SUBMITTED, "held", False
    if run.dag_status in (DagStatus.RM, DagStatus.ABORT):
        note = "removed" if run.dag_status == DagStatus.RM else "aborted"
        if final_pending:
            return NodeStatus.SUBMITTED, note, False
        return NodeStatus.ERROR, note, True
    if not active and any(s in (NodeStatus.ERROR, NodeStatus.FUTILE) for s in statuses):
        return NodeStatus.ERROR, "failed", True
    return NodeStatus.SUBMITTED, "", False


def _node_order(dag: Dag, run: DagRun) -> list[str]:
    """The DAG's order (the order of its files), then any node the run knows and the DAG not.
    SERVICE nodes are left out, as condor_dagman keeps them apart from the DAG's nodes."""
    names = [n for n, node in dag.nodes.items() if n in run.nodes and node.kind is not NodeKind.SERVICE]
    return names + [n for n in run.nodes if n not in dag.nodes]


def _node_ad(name: str, node_run: NodeRun, dag: Dag, mark_error: bool) -> list[str]:
    status = node_run.status
    queued, held = node_run.procs_queued, node_run.procs_held
    details = node_run.status_details
    if status in _RUNNING and mark_error:
        details = f"Was {STATUS_NAMES[status]}"
        status = NodeStatus.ERROR
        queued = held = 0
    elif status == NodeStatus.SUBMITTED and not details:
        details = "idle" if node_run.procs_idle > 0 else "not_idle"
    elif status == NodeStatus.FUTILE and not details:
        details = "Had an ancestor node fail"
    elif status == NodeStatus.DONE and not details:
        node = dag.nodes.get(name)
        if node is not None and node.done:
            details = "User defined as DONE"
    return [
        "[",
        '  Type = "NodeStatus";',
        f"  Node = {quote_string(name)};",
        f"  NodeStatus = {int(status)}; /* {quote_string(STATUS_NAMES[status])} */",
        f"  StatusDetails = {quote_string(details)};",
        f"  RetryCount = {node_run.retry};",
        f"  JobProcsQueued = {queued};",
        f"  JobProcsHeld = {held};",
        "]",
    ]


def _ctime(stamp: int) -> str:
    """C's ctime() without its newline, in local time as condor_dagman writes it."""
    return time.ctime(stamp)


def write_atomically(path: str, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path`` and rename it over ``path``, so a
    reader sees the old file or the new one, never a part (condor_dagman writes
    ``path.tmp`` and renames it)."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise

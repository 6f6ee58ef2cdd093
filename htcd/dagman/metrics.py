"""The ``<dag>.metrics`` JSON file condor_dagman writes when it exits.

Keys, their order and formats are the manual's (docs/automated-workflows/
dagman-information-files.rst, "Workflow Metrics" and its "Example Metrics File Contents"
sidebar): times in epoch seconds with three decimals, ``dagman_id`` as a string, the last key
``DagStatus``.  Version 2 (the default, DAGMAN_METRICS_FILE_VERSION) counts ``nodes``;
version 1 calls them ``jobs``.  With DAGMAN_REPORT_GRAPH_METRICS the graph's height, width,
edges and vertices come before ``DagStatus``.
"""

from __future__ import annotations

import json

from htcd.dagman.model import Dag, NodeKind
from htcd.dagman.runstate import DagRun, DagStatus, NodeStatus


def metrics_json(dag: Dag, run: DagRun, exit_code: int, *, start_time: float, end_time: float,
                 version: str, dagman_id: str = "", parent_dagman_id: str = "",
                 rescue_dag_number: int = 0, jobs_submitted: int | None = None,
                 jobs_succeeded: int | None = None, metrics_version: int = 2,
                 graph_metrics: bool = False) -> str:
    """The file's text.  ``version`` is HTCondor's (or htcd's) version number ("24.2.0");
    ``dagman_id`` the DAGMan job's ClusterId.  ``jobs_submitted``/``jobs_succeeded`` default to
    the procs the run counted (its nodes' last tries)."""
    if metrics_version not in (1, 2):
        raise ValueError(f"DAGMAN_METRICS_FILE_VERSION {metrics_version} is not 1 or 2")
    counts = {kind: [0, 0, 0] for kind in ("nodes", "dag", "service")}  # total, failed, succeeded
    for name, node in dag.nodes.items():
        kind = "dag" if node.kind is NodeKind.SUBDAG else "service" if node.kind is NodeKind.SERVICE else "nodes"
        counts[kind][0] += 1
        node_run = run.nodes.get(name)
        if node_run is not None and node_run.status == NodeStatus.ERROR:
            counts[kind][1] += 1
        elif node_run is not None and node_run.status == NodeStatus.DONE:
            counts[kind][2] += 1
    total = sum(c[0] for c in counts.values())
    total_run = sum(c[1] + c[2] for c in counts.values())
    if jobs_submitted is None:
        jobs_submitted = sum(r.procs_submitted for r in run.nodes.values())
    if jobs_succeeded is None:
        jobs_succeeded = sum(r.procs_done - r.procs_failed for r in run.nodes.values())
    fields: list[tuple[str, str]] = [
        ("client", _s("condor_dagman")),
        ("version", _s(version)),
    ]
    if metrics_version == 2:
        fields += [("type", _s("metrics")), ("metrics_version", "2")]
    else:
        fields += [("type", _s("metrics"))]
    fields += [
        ("start_time", f"{start_time:.3f}"),
        ("end_time", f"{end_time:.3f}"),
        ("duration", f"{end_time - start_time:.3f}"),
        ("exitcode", str(exit_code)),
        ("dagman_id", _s(dagman_id)),
        ("parent_dagman_id", _s(parent_dagman_id)),
        ("rescue_dag_number", str(rescue_dag_number)),
    ]
    word = "nodes" if metrics_version == 2 else "jobs"
    if metrics_version == 2:
        fields.append(("has_final_node", "true" if dag.final is not None else "false"))
    fields += [
        (word, str(counts["nodes"][0])),
        (f"{word}_failed", str(counts["nodes"][1])),
        (f"{word}_succeeded", str(counts["nodes"][2])),
        (f"dag_{word}", str(counts["dag"][0])),
        (f"dag_{word}_failed", str(counts["dag"][1])),
        (f"dag_{word}_succeeded", str(counts["dag"][2])),
    ]
    if metrics_version == 2:
        provisioner = any(n.kind is NodeKind.PROVISIONER for n in dag.nodes.values())
        fields += [
            ("provisioner_nodes", "1" if provisioner else "0"),
            ("service_nodes", str(counts["service"][0])),
            ("service_nodes_failed", str(counts["service"][1])),
            ("service_nodes_succeeded", str(counts["service"][2])),
        ]
    fields += [(f"total_{word}", str(total)), (f"total_{word}_run", str(total_run))]
    if metrics_version == 2:
        fields += [
            ("jobs_submitted", str(jobs_submitted)),
            ("jobs_succeeded", str(jobs_succeeded)),
            ("jobs_failed", str(jobs_submitted - jobs_succeeded)),
        ]
    if graph_metrics:
        height, width = (0, 0) if run.dag_status == DagStatus.CYCLE else graph_shape(dag)
        vertices = sum(1 for n in dag.nodes.values() if n.kind is not NodeKind.SERVICE)
        fields += [
            ("graph_height", str(height)),
            ("graph_width", str(width)),
            ("graph_num_edges", str(dag.edge_count())),
            ("graph_num_vertices", str(vertices)),
        ]
    fields.append(("DagStatus", str(int(run.dag_status))))
    return "{\n" + ",\n".join(f'    "{k}":{v}' for k, v in fields) + "\n}\n"


def _s(text: str) -> str:
    return json.dumps(text)


def graph_shape(dag: Dag) -> tuple[int, int]:
    """(height, width): the number of nodes on the longest parent-to-child path, and the most
    nodes at one depth (a node's depth is the longest path to it from a node without parents)."""
    depth: dict[str, int] = {}
    pending = {name: len(node.parents) for name, node in dag.nodes.items()}
    ready = [name for name, n in pending.items() if n == 0]
    for name in ready:
        depth[name] = 1
    while ready:
        name = ready.pop()
        for child in dag.nodes[name].children:
            depth[child.name] = max(depth.get(child.name, 1), depth[name] + 1)
            pending[child.name] -= 1
            if pending[child.name] == 0:
                ready.append(child.name)
    if not depth:
        return 0, 0
    levels: dict[int, int] = {}
    for d in depth.values():
        levels[d] = levels.get(d, 0) + 1
    return max(levels), max(levels.values())

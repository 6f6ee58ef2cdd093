"""The <dag>.metrics file: the manual's two samples, key for key, and json reading it back."""

from __future__ import annotations

import json

from htcd.dagman import ParseOptions, parse_dag_text
from htcd.dagman.metrics import graph_shape, metrics_json
from htcd.dagman.runstate import DagRun, DagStatus, NodeRun, NodeStatus

# docs/automated-workflows/dagman-information-files.rst, "Example Metrics File Contents".
MANUAL_V2 = """{
    "client":"condor_dagman",
    "version":"24.2.0",
    "type":"metrics",
    "metrics_version":2,
    "start_time":1729028927.766,
    "end_time":1729028968.913,
    "duration":41.147,
    "exitcode":0,
    "dagman_id":"69",
    "parent_dagman_id":"42",
    "rescue_dag_number":0,
    "has_final_node":false,
    "nodes":2,
    "nodes_failed":0,
    "nodes_succeeded":2,
    "dag_nodes":0,
    "dag_nodes_failed":0,
    "dag_nodes_succeeded":0,
    "provisioner_nodes":0,
    "service_nodes":1,
    "service_nodes_failed":0,
    "service_nodes_succeeded":1,
    "total_nodes":3,
    "total_nodes_run":3,
    "jobs_submitted":3,
    "jobs_succeeded":3,
    "jobs_failed":0,
    "DagStatus":0
}
"""
# The version-1 sample without "planner", "planner_version", "wf_uuid" and "root_wf_uuid",
# which condor_dagman no longer writes.
MANUAL_V1 = """{
    "client":"condor_dagman",
    "version":"24.2.0",
    "type":"metrics",
    "start_time":1729028927.766,
    "end_time":1729028968.913,
    "duration":41.147,
    "exitcode":0,
    "dagman_id":"69",
    "parent_dagman_id":"42",
    "rescue_dag_number":0,
    "jobs":2,
    "jobs_failed":0,
    "jobs_succeeded":2,
    "dag_jobs":0,
    "dag_jobs_failed":0,
    "dag_jobs_succeeded":0,
    "total_jobs":2,
    "total_jobs_run":2,
    "DagStatus":0
}
"""

DONE = NodeStatus.DONE


def _sample():
    dag = parse_dag_text("JOB A a.sub\nJOB B b.sub\nSERVICE S s.sub\nPARENT A CHILD B\n", "s.dag",
                         options=ParseOptions(check_files=False))
    run = DagRun(nodes={n: NodeRun(status=DONE, procs_submitted=1, procs_done=1) for n in "ABS"})
    return dag, run


def test_the_manuals_v2_sample_exactly() -> None:
    dag, run = _sample()
    text = metrics_json(dag, run, 0, start_time=1729028927.766, end_time=1729028968.913, version="24.2.0",
                        dagman_id="69", parent_dagman_id="42")
    assert text == MANUAL_V2
    assert json.loads(text)["duration"] == 41.147


def test_the_manuals_v1_sample() -> None:
    dag = parse_dag_text("JOB A a.sub\nJOB B b.sub\n", "s.dag", options=ParseOptions(check_files=False))
    run = DagRun(nodes={n: NodeRun(status=DONE) for n in "AB"})
    text = metrics_json(dag, run, 0, start_time=1729028927.766, end_time=1729028968.913, version="24.2.0",
                        dagman_id="69", parent_dagman_id="42", metrics_version=1)
    assert text == MANUAL_V1


def test_failures_subdags_final_and_graph_metrics(tmp_path) -> None:
    (tmp_path / "inner.dag").write_text("JOB X x.sub\n")
    dag = parse_dag_text("JOB A a.sub\nJOB B b.sub\nJOB C c.sub\nSUBDAG EXTERNAL S inner.dag\nFINAL F f.sub\n"
                         "PARENT A CHILD B C S\nPARENT B CHILD C\n", "g.dag",
                         options=ParseOptions(check_files=False, cwd=str(tmp_path)))
    run = DagRun(nodes={"A": NodeRun(status=DONE), "B": NodeRun(status=NodeStatus.ERROR),
                        "C": NodeRun(status=NodeStatus.FUTILE), "S": NodeRun(status=NodeStatus.ERROR),
                        "F": NodeRun(status=DONE)}, dag_status=DagStatus.NODE_FAILED)
    data = json.loads(metrics_json(dag, run, 1, start_time=10.0, end_time=12.5, version="25.0.0",
                                   dagman_id="7", jobs_submitted=4, jobs_succeeded=2, graph_metrics=True))
    assert (data["has_final_node"], data["nodes"], data["nodes_failed"], data["nodes_succeeded"]) == (True, 4, 1, 2)
    assert (data["dag_nodes"], data["dag_nodes_failed"], data["total_nodes"], data["total_nodes_run"]) == (1, 1, 5, 4)
    assert (data["jobs_failed"], data["exitcode"], data["DagStatus"], data["parent_dagman_id"]) == (2, 1, 2, "")
    assert (data["graph_height"], data["graph_width"], data["graph_num_edges"], data["graph_num_vertices"]) == \
        (3, 2, 4, 5)
    assert list(data)[-5:] == ["graph_height", "graph_width", "graph_num_edges", "graph_num_vertices", "DagStatus"]
    assert graph_shape(dag) == (3, 2)

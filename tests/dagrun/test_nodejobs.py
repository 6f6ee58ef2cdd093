"""Node jobs copied from a shared build: the same ads as building each node anew, but for the
node's own cluster id, name and submit time; descriptions whose jobs could differ otherwise
are built anew for every node."""

from __future__ import annotations

from pathlib import Path

import pytest

from htcd.dagman.parser import parse_dag
from htcd.dagrun.nodejobs import JobContext, NodeJobs
from htcd.submit.templates import TemplateSet

PER_NODE = {"ClusterId", "DAGNodeName", "SubmitEventNotes", "QDate", "EnteredCurrentStatus"}


def _jobs(tmp_path: Path, submit: str, dag_extra: str = "") -> NodeJobs:
    (tmp_path / "n.sub").write_text(submit)
    (tmp_path / "x.dag").write_text("JOB a n.sub\nJOB b n.sub\nJOB c n.sub\n" + dag_extra)
    dag = parse_dag("x.dag", cwd=str(tmp_path))
    ctx = JobContext(dagman_cluster=7, dagman_proc=0, nodes_log=str(tmp_path / "x.dag.nodes.log"),
                     batch_name="x.dag+7", suppress_notification=True, dag_priority=0, owner="someone",
                     set_job_attrs=[], env_set=[], env_get=[])
    return NodeJobs(dag, str(tmp_path), ctx, lambda k: None, TemplateSet({}))


def _fresh(tmp_path: Path, submit: str, node: str, cid: int, dag_extra: str = "") -> dict[str, str]:
    """The node's cluster ad built by a NodeJobs that has built nothing before."""
    (one, _), _ = _jobs(tmp_path, submit, dag_extra).build(_jobs(tmp_path, submit, dag_extra).dag.nodes[node], cid)
    return one


def test_shared_build_gives_each_node_its_own_job(tmp_path: Path) -> None:
    submit = "executable = /bin/true\narguments = x y\nlog = n.log\nrequest_memory = 64\nqueue 2\n"
    jobs = _jobs(tmp_path, submit, "PARENT a CHILD b c\n")
    (a, a_procs), _ = jobs.build(jobs.dag.nodes["a"], 101)
    (b, b_procs), _ = jobs.build(jobs.dag.nodes["b"], 102)
    (c, _), _ = jobs.build(jobs.dag.nodes["c"], 103)
    assert jobs.shared_builds == 2  # b and c copied from a's build
    assert (a["ClusterId"], b["ClusterId"], c["ClusterId"]) == ("101", "102", "103")
    assert (b["DAGNodeName"], b["SubmitEventNotes"]) == ('"b"', '"DAG Node: b"')
    assert b["DAGParentNodeNames"] == '"a"' and "DAGParentNodeNames" not in a
    assert int(b["QDate"]) > 1_500_000_000 and b["EnteredCurrentStatus"] == b["QDate"]
    assert a_procs == b_procs and len(b_procs) == 2
    fresh = _fresh(tmp_path, submit, "b", 102, "PARENT a CHILD b c\n")
    assert {k: v for k, v in b.items() if k not in PER_NODE} == {k: v for k, v in fresh.items() if k not in PER_NODE}
    b["Cmd"] = '"changed"'  # a node's ads are its own: the next copy is not affected
    (c2, _), _ = jobs.build(jobs.dag.nodes["c"], 104)
    assert c2["Cmd"] == '"/bin/true"'


@pytest.mark.parametrize("line", ["output = out.$(Cluster)", "output = out.$(ClusterId).$(Process)",
                                  "arguments = $RANDOM_INTEGER(1, 1000000)", "output = o.$(SUBMIT_TIME)",
                                  "my_x = $(Cluster)\narguments = $(my_x)"])
def test_per_submit_values_are_not_shared(tmp_path: Path, line: str) -> None:
    jobs = _jobs(tmp_path, f"executable = /bin/true\n{line}\nqueue\n")
    a, _ = jobs.build(jobs.dag.nodes["a"], 201)
    b, _ = jobs.build(jobs.dag.nodes["b"], 202)
    assert jobs.shared_builds == 0
    if "Cluster" in line:  # each node's own cluster id, where the description puts it
        texts = [" ".join(v for k, v in ad.items() if k in ("Out", "Args", "Arguments")) for ads in (a, b)
                 for ad in (ads[0], *ads[1])]
        assert "201" in " ".join(texts[:len(texts) // 2]) and "202" in " ".join(texts[len(texts) // 2:]), texts


def test_vars_decide_what_is_shared(tmp_path: Path) -> None:
    extra = 'VARS a x="1"\nVARS b x="1"\nVARS c x="2"\n'
    jobs = _jobs(tmp_path, "executable = /bin/true\narguments = $(x)\nqueue\n", extra)
    ads = [jobs.build(jobs.dag.nodes[n], 300 + i)[0][0] for i, n in enumerate("abc")]
    assert [ad.get("Args") for ad in ads] == ['"1"', '"1"', '"2"']
    assert jobs.shared_builds == 1  # b as a; c has its own VARS

"""DAG files written by a third party, the ``htcondor-dags`` package, read back by htcd.

htcondor-dags imports the old ``htcondor`` module, which only the 24.x wheel in
``.venv/htcondor24`` has, so one subprocess writes every DAG of this module and the tests
read what it wrote.  The expected nodes, edges and settings follow from how the DAGs are built.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from htcd.dagman import DagError, NodeKind, parse_dag

ROOT = Path(__file__).resolve().parent.parent.parent
ORACLE_PATH = ROOT / ".venv" / "htcondor24"

WRITER = r'''
import json, sys
from pathlib import Path
import htcondor
import htcondor_dags as dags

out = Path(sys.argv[1])
sub = htcondor.Submit({"executable": "/bin/echo", "arguments": "$(word)", "request_memory": "16MB"})

# a diamond of layers: 1 -> 4 (many-to-many) -> 4 (one-to-one) -> 1, with the settings
dag = dags.DAG(jobstate_log=Path("states.log"),
               node_status_file=dags.NodeStatusFile(Path("status.txt"), update_time=30,
                                                     always_update=True),
               dagman_job_attributes={"Project": '"dags"'})
top = dag.layer(name="top", submit_description=sub, retries=3, retry_unless_exit=42,
                pre=dags.Script("pre.sh", arguments=["$JOB", "$RETRY"]),
                post=dags.Script("post.sh", arguments=["$RETURN"], retry=True, retry_status=7,
                                 retry_delay=60),
                priority=5, category="big", abort=dags.DAGAbortCondition(3, 9))
mid = top.child_layer(name="mid", submit_description=sub,
                      vars=[{"word": f"w{i}", "quoted": 'a "b" c'} for i in range(4)])
low = mid.child_layer(name="low", submit_description=sub, edge=dags.OneToOne(),
                      vars=[{"word": str(i)} for i in range(4)], pre_skip_exit_code=2)
low.child_layer(name="end", submit_description=sub, noop=True)
dag.final(name="last", submit_description=sub)
dags.write_dag(dag, out / "diamond", dag_file_name="diamond.dag")

# MAXJOBS, which htcondor-dags 0.2.0 writes as "CATEGORY big 2"
cats = dags.DAG(max_jobs_by_category={"big": 2})
cats.layer(name="one", submit_description=sub, category="big")
dags.write_dag(cats, out / "cats", dag_file_name="cats.dag")

# a wide fan-out, and a chain of nodes
wide = dags.DAG()
root = wide.layer(name="root", submit_description=sub)
root.child_layer(name="leaf", submit_description=sub, vars=[{"word": str(i)} for i in range(200)])
dags.write_dag(wide, out / "wide", dag_file_name="wide.dag")
chain = dags.DAG()
layer = chain.layer(name="c0", submit_description=sub)
for i in range(1, 50):
    layer = layer.child_layer(name=f"c{i}", submit_description=sub)
dags.write_dag(chain, out / "chain", dag_file_name="chain.dag")
print(json.dumps(sorted(str(p.relative_to(out)) for p in out.rglob("*"))))
'''


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (ORACLE_PATH / "htcondor").is_dir():
        pytest.skip("the htcondor 24 wheel is not in .venv/htcondor24 (make .venv/.dev)")
    if importlib.util.find_spec("htcondor_dags") is None:
        pytest.skip("htcondor-dags is not installed (the dev extra has it)")
    out = tmp_path_factory.mktemp("dags")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ORACLE_PATH), *sys.path[1:]]),
               CONDOR_CONFIG="/dev/null")
    proc = subprocess.run([sys.executable, "-c", WRITER, str(out)], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "diamond/diamond.dag" in json.loads(proc.stdout)
    return out


def test_diamond_of_layers(written: Path) -> None:
    # htcondor-dags 0.2.0 writes no submit file for the FINAL node: refused, then read without
    with pytest.raises(DagError, match=r"diamond.dag:\d+: node last: submit file last.sub does "
                                       "not exist"):
        parse_dag("diamond.dag", cwd=str(written / "diamond"))
    dag = parse_dag("diamond.dag", cwd=str(written / "diamond"), check_files=False)
    names = set(dag.nodes)
    assert names == {"top:0", "mid:0", "mid:1", "mid:2", "mid:3", "low:0", "low:1", "low:2",
                     "low:3", "end:0", "last"}
    assert dag.edge_count() == 4 + 4 + 4  # top -> 4 mid, mid:i -> low:i, 4 low -> end
    top = dag.nodes["top:0"]
    assert {c.name for c in top.children} == {"mid:0", "mid:1", "mid:2", "mid:3"}
    assert [p.name for p in dag.nodes["low:2"].parents] == ["mid:2"]
    assert (top.retry, top.retry_unless_exit, top.priority, top.category) == (3, 42, 5, "big")
    assert (top.abort_status, top.abort_return) == (3, 9)
    assert top.pre is not None and top.pre.executable == "pre.sh"
    assert top.pre.arguments == "$JOB $RETRY"
    assert top.post is not None and (top.post.defer_status, top.post.defer_time) == (7, 60)
    assert {(v.name, v.value) for v in dag.nodes["mid:1"].vars} >= {("word", "w1"),
                                                                    ("quoted", 'a "b" c')}
    assert dag.nodes["low:3"].pre_skip == 2
    assert dag.nodes["end:0"].noop
    assert dag.final is dag.nodes["last"] and dag.final.kind is NodeKind.FINAL
    assert dag.jobstate_log == "states.log"
    assert dag.node_status_file is not None
    assert (dag.node_status_file.min_update_time, dag.node_status_file.always_update) == (30, True)
    assert ("Project", '"dags"') in dag.set_job_attrs


def test_maxjobs_as_written_is_refused(written: Path) -> None:
    """htcondor-dags 0.2.0 writes MAXJOBS as ``CATEGORY big 2``: HTCondor's parser takes
    ``big`` for a node name there too, so the file is refused, naming the line."""
    text = (written / "cats" / "cats.dag").read_text()
    line = text.splitlines().index("CATEGORY big 2") + 1
    with pytest.raises(DagError, match=rf"^cats.dag:{line}: unknown node name big "):
        parse_dag("cats.dag", cwd=str(written / "cats"))


def test_fan_out_and_chain(written: Path) -> None:
    wide = parse_dag("wide.dag", cwd=str(written / "wide"))
    assert len(wide.nodes) == 201 and wide.edge_count() == 200
    assert len(wide.nodes["root:0"].children) == 200
    chain = parse_dag("chain.dag", cwd=str(written / "chain"))
    assert len(chain.nodes) == 50 and chain.edge_count() == 49
    assert [n.name for n in chain.initial_nodes()] == ["c0:0"]
    assert [n.name for n in chain.terminal_nodes()] == ["c49:0"]

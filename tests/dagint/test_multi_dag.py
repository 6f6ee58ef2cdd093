"""Several DAG files in one DAG job on a real pool: ``htcd submit_dag a.dag b.dag`` runs both,
their nodes named apart (``0.A``, ``1.A``); a failure writes one ``a.dag_multi.rescue001``."""

from __future__ import annotations

import re
from pathlib import Path

from pooltools import Pool

from htcd.eventlog import EXECUTE, SUBMIT, TERMINATED
from tests.dagint.dagjob import history_exit, out_text, submit_dag, wait_done, write
from tests.dagrun.dagtools import node_events

TRUE_SUB = "executable = /bin/true\nqueue\n"
FALSE_SUB = "executable = /bin/false\nqueue\n"


def test_two_dag_files_run_as_one_dag(dag_pool: Pool, tmp_path: Path) -> None:
    write(tmp_path, {"true.sub": TRUE_SUB,
                     "a.dag": "JOB A true.sub\nJOB B true.sub\nPARENT A CHILD B\n",
                     "b.dag": "JOB A true.sub\nJOB C true.sub\nPARENT A CHILD C\n"})
    cluster = submit_dag(dag_pool, tmp_path, "a.dag", "b.dag")
    assert "-Dag a.dag -Dag b.dag" in (tmp_path / "a.dag.condor.sub").read_text()
    assert not (tmp_path / "b.dag.condor.sub").exists(), "the first DAG file names the outputs"
    wait_done(dag_pool, tmp_path, "a.dag", cluster)
    out = out_text(tmp_path, "a.dag")
    assert history_exit(dag_pool, cluster) == ["4", "0"], out[-3000:]
    assert "Parsing 2 dagfiles" in out and "Parsing b.dag ..." in out

    events = node_events(tmp_path / "a.dag.nodes.log")
    names = {"0.A", "0.B", "1.A", "1.C"}
    for kind in (SUBMIT, EXECUTE, TERMINATED):
        seen = [name for name, ev in events if ev.type == kind]
        assert sorted(seen) == sorted(names), (kind, seen)
    order = [name for name, ev in events if ev.type in (SUBMIT, TERMINATED)]
    # each DAG keeps its own edge: a child is submitted after its parent ended
    assert order.index("0.B") > order.index("0.A", order.index("0.A") + 1)
    assert order.index("1.C") > order.index("1.A", order.index("1.A") + 1)
    assert not list(tmp_path.glob("*.rescue*"))


def test_a_failed_node_writes_one_multi_rescue_dag(dag_pool: Pool, tmp_path: Path) -> None:
    write(tmp_path, {"true.sub": TRUE_SUB, "false.sub": FALSE_SUB,
                     "a.dag": "JOB A true.sub\n",
                     "b.dag": "JOB A false.sub\nJOB C true.sub\nPARENT A CHILD C\n"})
    cluster = submit_dag(dag_pool, tmp_path, "a.dag", "b.dag")
    wait_done(dag_pool, tmp_path, "a.dag", cluster)
    assert history_exit(dag_pool, cluster) == ["4", "1"], out_text(tmp_path, "a.dag")[-3000:]
    rescue = tmp_path / "a.dag_multi.rescue001"
    assert [p.name for p in tmp_path.glob("*.rescue*")] == [rescue.name]
    text = rescue.read_text()
    assert re.findall(r"^DONE (\S+)$", text, re.M) == ["0.A"], text
    assert "#   1.A,<ENDLIST>" in text and "#   the a.dag DAG file\n" in text, text

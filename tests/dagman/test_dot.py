"""The DOT file: a Graphviz digraph with the nodes drawn by state, the INCLUDE header, the edges,
and the numbered files of DONT-OVERWRITE."""

from __future__ import annotations

import time
from pathlib import Path

from htcd.dagman import ParseOptions, parse_dag_text
from htcd.dagman.dot import dot_file_name, dot_text
from htcd.dagman.runstate import DagRun, NodeRun, NodeStatus

S = NodeStatus
NOW = 1399674138


def test_diamond_drawn_by_state() -> None:
    dag = parse_dag_text("JOB A a.sub\nJOB B b.sub\nJOB C c.sub\nJOB D d.sub\nPARENT A CHILD B C\n"
                         "PARENT B C CHILD D\nDOT dag.dot UPDATE DONT-OVERWRITE INCLUDE head.dot\n",
                         "d.dag", options=ParseOptions(check_files=False))
    run = DagRun(nodes={"A": NodeRun(status=S.DONE), "B": NodeRun(status=S.SUBMITTED),
                        "C": NodeRun(status=S.ERROR), "D": NodeRun(status=S.FUTILE)})
    text = dot_text(dag, run, now=NOW, include_text="    size=\"7,7\";\n")
    assert text == (
        "digraph DAG {\n"
        f'    label="DAGMan Job status at {time.ctime(NOW)}";\n'
        "\n"
        "// Beginning of commands included from head.dot.\n"
        '    size="7,7";\n'
        "// End of commands included from head.dot.\n"
        "\n"
        '    "A" [shape=ellipse label="A (Done)" style=bold];\n'
        '    "B" [shape=ellipse label="B (R)" peripheries=2];\n'
        '    "C" [shape=box label="C (E)"];\n'
        '    "D" [shape=ellipse label="D (I)"];\n'
        "\n"
        '    "A" -> "B";\n'
        '    "A" -> "C";\n'
        '    "B" -> "D";\n'
        '    "C" -> "D";\n'
        "}\n")


def test_scripts_running_are_dotted_and_no_include_without_text() -> None:
    dag = parse_dag_text("JOB A a.sub\nJOB B b.sub\n", "d.dag", options=ParseOptions(check_files=False))
    run = DagRun(nodes={"A": NodeRun(status=S.PRERUN), "B": NodeRun(status=S.POSTRUN)})
    text = dot_text(dag, run, now=NOW)
    assert '    "A" [shape=ellipse label="A (Pre)" style=dotted];' in text
    assert '    "B" [shape=ellipse label="B (Post)" style=dotted];' in text
    assert "//" not in text


def test_numbered_files_for_dont_overwrite(tmp_path: Path) -> None:
    base = str(tmp_path / "dag.dot")
    assert dot_file_name(base, True, 0, lambda p: True) == (base, 0)
    (tmp_path / "dag.dot.0").write_text("")
    (tmp_path / "dag.dot.1").write_text("")
    exists = lambda p: Path(p).exists()  # noqa: E731
    name, nxt = dot_file_name(base, False, 0, exists)
    assert (name, nxt) == (base + ".2", 3)
    name, nxt = dot_file_name(base, False, nxt, exists)
    assert (name, nxt) == (base + ".3", 4)


def test_service_nodes_are_not_drawn() -> None:
    dag = parse_dag_text("JOB A a.sub\nSERVICE S s.sub\n", "d.dag", options=ParseOptions(check_files=False))
    text = dot_text(dag, DagRun(nodes={"A": NodeRun(status=S.READY)}), now=NOW)
    assert '    "A" [shape=ellipse label="A (I)"];' in text
    assert '"S"' not in text

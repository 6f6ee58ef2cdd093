"""Rescue DAGs in HTCondor's format, written and read back onto the original; script macros."""

from __future__ import annotations

import calendar
from pathlib import Path

import pytest

from htcd.dagman import (
    DagError,
    ParseOptions,
    ScriptKind,
    apply_rescue,
    expand_script_arguments,
    parse_dag,
    parse_dag_text,
    read_rescue,
    rescue_text,
)
from htcd.dagman.macros import ScriptValues
from htcd.dagman.rescue import last_rescue, rescue_name

DIAMOND = ("JOB A a.sub\nJOB B b.sub\nJOB C c.sub\nJOB D d.sub\nFINAL F f.sub\n"
           "PARENT A CHILD B C\nPARENT B C CHILD D\nRETRY C 3 UNLESS-EXIT 7\nRETRY B 2\n")
WHEN = calendar.timegm((2026, 3, 4, 5, 6, 7))


def test_rescue_text_is_htcondors_format() -> None:
    dag = parse_dag_text(DIAMOND, "diamond.dag", options=ParseOptions(check_files=False))
    text = rescue_text(dag, "diamond.dag", done=["A", "B"], failed=["C"], created=WHEN)
    assert text == (
        "# Rescue DAG file, created after running\n"
        "#   the diamond.dag DAG file\n"
        "# Created 3/4/2026 05:06:07 UTC\n"
        "# Rescue DAG version: 2.1.0\n"
        "#\n"
        "# Total number of Nodes: 5\n"
        "# Nodes premarked DONE: 2\n"
        "# Nodes that failed: 1\n"
        "#   C,<ENDLIST>\n"
        "\n"
        "DONE A\n"
        "DONE B\n")


def test_retries_kept_when_not_reset() -> None:
    dag = parse_dag_text(DIAMOND, "diamond.dag", options=ParseOptions(check_files=False))
    text = rescue_text(dag, "diamond.dag", done=["A"], failed=["C"], created=WHEN,
                       retries_used={"C": 1}, reset_retries=False)
    assert text.endswith("DONE A\n"
                         "# 0 of 2 retries already performed; 2 remaining\n"
                         "RETRY B 2\n"
                         "# 1 of 3 retries already performed; 2 remaining\n"
                         "RETRY C 2 UNLESS-EXIT 7\n")


def test_partial_rescue_reads_back_onto_the_original(tmp_path: Path) -> None:
    (tmp_path / "diamond.dag").write_text(DIAMOND)
    dag = parse_dag("diamond.dag", cwd=str(tmp_path), check_files=False)
    text = rescue_text(dag, "diamond.dag", done=["A", "C"], failed=["B"], retries_used={"C": 2},
                       reset_retries=False)
    path = tmp_path / rescue_name("diamond.dag", 1)
    path.write_text(text)
    assert last_rescue(str(tmp_path / "diamond.dag")) == str(path)
    again = parse_dag("diamond.dag", cwd=str(tmp_path), check_files=False)
    state = apply_rescue(again, path.read_text(), path.name)
    assert state.done == ["A", "C"] and state.version == (2, 1, 0)
    assert [n for n, node in again.nodes.items() if node.done] == ["A", "C"]
    assert (again.nodes["C"].retry, again.nodes["C"].retry_unless_exit) == (1, 7)
    assert again.nodes["B"].retry == 2


def test_a_failed_node_with_only_weak_children_is_done() -> None:
    dag = parse_dag_text("JOB A a\nJOB B b\nWEAK PARENT A CHILD B\n", "w.dag",
                         options=ParseOptions(check_files=False))
    text = rescue_text(dag, "w.dag", done=[], failed=["A"], created=WHEN)
    assert text.endswith("# Failed node with only weak child dependencies:\nDONE A\n")


def test_splice_nodes_in_a_rescue(tmp_path: Path) -> None:
    (tmp_path / "top.dag").write_text("SPLICE S s.dag\nJOB Z z\nPARENT S CHILD Z\n")
    (tmp_path / "s.dag").write_text("JOB A a\nJOB B b\nPARENT A CHILD B\n")
    dag = parse_dag("top.dag", cwd=str(tmp_path), check_files=False)
    text = rescue_text(dag, "top.dag", done=["S+A"], created=WHEN)
    assert "\nDONE S+A\n" in text
    again = parse_dag("top.dag", cwd=str(tmp_path), check_files=False)
    apply_rescue(again, text)
    assert again.nodes["S+A"].done and not again.nodes["S+B"].done


def test_htcondors_own_rescue_file_reads() -> None:
    """The rescue file htcondor-dags' tests hold (written by HTCondor 8.9)."""
    text = ("\n# Rescue DAG file, created after running\n#  the dagfile.dag DAG file\n"
            "# Created 11/8/2019 04:08:46 UTC\n# Rescue DAG version: 2.0.1 (partial)\n\n"
            "# Total number of Nodes: 4\n# Nodes premarked DONE: 2\n# Nodes that failed: 0\n"
            "#   <ENDLIST>\n\nDONE a:0\nDONE b:0\n")
    state = read_rescue(text)
    assert state.done == ["a:0", "b:0"] and state.version == (2, 0, 1)


@pytest.mark.parametrize(("text", "message"), [
    ("DONE A\nJOB X x.sub\n", "r.dag:2: a rescue DAG holds only DONE and RETRY lines, not JOB"),
    ("DONE\n", "r.dag:1: expected DONE NodeName"),
    ("RETRY A x\n", "r.dag:1: expected RETRY NodeName N"),
    ("DONE Q\n", "r.dag:1: unknown node name Q (the rescue DAG does not match the DAG)"),
    ("DONE F\n", "r.dag:1: the FINAL node F cannot be marked DONE"),
    ("# Rescue DAG version: 1.0.0\nJOB A a\n", "r.dag:1: rescue DAG version 1.0.0 is a full"),
])
def test_bad_rescue_files(text: str, message: str) -> None:
    dag = parse_dag_text(DIAMOND, "diamond.dag", options=ParseOptions(check_files=False))
    with pytest.raises(DagError) as info:
        apply_rescue(dag, text, "r.dag")
    assert message in str(info.value)


def test_rescue_refuses_unknown_nodes() -> None:
    dag = parse_dag_text(DIAMOND, "diamond.dag", options=ParseOptions(check_files=False))
    with pytest.raises(ValueError, match="not nodes of the DAG: Q"):
        rescue_text(dag, "diamond.dag", done=["Q"])


def test_script_macros_expand_whole_words_only() -> None:
    values = ScriptValues(node="B", retry=2, max_retries=5, dag_status=0, failed_count=1,
                          cluster_id=42, proc_id=3, job_count=4, success=False, return_value=9,
                          exit_codes={0: 0, 1: 9, 2: 0, 3: 1}, job_abort_count=0,
                          pre_script_return=-1, dag_id="17", node_count=6)
    argv, warnings = expand_script_arguments(
        ScriptKind.POST, "post.sh",
        "$JOB $node $RETRY $MAX_RETRIES $JOBID $RETURN $PRE_SCRIPT_RETURN $DAG_STATUS "
        "$FAILED_COUNT $CLUSTERID $JOB_COUNT $SUCCESS $EXIT_CODES $EXIT_CODE_COUNTS "
        "$EXIT_CODE_LIST $DAGID $NODE_COUNT x$RETRY $OTHER", values)
    assert argv == ["post.sh", "B", "B", "2", "5", "42.3", "9", "-1", "0", "1", "42", "4",
                    "False", "0,1,9", "0:2,1:1,9:1", "0,9,0,1", "17", "6", "x$RETRY", "$OTHER"]
    assert warnings == ["unrecognized macro $OTHER in the POST script arguments"]


def test_post_only_macros_stay_in_a_pre_script() -> None:
    argv, warnings = expand_script_arguments(ScriptKind.PRE, "pre.sh", "$JOB $RETURN",
                                             ScriptValues(node="A"))
    assert argv == ["pre.sh", "A", "$RETURN"]
    assert warnings == ["$RETURN has no value in a PRE script and is passed as written"]

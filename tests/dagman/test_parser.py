"""The DAG language statement by statement, and every refusal naming file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from htcd.dagman import DagError, NodeKind, ParseOptions, ScriptKind, parse_dag, parse_dag_text
from htcd.dagman.model import Dag

NO_FILES = ParseOptions(check_files=False)


def parse(text: str) -> Dag:
    return parse_dag_text(text, "t.dag", options=NO_FILES)


def refused(text: str) -> str:
    with pytest.raises(DagError) as info:
        parse(text)
    return str(info.value)


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_jobs_edges_comments_case_and_continuation() -> None:
    dag = parse("# a comment\n"
                "  job A a.sub\n"
                "Job B b.sub DIR sub/dir NOOP DONE\n"
                "JOB C \"c file.sub\" dir \"my dir\"\n"
                "\n"
                "Parent A B \\\n"
                "# commented out inside the continuation \\\n"
                "  child C\n"
                "PARENT A CHILD C\n")
    assert list(dag.nodes) == ["A", "B", "C"]
    b, c = dag.nodes["B"], dag.nodes["C"]
    assert (b.submit, b.directory, b.noop, b.done) == ("b.sub", "sub/dir", True, True)
    assert (c.submit, c.directory) == ("c file.sub", "my dir")
    assert [p.name for p in c.parents] == ["A", "B"]
    assert dag.edge_count() == 2  # the repeated A -> C counts once
    assert c.origin.line == 4


def test_a_comment_without_backslash_ends_a_continued_statement() -> None:
    assert "t.dag:3: expected CHILD after the parent node names" in refused(
        "JOB A a\nJOB C c\nPARENT A \\\n# a comment\nCHILD C\n")


def test_parent_may_come_before_its_nodes() -> None:
    dag = parse("PARENT A CHILD B\nJOB A a.sub\nJOB B b.sub\n")
    assert [c.name for c in dag.nodes["A"].children] == ["B"]


def test_many_to_many_edges() -> None:
    dag = parse("JOB p1 x\nJOB p2 x\nJOB c1 x\nJOB c2 x\nJOB c3 x\nPARENT p1 p2 CHILD c1 c2 c3\n")
    assert dag.edge_count() == 6
    assert [n.name for n in dag.initial_nodes()] == ["p1", "p2"]


@pytest.mark.parametrize(("text", "message"), [
    ("JOB A a.sub\nJOB A b.sub\n", "t.dag:2: node A is defined twice (first at t.dag:1)"),
    ("JOB A a.sub\nPARENT A CHILD B\n", "t.dag:2: unknown node name B in PARENT/CHILD"),
    ("JOB A a.sub\nFOO A\n", "t.dag:2: unknown statement 'FOO'"),
    ("JOB A\n", "t.dag:1: no submit file or submit description given"),
    ("JOB\n", "t.dag:1: no node name given"),
    ("JOB A a.sub DIR\n", "t.dag:1: no directory given after DIR"),
    ("JOB A a.sub DONE NOOP\n", "t.dag:1: invalid parameter 'NOOP'"),
    ("JOB A a.sub extra\n", "t.dag:1: invalid parameter 'extra'"),
    ("JOB parent a.sub\n", "t.dag:1: a node cannot be named parent"),
    ("JOB all_nodes a.sub\n", "a node cannot be named all_nodes"),
    ("JOB a+b a.sub\n", "node name a+b contains an illegal character ('+')"),
    ("JOB A a.sub\nJOB B b.sub\nPARENT A B\n", "t.dag:3: expected CHILD after the parent"),
    ("JOB A a.sub\nPARENT A CHILD\n", "t.dag:2: no child node names given"),
    ("JOB A a.sub\nPARENT CHILD A\n", "t.dag:2: no parent node names given"),
    ("JOB A a.sub\nRETRY A\n", "t.dag:2: missing number of retries"),
    ("JOB A a.sub\nRETRY A x\n", "t.dag:2: number of retries must be an integer, not 'x'"),
    ("JOB A a.sub\nRETRY A 2 UNLESS 3\n", "t.dag:2: invalid parameter 'UNLESS'"),
    ("JOB A a.sub\nRETRY A 2 UNLESS-EXIT 3 4\n", "t.dag:2: invalid parameter '4'"),
    ("JOB A a.sub\nPRIORITY A 1 2\n", "t.dag:2: invalid parameter '2'"),
    ("JOB A a.sub\nSCRIPT PRE A\n", "t.dag:2: no script executable given"),
    ("JOB A a.sub\nSCRIPT DEFER 0 10 PRE A x\n", "DEFER status value must be at least 1"),
    ("JOB A a.sub\nSCRIPT MIDDLE A x\n", "after SCRIPT expected PRE, POST, HOLD, DEFER or DEBUG"),
    ("JOB A a.sub\nSCRIPT PRE B x\n", "t.dag:2: unknown node name B"),
    ("JOB A a.sub\nVARS A\n", "t.dag:2: no macros given"),
    ("JOB A a.sub\nVARS A x=1\n", "x's value must be quoted"),
    ("JOB A a.sub\nVARS A x=\"1\n", "missing end quote"),
    ("JOB A a.sub\nVARS A x=\"\\n\"\n", 'unknown escape sequence "\\n"'),
    ("JOB A a.sub\nVARS A queue_x=\"1\"\n", 'names cannot begin with "queue"'),
    ("JOB A a.sub\nVARS A a+b=\"1\"\n", "'+' can only be the first character"),
    ("JOB A a.sub\nVARS A x=\"1\" APPEND\n", "APPEND must come before all the variables"),
    ("JOB A a.sub\nABORT-DAG-ON A 1 RETURN 300\n", "DAG return value must be between 0 and 255"),
    ("JOB A a.sub\nPRE_SKIP A 256\n", "PRE_SKIP exit code must be between 0 and 255"),
    ("JOB A a.sub\nMAXJOBS cat\n", "t.dag:2: missing MAXJOBS value"),
    ("JOB A a.sub\nMAXJOBS cat -1\n", "MAXJOBS value must be at least 0"),
    ("JOB A a.sub\nCATEGORY A\n", "missing category name"),
    ("JOB A a.sub\nDONE A B\n", "invalid parameter 'B'"),
    ("JOB A a.sub\nDONE ALL_NODES\n", "ALL_NODES cannot be used here"),
    ("JOB A a.sub\nPARENT ALL_NODES CHILD A\n", "ALL_NODES cannot be used in PARENT/CHILD"),
    ("JOB A a.sub\nFINAL F f.sub\nPARENT A CHILD F\n", "FINAL node F cannot be a child"),
    ("JOB A a.sub\nFINAL F f.sub\nRETRY F 2\n", "RETRY cannot name the FINAL node F"),
    ("FINAL F f.sub\nFINAL G g.sub\n", "t.dag:2: a second FINAL node G"),
    ("FINAL F f.sub DONE\n", "a FINAL node cannot be DONE"),
    ("SUBDAG A a.dag\n", "only SUBDAG EXTERNAL is supported"),
    ("JOB A lower.dag.condor.sub\n", "use SUBDAG EXTERNAL"),
    ("REJECT\n", "t.dag:1: the DAG file is marked REJECT"),
    ("ENV PUT X\n", "ENV needs GET or SET"),
    ("SET_JOB_ATTR Foo\n", "expected an attribute assignment"),
    ("JOB A {\nexecutable = /bin/true\n", "t.dag:1: missing inline description closing token: }"),
    ("JOB A { executable = /bin/true\n}\n", "t.dag:1: text after the inline description opener"),
    ("JOB A @=\nx = 1\n@\n", "t.dag:1: no inline description closing token given"),
    ("JOB A a.sub\nJOB B b.sub\nPARENT A CHILD B\nPARENT B CHILD A\n",
     "t.dag:1: the DAG has a cycle: A -> B -> A"),
    ("JOB A a.sub\nPARENT A CHILD A\n", "the DAG has a cycle: A -> A"),
])
def test_refusals_name_file_and_line(text: str, message: str) -> None:
    assert message in refused(text)


def test_cycle_names_its_nodes_only() -> None:
    text = "".join(f"JOB n{i} x\n" for i in range(6))
    text += "PARENT n0 CHILD n1\nPARENT n1 CHILD n2\nPARENT n2 CHILD n3\nPARENT n3 CHILD n1\n"
    text += "PARENT n4 CHILD n5\n"
    assert "the DAG has a cycle: n1 -> n2 -> n3 -> n1" in refused(text)


def test_scripts_and_node_settings() -> None:
    dag = parse("JOB A a.sub\nJOB B b.sub\n"
                "SCRIPT DEFER 4 30 PRE A pre.sh $JOB 1\n"
                "script post A post.sh $RETURN $PRE_SCRIPT_RETURN\n"
                "SCRIPT HOLD A mail.sh\n"
                "RETRY A 3 UNLESS-EXIT 42\n"
                "ABORT-DAG-ON A 2 RETURN 1\n"
                "PRIORITY A -5\nCATEGORY A big\nMAXJOBS big 3\nPRE_SKIP A 99\n"
                "DONE B\n")
    a = dag.nodes["A"]
    assert a.pre is not None and (a.pre.executable, a.pre.arguments) == ("pre.sh", "$JOB 1")
    assert (a.pre.defer_status, a.pre.defer_time) == (4, 30)
    assert a.post is not None and a.post.kind is ScriptKind.POST
    assert a.hold is not None and a.hold.executable == "mail.sh"
    assert (a.retry, a.retry_unless_exit, a.abort_status, a.abort_return) == (3, 42, 2, 1)
    assert (a.priority, a.category, a.pre_skip) == (-5, "big", 99)
    assert dag.max_jobs == {"big": 3}
    assert dag.nodes["B"].done
    assert not dag.warnings


def test_all_nodes_applies_to_this_file_in_statement_order() -> None:
    """The manual's example: later statements win, FINAL and SERVICE nodes are left out."""
    dag = parse("JOB A node.sub\nJOB B node.sub\nJOB C node.sub\nFINAL F f.sub\n"
                "SERVICE S s.sub\n"
                "SCRIPT PRE ALL_NODES my_script $JOB\n"
                "VARS A name=\"alphaNode\"\n"
                "VARS ALL_NODES name=\"$(JOB)\"\n"
                "VARS B name=\"nodeB\"\n"
                "RETRY all_nodes 3\nRETRY A 10\n")
    last = {n: [(v.name, v.value) for v in dag.nodes[n].vars] for n in "ABC"}
    assert last == {"A": [("name", "$(JOB)")], "B": [("name", "nodeB")],
                    "C": [("name", "$(JOB)")]}
    assert [str(w) for w in dag.warnings] == [  # as HTCondor warns
        't.dag:8: Warning: VAR "name" is already defined in node "A": now "$(JOB)"',
        't.dag:9: Warning: VAR "name" is already defined in node "B": now "nodeB"']
    assert [dag.nodes[n].retry for n in "ABC"] == [10, 3, 3]
    assert all(dag.nodes[n].pre is not None for n in "ABC")
    assert dag.nodes["F"].pre is None and dag.nodes["S"].pre is None
    assert dag.nodes["S"].kind is NodeKind.SERVICE


def test_vars_quoting_and_positions() -> None:
    dag = parse('JOB A a.sub\n'
                'VARS A first="Alberto Contador" second="\\"\\"Andy\\"\\"" third="x\\\\y"\n'
                'VARS A PREPEND +Attr="1" My.b="2"\n')
    values = [(v.name, v.value, v.position) for v in dag.nodes["A"].vars]
    assert values == [("first", "Alberto Contador", ""), ("second", '""Andy""', ""),
                      ("third", "x\\y", ""), ("+Attr", "1", "PREPEND"), ("My.b", "2", "PREPEND")]


def test_inline_and_named_submit_descriptions() -> None:
    dag = parse("JOB A {\n"
                "  executable = /bin/echo\n"
                "  # a comment\n"
                "  arguments = a\n"
                "}\n"
                "SUBMIT-DESCRIPTION Shared {\n"
                "  executable = /bin/true\n"
                "}\n"
                "JOB B Shared\nJOB C Shared DIR d\n"
                "JOB E {\n  executable = /bin/sh\n} DIR e NOOP\n"
                "JOB D @=end\n  executable = /bin/false\n@end\n"
                "PARENT A CHILD B C D\n")
    assert dag.nodes["A"].inline == "executable = /bin/echo\narguments = a\n"
    assert dag.nodes["B"].inline == dag.nodes["C"].inline == "executable = /bin/true\n"
    assert dag.nodes["C"].directory == "d"
    assert dag.nodes["D"].inline == "executable = /bin/false\n"
    assert dag.edge_count() == 3
    assert dag.nodes["D"].origin.line == 14
    assert (dag.nodes["E"].directory, dag.nodes["E"].noop) == ("e", True)
    assert dag.nodes["E"].inline == "executable = /bin/sh\n"


def test_bad_inline_submit_description_is_refused_at_its_line() -> None:
    text = "JOB A a.sub\nJOB B {\n  executable = /bin/true\n  queue 1 in (\n}\n"
    with pytest.raises(DagError, match=r"^t.dag:3: inline submit description: "):
        parse_dag_text(text, "t.dag", options=ParseOptions(check_files=False))


def test_an_inline_description_that_runs_a_command_is_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    dag = parse(f"JOB A {{\n  include : touch {marker} |\n  executable = /bin/true\n}}\n")
    assert dag.nodes["A"].inline is not None and not marker.exists()


def test_dag_wide_statements() -> None:
    dag = parse("CONFIG dagman.conf\n"
                "DOT dag.dot UPDATE DONT-OVERWRITE INCLUDE head.dot\n"
                "NODE_STATUS_FILE status.txt 30 ALWAYS-UPDATE\n"
                "NODE_STATUS_FILE other.txt\n"
                "JOBSTATE_LOG js.log\n"
                "SET_JOB_ATTR TestNumber = 17\n"
                "ENV GET PATH,HOME USER\n"
                "ENV SET A=1;B=x y;\n"
                "JOB A a.sub\nSAVE_POINT_FILE A\n")
    assert dag.config == "dagman.conf"
    assert dag.dot is not None and (dag.dot.update, dag.dot.overwrite, dag.dot.include) == (
        True, False, "head.dot")
    assert dag.node_status_file is not None and dag.node_status_file.file == "status.txt"
    assert (dag.node_status_file.min_update_time, dag.node_status_file.always_update) == (30, True)
    assert dag.jobstate_log == "js.log"
    assert dag.set_job_attrs == [("TestNumber", "17")]
    assert dag.env_get == ["PATH", "HOME", "USER"]
    assert dag.env_set == [("A", "1"), ("B", "x y")]
    assert dag.nodes["A"].save_point_file == "A-t.dag.save"
    warned = [str(w) for w in dag.warnings]
    assert "t.dag:2: Warning: htcd writes no Graphviz DOT file; DOT is ignored" in warned
    assert any(w.startswith("t.dag:4: Warning: NODE_STATUS_FILE other.txt does not override")
               for w in warned)
    assert any(w.startswith("t.dag:10: Warning: htcd writes no save point files") for w in warned)


def test_unhonoured_statements_warn() -> None:
    dag = parse("JOB A a.sub\nJOB B b.sub\nPROVISIONER P p.sub\nWEAK PARENT A CHILD B\n"
                "TOLERANCE A 10% WAIT\nSCRIPT DEBUG out.txt ALL PRE A x $NOPE\n")
    warned = "\n".join(str(w) for w in dag.warnings)
    assert "t.dag:3: Warning: htcd starts a PROVISIONER node like any other" in warned
    assert "t.dag:4: Warning: htcd runs a WEAK edge as a normal one" in warned
    assert "t.dag:5: Warning: htcd does not apply node TOLERANCE" in warned
    assert "DEBUG file" not in warned, "SCRIPT DEBUG is honoured"
    pre = dag.nodes["A"].pre
    assert pre is not None and (pre.debug_file, pre.debug_stream) == ("out.txt", "ALL")
    assert "t.dag:6: Warning: unrecognized macro $NOPE in the PRE script arguments" in warned
    assert dag.nodes["B"].weak_parents == {"A"}
    zero = parse("JOB A a.sub\nPRE_SKIP A 0\n")
    assert zero.nodes["A"].pre_skip == 0
    assert [str(w) for w in zero.warnings] == [
        "t.dag:2: Warning: exit code 0 for a PRE_SKIP value is weird (as HTCondor says)"]


def test_include_chain_is_named(tmp_path: Path) -> None:
    write(tmp_path, {"top.dag": "JOB A a.sub\nINCLUDE mid.inc\nPARENT A CHILD B\n",
                     "mid.inc": "JOB B b.sub\n\nINCLUDE low.inc\n",
                     "low.inc": "JOB C c.sub\nRETRY C two\n"})
    with pytest.raises(DagError) as info:
        parse_dag("top.dag", cwd=str(tmp_path), check_files=False)
    assert str(info.value) == ("low.inc:2: number of retries must be an integer, not 'two' "
                               "(included from mid.inc:3) (included from top.dag:2)")
    (tmp_path / "low.inc").write_text("JOB C c.sub\nPARENT B CHILD C\n")
    dag = parse_dag("top.dag", cwd=str(tmp_path), check_files=False)
    assert list(dag.nodes) == ["A", "B", "C"] and dag.edge_count() == 2
    (tmp_path / "low.inc").write_text("INCLUDE mid.inc\n")
    with pytest.raises(DagError, match=r"INCLUDE of mid\.inc includes itself"):
        parse_dag("top.dag", cwd=str(tmp_path), check_files=False)


def test_missing_submit_file_is_checked_below_dir(tmp_path: Path) -> None:
    write(tmp_path, {"d.dag": "JOB A a.sub DIR work\nJOB B b.sub NOOP\nSUBDAG EXTERNAL S s.dag\n",
                     "work/a.sub": "queue\n", "s.dag": "JOB X x.sub\n"})
    dag = parse_dag("d.dag", cwd=str(tmp_path))
    assert dag.nodes["S"].kind is NodeKind.SUBDAG and dag.nodes["S"].dag_file == "s.dag"
    assert dag.nodes["S"].submit == "s.dag.condor.sub"
    (tmp_path / "work" / "a.sub").rename(tmp_path / "a.sub")
    with pytest.raises(DagError, match=r"^d.dag:1: node A: submit file a.sub in directory work "
                                       "does not exist$"):
        parse_dag("d.dag", cwd=str(tmp_path))
    (tmp_path / "d.dag").write_text("SUBDAG EXTERNAL S gone.dag\n")
    assert parse_dag("d.dag", cwd=str(tmp_path)).nodes["S"].dag_file == "gone.dag", "read when S runs"


def test_missing_dag_file_is_a_dag_error(tmp_path: Path) -> None:
    with pytest.raises(DagError, match=r"cannot read DAG file nope\.dag"):
        parse_dag("nope.dag", cwd=str(tmp_path))


SPLICE_FILES = {
    "top.dag": "JOB Pre pre.sub\nJOB Post post.sub\n"
               "SPLICE S1 diamond.dag\nSPLICE S2 diamond.dag DIR sub\n"
               "PARENT Pre CHILD S1\nPARENT S1 CHILD S2\nPARENT S2 CHILD Post\n"
               "VARS S1+A x=\"1\"\nMAXJOBS +global 2\n",
    "diamond.dag": "JOB A a.sub\nJOB B b.sub DIR b\nJOB C c.sub\nJOB D d.sub\n"
                   "PARENT A CHILD B C\nPARENT B C CHILD D\nCATEGORY A local\nMAXJOBS local 1\n"
                   "CATEGORY D +global\n",
    "sub/diamond.dag": "JOB A a.sub\nSPLICE Inner inner.dag\nPARENT A CHILD Inner\n",
    "sub/inner.dag": "JOB X x.sub\nJOB Y y.sub\n",
}


def test_splices_are_lifted_with_their_names_and_dirs(tmp_path: Path) -> None:
    write(tmp_path, SPLICE_FILES)
    dag = parse_dag("top.dag", cwd=str(tmp_path), check_files=False)
    assert list(dag.nodes) == ["Pre", "Post", "S1+A", "S1+B", "S1+C", "S1+D", "S2+A",
                               "S2+Inner+X", "S2+Inner+Y"]
    assert [c.name for c in dag.nodes["Pre"].children] == ["S1+A"]
    assert [c.name for c in dag.nodes["S1+D"].children] == ["S2+A"]  # S2's initial nodes
    assert {p.name for p in dag.nodes["Post"].parents} == {"S2+Inner+X", "S2+Inner+Y"}
    assert [c.name for c in dag.nodes["S2+A"].children] == ["S2+Inner+X", "S2+Inner+Y"]
    assert dag.nodes["S1+B"].directory == "b"
    assert dag.nodes["S2+A"].directory == "sub" and dag.nodes["S2+Inner+X"].directory == "sub"
    assert dag.nodes["S1+A"].category == "S1+local" and dag.nodes["S1+D"].category == "+global"
    assert dag.max_jobs == {"S1+local": 1, "+global": 2}
    assert [(v.name, v.value) for v in dag.nodes["S1+A"].vars] == [("x", "1")]
    assert dag.splices == {"S1": "diamond.dag", "S2": "diamond.dag", "S2+Inner": "inner.dag"}
    assert not dag.warnings


@pytest.mark.parametrize(("top", "files", "message"), [
    ("SPLICE S s.dag DIR\n", {}, "top.dag:1: DIR requires a directory"),
    ("SPLICE S s.dag FOO bar\n", {}, "top.dag:1: illegal token (FOO) on SPLICE line"),
    ("SPLICE S s.dag DIR d extra\n", {}, "top.dag:1: invalid parameter 'extra'"),
    ("SPLICE S\n", {}, "top.dag:1: missing SPLICE file name"),
    ("SPLICE\n", {}, "top.dag:1: missing SPLICE name"),
    ("JOB S s.sub\nSPLICE S s.dag\n", {}, "top.dag:2: splice name S is already the name of a node"),
    ("SPLICE S s.dag\nJOB S s.sub\n", {"s.dag": "JOB A a\n"},
     "top.dag:2: node name S is already the name of a splice"),
    ("SPLICE S s.dag\nSPLICE S s.dag\n", {"s.dag": "JOB A a\n"}, "splice S is defined twice"),
    ("SPLICE S gone.dag\n", {}, "top.dag:1: cannot read DAG file gone.dag"),
    ("SPLICE S s.dag\n", {"s.dag": "JOB A a\nFINAL F f\n"},
     "top.dag:1: splice S has a FINAL node (F); splices cannot have FINAL nodes"),
    ("SPLICE S s.dag\n", {"s.dag": "SPLICE T s.dag\n"}, "splice T (s.dag) splices itself in"),
    ("CONFIG a.conf\nSPLICE S s.dag\n", {"s.dag": "JOB A a\nCONFIG b.conf\n"},
     "top.dag:2: splice S names DAGMan config file b.conf, but the DAG already has a.conf"),
    ("SPLICE S s.dag\n", {"s.dag": "JOB A a\nPARENT A CHILD Z\n"},
     "s.dag:2: unknown node name Z in PARENT/CHILD (in splice S from top.dag:1)"),
])
def test_bad_splices(tmp_path: Path, top: str, files: dict[str, str], message: str) -> None:
    write(tmp_path, {"top.dag": top, **files})
    with pytest.raises(DagError) as info:
        parse_dag("top.dag", cwd=str(tmp_path), check_files=False)
    assert message in str(info.value)


def test_splice_pins_and_connect(tmp_path: Path) -> None:
    write(tmp_path, {
        "top.dag": "SPLICE Out out.dag\nSPLICE In in.dag\nCONNECT Out In\n",
        "out.dag": "JOB O1 o\nJOB O2 o\nPIN_OUT O1 1\nPIN_OUT O2 2\n",
        "in.dag": "JOB I1 i\nJOB I2 i\nJOB I3 i\nPARENT I2 CHILD I3\nPIN_IN I1 1\nPIN_IN I2 2\n",
    })
    dag = parse_dag("top.dag", cwd=str(tmp_path), check_files=False)
    assert [c.name for c in dag.nodes["Out+O1"].children] == ["In+I1"]
    assert [c.name for c in dag.nodes["Out+O2"].children] == ["In+I2"]
    (tmp_path / "in.dag").write_text("JOB I1 i\nJOB I2 i\nPIN_IN I1 1\n")
    with pytest.raises(DagError, match="Out has 2 PIN_OUTs but In has 1 PIN_INs"):
        parse_dag("top.dag", cwd=str(tmp_path), check_files=False)
    (tmp_path / "in.dag").write_text("JOB I1 i\nJOB I2 i\nPIN_IN I1 1\nPIN_IN I2 3\n")
    with pytest.raises(DagError, match="pins of splice In are not numbered 1 to 2"):
        parse_dag("top.dag", cwd=str(tmp_path), check_files=False)
    (tmp_path / "top.dag").write_text("JOB N n\nSPLICE In in.dag\nCONNECT N In\n")
    with pytest.raises(DagError, match=r"top\.dag:3: N is not a splice of this DAG"):
        parse_dag("top.dag", cwd=str(tmp_path), check_files=False)


def test_use_dag_dir_resolves_against_the_dag_files_directory(tmp_path: Path) -> None:
    write(tmp_path, {"flows/d.dag": "JOB A a.sub\n", "flows/a.sub": "queue\n"})
    with pytest.raises(DagError, match=r"submit file a\.sub does not exist"):
        parse_dag("flows/d.dag", cwd=str(tmp_path))
    dag = parse_dag("flows/d.dag", cwd=str(tmp_path), use_dag_dir=True)
    assert list(dag.nodes) == ["A"]
    (tmp_path / "flows" / "d.dag").write_text("JOB A a.sub DIR x\n")
    with pytest.raises(DagError, match=r"d\.dag:1: DIR in node lines is not allowed with -usedagdir"):
        parse_dag("flows/d.dag", cwd=str(tmp_path), use_dag_dir=True)

"""Several DAG files combined into one DAG, as condor_dagman does with several -Dag files."""

from __future__ import annotations

from pathlib import Path

import pytest

from htcd.dagman import DagError, apply_rescue, parse_dag, rescue_text
from htcd.dagman.multi import combine_dags, one_config, parse_dags, rescue_base
from htcd.dagman.rescue import last_rescue, rescue_name

A_DAG = ("JOB A a.sub\nJOB B a.sub\nPARENT A CHILD B\nCATEGORY A heavy\nMAXJOBS heavy 2\n"
         "RETRY B 2\nDOT a.dot\nJOBSTATE_LOG a.jobstate\n")
B_DAG = ("JOB A b.sub\nJOB C b.sub\nPARENT A CHILD C\nCATEGORY C heavy\nMAXJOBS heavy 2\n"
         "DOT b.dot\nNODE_STATUS_FILE b.status\nJOBSTATE_LOG b.jobstate\n")


def _write(tmp: Path, files: dict[str, str]) -> None:
    for name, text in {"a.sub": "executable = /bin/true\nqueue\n", "b.sub": "executable = /bin/true\nqueue\n",
                       **files}.items():
        (tmp / name).write_text(text)


def test_node_names_get_the_file_number_and_edges_stay_in_their_dag(tmp_path: Path) -> None:
    _write(tmp_path, {"a.dag": A_DAG, "b.dag": B_DAG})
    dag = parse_dags(["a.dag", "b.dag"], cwd=str(tmp_path))
    assert list(dag.nodes) == ["0.A", "0.B", "1.A", "1.C"]
    assert all(name == node.name for name, node in dag.nodes.items())
    edges = {(p.name, c.name) for p in dag.nodes.values() for c in p.children}
    assert edges == {("0.A", "0.B"), ("1.A", "1.C")}
    assert [n.name for n in dag.initial_nodes()] == ["0.A", "1.A"]
    assert dag.nodes["0.B"].retry == 2 and dag.nodes["1.A"].submit == "b.sub"
    # categories are shared by all the files: the same MAXJOBS twice is no conflict
    assert (dag.nodes["0.A"].category, dag.nodes["1.C"].category, dag.max_jobs) == ("heavy", "heavy", {"heavy": 2})
    assert [w.reason for w in dag.warnings if "Graphviz" not in w.reason] == [
        "DOT b.dot in b.dag does not override the earlier a.dot",
        "JOBSTATE_LOG b.jobstate in b.dag does not override the earlier a.jobstate"]
    # the first file naming DOT, NODE_STATUS_FILE, JOBSTATE_LOG wins; the primary names the DAG
    assert dag.dot is not None and dag.dot.file == "a.dot"
    assert dag.node_status_file is not None and dag.node_status_file.file == "b.status"
    assert dag.jobstate_log == "a.jobstate" and dag.file == "a.dag"
    assert dag.files == ["a.dag", "b.dag"]


def test_one_file_is_returned_as_parsed(tmp_path: Path) -> None:
    _write(tmp_path, {"a.dag": A_DAG})
    assert list(parse_dags(["a.dag"], cwd=str(tmp_path)).nodes) == ["A", "B"]
    assert rescue_base(["a.dag"]) == "a.dag"


def test_a_different_maxjobs_overrides_with_a_warning(tmp_path: Path) -> None:
    _write(tmp_path, {"a.dag": A_DAG, "b.dag": B_DAG.replace("MAXJOBS heavy 2", "MAXJOBS heavy 5")})
    dag = parse_dags(["a.dag", "b.dag"], cwd=str(tmp_path))
    assert dag.max_jobs == {"heavy": 5}
    assert [str(w) for w in dag.warnings if "maxjobs" in w.reason] == [
        "Warning: new maxjobs value 5 for category heavy (in b.dag) overrides old value 2"]


def test_without_munging_distinct_names_combine_and_a_shared_name_is_refused(tmp_path: Path) -> None:
    _write(tmp_path, {"a.dag": A_DAG, "b.dag": B_DAG, "c.dag": "JOB X b.sub\nJOB Y b.sub\nPARENT X CHILD Y\n"})
    dag = parse_dags(["a.dag", "c.dag"], cwd=str(tmp_path), munge=False)
    assert list(dag.nodes) == ["A", "B", "X", "Y"]
    with pytest.raises(DagError) as exc:
        parse_dags(["a.dag", "b.dag"], cwd=str(tmp_path), munge=False)
    assert str(exc.value).startswith("b.dag:1: node name A is used in two DAG files (first at a.dag:1)")


def test_two_final_nodes_are_refused_naming_both_lines(tmp_path: Path) -> None:
    _write(tmp_path, {"a.dag": A_DAG + "FINAL F a.sub\n", "b.dag": "JOB X b.sub\n\nFINAL G b.sub\n"})
    with pytest.raises(DagError) as exc:
        parse_dags(["a.dag", "b.dag"], cwd=str(tmp_path))
    assert str(exc.value) == ("b.dag:3: a second FINAL node 1.G (the first is 0.F at a.dag:9): "
                              "one FINAL node in all the DAG files")
    _write(tmp_path, {"c.dag": "JOB X b.sub\n"})
    one = parse_dags(["c.dag", "a.dag"], cwd=str(tmp_path))
    assert one.final is not None and one.final.name == "1.F" and one.final is one.nodes["1.F"]


def test_weak_parents_are_renamed_with_their_nodes(tmp_path: Path) -> None:
    _write(tmp_path, {"a.dag": A_DAG, "w.dag": "JOB A b.sub\nJOB B b.sub\nWEAK PARENT A CHILD B\n"})
    dag = parse_dags(["a.dag", "w.dag"], cwd=str(tmp_path))
    assert dag.nodes["1.B"].weak_parents == {"1.A"} and dag.nodes["0.B"].weak_parents is None


def test_one_config_file_in_all(tmp_path: Path) -> None:
    _write(tmp_path, {"x.config": "", "y.config": "", "a.dag": A_DAG + "CONFIG x.config\n",
                      "b.dag": B_DAG + "CONFIG ./x.config\n", "c.dag": "JOB X b.sub\nCONFIG y.config\n"})
    dag = parse_dags(["a.dag", "b.dag"], cwd=str(tmp_path))
    assert dag.config == "x.config" and str(dag.config_origin) == "a.dag:9"
    with pytest.raises(DagError) as exc:
        parse_dags(["a.dag", "c.dag"], cwd=str(tmp_path))
    assert str(exc.value) == ("c.dag:2: conflicting DAGMan config files x.config (at a.dag:9) and y.config: "
                              "one config file per DAGMan")
    dags = [parse_dag(f, cwd=str(tmp_path)) for f in ("c.dag", "a.dag")]
    with pytest.raises(DagError, match=r"^a\.dag:9: conflicting DAGMan config files y\.config \(at c\.dag:2\)"):
        one_config(dags)


def test_usedagdir_with_files_in_two_directories_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DagError, match="different directories"):
        parse_dags(["x/a.dag", "y/b.dag"], cwd=str(tmp_path), use_dag_dir=True)


def test_one_rescue_dag_for_the_combined_dag_written_and_read_back(tmp_path: Path) -> None:
    _write(tmp_path, {"a.dag": A_DAG, "b.dag": B_DAG})
    files = ["a.dag", "b.dag"]
    assert rescue_base(files) == "a.dag_multi"
    assert rescue_name(rescue_base(files), 1) == "a.dag_multi.rescue001"
    dag = parse_dags(files, cwd=str(tmp_path))
    text = rescue_text(dag, files[0], done=["0.A", "1.A", "1.C"], failed=["0.B"])
    assert "#   the a.dag DAG file\n" in text and "# Total number of Nodes: 4\n" in text
    assert text.endswith("DONE 0.A\nDONE 1.A\nDONE 1.C\n")
    path = tmp_path / rescue_name(rescue_base(files), 1)
    path.write_text(text)
    assert last_rescue(str(tmp_path / rescue_base(files))) == str(path)
    again = parse_dags(files, cwd=str(tmp_path))
    state = apply_rescue(again, path.read_text(), path.name)
    assert state.done == ["0.A", "1.A", "1.C"]
    assert [n for n, node in again.nodes.items() if node.done] == ["0.A", "1.A", "1.C"]
    # a rescue DAG of the combined run names munged nodes: it does not fit the primary alone
    with pytest.raises(DagError, match=r"unknown node name 0\.A"):
        apply_rescue(parse_dag("a.dag", cwd=str(tmp_path)), path.read_text(), path.name)


def test_combine_of_one_dag_is_that_dag(tmp_path: Path) -> None:
    _write(tmp_path, {"a.dag": A_DAG})
    dag = parse_dag("a.dag", cwd=str(tmp_path))
    assert combine_dags([dag]) is dag and list(dag.nodes) == ["A", "B"]

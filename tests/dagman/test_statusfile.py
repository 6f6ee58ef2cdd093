"""The NODE_STATUS_FILE: HTCondor's ClassAd format, read back by htcd.classad and by the wheel."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from htcd.classad import parse_ad
from htcd.dagman import ParseOptions, parse_dag, parse_dag_text
from htcd.dagman.runstate import DagStatus, NodeRun, NodeStatus
from htcd.dagman.statusfile import node_status_text, write_atomically
from tests.dagman.dagfiles_support import diamond, run_of, wheel_parse_ads

S = NodeStatus
NOW = 1399674138


def _ads(text: str) -> list[dict[str, object]]:
    """Split at the ``]`` lines and parse each ad with htcd.classad."""
    chunks = re.findall(r"^\[\n.*?^\]\n", text, flags=re.S | re.M)
    assert "".join(chunks) == text  # nothing outside the ads
    out = []
    for chunk in chunks:
        ad = parse_ad(chunk)
        out.append({k: ad.eval(k) for k in ad})
    return out


def _running_run():
    return run_of({"A": S.DONE, "B": S.SUBMITTED, "C": S.POSTRUN, "D": S.NOT_READY, "F": S.NOT_READY},
                  B=NodeRun(procs_submitted=2, procs_idle=1, procs_held=1, retry=1))


def test_sample_layout_of_the_manual() -> None:
    """The manual's sample: the DagStatus ad's attributes in its order, then a NodeStatus ad
    per node, then StatusEnd; condor_dagman's readable comments after times and statuses."""
    text = node_status_text(diamond(), _running_run(), NOW, NOW + 3)
    lines = text.splitlines()
    assert lines[:6] == ["[", '  Type = "DagStatus";', "  DagFiles = {", '    "diamond.dag"', "  };",
                         f'  Timestamp = {NOW}; /* "{time.ctime(NOW)}" */']
    names = [ln.split(" =")[0].strip() for ln in lines[6:20]]
    assert names == ["DagStatus", "NodesTotal", "NodesDone", "NodesPre", "NodesQueued", "NodesPost",
                     "NodesReady", "NodesUnready", "NodesFutile", "NodesFailed", "JobProcsHeld",
                     "JobProcsIdle", "]", "["]
    assert lines[6] == '  DagStatus = 3; /* "STATUS_SUBMITTED ()" */'
    assert lines[-5:] == ["[", '  Type = "StatusEnd";', f'  EndTime = {NOW}; /* "{time.ctime(NOW)}" */',
                          f'  NextUpdate = {NOW + 3}; /* "{time.ctime(NOW + 3)}" */', "]"]
    b = lines.index('  Node = "B";')
    assert lines[b - 2:b + 7] == ["[", '  Type = "NodeStatus";', '  Node = "B";',
                                  '  NodeStatus = 3; /* "STATUS_SUBMITTED" */', '  StatusDetails = "idle";',
                                  "  RetryCount = 1;", "  JobProcsQueued = 2;", "  JobProcsHeld = 1;", "]"]


def test_values_parse_back_with_htcd_classad() -> None:
    ads = _ads(node_status_text(diamond(), _running_run(), NOW, NOW + 3))
    assert [a["Type"] for a in ads] == ["DagStatus"] + ["NodeStatus"] * 5 + ["StatusEnd"]
    dag = ads[0]
    assert (dag["NodesTotal"], dag["NodesDone"], dag["NodesQueued"], dag["NodesPost"], dag["NodesUnready"],
            dag["NodesFailed"], dag["JobProcsHeld"], dag["JobProcsIdle"]) == (5, 1, 1, 1, 2, 0, 1, 2)
    assert [a["Node"] for a in ads[1:6]] == ["A", "B", "C", "D", "F"]
    assert ads[-1]["NextUpdate"] == NOW + 3


def test_finished_states_and_the_wheel_agrees() -> None:
    """Every DAG outcome condor_dagman distinguishes, each parsed by htcd and by classad2."""
    dag = diamond()
    cases = {
        "success": run_of({n: S.DONE for n in "ABCDF"}),
        "failed": run_of({"A": S.DONE, "B": S.ERROR, "C": S.DONE, "D": S.FUTILE, "F": S.DONE},
                         DagStatus.NODE_FAILED, B=NodeRun(status_details="Job exited with status 1")),
        "removed": run_of({"A": S.DONE, "B": S.SUBMITTED, "C": S.PRERUN, "D": S.NOT_READY, "F": S.DONE},
                          DagStatus.RM, B=NodeRun(procs_submitted=1, procs_idle=1)),
        "aborted-final-pending": run_of({"A": S.ERROR, "B": S.FUTILE, "C": S.FUTILE, "D": S.FUTILE,
                                         "F": S.READY}, DagStatus.ABORT),
        "cycle": run_of({n: S.NOT_READY for n in "ABCDF"}, DagStatus.CYCLE),
        "quote\"and\\": run_of({"A": S.READY, "B": S.NOT_READY, "C": S.NOT_READY, "D": S.NOT_READY,
                                "F": S.NOT_READY}, A=NodeRun(status_details='say "hi" \\ there')),
    }
    texts = [node_status_text(dag, run, NOW, 0 if key != "quote\"and\\" else NOW + 60) for key, run in cases.items()]
    mine = [_ads(t) for t in texts]
    theirs = wheel_parse_ads(texts)
    for key, m, t in zip(cases, mine, theirs, strict=True):
        assert m == t, key
    by = dict(zip(cases, mine, strict=True))
    assert (by["success"][0]["DagStatus"], by["success"][0]["NodesDone"]) == (5, 5)
    failed = by["failed"]
    assert (failed[0]["DagStatus"], failed[0]["NodesFailed"], failed[0]["NodesFutile"]) == (6, 1, 1)
    assert failed[2]["StatusDetails"] == "Job exited with status 1"
    assert failed[4]["StatusDetails"] == "Had an ancestor node fail"
    removed = by["removed"]
    assert (removed[0]["DagStatus"], removed[0]["NodesFailed"], removed[0]["NodesQueued"],
            removed[0]["JobProcsIdle"]) == (6, 2, 0, 0)
    assert (removed[2]["NodeStatus"], removed[2]["StatusDetails"], removed[2]["JobProcsQueued"]) == \
        (6, "Was STATUS_SUBMITTED", 0)
    assert removed[3]["StatusDetails"] == "Was STATUS_PRERUN"
    assert by["aborted-final-pending"][0]["DagStatus"] == 3  # the FINAL node still runs
    assert by["cycle"][0]["DagStatus"] == 6
    assert by["quote\"and\\"][1]["StatusDetails"] == 'say "hi" \\ there'
    assert removed[-1]["NextUpdate"] == 0
    assert texts[0].splitlines()[-2] == '  NextUpdate = 0; /* "none" */'


def test_user_defined_done_is_noted() -> None:
    ads = _ads(node_status_text(diamond(), run_of({n: S.DONE for n in "ABCDF"}), NOW, 0))
    assert {a["Node"]: a["StatusDetails"] for a in ads[1:6]}["D"] == "User defined as DONE"


def test_write_atomically_replaces_whole_file(tmp_path: Path) -> None:
    target = tmp_path / "my.dag.status"
    target.write_text("old")
    inode_before = os.stat(target).st_ino
    write_atomically(str(target), "new text\n")
    assert target.read_text() == "new text\n"
    assert os.stat(target).st_ino != inode_before  # renamed over, not rewritten in place
    assert sorted(p.name for p in tmp_path.iterdir()) == ["my.dag.status"]


def test_write_atomically_leaves_nothing_on_failure(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        write_atomically(str(tmp_path / "missing-dir" / "x.status"), "text")
    assert list(tmp_path.iterdir()) == []


CORPUS = Path(__file__).parent.parent / "corpus" / "dag" / "htcondor" / "src" / "condor_tests"


def _in_order(text: str, patterns: list[str]) -> None:
    """As HTCondor's job_dagman_node_status*.run check: each pattern found on a later line."""
    lines = text.splitlines()
    at = 0
    for pattern in patterns:
        while at < len(lines) and not re.search(pattern, lines[at]):
            at += 1
        assert at < len(lines), f"{pattern!r} not found in order"
        at += 1


def test_htcondors_node_status_test_expectations() -> None:
    """src/condor_tests/job_dagman_node_status.run and job_dagman_node_status_rm.run, on their DAGs."""
    dag = parse_dag(str(CORPUS / "job_dagman_node_status.dag"), cwd=str(CORPUS))
    names = list(dag.nodes)
    assert len(names) == 12
    run = run_of({n: S.DONE for n in names})
    node_lines = [p for n in names for p in (f'Node = "{n}";', "NodeStatus = 5;.*STATUS_DONE")]
    _in_order(node_status_text(dag, run, NOW, 0), [
        r"DagStatus = 5;.*STATUS_DONE \(success\)", "NodesTotal = 12;", "NodesDone = 12;", "NodesPre = 0;",
        "NodesQueued = 0;", "NodesPost = 0;", "NodesReady = 0;", "NodesUnready = 0;", "NodesFailed = 0;",
        "JobProcsHeld = 0;", "JobProcsIdle = 0;", *node_lines])
    run = run_of({n: (S.SUBMITTED if n == "A" else S.NOT_READY) for n in names},
                 A=NodeRun(procs_submitted=1, procs_idle=1))
    _in_order(node_status_text(dag, run, NOW, NOW), [
        r"DagStatus = 3;.*STATUS_SUBMITTED \(\)", "NodesTotal = 12;", "NodesDone = 0;", "NodesQueued = 1;",
        "NodesUnready = 11;", "JobProcsIdle = [01];", 'Node = "A";', "NodeStatus = 3;.*STATUS_SUBMITTED",
        'Node = "B1";', "NodeStatus = 0;.*STATUS_NOT_READY", 'Node = "C";', "NodeStatus = 0;.*STATUS_NOT_READY"])
    rm = parse_dag(str(CORPUS / "job_dagman_node_status_rm.dag"), cwd=str(CORPUS))
    run = run_of({"A": S.SUBMITTED}, DagStatus.RM, A=NodeRun(procs_submitted=1))
    _in_order(node_status_text(rm, run, NOW, 0), [
        r"DagStatus = 6;.*STATUS_ERROR \(removed\)", "NodesTotal = 1;", "NodesDone = 0;", "NodesPre = 0;",
        "NodesQueued = 0;", "NodesPost = 0;", "NodesReady = 0;", "NodesUnready = 0;", "NodesFailed = 1;",
        "JobProcsHeld = 0;", "JobProcsIdle = 0;", 'Node = "A";', "NodeStatus = 6;.*STATUS_ERROR"])


def test_service_nodes_are_not_among_the_dags_nodes() -> None:
    dag = parse_dag_text("JOB A a.sub\nSERVICE S s.sub\n", "s.dag", options=ParseOptions(check_files=False))
    run = run_of({"A": S.DONE, "S": S.SUBMITTED}, S=NodeRun(procs_submitted=1, procs_idle=1))
    ads = _ads(node_status_text(dag, run, NOW, 0))
    assert (ads[0]["DagStatus"], ads[0]["NodesTotal"], ads[0]["JobProcsIdle"]) == (5, 1, 0)
    assert [a.get("Node") for a in ads[1:-1]] == ["A"]

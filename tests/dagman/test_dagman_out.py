"""Fixed texts of dagman.out: the status table, the DAG status line, the banner, the last line."""

from __future__ import annotations

import calendar
import re

from htcd.dagman import ParseOptions, dagman_out, parse_dag_text
from htcd.dagman.runstate import DagRun, DagStatus, NodeRun, NodeStatus

S = NodeStatus


def _run(statuses: list[NodeStatus], dag_status: DagStatus = DagStatus.OK, held: int = 0) -> DagRun:
    nodes = {f"N{i}": NodeRun(status=s) for i, s in enumerate(statuses)}
    if held:
        nodes["N0"].procs_held = held
    return DagRun(nodes=nodes, dag_status=dag_status)


def test_status_table_exactly() -> None:
    run = _run([S.DONE] * 11 + [S.PRERUN, S.SUBMITTED, S.SUBMITTED, S.POSTRUN, S.READY, S.NOT_READY,
                                S.ERROR, S.FUTILE, S.FUTILE], DagStatus.NODE_FAILED, held=3)
    assert dagman_out.status_table(run) == (
        "DAG status: 2 (DAG_STATUS_NODE_FAILED)\n"
        "Of 20 nodes total:\n"
        " Done     Pre   Queued    Post   Ready   Un-Ready   Failed   Futile\n"
        "  ===     ===      ===     ===     ===        ===      ===      ===\n"
        "   11       1        2       1       1          1        1        2\n"
        "3 job proc(s) currently held\n")


def test_dag_status_lines_htcondors_tests_grep() -> None:
    """job_dagman_* tests look for ``DAG status: 2`` and ``DAG status: 0``."""
    assert dagman_out.dag_status_line(DagStatus.OK) == "DAG status: 0 (DAG_STATUS_OK)"
    assert re.search("DAG status: 2", dagman_out.dag_status_line(DagStatus.NODE_FAILED))
    names = [dagman_out.dag_status_line(s).split("(")[1] for s in DagStatus]
    assert names == ["DAG_STATUS_OK)", "DAG_STATUS_ERROR)", "DAG_STATUS_NODE_FAILED)", "DAG_STATUS_ABORT)",
                     "DAG_STATUS_RM)", "DAG_STATUS_CYCLE)", "DAG_STATUS_HALTED)"]


def test_exiting_line() -> None:
    line = dagman_out.exiting_line(445, 0, "12.0")
    assert line == "**** condor_scheduniv_exec.12.0 (condor_DAGMAN) pid 445 EXITING WITH STATUS 0"
    # The manual's "Check DAG Successful Exit" sample is the line's tail.
    assert line.endswith("(condor_DAGMAN) pid 445 EXITING WITH STATUS 0")
    assert dagman_out.exiting_line(9, 1).startswith("**** condor_dagman (condor_DAGMAN) pid 9 ")


def test_banner_and_stamps() -> None:
    banner = dagman_out.startup_banner(pid=445, uid=1000, executable="/usr/bin/htcd", dagman_job_id="12.0",
                                       version="$CondorVersion: 25.0.0 2026-01-01 $",
                                       platform="$CondorPlatform: x86_64_Debian12 $")
    lines = banner.splitlines()
    assert lines[0] == lines[-1] == "*" * 54
    assert lines[1] == "** condor_scheduniv_exec.12.0 (CONDOR_DAGMAN) STARTING UP"
    assert lines[3] == "** SubsystemInfo: name=DAGMAN type=DAGMAN(9) class=CLIENT(2)"
    assert lines[4] == "** Configuration: subsystem:DAGMAN local:<NONE> class:CLIENT"
    assert lines[7] == "** PID = 445 RealUID = 1000"
    assert lines[8] == "** Log last touched time unavailable (No such file or directory)"
    when = calendar.timegm((2026, 3, 4, 5, 6, 7))
    stamped = dagman_out.stamped("a\nb\n", when)
    assert len(stamped.splitlines()) == 2
    assert all(re.match(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d [ab]$", ln) for ln in stamped.splitlines())


def test_service_nodes_are_not_counted_when_the_dag_is_given() -> None:
    dag = parse_dag_text("JOB A a.sub\nSERVICE S s.sub\n", "s.dag", options=ParseOptions(check_files=False))
    run = DagRun(nodes={"A": NodeRun(status=S.DONE), "S": NodeRun(status=S.SUBMITTED, procs_held=1)})
    assert "Of 2 nodes total:" in dagman_out.status_table(run)
    table = dagman_out.status_table(run, dag).splitlines()
    assert table[1] == "Of 1 nodes total:"
    assert table[4] == "    1       0        0       0       0          0        0        0"
    assert table[5] == "0 job proc(s) currently held"

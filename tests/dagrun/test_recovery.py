"""Recovery after kill -9, SIGTERM (schedd shutdown), SIGUSR1 (the DAG job removed), the lock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from pooltools import Pool, wait_for

from htcd.eventlog import EXECUTE
from tests.dagrun.dagtools import TRUE_JOB, dagman_argv, executions, node_events, run_dag, start_dag, write

SLOW_JOB = "executable = /bin/sleep\narguments = 1.5\nlog = job.log\nqueue\n"


def _chain(tmp_path: Path, post: str = "") -> None:
    write(tmp_path, {
        "job.sub": TRUE_JOB, "slow.sub": SLOW_JOB,
        "post.sh": "#!/bin/sh\necho $1 >> post.out\n",
        "chain.dag": "JOB A job.sub\nJOB B slow.sub\nJOB C job.sub\nJOB D job.sub\nJOB E job.sub\n"
                     "PARENT A CHILD B\nPARENT B CHILD C D\nPARENT C D CHILD E\n" + post,
    })


def _kill_when(proc: subprocess.Popen[str], cond: object, what: str) -> None:
    try:
        wait_for(cond, 60, what, interval=0.005)  # type: ignore[arg-type]
    finally:
        proc.kill()
        proc.wait(10)


def _out(tmp_path: Path) -> str:
    path = tmp_path / "chain.dag.dagman.out"
    return path.read_text() if path.exists() else ""


def test_kill_9_while_a_job_runs_then_every_node_runs_once(dag_pool: Pool, tmp_path: Path) -> None:
    _chain(tmp_path)
    log = tmp_path / "chain.dag.nodes.log"
    proc = start_dag(dag_pool, tmp_path, "chain.dag")
    _kill_when(proc, lambda: executions(log)["B"] == 1, "node B's execute event")
    assert (tmp_path / "chain.dag.lock").exists()  # left behind: the restart recovers
    again = run_dag(dag_pool, tmp_path, "chain.dag")
    out = _out(tmp_path)
    assert again.returncode == 0, out[-3000:]
    assert "Running in RECOVERY mode" in out
    assert executions(log) == {n: 1 for n in "ABCDE"}
    assert not (tmp_path / "chain.dag.lock").exists()


@pytest.mark.parametrize("point", ["submitting", "post"])
def test_kill_9_at_the_awkward_points(dag_pool: Pool, tmp_path: Path, point: str) -> None:
    """Between "submit sent" and the submit event, and while a POST script runs: still once."""
    _chain(tmp_path, "SCRIPT POST C post.sh $JOB\n")
    log = tmp_path / "chain.dag.nodes.log"
    proc = start_dag(dag_pool, tmp_path, "chain.dag")
    if point == "submitting":
        _kill_when(proc, lambda: "Submitting HTCondor Node B" in _out(tmp_path), "B's submit")
    else:
        _kill_when(proc, lambda: "Running POST script of Node C" in _out(tmp_path), "C's POST script")
        wait_for(lambda: (tmp_path / "post.out").exists(), 30, "the orphaned POST script to finish")
    again = run_dag(dag_pool, tmp_path, "chain.dag")
    assert again.returncode == 0, _out(tmp_path)[-3000:]
    assert executions(log) == {n: 1 for n in "ABCDE"}
    submits = [name for name, ev in node_events(log) if ev.type == 0]
    assert sorted(submits) == sorted("ABCDE")  # no node job was submitted twice


def test_sigterm_leaves_jobs_and_lock_and_the_restart_recovers(dag_pool: Pool, tmp_path: Path) -> None:
    _chain(tmp_path)
    log = tmp_path / "chain.dag.nodes.log"
    proc = start_dag(dag_pool, tmp_path, "chain.dag")
    wait_for(lambda: executions(log)["B"] == 1, 60, "node B's execute event")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(10) == 0
    assert (tmp_path / "chain.dag.lock").exists()
    assert not any(ev.type == 9 for _, ev in node_events(log))  # B's job was not removed
    again = run_dag(dag_pool, tmp_path, "chain.dag")
    assert again.returncode == 0, _out(tmp_path)[-3000:]
    assert executions(log) == {n: 1 for n in "ABCDE"}


def test_sigusr1_removes_the_node_jobs_and_writes_a_rescue_dag(dag_pool: Pool, tmp_path: Path) -> None:
    write(tmp_path, {"job.sub": TRUE_JOB, "long.sub": "executable = /bin/sleep\narguments = 60\nlog = job.log\nqueue\n",
                     "final.sh": "#!/bin/sh\necho $1 > final.out\n",
                     "rm.dag": "JOB A job.sub\nJOB L long.sub\nJOB C job.sub\nPARENT A L CHILD C\n"
                               "FINAL F job.sub NOOP\nSCRIPT POST F final.sh $DAG_STATUS\n"})
    log = tmp_path / "rm.dag.nodes.log"
    proc = start_dag(dag_pool, tmp_path, "rm.dag")
    wait_for(lambda: executions(log)["L"] == 1 and (tmp_path / "rm.dag.dagman.out").read_text().count("succeeded") == 1,
             60, "node L running and A done")
    proc.send_signal(signal.SIGUSR1)
    assert proc.wait(30) == 2
    out = (tmp_path / "rm.dag.dagman.out").read_text()
    assert "DAG status: 4 (DAG_STATUS_RM)" in out
    wait_for(lambda: any(n == "L" and ev.type == 9 for n, ev in node_events(log)), 30, "L's job removed")
    assert "DONE A" in (tmp_path / "rm.dag.rescue001").read_text()
    assert (tmp_path / "final.out").read_text() == "4\n"  # the FINAL node ran, with DAG_STATUS 4
    assert not (tmp_path / "rm.dag.lock").exists()


def test_a_second_dagman_on_the_same_dag_is_refused(dag_pool: Pool, tmp_path: Path) -> None:
    _chain(tmp_path)
    log = tmp_path / "chain.dag.nodes.log"
    first = start_dag(dag_pool, tmp_path, "chain.dag")
    try:
        wait_for(lambda: executions(log)["B"] == 1, 60, "node B's execute event")
        second = run_dag(dag_pool, tmp_path, "chain.dag")
        assert second.returncode == 1
        assert f"another DAGMan (pid {first.pid}) is running this DAG" in second.stderr
        assert "Traceback" not in second.stderr
    finally:
        assert first.wait(60) == 0, first.communicate()[1] + (tmp_path / "chain.dag.dagman.out").read_text()[-2500:]
    assert executions(log) == {n: 1 for n in "ABCDE"}
    assert sum(1 for _, ev in node_events(log) if ev.type == EXECUTE) == 5


def test_unknown_argument_and_missing_dag_refused(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("HTCD_CONFIG", "CONDOR_CONFIG")}
    bad = subprocess.run(dagman_argv("x.dag", "-Bogus", "1"), cwd=tmp_path, env=env, capture_output=True, text=True)
    assert bad.returncode == 1 and "unknown argument '-Bogus'" in bad.stderr and "Traceback" not in bad.stderr
    none = subprocess.run([sys.executable, "-m", "htcd", "dagman", "-f"], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert none.returncode == 1 and "no DAG file given (-Dag FILE)" in none.stderr
    missing = subprocess.run(dagman_argv("nope.dag"), cwd=tmp_path, env=env, capture_output=True, text=True)
    assert missing.returncode == 1 and "nope.dag" in missing.stderr and "Traceback" not in missing.stderr


def test_a_submit_sent_before_the_kill_is_found_not_repeated(dag_pool: Pool, tmp_path: Path) -> None:
    """The journal says B's submit was sent, no SUBMITTED line followed (killed in between), and
    the schedd has the job: the restart adopts it instead of submitting B again."""
    _chain(tmp_path)
    log = tmp_path / "chain.dag.nodes.log"
    first = run_dag(dag_pool, tmp_path, "chain.dag")  # a whole run, for A's journal lines
    assert first.returncode == 0
    journal = (tmp_path / "chain.dag.dagman.journal").read_text().splitlines()
    keep = journal[:journal.index("DONE A") + 1]
    log.write_text("".join(ev.raw for name, ev in node_events(log) if name == "A"))
    (tmp_path / "chain.dag.dagman.journal").write_text("\n".join([*keep, "SUBMITTING B 0"]) + "\n")
    (tmp_path / "chain.dag.lock").write_text("999999999\n")  # its DAGMan is gone
    (tmp_path / "b.sub").write_text(f'executable = /bin/sleep\narguments = 1\nlog = job.log\n'
                                    f'+DAGNodeName = "B"\n+DAGManNodesLog = "{log}"\n'
                                    f'submit_event_notes = DAG Node: B\nqueue\n')
    cluster = dag_pool.htcd("submit", "-terse", str(tmp_path / "b.sub")).stdout.split(".")[0]
    again = run_dag(dag_pool, tmp_path, "chain.dag")
    out = _out(tmp_path)
    assert again.returncode == 0, out[-3000:]
    assert f"Node B: its submit was sent before the restart: job {cluster}" in out
    assert executions(log) == {n: 1 for n in "ABCDE"}
    assert [name for name, ev in node_events(log) if ev.type == 0].count("B") == 1


def test_kill_9_during_retries_keeps_the_try_count(dag_pool: Pool, tmp_path: Path) -> None:
    write(tmp_path, {
        "flaky.sh": "#!/bin/sh\nn=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count\nsleep 0.5\n"
                    "[ $n -ge 3 ]\n",
        "flaky.sub": "executable = flaky.sh\nlog = job.log\nqueue\n",
        "pre.sh": "#!/bin/sh\necho $1 >> tries.out\n",
        "chain.dag": "JOB A flaky.sub\nRETRY A 2\nSCRIPT PRE A pre.sh $RETRY\n",
    })
    log = tmp_path / "chain.dag.nodes.log"
    proc = start_dag(dag_pool, tmp_path, "chain.dag")
    _kill_when(proc, lambda: executions(log)["A"] == 2, "A's second try running")
    again = run_dag(dag_pool, tmp_path, "chain.dag")
    assert again.returncode == 0, _out(tmp_path)[-3000:]
    assert executions(log) == {"A": 3}  # the third try, and no more: RETRY 2 is not started afresh
    assert (tmp_path / "tries.out").read_text().split() == ["0", "1", "2"]

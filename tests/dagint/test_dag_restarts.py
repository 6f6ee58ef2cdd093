"""A DAG through ``htcd submit_dag`` survives a schedd restart and then a whole-pool restart
(the master stopped and started) mid-DAG: the DAG job is started again, recovers, and no node
is submitted twice."""

from __future__ import annotations

from pathlib import Path

from pooltools import wait_for

from tests.dagint.dagjob import (
    GATE_SH,
    dagman_pid,
    executions,
    gated_sub,
    history_exit,
    out_text,
    submissions,
    submit_dag,
    wait_done,
    wait_for_dagman,
    write,
)
from tests.dagrun.conftest import DAG_POOL_KNOBS


def test_schedd_restart_then_pool_restart_mid_dag(make_pool, tmp_path: Path) -> None:
    pool = make_pool(knobs=DAG_POOL_KNOBS)
    write(tmp_path, {
        "gate.sh": GATE_SH, "true.sub": "executable = /bin/true\nqueue\n",
        "b.sub": gated_sub(tmp_path, "go.B"), "c.sub": gated_sub(tmp_path, "go.C"),
        "r.dag": "JOB A true.sub\nJOB B b.sub\nJOB C c.sub\nJOB D true.sub\nPARENT A CHILD B\n"
                 "PARENT B CHILD C\nPARENT C CHILD D\n",
    })
    cluster = submit_dag(pool, tmp_path, "r.dag")
    log = tmp_path / "r.dag.nodes.log"
    wait_for(lambda: executions(log)["B"] == 1, 90, "B running")
    first = dagman_pid(tmp_path, "r.dag")

    # (b) the schedd restarts: its DAGMan gets SIGTERM, leaves B queued and its lock; the new
    # schedd starts the DAG job again, which recovers
    pool.htcd("restart", "-daemon", "schedd")
    second = wait_for_dagman(tmp_path, "r.dag", other_than=first)
    (tmp_path / "go.B").touch()
    wait_for(lambda: executions(log)["C"] >= 1, 90, lambda: f"C running\n{out_text(tmp_path, 'r.dag')[-3000:]}")

    # (c) the whole pool stops and starts: C's job is evicted and runs again, not resubmitted
    pool.stop()
    (tmp_path / "go.C").touch()
    pool.start()
    wait_for_dagman(tmp_path, "r.dag", other_than=second)
    wait_done(pool, tmp_path, "r.dag", cluster)
    out = out_text(tmp_path, "r.dag")
    assert history_exit(pool, cluster) == ["4", "0"], out[-3000:]
    assert out.count("Running in RECOVERY mode") == 2
    assert submissions(log) == {"A": 1, "B": 1, "C": 1, "D": 1}, "no node submitted twice"
    runs = executions(log)
    assert runs["A"] == runs["D"] == 1 and runs["B"] >= 1 and runs["C"] >= 1, runs

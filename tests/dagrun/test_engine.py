"""The DAGMan job against a real personal pool: ordering, scripts and their macros, retries,
PRE_SKIP, NOOP, DONE, VARS, ABORT-DAG-ON, FINAL, multi-proc nodes, category throttles, rescue."""

from __future__ import annotations

import re
from pathlib import Path

from pooltools import Pool

from htcd.eventlog import EXECUTE, SUBMIT, TERMINATED
from tests.dagrun.dagtools import TRUE_JOB, executions, node_events, run_dag, write


def test_diamond_with_vars_and_script_macros(dag_pool: Pool, tmp_path: Path) -> None:
    write(tmp_path, {
        "job.sub": "executable = /bin/sh\narguments = \"-c 'echo $(word) > out.$(nodename)'\"\n"
                   "log = job.log\nqueue\n",
        "pre.sh": "#!/bin/sh\necho \"$@\" >> pre.out\n",
        "post.sh": "#!/bin/sh\necho \"$@\" >> post.out\n",
        "diamond.dag": "JOB A job.sub\nJOB B job.sub\nJOB C job.sub\nJOB D job.sub\n"
                       "PARENT A CHILD B C\nPARENT B C CHILD D\n"
                       "VARS ALL_NODES word=\"hello\" nodename=\"$(JOB)\"\nVARS B word=\"bee\"\n"
                       "SCRIPT PRE ALL_NODES pre.sh $JOB $RETRY $MAX_RETRIES\n"
                       "SCRIPT POST ALL_NODES post.sh $JOB $RETURN $JOBID\n",
    })
    done = run_dag(dag_pool, tmp_path, "diamond.dag")
    out = (tmp_path / "diamond.dag.dagman.out").read_text()
    assert done.returncode == 0, out[-3000:]
    assert "EXITING WITH STATUS 0" in out and "DAG status: 0 (DAG_STATUS_OK)" in out
    assert re.search(r"Submitting HTCondor Node A job\(s\)\.\.\.", out)
    assert re.search(r"Event: ULOG_JOB_TERMINATED for HTCondor Node D \(\d+\.0\.0\)", out)
    assert (tmp_path / "out.B").read_text() == "bee\n" and (tmp_path / "out.C").read_text() == "hello\n"
    assert sorted((tmp_path / "pre.out").read_text().split("\n")[:-1]) == ["A 0 0", "B 0 0", "C 0 0", "D 0 0"]
    posts = {line.split()[0]: line.split()[1:] for line in (tmp_path / "post.out").read_text().splitlines()}
    assert {n: v[0] for n, v in posts.items()} == {"A": "0", "B": "0", "C": "0", "D": "0"}
    assert all(re.fullmatch(r"\d+\.0", v[1]) for v in posts.values())
    # the order: each node's job is submitted after its parents' jobs terminated
    seen: dict[str, dict[int, int]] = {}
    for i, (name, ev) in enumerate(node_events(tmp_path / "diamond.dag.nodes.log")):
        seen.setdefault(name, {}).setdefault(ev.type, i)
    for parent, child in (("A", "B"), ("A", "C"), ("B", "D"), ("C", "D")):
        assert seen[parent][TERMINATED] < seen[child][SUBMIT]
    assert not (tmp_path / "diamond.dag.lock").exists()
    assert not list(tmp_path.glob("*.rescue*"))


def test_retry_and_unless_exit_then_rescue_and_rerun(dag_pool: Pool, tmp_path: Path) -> None:
    write(tmp_path, {
        # fails twice, then succeeds: the count is kept in a file of the node's directory
        "flaky.sh": "#!/bin/sh\nn=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count\n"
                    "[ $n -ge 3 ]\n",
        "flaky.sub": "executable = flaky.sh\nlog = job.log\nqueue\n",
        "seven.sh": "#!/bin/sh\n[ -e fixed ] && exit 0\nexit 7\n",
        "seven.sub": "executable = seven.sh\nlog = job.log\nqueue\n",
        "job.sub": TRUE_JOB,
        "r.dag": "JOB A flaky.sub\nJOB B seven.sub\nJOB C job.sub\nJOB D job.sub\n"
                 "PARENT A CHILD B\nPARENT B CHILD C\n"
                 "RETRY A 3\nRETRY B 5 UNLESS-EXIT 7\n",
    })
    first = run_dag(dag_pool, tmp_path, "r.dag")
    out = (tmp_path / "r.dag.dagman.out").read_text()
    assert first.returncode == 1, out[-3000:]
    log = tmp_path / "r.dag.nodes.log"
    assert executions(log) == {"A": 3, "B": 1, "D": 1}  # B not retried: UNLESS-EXIT 7
    assert "Node B exited with the UNLESS-EXIT value 7: not retried" in out
    rescue = (tmp_path / "r.dag.rescue001").read_text()
    assert re.findall(r"^DONE (\S+)$", rescue, re.M) == ["A", "D"]
    assert "#   B,<ENDLIST>" in rescue
    assert "EXITING WITH STATUS 1" in out
    (tmp_path / "fixed").write_text("")
    second = run_dag(dag_pool, tmp_path, "r.dag")
    assert second.returncode == 0, (tmp_path / "r.dag.dagman.out").read_text()[-3000:]
    assert executions(log) == {"B": 1, "C": 1}  # only the rest ran


def test_pre_skip_noop_done(dag_pool: Pool, tmp_path: Path) -> None:
    write(tmp_path, {
        "job.sub": TRUE_JOB,
        "skip.sh": "#!/bin/sh\nexit 3\n",
        "post.sh": "#!/bin/sh\necho $1 $2 >> post.out\n",
        "s.dag": "JOB A job.sub\nJOB B job.sub NOOP\nJOB C job.sub DONE\nJOB D job.sub\n"
                 "PARENT A B C CHILD D\n"
                 "SCRIPT PRE A skip.sh\nPRE_SKIP A 3\nSCRIPT POST A post.sh $JOB $RETURN\n"
                 "SCRIPT POST B post.sh $JOB $RETURN\n",
    })
    done = run_dag(dag_pool, tmp_path, "s.dag")
    out = (tmp_path / "s.dag.dagman.out").read_text()
    assert done.returncode == 0, out[-3000:]
    assert executions(tmp_path / "s.dag.nodes.log") == {"D": 1}
    assert (tmp_path / "post.out").read_text() == "B 0\n"  # A's POST skipped with its job
    assert "PRE_SKIP value" in out


def test_abort_dag_on_and_final_node_sees_dag_status(dag_pool: Pool, tmp_path: Path) -> None:
    write(tmp_path, {
        "five.sub": "executable = /bin/sh\narguments = \"-c 'exit 5'\"\nlog = job.log\nqueue\n",
        "long.sub": "executable = /bin/sleep\narguments = 60\nlog = job.log\nqueue\n",
        "final.sh": "#!/bin/sh\necho $1 $2 > final.out\nexit $1\n",
        "a.dag": "JOB A five.sub\nJOB L long.sub\nJOB C five.sub\nPARENT A CHILD C\n"
                 "ABORT-DAG-ON A 5 RETURN 9\nFINAL F five.sub NOOP\nSCRIPT POST F final.sh $DAG_STATUS $FAILED_COUNT\n",
    })
    done = run_dag(dag_pool, tmp_path, "a.dag")
    out = (tmp_path / "a.dag.dagman.out").read_text()
    assert (tmp_path / "final.out").read_text() == "3 1\n", out[-3000:]
    assert done.returncode == 9, out[-3000:]  # the FINAL node failed: the abort's RETURN value stands
    assert "Aborting DAG because we got the ABORT exit value" in out
    events = node_events(tmp_path / "a.dag.nodes.log")
    assert any(name == "L" and ev.type == 9 for name, ev in events)  # L's job was removed
    assert not any(name == "C" for name, _ in events)
    assert "DAG status: 3 (DAG_STATUS_ABORT)" in out


def test_final_node_success_makes_the_dag_succeed(dag_pool: Pool, tmp_path: Path) -> None:
    write(tmp_path, {
        "fail.sub": "executable = /bin/false\nlog = job.log\nqueue\n",
        "job.sub": TRUE_JOB,
        "final.sh": "#!/bin/sh\necho $1 $2 > final.out\n",
        "f.dag": "JOB A fail.sub\nJOB B job.sub\nPARENT A CHILD B\nFINAL F job.sub\n"
                 "SCRIPT PRE F final.sh $DAG_STATUS $FAILED_COUNT\n",
    })
    done = run_dag(dag_pool, tmp_path, "f.dag")
    out = (tmp_path / "f.dag.dagman.out").read_text()
    assert done.returncode == 0, out[-3000:]
    assert (tmp_path / "final.out").read_text() == "2 1\n"
    assert executions(tmp_path / "f.dag.nodes.log") == {"A": 1, "F": 1}


def test_multi_proc_node_and_category_maxjobs(dag_pool: Pool, tmp_path: Path) -> None:
    nodes = [f"N{i}" for i in range(6)]
    write(tmp_path, {
        "three.sub": "executable = /bin/sleep\narguments = 0.3\nlog = job.log\nqueue 3\n",
        "c.dag": "".join(f"JOB {n} three.sub\nCATEGORY {n} slow\n" for n in nodes) + "MAXJOBS slow 2\n",
    })
    done = run_dag(dag_pool, tmp_path, "c.dag")
    out = (tmp_path / "c.dag.dagman.out").read_text()
    assert done.returncode == 0, out[-3000:]
    events = node_events(tmp_path / "c.dag.nodes.log")
    assert executions(tmp_path / "c.dag.nodes.log") == {n: 3 for n in nodes}
    in_queue: dict[str, int] = {}
    most = 0
    for name, ev in events:
        if ev.type == SUBMIT:
            in_queue[name] = in_queue.get(name, 0) + 1
        elif ev.type == TERMINATED:
            in_queue[name] -= 1
            if not in_queue[name]:
                del in_queue[name]
        most = max(most, len(in_queue))
    assert most == 2  # never more than MAXJOBS nodes of the category at once, and the limit used
    assert sum(1 for _, ev in events if ev.type == EXECUTE) == 18


def test_failed_proc_removes_the_rest_of_the_cluster(dag_pool: Pool, tmp_path: Path) -> None:
    write(tmp_path, {
        "mixed.sub": "executable = /bin/sh\narguments = \"-c 'if [ $(Process) = 0 ]; then exit 4; fi; sleep 60'\"\n"
                     "log = job.log\nqueue 3\n",
        "post.sh": "#!/bin/sh\necho \"$@\" > post.out\nexit 0\n",
        "m.dag": "JOB M mixed.sub\nSCRIPT POST M post.sh $RETURN $JOB_ABORT_COUNT $JOB_COUNT\n",
    })
    done = run_dag(dag_pool, tmp_path, "m.dag")
    out = (tmp_path / "m.dag.dagman.out").read_text()
    assert done.returncode == 0, out[-3000:]  # the POST script decides
    assert (tmp_path / "post.out").read_text() == "4 2 3\n"
    assert "removing the node's remaining procs" in out


def test_node_jobs_carry_dagman_attributes_and_the_dag_job_ad_is_updated(dag_pool: Pool, tmp_path: Path) -> None:
    # a held job stands in for the DAGMan job the schedd would run (its id comes in CONDOR_ID)
    (tmp_path / "standin.sub").write_text("executable = /bin/true\nhold = true\nqueue\n")
    dagman = int(dag_pool.htcd("submit", "-terse", str(tmp_path / "standin.sub")).stdout.split(".")[0])
    write(tmp_path, {"job.sub": TRUE_JOB, "ad.dag": "JOB A job.sub\nJOB B job.sub\nPARENT A CHILD B\nPRIORITY B 7\n"
                     "SET_JOB_ATTR Color = \"blue\"\n"})
    try:
        done = run_dag(dag_pool, tmp_path, "ad.dag", env={"CONDOR_ID": f"{dagman}.0"})
        assert done.returncode == 0, (tmp_path / "ad.dag.dagman.out").read_text()[-3000:]
        ad = dag_pool.htcd("q", f"{dagman}.0", "-af", "DAG_NodesTotal", "DAG_NodesDone", "DAG_NodesFailed",
                           "DAG_Status", "DAG_JobsSubmitted", "DAG_JobsCompleted").stdout.split()
        assert ad == ["2", "2", "0", "0", "2", "2"]
        rows = dag_pool.htcd("history", "-constraint", f"DAGManJobId == {dagman}", "-af", "DAGNodeName",
                             "DAGParentNodeNames", "JobBatchName", "JobPrio", "Color", "DAGManNodesLog").stdout
        by_node = {line.split()[0]: line.split()[1:] for line in rows.splitlines()}
        log = str(tmp_path / "ad.dag.nodes.log")
        assert by_node == {"A": ["undefined", f"ad.dag+{dagman}", "0", "blue", log],
                           "B": ["A", f"ad.dag+{dagman}", "7", "blue", log]}
    finally:
        dag_pool.htcd("rm", str(dagman))


def test_subdag_external_node_runs_the_inner_dag(dag_pool: Pool, tmp_path: Path) -> None:
    write(tmp_path, {"job.sub": TRUE_JOB, "inner.dag": "JOB X job.sub\nJOB Y job.sub\nPARENT X CHILD Y\n",
                     "outer.dag": "JOB A job.sub\nSUBDAG EXTERNAL S inner.dag\nPARENT A CHILD S\n"})
    done = run_dag(dag_pool, tmp_path, "outer.dag")
    assert done.returncode == 0, (tmp_path / "outer.dag.dagman.out").read_text()[-3000:]
    assert (tmp_path / "inner.dag.condor.sub").exists()
    assert executions(tmp_path / "outer.dag.nodes.log") == {"A": 1, "S": 1}
    assert executions(tmp_path / "inner.dag.nodes.log") == {"X": 1, "Y": 1}
    assert "EXITING WITH STATUS 0" in (tmp_path / "inner.dag.dagman.out").read_text()


def test_maxjobs_hold_script_status_file_and_jobstate_log(dag_pool: Pool, tmp_path: Path) -> None:
    write(tmp_path, {
        "job.sub": "executable = /bin/sleep\narguments = 0.3\nlog = job.log\nqueue\n",
        "held.sub": "executable = /bin/sleep\narguments = 4\nlog = job.log\nqueue\n",
        "hold.sh": "#!/bin/sh\necho $1 > hold.out\n",
        "m.dag": "JOB A job.sub\nJOB B job.sub\nJOB C job.sub\nJOB H held.sub\nPARENT A CHILD B C H\n"
                 "SCRIPT HOLD H hold.sh $JOB\nNODE_STATUS_FILE m.status 1\nJOBSTATE_LOG m.jobstate\n",
    })
    from tests.dagrun.dagtools import start_dag

    proc = start_dag(dag_pool, tmp_path, "m.dag", "-MaxJobs", "1")
    try:
        from pooltools import wait_for

        def h_cluster() -> str | None:
            return next((str(ev.cluster) for name, ev in node_events(tmp_path / "m.dag.nodes.log")
                         if name == "H" and ev.type == SUBMIT), None)

        wait_for(h_cluster, 60, "node H's job submitted")
        dag_pool.htcd("hold", str(h_cluster()))
        wait_for(lambda: (tmp_path / "hold.out").exists(), 60, "the HOLD script of node H")
        assert (tmp_path / "hold.out").read_text() == "H\n"
        out = (tmp_path / "m.dag.dagman.out").read_text()
        assert f"Event: ULOG_JOB_HELD for HTCondor Node H ({h_cluster()}.0.0)" in out
        assert re.search(r"Node H job proc \(\d+\.0\.0\) held: .+", out)
        dag_pool.htcd("release", str(h_cluster()))
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    in_queue: set[str] = set()
    most = 0
    for name, ev in node_events(tmp_path / "m.dag.nodes.log"):
        if ev.type == SUBMIT:
            in_queue.add(name)
        elif ev.type == TERMINATED:
            in_queue.discard(name)
        most = max(most, len(in_queue))
    assert most == 1  # -MaxJobs 1: one node job in the queue at a time
    status = (tmp_path / "m.status").read_text()
    assert 'Node = "H";' in status and "NodeStatus = 5;" in status
    states = (tmp_path / "m.jobstate").read_text().splitlines()
    assert any(" H JOB_HELD " in line for line in states) and any(" A EXECUTE " in line for line in states)
    assert "DAGMAN_FINISHED" in states[-1]


def test_always_run_post_after_a_failed_pre_script(dag_pool: Pool, tmp_path: Path) -> None:
    write(tmp_path, {"job.sub": TRUE_JOB, "fail.sh": "#!/bin/sh\nexit 1\n",
                     "post.sh": "#!/bin/sh\necho $1 $2 > post.out\n",
                     "p.dag": "JOB A job.sub\nSCRIPT PRE A fail.sh\nSCRIPT POST A post.sh $RETURN $PRE_SCRIPT_RETURN\n"})
    done = run_dag(dag_pool, tmp_path, "p.dag", "-AlwaysRunPost")
    assert done.returncode == 0, (tmp_path / "p.dag.dagman.out").read_text()[-3000:]
    assert (tmp_path / "post.out").read_text() == "-1004 1\n"  # the job was skipped; the POST decided
    assert executions(tmp_path / "p.dag.nodes.log") == {}
    (tmp_path / "post.out").unlink()
    (tmp_path / "p.dag.rescue001").unlink(missing_ok=True)
    again = run_dag(dag_pool, tmp_path, "p.dag", "-DontAlwaysRunPost")
    assert again.returncode == 1 and not (tmp_path / "post.out").exists()


def test_abort_dag_on_with_return_0_ends_the_dag_as_a_success(dag_pool: Pool, tmp_path: Path) -> None:
    """HTCondor's job_dagman_abort-A: ABORT-DAG-ON C 5 RETURN 0 stops the DAG (D never runs,
    C is not retried) with exit status 0 and DAG status 0."""
    write(tmp_path, {"job.sub": TRUE_JOB,
                     "five.sub": "executable = /bin/sh\narguments = \"-c 'exit 5'\"\nlog = job.log\nqueue\n",
                     "z.dag": "JOB A job.sub\nJOB B job.sub\nJOB C five.sub\nJOB D five.sub\n"
                              "ABORT-DAG-ON C 5 RETURN 0\nRETRY C 3\nPARENT A CHILD B\nPARENT B CHILD C\n"
                              "PARENT C CHILD D\n"})
    done = run_dag(dag_pool, tmp_path, "z.dag")
    out = (tmp_path / "z.dag.dagman.out").read_text()
    assert done.returncode == 0, out[-3000:]
    assert executions(tmp_path / "z.dag.nodes.log") == {"A": 1, "B": 1, "C": 1}
    assert "DAG status: 0 (DAG_STATUS_OK)" in out.rsplit("Aborting DAG", 1)[1]


def test_max_idle_holds_node_submits(dag_pool: Pool, tmp_path: Path) -> None:
    """-MaxIdle 3 on 12 nodes whose jobs cannot start: 3 are submitted and no more.  (Submits in
    flight count as idle; a pass made while they are on their way, which only events of other
    nodes arriving in that window cause, is not forced here: dag_bench's 10,000-node fan-out
    showed it, 9,555 nodes submitted under a cap of 1000.)"""
    import signal

    from pooltools import wait_for

    from tests.dagrun.dagtools import start_dag

    write(tmp_path, {"idle.sub": "executable = /bin/true\nrequirements = false\nlog = job.log\nqueue\n",
                     "idle.dag": "".join(f"JOB n{i} idle.sub\n" for i in range(12))})
    out = tmp_path / "idle.dag.dagman.out"
    proc = start_dag(dag_pool, tmp_path, "idle.dag", "-MaxIdle", "3")
    try:
        # the three submits answered and their submit events read back: every pass since counted them
        wait_for(lambda: out.exists() and out.read_text().count("Event: ULOG_SUBMIT") >= 3, 120,
                 lambda: out.read_text()[-2000:] if out.exists() else "no dagman.out")
        text = out.read_text()
        assert text.count("Submitting HTCondor Node") == 3, text[-3000:]
    finally:
        proc.send_signal(signal.SIGUSR1)  # the DAG removed: its node jobs go too
        proc.wait(60)
    assert len([ev for _, ev in node_events(tmp_path / "idle.dag.nodes.log") if ev.type == SUBMIT]) == 3

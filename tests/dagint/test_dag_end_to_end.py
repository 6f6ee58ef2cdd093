"""The whole DAGMan through ``htcd submit_dag`` on a real pool: the scheduler-universe DAG job
run by the schedd runs ``htcd dagman``, whose node jobs the schedd runs and logs.  What users
see while it runs (``htcd q -dag``, the status file, dagman.out, the jobstate log) and after
(history, the rescue DAG); recovery after kill -9 of the DAGMan and ``htcd rm``; bad DAGs."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

from pooltools import Pool, wait_for

from tests.dagint.dagjob import (
    FAIL_ONCE_SH,
    GATE_SH,
    dagman_pid,
    executions,
    gated_sub,
    history_exit,
    in_queue,
    out_text,
    submissions,
    submit_dag,
    wait_done,
    wait_for_dagman,
    write,
)
from tests.dagman.dagfiles_support import wheel_parse_ads

TRUE_SUB = "executable = /bin/true\nqueue\n"


def _status_ads(where: Path) -> dict[str, dict[str, object]]:
    """The node status file, parsed by the wheel's ClassAd parser: node name (or ad type) -> ad."""
    parsed = wheel_parse_ads([(where / "diamond.status").read_text()])[0]
    assert isinstance(parsed, list), parsed
    return {str(ad.get("Node", ad["Type"])): ad for ad in parsed}


def test_diamond_runs_to_the_end_and_shows_its_nodes(dag_pool: Pool, tmp_path: Path) -> None:
    write(tmp_path, {
        "gate.sh": GATE_SH, "true.sub": TRUE_SUB,
        "b.sub": gated_sub(tmp_path, "go.B", extra='+pegasus_site = "viz"\n'),
        "c.sub": gated_sub(tmp_path, "go.C", extra='+job_tag_name = "+tag"\n+tag = local\n'),
        "diamond.dag": "JOB A true.sub\nJOB B b.sub\nJOB C c.sub\nJOB D true.sub\nPARENT A CHILD B C\n"
                       "PARENT B C CHILD D\nRETRY D 2\nNODE_STATUS_FILE diamond.status 1\n"
                       "JOBSTATE_LOG diamond.jobstate.log\nCONFIG diamond.config\n",
        "diamond.config": "DAGMAN_SUBMIT_DELAY = 2\n",
    })
    cluster = submit_dag(dag_pool, tmp_path, "diamond.dag")
    log = tmp_path / "diamond.dag.nodes.log"
    wait_for(lambda: executions(log)["B"] == 1 and executions(log)["C"] == 1, 90,
             lambda: f"B and C running\n{out_text(tmp_path, 'diamond.dag')[-3000:]}")
    node_c = dag_pool.schedd_jobs('DAGNodeName == "C"', ["ClusterId"])[0]["ClusterId"]
    dag_pool.htcd("hold", "-reason", "held by the test", node_c)

    # while it runs: the nodes under the DAG job, and the DAG's counts in its ad and the batch view
    wait_for(lambda: dag_pool.job_attr(f"{cluster}.0", "DAG_NodesDone") == "1", 30, "DAG_NodesDone = 1")
    assert dag_pool.job_attr(f"{cluster}.0", "DAG_NodesTotal") == "4"
    rows = [r for r in dag_pool.htcd("q", "-dag", "-nobatch").stdout.splitlines() if re.match(r"\s*\d+\.\d+", r)]
    assert rows[0].split()[0] == f"{cluster}.0"
    assert sorted(r.split()[1] for r in rows[1:]) == ["|-B", "|-C"], rows
    batch = [r for r in dag_pool.htcd("q").stdout.splitlines() if f"DAG: {cluster}" in r]
    assert len(batch) == 1, batch
    words = batch[0].split()  # OWNER BATCH_NAME SUBMITTED(2) DONE RUN IDLE HOLD TOTAL JOB_IDS
    assert words[1:3] == ["DAG:", str(cluster)] and words[5] == "1" and words[9] == "4", batch

    # a held node job: its hold reason in dagman.out, JobProcsHeld in the status file
    wait_for(lambda: "held" in out_text(tmp_path, "diamond.dag") and (tmp_path / "diamond.status").exists()
             and _status_ads(tmp_path)["C"].get("JobProcsHeld") == 1, 30, "node C held, in the status file")
    out = out_text(tmp_path, "diamond.dag")
    held_line = next(ln for ln in out.splitlines() if "Node C job proc" in ln and "held" in ln)
    assert held_line.split("held: ", 1)[1].strip(), f"a hold reason: {held_line}"
    ads = _status_ads(tmp_path)
    assert ads["C"]["JobProcsQueued"] == 1 and ads["B"]["JobProcsHeld"] == 0 and ads["A"]["RetryCount"] == 0
    assert ads["DagStatus"]["NodesTotal"] == 4 and ads["DagStatus"]["NodesDone"] == 1
    assert re.search(r"^\S+ \S+ DAG status: 0 \(DAG_STATUS_OK\)$", out, re.M), out[-2000:]
    # the settings' warnings: a knob the DAG's CONFIG file sets that htcd does not honour
    assert "Warning: DAGMAN_SUBMIT_DELAY (set in " in out and "is not honoured by htcd's DAGMan" in out

    assert held_line.endswith("held: held by the test"), held_line
    dag_pool.htcd("release", node_c)
    (tmp_path / "go.B").touch()
    (tmp_path / "go.C").touch()
    wait_done(dag_pool, tmp_path, "diamond.dag", cluster)
    assert history_exit(dag_pool, cluster) == ["4", "0"], "completed with exit code 0"
    out = out_text(tmp_path, "diamond.dag")
    assert out.rstrip().splitlines()[-1].endswith("EXITING WITH STATUS 0"), out[-2000:]
    assert executions(log) == {"A": 1, "B": 1, "C": 2, "D": 1}, "C ran again after its release"
    # B and C, ready together, went in one SUBMIT_CLUSTERS call
    assert re.search(r" 4 node job proc\(s\) submitted; 1 submit call\(s\) carried several", out), out[-2000:]
    ads = _status_ads(tmp_path)
    assert ads["DagStatus"]["NodesDone"] == 4 and ads["StatusEnd"]["NextUpdate"] == 0
    assert all(ads[n]["NodeStatus"] == 5 and ads[n]["RetryCount"] == 0 for n in "ABCD")
    # the jobstate log: one sequence number per node try, in the order the nodes started
    seq: dict[str, set[str]] = {}
    for line in (tmp_path / "diamond.jobstate.log").read_text().splitlines():
        words = line.split()
        if words[1] != "INTERNAL":
            seq.setdefault(words[1], set()).add(words[-1])
    assert seq == {"A": {"1"}, "B": {"2"}, "C": {"3"}, "D": {"4"}}, seq
    # the job tag: +pegasus_site, or the attribute +job_tag_name names, from the node's submit file
    tags = {w[1]: w[4] for w in (ln.split() for ln in (tmp_path / "diamond.jobstate.log").read_text().splitlines())
            if w[1] != "INTERNAL"}
    assert tags == {"A": "-", "B": "viz", "C": "local", "D": "-"}, tags


def test_kill_9_of_the_dagman_recovers_and_retries_a_failed_node(dag_pool: Pool, tmp_path: Path) -> None:
    """kill -9 of the DAGMan mid-DAG: the schedd starts the DAG job again, it recovers, every node
    runs once; F, which fails while no DAGMan runs, is retried by the recovered one."""
    write(tmp_path, {
        "gate.sh": GATE_SH, "failonce.sh": FAIL_ONCE_SH, "true.sub": TRUE_SUB,
        "b.sub": gated_sub(tmp_path, "go.B"), "f.sub": gated_sub(tmp_path, "go.F", "failonce.sh"),
        "post.sh": "#!/bin/sh\necho out of $1\necho err of $1 >&2\nexit 0\n",
        "rec.dag": "SCRIPT DEBUG scripts.txt ALL POST A post.sh A\nSCRIPT DEBUG scripts.txt STDERR POST C post.sh C\n"
                   "JOB A true.sub\nJOB B b.sub\nJOB C true.sub\nJOB F f.sub\nRETRY F 1\n"
                   "PARENT A CHILD B F\nPARENT B CHILD C\nJOBSTATE_LOG rec.jobstate.log\n",
    })
    cluster = submit_dag(dag_pool, tmp_path, "rec.dag")
    log = tmp_path / "rec.dag.nodes.log"
    wait_for(lambda: executions(log)["B"] == 1 and executions(log)["F"] == 1, 90, "B and F running")
    first = dagman_pid(tmp_path, "rec.dag")
    assert first > 0
    os.kill(first, signal.SIGKILL)
    (tmp_path / "go.F").touch()  # F's first try fails, seen by the DAGMan that comes next
    second = wait_for_dagman(tmp_path, "rec.dag", other_than=first)
    assert second != first
    (tmp_path / "go.B").touch()
    wait_done(dag_pool, tmp_path, "rec.dag", cluster)
    out = out_text(tmp_path, "rec.dag")
    assert history_exit(dag_pool, cluster) == ["4", "0"], out[-3000:]
    assert "Running in RECOVERY mode" in out and "Retrying node F (retry #1 of 1)" in out
    assert executions(log) == {"A": 1, "B": 1, "C": 1, "F": 2}, "every node once, F twice (its retry)"
    assert submissions(log) == {"A": 1, "B": 1, "C": 1, "F": 2}
    # the jobstate log: recovery writes no line twice; as condor_dagman numbers them, a node try
    # keeps its sequence number, a retry takes a new one, and after the restart the numbers
    # continue after the largest logged (the nodes' numbering starts afresh with the DAGMan)
    lines = [ln.split() for ln in (tmp_path / "rec.jobstate.log").read_text().splitlines()]
    node_lines = [tuple(w[1:4]) for w in lines if w[1] != "INTERNAL" and w[2] not in ("JOB_SUCCESS", "JOB_FAILURE")]
    assert len(node_lines) == len(set(node_lines)), lines
    restart = next(i for i, w in enumerate(lines) if w[1:4] == ["INTERNAL", "***", "RECOVERY_STARTED"])
    before = [int(w[-1]) for w in lines[:restart] if w[1] != "INTERNAL"]
    after = [int(w[-1]) for w in lines[restart:] if w[1] != "INTERNAL"]
    assert min(after) > max(before), lines
    f_submits = [int(w[-1]) for w in lines if w[1] == "F" and w[2] == "SUBMIT"]
    assert len(f_submits) == 2 and f_submits[0] != f_submits[1], lines
    assert ["INTERNAL", "***", "RECOVERY_FINISHED", "***"] in [w[1:] for w in lines]
    # SCRIPT DEBUG: each script's captured streams appended after a banner
    debug = (tmp_path / "scripts.txt").read_text().splitlines()
    assert [ln for ln in debug if not ln.startswith("*** Node=")] == ["out of A", "err of A", "err of C"], debug
    assert debug[0].startswith("*** Node=A Type=POST Status=0 ")


def test_rm_of_the_dag_job_writes_a_rescue_dag_that_a_resubmit_resumes(dag_pool: Pool, tmp_path: Path) -> None:
    write(tmp_path, {
        "gate.sh": GATE_SH, "true.sub": TRUE_SUB, "b.sub": gated_sub(tmp_path, "go.B"),
        "rm.dag": "JOB A true.sub\nJOB B b.sub\nJOB C true.sub\nPARENT A CHILD B\nPARENT B CHILD C\n",
    })
    cluster = submit_dag(dag_pool, tmp_path, "rm.dag")
    log = tmp_path / "rm.dag.nodes.log"
    wait_for(lambda: executions(log)["B"] == 1, 90, "B running")
    dag_pool.htcd("rm", str(cluster))
    wait_for(lambda: not in_queue(dag_pool, cluster) and not in_queue(dag_pool, cluster + 2), 60,
             "the DAG job and node B's job removed")
    rescue = tmp_path / "rm.dag.rescue001"
    wait_for(rescue.exists, 30, "the rescue DAG")
    text = rescue.read_text()
    # HTCondor's format: a comment header, then DONE lines for the nodes done
    assert text.startswith("# Rescue DAG file, created after running\n#   the rm.dag DAG file\n"), text
    assert re.findall(r"^DONE (\S+)$", text, re.M) == ["A"], text
    assert "# Nodes premarked DONE: 1" in text and "# Total number of Nodes: 3" in text

    (tmp_path / "go.B").touch()
    again = submit_dag(dag_pool, tmp_path, "rm.dag")
    wait_done(dag_pool, tmp_path, "rm.dag", again)
    assert history_exit(dag_pool, again) == ["4", "0"], out_text(tmp_path, "rm.dag")[-3000:]
    assert "Running rescue DAG" in (tmp_path / "rm.dag.lib.err").read_text() + out_text(tmp_path, "rm.dag")
    assert executions(log) == {"B": 1, "C": 1}, "only the nodes not done ran (a fresh run's nodes log)"


BAD_DAGS = {
    "cycle.dag": ("JOB A true.sub\nJOB B true.sub\nPARENT A CHILD B\nPARENT B CHILD A\n", r"cycle\.dag:\d+: "),
    "missing.dag": ("JOB A true.sub\nPARENT A CHILD Z\n", r"missing\.dag:2: "),
    "dup.dag": ("JOB A true.sub\nJOB A true.sub\n", r"dup\.dag:2: "),
    "nosub.dag": ("JOB A nope.sub\n", r"nosub\.dag:1: "),
    "badsplice.dag": ("JOB A true.sub\nSPLICE S nope.dag\n", r"badsplice\.dag:2: "),
}


def test_bad_dags_are_refused_with_file_and_line_and_nothing_queued(dag_pool: Pool, tmp_path: Path) -> None:
    write(tmp_path, {"true.sub": TRUE_SUB, **{name: text for name, (text, _) in BAD_DAGS.items()}})
    before = dag_pool.job_ids()
    for name, (_, where) in BAD_DAGS.items():
        proc = dag_pool.htcd("submit_dag", name, check=False, cwd=tmp_path)
        assert proc.returncode == 1, (name, proc.stdout, proc.stderr)
        assert re.match(r"ERROR: " + where, proc.stderr), (name, proc.stderr)
        assert "Traceback" not in proc.stderr
        assert not (tmp_path / f"{name}.condor.sub").exists(), name
    proc = dag_pool.htcd("submit_dag", "nosub.dag", "dup.dag", check=False, cwd=tmp_path)
    assert proc.returncode == 1 and re.match(r"ERROR: nosub\.dag:1: ", proc.stderr), proc.stderr
    assert not (tmp_path / "nosub.dag.condor.sub").exists()
    assert dag_pool.job_ids() == before


def test_a_missing_subdag_file_fails_the_dag_when_its_node_runs(dag_pool: Pool, tmp_path: Path) -> None:
    """HTCondor's job_dagman_nonexistent_subdag: the DAG is submitted and runs; the SUBDAG node's
    submit fails, naming the file, and so does the DAG."""
    write(tmp_path, {"n.dag": "SUBDAG EXTERNAL 0 does-not-exist.dag\n"})
    cluster = submit_dag(dag_pool, tmp_path, "n.dag")
    wait_done(dag_pool, tmp_path, "n.dag", cluster)
    out = out_text(tmp_path, "n.dag")
    assert history_exit(dag_pool, cluster) == ["4", "1"], out[-3000:]
    assert "cannot make the submit file of SUBDAG does-not-exist.dag" in out and "does-not-exist.dag" in out
    assert out.rstrip().endswith("EXITING WITH STATUS 1")

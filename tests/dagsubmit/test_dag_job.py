"""The DAG job in a real pool, run by a stand-in for htcd's DAGMan (a shell script that records
its runs, environment, arguments and signals, and submits two node jobs as DAGMan does): the
scheduler job's environment, its restarts (after kill -9, after a schedd restart), the nodes log,
``htcd q -dag``, and ``htcd rm`` (SIGUSR1, then the node jobs removed by the schedd)."""

from __future__ import annotations

import os
import re
import signal
import sys
from pathlib import Path

from pooltools import wait_for

from htcd.eventlog import read_events

NO_STARTD = {"DAEMON_LIST": "MASTER, COLLECTOR, NEGOTIATOR, SCHEDD"}

STAND_IN = """#!/bin/sh
echo "$CONDOR_ID $$" >> runs.txt
printf '%s\\n' "$@" > args.txt
env > env.txt
trap 'echo USR1 >> signals.txt; exit 1' USR1
trap 'echo TERM >> signals.txt; exit 0' TERM
if [ ! -f nodes.txt ]; then
  c=${CONDOR_ID%.*}
  for n in A B; do
    PYTHON -m htcd submit -terse node$n.sub "dagman_job_id=$c" "dag_node_name=$n" dagman_log=d.dag.nodes.log \\
      "submit_event_notes=DAG Node: $n" >> nodes.txt 2>> nodes.err
  done
fi
sleep 300 &
wait $!
"""


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def event_types(path: Path, cluster: int | None = None) -> list[int]:
    return [e.type for e in read_events(str(path)) if cluster is None or e.cluster == cluster] if path.exists() else []


def test_dag_job_lifecycle(make_pool) -> None:
    pool = make_pool(knobs=NO_STARTD, slots=0)
    jobs = pool.jobs_dir
    stand_in = jobs / "dagman-stand-in.sh"
    stand_in.write_text(STAND_IN.replace("PYTHON", sys.executable))
    os.chmod(stand_in, 0o755)
    (jobs / "nodeA.sub").write_text("universe = local\nexecutable = /bin/sleep\narguments = 300\nlog = nodeA.log\n"
                                    "queue\n")
    (jobs / "nodeB.sub").write_text("executable = /bin/sleep\narguments = 300\nlog = nodeB.log\nqueue\n")
    (jobs / "d.dag").write_text("JOB A nodeA.sub\nJOB B nodeB.sub\nPARENT A CHILD B\n")

    # a bad DAG: refused with file and line, nothing queued
    (jobs / "bad.dag").write_text("JOB A nodeA.sub\nJOB B nodeB.sub\nPARENT A CHILD C\n")
    proc = pool.htcd("submit_dag", "bad.dag", check=False)
    assert proc.returncode == 1 and proc.stderr.startswith("ERROR: bad.dag:3: "), proc.stderr
    assert pool.job_ids() == [] and not (jobs / "bad.dag.condor.sub").exists()

    out = pool.htcd("submit_dag", "-dagman", str(stand_in), "d.dag").stdout
    cluster = int(re.search(r"^1 job\(s\) submitted to cluster (\d+)\.$", out, re.M).group(1))  # type: ignore[union-attr]
    assert out.startswith("-" * 71 + "\nFile for submitting this DAG to HTCondor           : d.dag.condor.sub\n")
    assert out.endswith("Submitting job(s).\n" f"1 job(s) submitted to cluster {cluster}.\n" + "-" * 71 + "\n")

    # the scheduler job runs with its id and the schedd's address file
    wait_for(lambda: len(lines(jobs / "runs.txt")) == 1, 60, "the DAG job to start")
    assert lines(jobs / "runs.txt")[0].split()[0] == f"{cluster}.0"
    env = dict(line.split("=", 1) for line in lines(jobs / "env.txt") if "=" in line)
    assert env["CONDOR_ID"] == f"{cluster}.0"
    assert env["_CONDOR_SCHEDD_ADDRESS_FILE"] == str(pool.local / "spool" / ".schedd_address")
    assert env["_CONDOR_DAGMAN_LOG"] == "d.dag.dagman.out" and env["HTCD_CONFIG"] == str(pool.config_file)
    args = lines(jobs / "args.txt")
    assert args[:6] == ["dagman", "-p", "0", "-f", "-l", "."] and args[args.index("-Dag") + 1] == "d.dag"

    # its node jobs, and their events in the nodes log as in their own logs
    wait_for(lambda: len(lines(jobs / "nodes.txt")) == 2, 60, lambda: f"the node jobs\n{(jobs / 'nodes.err')}")
    node_a, node_b = (int(x.split(".")[0]) for x in lines(jobs / "nodes.txt"))
    wait_for(lambda: pool.job_attr(f"{node_a}.0", "JobStatus") == "2", 60, "node A to run")
    nodes_log = jobs / "d.dag.nodes.log"
    wait_for(lambda: 1 in event_types(nodes_log, node_a), 30, "node A's execute event in the nodes log")
    assert event_types(nodes_log, node_a) == event_types(jobs / "nodeA.log") == [0, 1]
    assert event_types(nodes_log, node_b) == event_types(jobs / "nodeB.log") == [0]
    assert "DAG Node: B" in nodes_log.read_text()
    assert pool.job_attr(f"{node_b}.0", "DAGManJobId") == str(cluster)

    q = pool.htcd("q", "-nobatch", "-dag").stdout.splitlines()
    rows = [r for r in q if re.match(r"\s*\d+\.\d+", r)]
    assert q[q.index(rows[0]) - 1].startswith(" ID      OWNER/NODENAME   SUBMITTED")
    assert [r.split()[0:2] for r in rows] == [[f"{cluster}.0", "root"], [f"{node_a}.0", "|-A"],
                                              [f"{node_b}.0", "|-B"]]
    batch = pool.htcd("q").stdout.splitlines()
    row = next(r for r in batch if r.startswith("root "))
    assert row.split() == ["root", "DAG:", str(cluster), *row.split()[3:5], "_", "1", "1", "_", "_",
                           f"{node_a}.0", "...", f"{node_b}.0"]
    assert len([r for r in batch if r.startswith("root ")]) == 1, "one batch: the DAG"

    # killed by a signal: OnExitRemove is false, so the schedd runs it again
    first_pid = int(lines(jobs / "runs.txt")[0].split()[1])
    os.kill(first_pid, signal.SIGKILL)
    wait_for(lambda: len(lines(jobs / "runs.txt")) == 2, 60, "the DAG job to be started again")
    assert lines(jobs / "runs.txt")[1].split()[0] == f"{cluster}.0"
    assert [t for t in event_types(jobs / "d.dag.dagman.log") if t != 6] == [0, 1, 5, 1]  # (6: image size)

    # the schedd restarts: SIGTERM to the DAGMan, which is started again by the new schedd
    pool.htcd("restart", "-daemon", "schedd")
    wait_for(lambda: len(lines(jobs / "runs.txt")) == 3, 90, lambda: f"the DAG job after the restart\n"
                                                                      f"{pool.log('SchedLog')[-3000:]}")
    assert lines(jobs / "signals.txt") == ["TERM"]
    assert sorted(pool.job_ids()) == sorted([f"{cluster}.0", f"{node_a}.0", f"{node_b}.0"]), "nodes left queued"

    # htcd hold: the job's KillSig (SIGTERM: it sets no hold_kill_sig); released, it runs again
    pool.htcd("hold", str(cluster))
    wait_for(lambda: lines(jobs / "signals.txt") == ["TERM", "TERM"], 30, "SIGTERM for the hold")
    wait_for(lambda: pool.job_attr(f"{cluster}.0", "JobStatus") == "5", 30, "the DAG job to be held")
    pool.htcd("release", str(cluster))
    wait_for(lambda: len(lines(jobs / "runs.txt")) == 4, 60, "the released DAG job to run again")

    # htcd rm: SIGUSR1 to the DAGMan; the schedd removes the node jobs once it has gone
    pool.htcd("rm", str(cluster))
    wait_for(lambda: pool.job_ids() == [], 60, "the DAG job and its nodes to leave the queue")
    assert lines(jobs / "signals.txt") == ["TERM", "TERM", "USR1"]
    for node, own in ((node_a, "nodeA.log"), (node_b, "nodeB.log")):
        assert event_types(jobs / own)[-1] == 9 and event_types(nodes_log, node)[-1] == 9
    assert f"fired when job {cluster}.0 was removed" in (jobs / "nodeB.log").read_text()

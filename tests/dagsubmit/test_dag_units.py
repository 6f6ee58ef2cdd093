"""The pieces of the DAG job's support that need no pool: which signal stops an AP job, the
nodes log's event mask, node job commands in a submit file, and ``htcd q``'s DAG views."""

from __future__ import annotations

import signal

import pytest

from htcd.classad import ClassAd
from htcd.cli.q import batch, nobatch_dag
from htcd.schedd import userlog
from htcd.schedd.jobs import Cluster, Job
from htcd.schedd.local import stop_signal
from htcd.submit import SubmitError, parse_submit


def job(**attrs: str) -> Job:
    return Job(Cluster(1, {"ClusterId": "1", "Owner": '"u"'}), 0, dict(attrs))


def test_stop_signal_per_cause() -> None:
    dag = job(KillSig='"SIGTERM"', RemoveKillSig='"SIGUSR1"')
    assert stop_signal(dag, "remove") == signal.SIGUSR1
    assert stop_signal(dag, "hold") == signal.SIGTERM, "no HoldKillSig: KillSig"
    assert stop_signal(job(HoldKillSig='"SIGINT"'), "hold") == signal.SIGINT
    assert stop_signal(job(), "remove") == signal.SIGTERM, "neither: SIGTERM"


def test_nodes_log_mask() -> None:
    text = (userlog.submit(5, 0, "<127.0.0.1:1>", when=0) + userlog.execute(5, 0, "<127.0.0.1:1>", "slot1")
            + userlog.aborted(5, 0, "gone"))
    assert userlog.event_mask("0, 9") == frozenset({0, 9})
    assert userlog.event_mask("") is None and userlog.event_mask("0,x") is None and userlog.event_mask(3) is None
    kept = userlog.only_events(text, frozenset({0, 9}))
    assert [line[:3] for line in kept.splitlines() if line[:3].isdigit()] == ["000", "009"]
    assert kept.count("...\n") == 2 and userlog.only_events(text, frozenset({4})) == ""


def _ad(text: str) -> dict[str, str]:
    desc = parse_submit(text, "n.sub", submit_dir="/d")
    cluster, procs = desc.make_jobs(9, submit_dir="/d", owner="u", qdate=1)
    return {**cluster, **procs[0]}


def test_node_job_commands() -> None:
    ad = _ad("executable = /bin/true\ndagman_job_id = 4\ndag_node_name = A\ndagman_log = d.dag.nodes.log\nqueue\n")
    assert (ad["DAGManJobId"], ad["DAGNodeName"], ad["DAGManNodesLog"]) == ("4", '"A"', '"/d/d.dag.nodes.log"')
    with pytest.raises(SubmitError, match="dagman_job_id must be a cluster id"):
        _ad("executable = /bin/true\ndagman_job_id = four\nqueue\n")
    sched = _ad("universe = scheduler\nexecutable = /bin/true\nremove_kill_sig = usr1\nhold_kill_sig = 2\nqueue\n")
    assert (sched["RemoveKillSig"], sched["HoldKillSig"]) == ('"SIGUSR1"', '"SIGINT"')
    with pytest.raises(SubmitError, match="remove_kill_sig: htcd cannot honour this command in the vanilla"):
        _ad("executable = /bin/true\nremove_kill_sig = SIGUSR1\nqueue\n")
    with pytest.raises(SubmitError, match="kill_sig_timeout: htcd cannot honour"):
        _ad("executable = /bin/true\nkill_sig_timeout = 5\nqueue\n")


def q_ad(cluster: int, proc: int = 0, status: int = 1, **attrs: object) -> ClassAd:
    ad = ClassAd()
    base: dict[str, object] = {"ClusterId": cluster, "ProcId": proc, "Owner": "u", "QDate": 0, "JobStatus": status,
                               "JobUniverse": 5, "Cmd": "/bin/sleep", "Arguments": "60"}
    for k, v in {**base, **attrs}.items():
        ad[k] = v
    return ad


def nested() -> list[ClassAd]:
    """A DAG 10 with nodes A (two procs, running) and a sub-DAG S (12), whose node SA is held;
    and an unrelated cluster 20."""
    return [q_ad(10, status=2, JobUniverse=7, Cmd="/x/htcd", Arguments="dagman -p 0", JobBatchName="nightly",
                 DAG_NodesTotal=3, DAG_NodesDone=1),
            q_ad(11, 0, 2, DAGManJobId=10, DAGNodeName="A"), q_ad(11, 1, 2, DAGManJobId=10, DAGNodeName="A"),
            q_ad(12, status=2, JobUniverse=7, DAGManJobId=10, DAGNodeName="S", Cmd="/x/htcd", DAG_NodesTotal=1),
            q_ad(13, status=5, DAGManJobId=12, DAGNodeName="SA"),
            q_ad(20)]


def test_nobatch_dag_nests_nodes_under_their_dag() -> None:
    rows = nobatch_dag(nested()).splitlines()
    assert rows[0] == " ID      OWNER/NODENAME   SUBMITTED     RUN_TIME ST PRI SIZE CMD"
    # as condor_q -dag: one space per level of nesting before "|-"
    assert [r[:24].rstrip() for r in rows[1:]] == ["  10.0    u", "  11.0     |-A", "  11.1     |-A",
                                                   "  12.0     |-S", "  13.0      |-SA", "  20.0    u"]


def test_batch_counts_a_dag_as_condor_q_does() -> None:
    rows = batch(nested()).splitlines()
    assert rows[0] == "OWNER BATCH_NAME    SUBMITTED   DONE   RUN    IDLE   HOLD  TOTAL JOB_IDS"
    dag, other = rows[1].split(), rows[2].split()
    # RUN and HOLD: the node jobs' procs (not the DAG jobs); DONE and TOTAL: the DAG jobs' DAG_Nodes*
    assert dag[0:2] == ["u", "nightly"] and dag[4:] == ["1", "2", "_", "1", "4", "11.0", "...", "13.0"]
    assert other[0:3] == ["u", "ID:", "20"] and other[5:] == ["_", "_", "1", "_", "1", "20.0"]
    no_counts = [a for a in nested() if a.get_value("ClusterId") in (10, 11)]
    for a in no_counts:
        if "DAG_NodesTotal" in a:
            del a["DAG_NodesTotal"]
            del a["DAG_NodesDone"]
    row = batch(no_counts).splitlines()[1].split()
    assert row[4] == "_" and row[8] == "_", "no DAG_NodesTotal yet: DONE and TOTAL unknown"

"""Shared by the tests of the files DAGMan writes: a diamond DAG, runs of it, and the wheel's
ClassAd parser as an oracle (one subprocess per call, given every text at once)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from htcd.dagman import ParseOptions, parse_dag_text
from htcd.dagman.model import Dag
from htcd.dagman.runstate import DagRun, DagStatus, NodeRun, NodeStatus

DIAMOND = ("JOB A a.sub\nJOB B b.sub\nJOB C c.sub\nJOB D d.sub DONE\nFINAL F f.sub\n"
           "PARENT A CHILD B C\nPARENT B C CHILD D\n")


def diamond() -> Dag:
    return parse_dag_text(DIAMOND, "diamond.dag", options=ParseOptions(check_files=False))


def run_of(statuses: dict[str, NodeStatus], dag_status: DagStatus = DagStatus.OK, **procs: NodeRun) -> DagRun:
    nodes = {name: procs.get(name) or NodeRun(status=status) for name, status in statuses.items()}
    for name, status in statuses.items():
        nodes[name].status = status
    return DagRun(nodes=nodes, dag_files=["diamond.dag"], dag_status=dag_status, dagman_job_id="12.0")


_ORACLE = r"""
import json, sys
import htcondor2, classad2
out = []
for text in json.load(sys.stdin):
    try:
        out.append([{k: ad.eval(k) if not isinstance(ad[k], (int, str, list)) else ad[k] for k in ad}
                    for ad in classad2.parseAds(text)])
    except Exception as err:
        out.append(repr(err))
json.dump(out, sys.stdout, default=str)
"""


def wheel_parse_ads(texts: list[str]) -> list[list[dict[str, object]] | str]:
    """Each text parsed by classad2.parseAds: a list of ads as dicts, or the error's repr."""
    env = dict(os.environ, CONDOR_CONFIG="/dev/null", TZ="UTC")
    proc = subprocess.run([sys.executable, "-c", _ORACLE], input=json.dumps(texts), env=env,
                          capture_output=True, text=True, timeout=120, check=True)
    return json.loads(proc.stdout)

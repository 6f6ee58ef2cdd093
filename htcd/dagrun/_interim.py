"""Minimal stand-ins for the DAGMan file writers and settings that htcd.dagman is to provide
(``settings.DagmanSettings``, ``statusfile.node_status_text``, ``jobstate.line``,
``dagman_out.status_table``) and for ``condor_sub.write_condor_sub``.  Same signatures, so that
each becomes a one-line import change once the real ones exist."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, fields

from htcd.dagman.model import Dag
from htcd.dagman.runstate import DagRun, NodeStatus

_TRUE = ("true", "yes", "1", "t", "y")


@dataclass
class DagmanSettings:
    """The DAGMAN_* knobs the engine reads, by their names in lower case without the prefix."""

    max_jobs_idle: int = 1000
    max_jobs_submitted: int = 0
    max_pre_scripts: int = 20
    max_post_scripts: int = 20
    max_submits_per_interval: int = 100
    user_log_scan_interval: float = 5
    submit_delay: int = 0
    retry_submit_first: bool = True
    retry_node_first: bool = False
    max_submit_attempts: int = 6
    auto_rescue: bool = True
    max_rescue_num: int = 100
    write_partial_rescue: bool = True
    reset_retries_upon_rescue: bool = True
    abort_on_scary_submit: bool = True
    always_run_post: bool = False
    default_node_log: str = "@(DAG_DIR)/@(DAG_FILE).nodes.log"
    suppress_notification: bool = True
    generate_subdag_submits: bool = True
    pending_report_interval: int = 600
    verbosity: int = 3

    @classmethod
    def load(cls, config_get: Callable[[str], str | None], dag_config_file: str | None,
             overrides: dict[str, str]) -> DagmanSettings:
        values: dict[str, str] = {}
        for f in fields(cls):
            got = config_get("DAGMAN_" + f.name.upper())
            if got is not None and got.strip():
                values[f.name] = got.strip()
        if dag_config_file:
            with open(dag_config_file) as fh:
                for line in fh:
                    name, sep, value = line.partition("=")
                    key = name.strip().lower()
                    if sep and key.startswith("dagman_"):
                        values[key[len("dagman_"):]] = value.strip()
        values.update({k.lower().removeprefix("dagman_"): v for k, v in overrides.items()})
        out = cls()
        for f in fields(cls):
            if f.name not in values:
                continue
            text = values[f.name]
            default = getattr(out, f.name)
            if isinstance(default, bool):
                setattr(out, f.name, text.lower() in _TRUE)
            elif isinstance(default, int):
                setattr(out, f.name, int(text))
            elif isinstance(default, float):
                setattr(out, f.name, float(text))
            else:
                setattr(out, f.name, text)
        return out


_STATUS_NAMES = {s: "STATUS_" + s.name for s in NodeStatus}


def node_status_text(dag: Dag, run: DagRun, now: float, next_update: float) -> str:
    """The node status file: a DagStatus ad, one ad per node, a StatusEnd ad."""
    lines = ["[", '  Type = "DagStatus";', f'  DagFiles = {{ "{dag.file}" }};',
             f"  Timestamp = {int(now)};", f"  DagStatus = {int(run.dag_status)};",
             f"  NodesTotal = {len(run.nodes)};", f"  NodesDone = {run.count(NodeStatus.DONE)};",
             f"  NodesFailed = {run.count(NodeStatus.ERROR)};", "]"]
    for name, node in run.nodes.items():
        lines += ["[", '  Type = "NodeStatus";', f'  Node = "{name}";',
                  f"  NodeStatus = {int(node.status)};",
                  f'  StatusDetails = "{node.status_details}";', f"  RetryCount = {node.retry};",
                  f"  JobProcsQueued = {node.procs_queued};", f"  JobProcsHeld = {node.procs_held};", "]"]
    lines += ["[", '  Type = "StatusEnd";', f"  EndTime = {int(now)};",
              f"  NextUpdate = {int(next_update)};", "]"]
    return "\n".join(lines) + "\n"


def jobstate_line(event: str, node: str | None, job_id: str | None, *, now: float, sequence: int,
                  extra: str = "") -> str:
    """One JOBSTATE_LOG line: ``time node event condorID job_id sequence``."""
    node_text = node or "INTERNAL"
    job = job_id or "-"
    tail = f" {extra}" if extra else ""
    return f"{int(now)} {node_text} {event} {job} - {sequence}{tail}"


def status_table(run: DagRun) -> str:
    """The DAG status line, the "Of N nodes total:" block and the held-procs line, unstamped."""
    c = run.count
    row = (f"{c(NodeStatus.DONE):5d}   {c(NodeStatus.PRERUN):5d}    {c(NodeStatus.SUBMITTED):5d}   "
           f"{c(NodeStatus.POSTRUN):5d}   {c(NodeStatus.READY):5d}      {c(NodeStatus.NOT_READY):5d}    "
           f"{c(NodeStatus.ERROR):5d}    {c(NodeStatus.FUTILE):5d}")
    held = sum(n.procs_held for n in run.nodes.values())
    return "\n".join([
        f"DAG status: {int(run.dag_status)} (DAG_STATUS_{run.dag_status.name})",
        f"Of {len(run.nodes)} nodes total:",
        " Done     Pre   Queued    Post   Ready   Un-Ready   Failed   Futile",
        "  ===     ===      ===     ===     ===        ===      ===      ===",
        row,
        f"{held} job proc(s) currently held",
    ]) + "\n"


def write_condor_sub(dag_file: str, options: object | None = None) -> str:
    """``<dag>.condor.sub`` for a SUBDAG EXTERNAL node: a scheduler-universe job running
    ``htcd dagman`` on the sub-DAG."""
    import sys

    path = dag_file + ".condor.sub"
    base = os.path.basename(dag_file)
    text = (f"# Generated for the SUBDAG node {base}\n"
            "universe = scheduler\n"
            f"executable = {sys.executable}\n"
            f"arguments = \"-m htcd dagman -p 0 -f -l . -Lockfile {base}.lock -AutoRescue 1 "
            f"-DoRescueFrom 0 -Dag {base}\"\n"
            f"log = {base}.dagman.log\n"
            f"output = {base}.lib.out\n"
            f"error = {base}.lib.err\n"
            "getenv = true\n"
            "on_exit_remove = (ExitSignal =?= 11 || (ExitCode =!= UNDEFINED && "
            "ExitCode >=0 && ExitCode <= 2))\n"
            "queue\n")
    with open(path, "w") as f:
        f.write(text)
    return path

"""Fixed texts of ``<dag>.dagman.out``, the DAGMan job's log, as condor_dagman prints them.

The manual shows only the last line (docs/automated-workflows/dagman-completion.rst, "Check
DAG Successful Exit": ``(condor_DAGMAN) pid 445 EXITING WITH STATUS 0``); HTCondor's tests
grep ``EXITING WITH STATUS 0`` and ``DAG status: 2`` (src/condor_tests/job_dagman_*.run).
The status table and the start-up banner are condor_dagman's and DaemonCore's fixed formats
(the table is printed at DAGMAN_VERBOSITY 3 and above)::

    DAG status: 0 (DAG_STATUS_OK)
    Of 4 nodes total:
     Done     Pre   Queued    Post   Ready   Un-Ready   Failed   Futile
      ===     ===      ===     ===     ===        ===      ===      ===
        4       0        0       0       0          0        0        0
    0 job proc(s) currently held

Every function returns lines without the time stamp; ``stamped`` adds the log's
``MM/DD/YY HH:MM:SS`` prefix to each.
"""

from __future__ import annotations

import time

from htcd.dagman.model import Dag, NodeKind
from htcd.dagman.runstate import DagRun, DagStatus, NodeStatus

BANNER_RULE = "*" * 54


def dag_status_line(status: DagStatus) -> str:
    """``DAG status: 0 (DAG_STATUS_OK)``."""
    return f"DAG status: {int(status)} (DAG_STATUS_{status.name})"


def status_table(run: DagRun, dag: Dag | None = None) -> str:
    """The "Of N nodes total:" block, with the DAG status line before it and the held-procs
    line after it, as condor_dagman prints them together.  With ``dag``, its SERVICE nodes
    are not counted (condor_dagman keeps them apart from the DAG's nodes)."""
    service = {n for n, node in dag.nodes.items() if node.kind is NodeKind.SERVICE} if dag else set()
    counts = {s: 0 for s in NodeStatus}
    held = 0
    total = 0
    for name, node in run.nodes.items():
        if name in service:
            continue
        total += 1
        counts[node.status] += 1
        held += node.procs_held
    row = (f"{counts[NodeStatus.DONE]:5d}   {counts[NodeStatus.PRERUN]:5d}    "
           f"{counts[NodeStatus.SUBMITTED]:5d}   {counts[NodeStatus.POSTRUN]:5d}   "
           f"{counts[NodeStatus.READY]:5d}      {counts[NodeStatus.NOT_READY]:5d}    "
           f"{counts[NodeStatus.ERROR]:5d}    {counts[NodeStatus.FUTILE]:5d}")
    return "\n".join([
        dag_status_line(run.dag_status),
        f"Of {total} nodes total:",
        " Done     Pre   Queued    Post   Ready   Un-Ready   Failed   Futile",
        "  ===     ===      ===     ===     ===        ===      ===      ===",
        row,
        f"{held} job proc(s) currently held",
    ]) + "\n"


def program_name(dagman_job_id: str | None = None) -> str:
    """The name DaemonCore prints: ``condor_scheduniv_exec.<cluster>.<proc>`` (argv[0] of a
    scheduler universe job up to HTCondor 25.0), or ``condor_dagman`` without a job id."""
    return f"condor_scheduniv_exec.{dagman_job_id}" if dagman_job_id else "condor_dagman"


def startup_banner(*, pid: int, uid: int, executable: str, version: str, platform: str,
                   dagman_job_id: str | None = None, last_touched: float | None = None) -> str:
    """DaemonCore's start-up banner as the first lines of dagman.out.

    ``version`` and ``platform`` are the whole ``$CondorVersion: ... $`` and
    ``$CondorPlatform: ... $`` texts.  ``last_touched`` is the log file's modification time
    before this run (None: the file did not exist)."""
    if last_touched is None:
        touched = "** Log last touched time unavailable (No such file or directory)"
    else:
        tm = time.localtime(last_touched)
        touched = f"** Log last touched {tm.tm_mon}/{tm.tm_mday} {tm.tm_hour:02d}:{tm.tm_min:02d}:{tm.tm_sec:02d}"
    return "\n".join([
        BANNER_RULE,
        f"** {program_name(dagman_job_id)} (CONDOR_DAGMAN) STARTING UP",
        f"** {executable}",
        "** SubsystemInfo: name=DAGMAN type=DAGMAN(9) class=CLIENT(2)",
        "** Configuration: subsystem:DAGMAN local:<NONE> class:CLIENT",
        f"** {version}",
        f"** {platform}",
        f"** PID = {pid} RealUID = {uid}",
        touched,
        BANNER_RULE,
    ]) + "\n"


def exiting_line(pid: int, status: int, dagman_job_id: str | None = None) -> str:
    """``**** condor_scheduniv_exec.12.0 (condor_DAGMAN) pid 445 EXITING WITH STATUS 0``: the
    last line; HTCondor's tests and the manual look for ``EXITING WITH STATUS <n>``."""
    return f"**** {program_name(dagman_job_id)} (condor_DAGMAN) pid {pid} EXITING WITH STATUS {status}"


def stamped(text: str, now: float) -> str:
    """Each line of ``text`` prefixed with dagman.out's ``MM/DD/YY HH:MM:SS `` (local time)."""
    prefix = time.strftime("%m/%d/%y %H:%M:%S ", time.localtime(now))
    return "".join(prefix + ln + "\n" for ln in text.splitlines())

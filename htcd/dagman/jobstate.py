"""Lines of the JOBSTATE_LOG, the machine-readable history of a DAG's run.

Format of HTCondor's manual (docs/automated-workflows/dagman-information-files.rst,
"Machine-Readable Event History"): every line starts with a Unix time, fields are separated
by one space::

    1292620511 INTERNAL *** DAGMAN_STARTED 4972.0 ***
    1292620523 NodeA PRE_SCRIPT_STARTED - local - 1
    1292620525 NodeA SUBMIT 4973.0 local - 1
    1292620526 NodeA JOB_SUCCESS 0 local - 1
    1292620535 INTERNAL *** DAGMAN_FINISHED 0 ***

A node line is ``time node event condorID jobTag - sequence``; ``condorID`` is ``-`` before
the node's job is submitted (PRE script events, SUBMIT_FAILURE), the job's return value for
JOB_SUCCESS and JOB_FAILURE, and the job tag is ``-`` when the job sets none.
"""

from __future__ import annotations

from typing import NamedTuple

INTERNAL = "INTERNAL"

#: Events DAGMan itself writes for a node (the others are the job's event-log events, named
#: as in the event log without the ``ULOG_`` prefix: SUBMIT, EXECUTE, JOB_TERMINATED, ...).
NODE_META_EVENTS = ("PRE_SCRIPT_STARTED", "PRE_SCRIPT_SUCCESS", "PRE_SCRIPT_FAILURE", "SUBMIT_FAILURE",
                    "JOB_SUCCESS", "JOB_FAILURE", "POST_SCRIPT_STARTED", "POST_SCRIPT_SUCCESS",
                    "POST_SCRIPT_FAILURE")

#: The event log's events by number, as the jobstate log names them.
ULOG_EVENT_NAMES = {
    0: "SUBMIT", 1: "EXECUTE", 2: "EXECUTABLE_ERROR", 3: "CHECKPOINTED", 4: "JOB_EVICTED",
    5: "JOB_TERMINATED", 6: "IMAGE_SIZE", 7: "SHADOW_EXCEPTION", 8: "GENERIC", 9: "JOB_ABORTED",
    10: "JOB_SUSPENDED", 11: "JOB_UNSUSPENDED", 12: "JOB_HELD", 13: "JOB_RELEASED",
    14: "NODE_EXECUTE", 15: "NODE_TERMINATED", 16: "POST_SCRIPT_TERMINATED", 17: "GLOBUS_SUBMIT",
    18: "GLOBUS_SUBMIT_FAILED", 19: "GLOBUS_RESOURCE_UP", 20: "GLOBUS_RESOURCE_DOWN",
    21: "REMOTE_ERROR", 22: "JOB_DISCONNECTED", 23: "JOB_RECONNECTED", 24: "JOB_RECONNECT_FAILED",
    25: "GRID_RESOURCE_UP", 26: "GRID_RESOURCE_DOWN", 27: "GRID_SUBMIT", 28: "JOB_AD_INFORMATION",
    29: "JOB_STATUS_UNKNOWN", 30: "JOB_STATUS_KNOWN", 31: "JOB_STAGE_IN", 32: "JOB_STAGE_OUT",
    33: "ATTRIBUTE_UPDATE", 34: "PRESKIP", 35: "CLUSTER_SUBMIT", 36: "CLUSTER_REMOVE",
    37: "FACTORY_PAUSED", 38: "FACTORY_RESUMED", 39: "NONE", 40: "FILE_TRANSFER",
    41: "RESERVE_SPACE", 42: "RELEASE_SPACE", 43: "FILE_COMPLETE", 44: "FILE_USED",
    45: "FILE_REMOVED", 46: "DATAFLOW_JOB_SKIPPED", 47: "COMMON_FILES",
}


def line(event: str, node: str | None, job_id: str | None, *, now: float, sequence: int,
         extra: str = "") -> str:
    """One line (without its newline).

    ``node`` None gives an INTERNAL line: ``event`` is DAGMAN_STARTED (``job_id`` is the
    DAGMan job's ``cluster.proc``), DAGMAN_FINISHED (``extra`` is the exit code),
    RECOVERY_STARTED, RECOVERY_FINISHED or RECOVERY_FAILURE.  For a node, ``job_id`` is the
    condorID field (``"4973.0"``; the return value for JOB_SUCCESS/JOB_FAILURE; None: ``-``)
    and ``extra`` the job tag (``""``: ``-``)."""
    stamp = int(now)
    if node is None:
        words = [event]
        if job_id:
            words.append(job_id)
        if extra:
            words.append(extra)
        return f"{stamp} {INTERNAL} *** {' '.join(words)} ***"
    if not node or any(c.isspace() for c in node):
        raise ValueError(f"node name {node!r} cannot be written to a jobstate log")
    return f"{stamp} {node} {event} {job_id or '-'} {extra or '-'} - {sequence}"


def started_line(dagman_job_id: str, *, now: float) -> str:
    """``INTERNAL *** DAGMAN_STARTED 4972.0 ***``."""
    return line("DAGMAN_STARTED", None, dagman_job_id, now=now, sequence=0)


def finished_line(exit_code: int, *, now: float) -> str:
    """``INTERNAL *** DAGMAN_FINISHED 0 ***``."""
    return line("DAGMAN_FINISHED", None, None, now=now, sequence=0, extra=str(exit_code))


def recovery_line(stage: str, *, now: float) -> str:
    """``INTERNAL *** RECOVERY_STARTED ***`` (stage "started"), ``RECOVERY_FINISHED``
    ("finished") or ``RECOVERY_FAILURE`` ("failure")."""
    names = {"started": "RECOVERY_STARTED", "finished": "RECOVERY_FINISHED", "failure": "RECOVERY_FAILURE"}
    try:
        return line(names[stage.lower()], None, None, now=now, sequence=0)
    except KeyError:
        raise ValueError(f"recovery stage {stage!r} is not one of {', '.join(names)}") from None


def job_result_line(node: str, return_value: int, *, now: float, sequence: int, tag: str = "") -> str:
    """JOB_SUCCESS (return value 0) or JOB_FAILURE, with the return value as the condorID."""
    event = "JOB_SUCCESS" if return_value == 0 else "JOB_FAILURE"
    return line(event, node, str(return_value), now=now, sequence=sequence, extra=tag)


def script_line(kind: str, stage: str, node: str, *, now: float, sequence: int,
                job_id: str | None = None, success: bool = True, tag: str = "") -> str:
    """PRE/POST script events: stage "started" or "ended" (SUCCESS or FAILURE by ``success``).
    A PRE script's lines have no condorID; a POST script's name the node's job.  HOLD scripts
    are not logged (as condor_dagman)."""
    kind = kind.upper()
    if kind not in ("PRE", "POST"):
        raise ValueError(f"only PRE and POST scripts are logged, not {kind}")
    if stage == "started":
        event = f"{kind}_SCRIPT_STARTED"
    elif stage == "ended":
        event = f"{kind}_SCRIPT_{'SUCCESS' if success else 'FAILURE'}"
    else:
        raise ValueError(f"script stage {stage!r} is not 'started' or 'ended'")
    return line(event, node, job_id if kind == "POST" else None, now=now, sequence=sequence, extra=tag)


class JobstateEntry(NamedTuple):
    """One line read back (recovery reads the log to not write again what it already holds)."""

    time: int
    node: str | None  # None: an INTERNAL line
    event: str
    job_id: str | None
    tag: str | None
    sequence: int | None


def parse_line(text: str) -> JobstateEntry:
    """Read one line written by ``line``; ValueError names what is wrong."""
    words = text.split()
    if len(words) < 2:
        raise ValueError(f"jobstate log line too short: {text!r}")
    try:
        stamp = int(words[0])
    except ValueError:
        raise ValueError(f"jobstate log line does not start with a time: {text!r}") from None
    if words[1] == INTERNAL:
        if len(words) < 5 or words[2] != "***" or words[-1] != "***":
            raise ValueError(f"bad INTERNAL jobstate log line: {text!r}")
        rest = words[4:-1]
        return JobstateEntry(stamp, None, words[3], rest[0] if rest else None, None, None)
    if len(words) != 7 or words[5] != "-":
        raise ValueError(f"bad node jobstate log line: {text!r}")
    try:
        seq = int(words[6])
    except ValueError:
        raise ValueError(f"bad sequence number in jobstate log line: {text!r}") from None
    job_id = None if words[3] == "-" else words[3]
    tag = None if words[4] == "-" else words[4]
    return JobstateEntry(stamp, words[1], words[2], job_id, tag, seq)

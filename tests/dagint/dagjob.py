"""Submitting a DAG with ``htcd submit_dag`` to a real pool and watching the DAG job: its id, its
DAGMan's pid (from the lock file), the end of its run (queue, history, dagman.out)."""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

from pooltools import Pool, wait_for

from htcd.eventlog import EXECUTE, SUBMIT, TERMINATED
from tests.dagrun.dagtools import node_events

#: A node job that runs until the test creates the gate file named by its argument.
GATE_SH = "#!/bin/sh\nwhile [ ! -f \"$1\" ]; do sleep 0.05; done\nexit 0\n"
#: A node job that fails the first time (it leaves a marker) and succeeds after, once its gate is there.
FAIL_ONCE_SH = ("#!/bin/sh\nwhile [ ! -f \"$1\" ]; do sleep 0.05; done\n"
                "if [ ! -f \"$2\" ]; then touch \"$2\"; exit 1; fi\nexit 0\n")


def gated_sub(where: Path, gate: str, script: str = "gate.sh", extra: str = "") -> str:
    return f"executable = {where / script}\narguments = {where / gate} {where / (gate + '.tried')}\n{extra}queue\n"


def submit_dag(pool: Pool, where: Path, *args: str) -> int:
    """``htcd submit_dag ARGS`` in ``where``; the DAG job's cluster."""
    out = pool.htcd("submit_dag", *args, cwd=where).stdout
    found = re.search(r"^1 job\(s\) submitted to cluster (\d+)\.$", out, re.M)
    assert found, out
    return int(found.group(1))


def in_queue(pool: Pool, cluster: int) -> bool:
    return any(j.split(".")[0] == str(cluster) for j in pool.job_ids())


def dagman_pid(where: Path, dag: str) -> int:
    """The running DAGMan's pid, from its lock file (0 while there is none)."""
    try:
        words = (where / f"{dag}.lock").read_text().split()
    except FileNotFoundError:
        return 0
    return int(words[0]) if words else 0


def alive(pid: int) -> bool:
    from htcd.daemon.pids import pid_alive

    return pid > 0 and pid_alive(pid)


def wait_for_dagman(where: Path, dag: str, other_than: int = 0, timeout: float = 90) -> int:
    """Wait for a live DAGMan on ``dag`` (a new one, when ``other_than`` is the old pid)."""
    def found() -> bool:
        pid = dagman_pid(where, dag)
        return pid != other_than and alive(pid)
    wait_for(found, timeout, lambda: f"a DAGMan on {dag}\n{out_text(where, dag)[-3000:]}")
    return dagman_pid(where, dag)


def out_text(where: Path, dag: str) -> str:
    path = where / f"{dag}.dagman.out"
    return path.read_text() if path.exists() else ""


def wait_done(pool: Pool, where: Path, dag: str, cluster: int, timeout: float = 180) -> None:
    """The DAG job leaves the queue."""
    wait_for(lambda: not in_queue(pool, cluster), timeout,
             lambda: f"DAG job {cluster} to leave the queue\n{out_text(where, dag)[-4000:]}\n"
                     f"{pool.log('SchedLog')[-2000:]}")


def history_exit(pool: Pool, cluster: int) -> list[str]:
    """``htcd history CLUSTER -af JobStatus ExitCode``, as words."""
    return pool.htcd("history", str(cluster), "-af", "JobStatus", "ExitCode").stdout.split()


def counts(nodes_log: Path, event: int) -> Counter[str]:
    return Counter(name for name, ev in node_events(nodes_log) if ev.type == event)


def executions(nodes_log: Path) -> Counter[str]:
    return counts(nodes_log, EXECUTE)


def submissions(nodes_log: Path) -> Counter[str]:
    return counts(nodes_log, SUBMIT)


def terminations(nodes_log: Path) -> Counter[str]:
    return counts(nodes_log, TERMINATED)


def write(where: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = where / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if name.endswith(".sh"):
            os.chmod(path, 0o755)

"""Running ``htcd dagman`` against a pool, and reading what its nodes did from the nodes log."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from pooltools import Pool

from htcd.eventlog import EXECUTE, SUBMIT, TERMINATED, Event, read_events


def dagman_argv(dag: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "htcd", "dagman", "-p", "0", "-f", "-l", ".", "-AutoRescue", "1",
            "-DoRescueFrom", "0", "-Dag", dag, "-Suppress_notification", *extra]


def run_dag(pool: Pool, where: Path, dag: str, *extra: str, timeout: float = 120,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``htcd dagman`` on ``dag`` in ``where`` to its end."""
    return subprocess.run(dagman_argv(dag, *extra), cwd=where, env={**pool.env, **(env or {})},
                          capture_output=True, text=True, timeout=timeout)


def start_dag(pool: Pool, where: Path, dag: str, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(dagman_argv(dag, *extra), cwd=where, env=pool.env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def write(where: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = where / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if name.endswith(".sh"):
            os.chmod(path, 0o755)


def node_events(nodes_log: Path) -> list[tuple[str, Event]]:
    """(node name, event) for every event of the nodes log, the node found by the submit
    event's "DAG Node: name" notes."""
    if not nodes_log.exists():
        return []
    node_of: dict[int, str] = {}
    out = []
    for ev in read_events(str(nodes_log)):
        if ev.type == SUBMIT:
            for line in ev.body:
                if line.strip().startswith("DAG Node: "):
                    node_of[ev.cluster] = line.strip()[len("DAG Node: "):]
        if ev.cluster in node_of:
            out.append((node_of[ev.cluster], ev))
    return out


def executions(nodes_log: Path) -> Counter[str]:
    return Counter(name for name, ev in node_events(nodes_log) if ev.type == EXECUTE)


def terminations(nodes_log: Path) -> Counter[str]:
    return Counter(name for name, ev in node_events(nodes_log) if ev.type == TERMINATED)


TRUE_JOB = "executable = /bin/true\nlog = job.log\nqueue\n"

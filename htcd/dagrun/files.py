"""Where the DAGMan job keeps its files, the lock file, and atomic writes of the files users read."""

from __future__ import annotations

import os
from dataclasses import dataclass

from htcd.daemon.pids import pid_alive
from htcd.errors import UserError


@dataclass(frozen=True)
class DagPaths:
    dag_file: str
    out: str  # <dag>.dagman.out
    lock: str  # <dag>.lock
    journal: str  # <dag>.dagman.journal: the engine's own record, beside the lock file
    nodes_log: str  # absolute: the schedd writes to it


def nodes_log_path(template: str, dag_file: str) -> str:
    """DAGMAN_DEFAULT_NODE_LOG with its @(DAG_DIR), @(DAG_FILE), @(CLUSTER), @(OWNER) expanded."""
    dag_abs = os.path.abspath(dag_file)
    text = (template.replace("@(DAG_DIR)", os.path.dirname(dag_abs))
            .replace("@(DAG_FILE)", os.path.basename(dag_abs)))
    return os.path.abspath(text)


def dag_paths(dag_file: str, lock_file: str | None, outfile_dir: str | None, node_log_template: str,
              out: str | None = None) -> DagPaths:
    """``out``: the dagman.out path given as _CONDOR_DAGMAN_LOG (by the .condor.sub), if any."""
    out_dir = outfile_dir or os.path.dirname(dag_file) or "."
    lock = lock_file or dag_file + ".lock"
    out = out or os.path.join(out_dir, os.path.basename(dag_file) + ".dagman.out")
    return DagPaths(dag_file=dag_file, out=out,
                    lock=lock, journal=lock[:-5] + ".dagman.journal" if lock.endswith(".lock")
                    else lock + ".journal", nodes_log=nodes_log_path(node_log_template, dag_file))


def take_lock(path: str) -> bool:
    """Write our pid into the lock file; True when one was there already (recovery).  A lock
    held by a live process refuses the start."""
    existed = os.path.exists(path)
    if existed:
        try:
            with open(path) as f:
                words = f.read().split()
            pid = int(words[0]) if words else 0
        except (OSError, ValueError):
            pid = 0
        if pid and pid != os.getpid() and pid_alive(pid):
            raise UserError(f"{path}: another DAGMan (pid {pid}) is running this DAG; not starting a second one")
    write_atomic(path, f"{os.getpid()}\n")
    return existed


def write_atomic(path: str, text: str) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)

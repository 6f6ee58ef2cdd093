"""The DAGMan job's own durable record of what it has done, ``<dag>.dagman.journal``, beside the
lock file.

The nodes log says what the schedd did with the node jobs; it cannot say which try a node is
at, whether its PRE or POST script finished, or that a submit was sent whose submit event was
never written (the job killed between the two).  One line per step, written (not buffered)
before the step's effect can be seen elsewhere, so a DAGMan killed at any point is restarted
knowing each node's try and outcome:

    PRE node try rc         SUBMITTING node try      SUBMITTED node try cluster procs
    POST node try rc        RETRY node try           DONE node           FAILED node

Written with ``write(2)`` at once: it survives the process (kill -9), not a crash of the host.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field


@dataclass
class NodeRecord:
    """What the journal says of one node."""

    try_number: int = 0
    pre_rc: int | None = None  # of this try
    submitting: bool = False  # a submit of this try was sent; its answer may not have come
    cluster: int | None = None
    procs: int = 0
    post_rc: int | None = None
    outcome: str = ""  # "DONE" | "FAILED" | ""


@dataclass
class JournalState:
    nodes: dict[str, NodeRecord] = field(default_factory=dict)
    clusters: dict[int, str] = field(default_factory=dict)  # every cluster ever submitted -> node

    def node(self, name: str) -> NodeRecord:
        rec = self.nodes.get(name)
        if rec is None:
            rec = self.nodes[name] = NodeRecord()
        return rec


def read_journal(path: str) -> JournalState:
    state = JournalState()
    try:
        with open(path) as f:
            lines = f.read().split("\n")
    except FileNotFoundError:
        return state
    for line in lines[:-1]:  # the last piece has no newline: a line cut short is ignored
        words = line.split(" ")
        if len(words) < 2:
            continue
        what, name, rest = words[0], words[1], words[2:]
        rec = state.node(name)
        try:
            if what == "PRE":
                rec.pre_rc = int(rest[1])
            elif what == "SUBMITTING":
                rec.submitting, rec.cluster, rec.procs = True, None, 0
            elif what == "SUBMITTED":
                rec.submitting, rec.cluster, rec.procs = False, int(rest[1]), int(rest[2])
                state.clusters[rec.cluster] = name
            elif what == "POST":
                rec.post_rc = int(rest[1])
            elif what == "RETRY":
                state.nodes[name] = NodeRecord(try_number=int(rest[0]))
            elif what in ("DONE", "FAILED"):
                rec.outcome = what
        except (IndexError, ValueError):
            continue
    return state


class Journal:
    def __init__(self, path: str, fresh: bool) -> None:
        self.path = path
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | (os.O_TRUNC if fresh else 0), 0o644)

    def write(self, *words: object) -> None:
        os.write(self.fd, (" ".join(str(w) for w in words) + "\n").encode())

    def close(self) -> None:
        os.close(self.fd)

"""The DAG model: nodes, their scripts and edges, and the DAG-wide settings the runtime reads.

Compact on purpose (``__slots__``, edges as insertion-ordered dicts of nodes): a DAG of
100,000 nodes stays far under 2 KB a node.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from htcd.dagman.errors import DagWarning, Origin

ALL_NODES = "ALL_NODES"
SPLICE_SEPARATOR = "+"


class NodeKind(StrEnum):
    JOB = "JOB"
    FINAL = "FINAL"
    SERVICE = "SERVICE"
    PROVISIONER = "PROVISIONER"
    SUBDAG = "SUBDAG"  # SUBDAG EXTERNAL: the node's job is condor_dagman on another DAG file


class ScriptKind(StrEnum):
    PRE = "PRE"
    POST = "POST"
    HOLD = "HOLD"


@dataclass(slots=True)
class Script:
    """A SCRIPT statement: what runs on the access point before, after or while held."""

    kind: ScriptKind
    executable: str
    arguments: str  # the text after the executable, with its $MACROS unexpanded
    defer_status: int | None = None  # DEFER status time: rerun after time s when it exits status
    defer_time: int = 0
    debug_file: str | None = None  # DEBUG file STDOUT|STDERR|ALL
    debug_stream: str | None = None


@dataclass(frozen=True, slots=True)
class Var:
    """One VARS pair; ``position`` is "" (the default), "PREPEND" or "APPEND"."""

    name: str
    value: str
    position: str = ""


class Node:
    """One node: its job (a submit file, an inline or a named SUBMIT-DESCRIPTION) and its rules."""

    __slots__ = (
        "abort_return",
        "abort_status",
        "category",
        "children",
        "dag_file",
        "directory",
        "done",
        "hold",
        "inline",
        "kind",
        "name",
        "noop",
        "origin",
        "parents",
        "post",
        "pre",
        "pre_skip",
        "priority",
        "retry",
        "retry_unless_exit",
        "save_point_file",
        "submit",
        "tolerance",
        "vars",
        "weak_parents",
    )

    def __init__(self, name: str, kind: NodeKind, submit: str, directory: str, origin: Origin,
                 *, inline: str | None = None, noop: bool = False, done: bool = False) -> None:
        self.name = name
        self.kind = kind
        self.submit = submit  # file name, or the SUBMIT-DESCRIPTION name when ``inline`` is set
        self.inline = inline  # the submit description text when given in the DAG file
        self.directory = directory  # DIR, relative to where the DAG is submitted ("" = there)
        self.noop = noop
        self.done = done
        self.dag_file: str | None = None  # SUBDAG EXTERNAL: the nested DAG's file
        self.parents: dict[Node, None] = {}
        self.children: dict[Node, None] = {}
        self.weak_parents: set[str] | None = None  # names of parents reached by WEAK edges
        self.pre: Script | None = None
        self.post: Script | None = None
        self.hold: Script | None = None
        self.retry = 0
        self.retry_unless_exit: int | None = None
        self.vars: list[Var] = []
        self.priority = 0
        self.category: str | None = None
        self.abort_status: int | None = None  # ABORT-DAG-ON node status [RETURN r]
        self.abort_return: int | None = None
        self.pre_skip: int | None = None
        self.tolerance: str | None = None
        self.save_point_file: str | None = None
        self.origin = origin

    def __repr__(self) -> str:
        return f"Node({self.name!r})"

    def script(self, kind: ScriptKind) -> Script | None:
        return {ScriptKind.PRE: self.pre, ScriptKind.POST: self.post, ScriptKind.HOLD: self.hold}[kind]


@dataclass(slots=True)
class Dot:
    """DOT file [UPDATE|DONT-UPDATE] [OVERWRITE|DONT-OVERWRITE] [INCLUDE header]."""

    file: str
    update: bool = False
    overwrite: bool = True
    include: str | None = None


@dataclass(slots=True)
class NodeStatusFile:
    file: str
    min_update_time: int = 60
    always_update: bool = False


@dataclass(slots=True)
class Dag:
    """A parsed DAG with its splices lifted in (their nodes named ``splice+node``)."""

    file: str
    nodes: dict[str, Node] = field(default_factory=dict)
    final: Node | None = None
    submit_descriptions: dict[str, str] = field(default_factory=dict)
    max_jobs: dict[str, int] = field(default_factory=dict)  # category -> MAXJOBS
    config: str | None = None
    config_origin: Origin | None = None  # the CONFIG line, named when several DAG files conflict
    dot: Dot | None = None
    node_status_file: NodeStatusFile | None = None
    jobstate_log: str | None = None
    set_job_attrs: list[tuple[str, str]] = field(default_factory=list)
    env_get: list[str] = field(default_factory=list)
    env_set: list[tuple[str, str]] = field(default_factory=list)
    splices: dict[str, str] = field(default_factory=dict)  # splice name -> its file
    warnings: list[DagWarning] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # every DAG file read: INCLUDEs, SPLICEs

    def edge_count(self) -> int:
        return sum(len(node.children) for node in self.nodes.values())

    def initial_nodes(self) -> list[Node]:
        """Nodes without parents (FINAL and SERVICE nodes are outside the graph)."""
        return [n for n in self.nodes.values() if not n.parents and n.kind not in OUTSIDE_GRAPH]

    def terminal_nodes(self) -> list[Node]:
        return [n for n in self.nodes.values() if not n.children and n.kind not in OUTSIDE_GRAPH]


OUTSIDE_GRAPH = (NodeKind.FINAL, NodeKind.SERVICE, NodeKind.PROVISIONER)

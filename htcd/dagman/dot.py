"""The DOT file (``DOT file [UPDATE|DONT-UPDATE] [OVERWRITE|DONT-OVERWRITE] [INCLUDE header]``):
the DAG as a Graphviz digraph, each node drawn by its state.

The statement is the manual's (docs/automated-workflows/dagman-advance-functionality.rst,
"Visualizing DAGs"); the drawing is condor_dagman's: a ``digraph DAG`` with the label
``DAGMan Job status at <ctime>``, the INCLUDE file's lines between two ``//`` comments, one
line per node (an ellipse; ``(I)`` not yet run, ``(Pre)``/``(Post)`` dotted while a script
runs, ``(R)`` with two peripheries while its job is queued, ``(Done)`` bold; a box ``(E)``
when it failed), then one line per edge.  DONT-OVERWRITE writes ``file.0``, ``file.1``, ...:
each time the first number not yet used.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from htcd.dagman.model import Dag, NodeKind
from htcd.dagman.runstate import DagRun, NodeStatus

_LOOK = {
    NodeStatus.READY: ("ellipse", "I", ""),
    NodeStatus.PRERUN: ("ellipse", "Pre", " style=dotted"),
    NodeStatus.SUBMITTED: ("ellipse", "R", " peripheries=2"),
    NodeStatus.POSTRUN: ("ellipse", "Post", " style=dotted"),
    NodeStatus.DONE: ("ellipse", "Done", " style=bold"),
    NodeStatus.ERROR: ("box", "E", ""),
}
_NOT_RUN = ("ellipse", "I", "")  # NOT_READY and FUTILE, as condor_dagman draws them


def dot_text(dag: Dag, run: DagRun, *, now: float | None = None, include_text: str | None = None) -> str:
    """The whole DOT file.  ``include_text``: the contents of the INCLUDE file (the caller reads
    it; None when there is none or it cannot be read, as condor_dagman then leaves it out)."""
    stamp = time.time() if now is None else now
    out = ["digraph DAG {", f'    label="DAGMan Job status at {time.ctime(int(stamp))}";', ""]
    if include_text is not None and dag.dot is not None and dag.dot.include:
        out.append(f"// Beginning of commands included from {dag.dot.include}.")
        out.append(include_text.rstrip("\n"))
        out.append(f"// End of commands included from {dag.dot.include}.")
        out.append("")
    for name, node in dag.nodes.items():
        if node.kind is NodeKind.SERVICE:  # not among the DAG's nodes in condor_dagman
            continue
        node_run = run.nodes.get(name)
        status = node_run.status if node_run is not None else NodeStatus.NOT_READY
        shape, mark, style = _LOOK.get(status, _NOT_RUN)
        out.append(f'    "{_escape(name)}" [shape={shape} label="{_escape(name)} ({mark})"{style}];')
    out.append("")
    for name, node in dag.nodes.items():
        for child in node.children:
            out.append(f'    "{_escape(name)}" -> "{_escape(child.name)}";')
    out.append("}")
    return "\n".join(out) + "\n"


def _escape(name: str) -> str:
    """A node name inside a DOT double-quoted id (condor_dagman writes it raw; a ``"`` would end it)."""
    return name.replace("\\", "\\\\").replace('"', '\\"')


def dot_file_name(file: str, overwrite: bool, suffix: int, exists: Callable[[str], bool]) -> tuple[str, int]:
    """(the name to write now, the suffix to start from next time).

    OVERWRITE: ``file`` itself.  DONT-OVERWRITE: ``file.N`` for the first N from ``suffix``
    (0 at the start of a run) whose file does not exist."""
    if overwrite:
        return file, suffix
    n = suffix
    while exists(f"{file}.{n}"):
        n += 1
    return f"{file}.{n}", n + 1

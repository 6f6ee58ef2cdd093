"""Rescue DAGs in HTCondor's (partial) format: write one, read one back onto the original DAG.

A rescue file ``<dag>.rescueNNN`` holds a comment header, then ``DONE node`` for each node
that finished and, when retries are not reset, ``RETRY node remaining [UNLESS-EXIT v]``.  It
is read after the original DAG file, so it only holds those two statements.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from htcd.dagman.errors import DagError, Origin
from htcd.dagman.lexer import LineReader, Words
from htcd.dagman.model import Dag, NodeKind

RESCUE_VERSION = "2.1.0"
_VERSION_LINE = re.compile(r"#\s*Rescue DAG version:\s*(\d+)\.(\d+)\.(\d+)(\s*\(partial\))?")


@dataclass(slots=True)
class RescueState:
    """What a rescue file records: the nodes done and the retries each has left."""

    done: list[str] = field(default_factory=list)
    retries: dict[str, tuple[int, int | None]] = field(default_factory=dict)  # remaining, unless
    version: tuple[int, int, int] | None = None


def rescue_name(dag_file: str, number: int) -> str:
    """``diamond.dag.rescue001``."""
    return f"{dag_file}.rescue{number:03d}"


def last_rescue(dag_file: str, max_number: int = 100) -> str | None:
    """The newest ``<dag>.rescueNNN`` beside the DAG file (the one DAGMan would use)."""
    for number in range(max_number, 0, -1):
        if os.path.exists(rescue_name(dag_file, number)):
            return rescue_name(dag_file, number)
    return None


def rescue_text(dag: Dag, dag_file: str, *, done: Iterable[str], failed: Iterable[str] = (),
                retries_used: Mapping[str, int] | None = None, reset_retries: bool = True,
                created: float | None = None) -> str:
    """The rescue file DAGMan writes for ``dag`` with these nodes done and failed.

    ``retries_used`` (node -> retries already made) gives the RETRY lines when retries are not
    reset (DAGMAN_RESET_RETRIES_UPON_RESCUE = False).  A FINAL node is never marked DONE; a
    failed node all of whose children are reached by WEAK edges is.
    """
    done_set = set(done)
    failed_set = set(failed)
    unknown = sorted((done_set | failed_set) - dag.nodes.keys())
    if unknown:
        raise ValueError(f"not nodes of the DAG: {', '.join(unknown)}")
    tm = time.gmtime(time.time() if created is None else created)
    lines = [
        "# Rescue DAG file, created after running",
        f"#   the {dag_file} DAG file",
        f"# Created {tm.tm_mon}/{tm.tm_mday}/{tm.tm_year} "
        f"{tm.tm_hour:02d}:{tm.tm_min:02d}:{tm.tm_sec:02d} UTC",
        f"# Rescue DAG version: {RESCUE_VERSION}",
        "#",
        f"# Total number of Nodes: {len(dag.nodes)}",
        f"# Nodes premarked DONE: {len(done_set)}",
        f"# Nodes that failed: {len(failed_set)}",
        "#   " + "".join(f"{n}," for n in dag.nodes if n in failed_set) + "<ENDLIST>",
        "",
    ]
    used = retries_used or {}
    for name, node in dag.nodes.items():
        if node.kind is not NodeKind.FINAL:
            if name in done_set:
                lines.append(f"DONE {name}")
            elif name in failed_set and node.children and all(
                    node.name in (child.weak_parents or ()) for child in node.children):
                lines.append("# Failed node with only weak child dependencies:")
                lines.append(f"DONE {name}")
        if node.retry > 0 and not reset_retries:
            current = used.get(name, 0)
            remaining = node.retry - current
            lines.append(f"# {current} of {node.retry} retries already performed; "
                         f"{remaining} remaining")
            unless = ("" if node.retry_unless_exit is None
                      else f" UNLESS-EXIT {node.retry_unless_exit}")
            lines.append(f"RETRY {name} {remaining}{unless}")
    return "\n".join(lines) + "\n"


def read_rescue(text: str, file: str = "<rescue>") -> RescueState:
    """The DONE and RETRY lines of a rescue file; any other statement is refused."""
    state = RescueState()
    for raw in text.splitlines():
        match = _VERSION_LINE.match(raw.strip())
        if match:
            state.version = (int(match[1]), int(match[2]), int(match[3]))
            break
    if state.version is not None and state.version[0] < 2:
        raise DagError(f"rescue DAG version {'.'.join(map(str, state.version))} is a full rescue "
                       "DAG: submit it as a DAG of its own", Origin(file, 1))
    reader = LineReader(text)
    while (item := reader.next_line()) is not None:
        lineno, line = item
        origin = Origin(file, lineno)
        words = Words(line)
        keyword = (words.next() or "").upper()
        if keyword == "DONE":
            name = words.next()
            if name is None or words.next() is not None:
                raise DagError("expected DONE NodeName", origin)
            state.done.append(name)
        elif keyword == "RETRY":
            name, count = words.next(), words.next()
            unless = None
            word = words.next()
            if word is not None:
                if word.upper() != "UNLESS-EXIT":
                    raise DagError(f"invalid parameter {word!r} (RETRY NodeName N "
                                   "[UNLESS-EXIT value])", origin)
                value = words.next()
                if value is None or not value.lstrip("-").isdigit():
                    raise DagError("UNLESS-EXIT needs an integer", origin)
                unless = int(value)
            if name is None or count is None or not count.isdigit() or words.next() is not None:
                raise DagError("expected RETRY NodeName N [UNLESS-EXIT value]", origin)
            state.retries[name] = (int(count), unless)
        else:
            raise DagError(f"a rescue DAG holds only DONE and RETRY lines, not {keyword}", origin)
    return state


def apply_rescue(dag: Dag, text: str, file: str = "<rescue>") -> RescueState:
    """Mark the rescue file's nodes DONE and set their remaining retries, on the original DAG."""
    state = read_rescue(text, file)
    reader = LineReader(text)
    lines: dict[str, int] = {}
    while (item := reader.next_line()) is not None:
        lines.setdefault(item[1].split()[1] if len(item[1].split()) > 1 else "", item[0])
    for name in state.done:
        node = dag.nodes.get(name)
        if node is None:
            raise DagError(f"unknown node name {name} (the rescue DAG does not match the DAG)",
                           Origin(file, lines.get(name, 0)))
        if node.kind is NodeKind.FINAL:
            raise DagError(f"the FINAL node {name} cannot be marked DONE",
                           Origin(file, lines.get(name, 0)))
        node.done = True
    for name, (remaining, unless) in state.retries.items():
        node = dag.nodes.get(name)
        if node is None:
            raise DagError(f"unknown node name {name} (the rescue DAG does not match the DAG)",
                           Origin(file, lines.get(name, 0)))
        node.retry = remaining
        node.retry_unless_exit = unless
    return state

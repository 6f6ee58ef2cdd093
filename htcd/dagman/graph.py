"""Graph checks of a parsed DAG: no cycle (the cycle's nodes are named when there is one)."""

from __future__ import annotations

from htcd.dagman.errors import DagError
from htcd.dagman.model import Dag, Node


def find_cycle(dag: Dag) -> list[Node] | None:
    """The nodes of one cycle, in edge order, or None; iterative so 100,000-deep chains work."""
    state: dict[Node, int] = {}  # 1: on the current path, 2: finished
    for root in dag.nodes.values():
        if root in state:
            continue
        path: list[Node] = [root]
        iters = [iter(root.children)]
        state[root] = 1
        while iters:
            child = next(iters[-1], None)
            if child is None:
                state[path.pop()] = 2
                iters.pop()
                continue
            seen = state.get(child)
            if seen == 1:
                return path[path.index(child):]
            if seen is None:
                state[child] = 1
                path.append(child)
                iters.append(iter(child.children))
    return None


def check_acyclic(dag: Dag) -> None:
    """Refuse a DAG with a cycle, naming its nodes and where the first of them is defined."""
    cycle = find_cycle(dag)
    if cycle is not None:
        names = " -> ".join(n.name for n in cycle + cycle[:1])
        raise DagError(f"the DAG has a cycle: {names}", cycle[0].origin)

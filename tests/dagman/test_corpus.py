"""Every DAG file of HTCondor's repository and manual (tests/corpus/dag, see harvest.py there).

A valid DAG must give the nodes and edges of an independent, deliberately simple reading
of its lines (JOB-like lines, PARENT lines multiplied out, INCLUDE and SPLICE followed, CONNECT
joining pins of the same number); one HTCondor's tests use as bad input must be refused with the reason EXPECTED
names.  A manual excerpt that names nodes it does not define gets them defined first.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from htcd.dagman import DagError, ParseOptions, parse_dag, parse_dag_text

CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "dag"
NODE_LINE = re.compile(r"^(JOB|FINAL|SERVICE|PROVISIONER|SUBDAG\s+EXTERNAL)\s+(\S+)\s*(\S*)", re.I)


def expected() -> dict[str, tuple[str, str]]:
    table = {}
    for line in (CORPUS / "EXPECTED").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            path, verdict, text = line.split(" ", 2)
            table[path] = (verdict, text)
    return table


EXPECTED = expected()
REPO_DAGS = sorted(str(p.relative_to(CORPUS)) for p in (CORPUS / "htcondor").rglob("*.dag"))
MANUAL_DAGS = sorted(str(p.relative_to(CORPUS)) for p in (CORPUS / "manual").glob("*.dag"))


Pins = dict[tuple[str, str], dict[str, list[str]]]  # (splice prefix, PIN_IN|PIN_OUT) -> nodes


def _lines(text: str) -> list[list[str]]:
    """The words of each line, continuations joined, comments and inline bodies left out."""
    out = []
    lines = re.sub(r"\\\s*\n", " ", text).splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        out.append(words)
        m = NODE_LINE.match(line)
        if (m and m[3].startswith("{")) or (words[0].upper() == "SUBMIT-DESCRIPTION"
                                            and words[-1] == "{"):
            while i < len(lines) and not lines[i].strip().startswith("}"):
                i += 1
            i += 1
    return out


def independent_graph(text: str, base: str, prefix: str = "", pins: Pins | None = None) -> tuple[
        list[str], set[tuple[str, str]] | None, set[str]]:
    """(node names, edges or None when CONNECT joins splices, names outside the graph).

    A plain reading of the lines: JOB-like lines make nodes, INCLUDE reads another file
    here, SPLICE reads one as ``splice+node``; PARENT lines multiply out, a splice name
    meaning its nodes without parents (as a child) or without children (as a parent)."""
    nodes: list[str] = []
    edges: set[tuple[str, str]] | None = set()
    connects: list[tuple[str, str]] = []
    pins = {} if pins is None else pins
    outside: set[str] = set()
    splices: dict[str, tuple[list[str], set[tuple[str, str]], set[str]]] = {}
    parent_lines: list[list[str]] = []
    for words in _lines(text):
        head = words[0].upper()
        m = NODE_LINE.match(" ".join(words))
        if m:
            nodes.append(prefix + m[2])
            if head in ("FINAL", "SERVICE", "PROVISIONER"):
                outside.add(prefix + m[2])
        elif head == "INCLUDE":
            sub_nodes, sub_edges, sub_outside = independent_graph(
                Path(base, words[1]).read_text(errors="replace"), base, prefix, pins)
            nodes += sub_nodes
            outside |= sub_outside
            if sub_edges is None or edges is None:
                edges = None
            else:
                edges |= sub_edges
        elif head == "SPLICE":
            sub_base = base
            if len(words) > 4 and words[3].upper() == "DIR":
                sub_base = os.path.join(base, words[4])
            inner = independent_graph(Path(sub_base, words[2]).read_text(errors="replace"),
                                      sub_base, prefix + words[1] + "+", pins)
            if inner[1] is None:
                edges = None
            else:
                splices[words[1]] = (inner[0], inner[1], inner[2])
            nodes += inner[0]
        elif head == "CONNECT":
            connects.append((words[1], words[2]))
        elif head in ("PIN_IN", "PIN_OUT"):
            pins.setdefault((prefix, head), {}).setdefault(words[2], []).append(prefix + words[1])
        elif head in ("PARENT", "WEAK"):
            parent_lines.append([w for w in words[1:] if w.upper() != "PARENT"]
                                if head == "WEAK" else words[1:])
    if edges is None:
        return nodes, None, outside
    for _nodes, inner_edges, _outside in splices.values():
        edges |= inner_edges

    def ends(name: str, as_parent: bool) -> list[str]:
        if name not in splices:
            return [prefix + name]
        inner_nodes, inner_edges, inner_outside = splices[name]
        side = 0 if as_parent else 1
        linked = {edge[side] for edge in inner_edges}
        return [n for n in inner_nodes if n not in linked and n not in inner_outside]

    for rest in parent_lines:
        cut = [w.upper() for w in rest].index("CHILD")
        edges |= {(p, c) for name in rest[:cut] for p in ends(name, True)
                  for c2 in rest[cut + 1:] for c in ends(c2, False)}
    for out, into in connects:
        outs = pins.get((prefix + out + "+", "PIN_OUT"), {})
        ins = pins.get((prefix + into + "+", "PIN_IN"), {})
        edges |= {(p, c) for pin, ups in outs.items() for p in ups for c in ins.get(pin, [])}
    return nodes, edges, outside


def _check_refused(error: DagError, path: str) -> None:
    verdict, text = EXPECTED[path]
    assert text in str(error), f"{path}: {verdict}: expected {text!r} in {error}"
    assert error.origin is not None and error.origin.line > 0


@pytest.mark.parametrize("path", REPO_DAGS)
def test_htcondor_repository_dag(path: str) -> None:
    full = CORPUS / path
    options = {"cwd": str(full.parent), "check_files": False}
    verdict = EXPECTED.get(path, ("valid", ""))[0]
    if verdict == "refuse-files":
        parse_dag(full.name, **options)  # type: ignore[arg-type]
        options["check_files"] = True
    if verdict != "valid":
        with pytest.raises(DagError) as info:
            parse_dag(full.name, **options)  # type: ignore[arg-type]
        _check_refused(info.value, path)
        return
    dag = parse_dag(full.name, **options)  # type: ignore[arg-type]
    nodes, edges, _ = independent_graph(full.read_text(errors="replace"), str(full.parent))
    assert sorted(dag.nodes) == sorted(nodes)
    if edges is not None:
        assert {(p.name, c.name) for p in dag.nodes.values() for c in p.children} == edges


@pytest.mark.parametrize("path", MANUAL_DAGS)
def test_manual_example(path: str) -> None:
    full = CORPUS / path
    text = full.read_text()
    options = ParseOptions(cwd=str(full.parent), check_files=False)
    if path in EXPECTED:
        with pytest.raises(DagError) as info:
            parse_dag_text(text, full.name, options=options)
        _check_refused(info.value, path)
        return
    added: list[str] = []
    while True:
        prefix = "".join(f"JOB {name} {name}.sub\n" for name in added)
        try:
            dag = parse_dag_text(prefix + text, full.name, options=options)
            break
        except DagError as e:
            m = re.search(r"unknown node name (\S+)", e.reason)
            assert m and len(added) < 30, f"{path}: {e}"
            added.append(m[1])
    nodes, edges, _ = independent_graph(prefix + text, str(full.parent))
    assert sorted(dag.nodes) == sorted(nodes)
    if edges is not None:
        assert {(p.name, c.name) for p in dag.nodes.values() for c in p.children} == edges


def test_corpus_counts() -> None:
    """The corpus is whole: every .dag of the harvest and every entry of EXPECTED is present."""
    assert len(REPO_DAGS) >= 230
    assert all((CORPUS / path).exists() for path in EXPECTED)
    sources = (CORPUS / "SOURCES").read_text()
    assert all(f"{path} " in sources for path in REPO_DAGS + MANUAL_DAGS)

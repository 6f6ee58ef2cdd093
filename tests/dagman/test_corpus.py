"""Every DAG file of HTCondor's repository and manual (tests/corpus/dag, see harvest.py there).

A valid DAG must give the node and edge counts of an independent, deliberately simple reading
of its lines (JOB-like lines counted, PARENT lines multiplied out, INCLUDE and SPLICE
followed); one HTCondor's tests use as bad input must be refused with the reason EXPECTED
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


def independent_count(text: str, base: str) -> tuple[int, set[tuple[str, str]] | None]:
    """(nodes, edges or None when splices make edges a matter of the graph) from the lines."""
    lines = re.sub(r"\\\s*\n", " ", text).splitlines()
    nodes = 0
    edges: set[tuple[str, str]] | None = set()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        head = words[0].upper()
        m = NODE_LINE.match(line)
        if m:
            nodes += 1
            if m[3].startswith("{"):
                while i < len(lines) and not lines[i].strip().startswith("}"):
                    i += 1
                i += 1
        elif head in ("SPLICE", "INCLUDE"):
            file = words[2] if head == "SPLICE" else words[1]
            sub_base = base
            if head == "SPLICE" and len(words) > 4 and words[3].upper() == "DIR":
                sub_base = os.path.join(base, words[4])
            sub_nodes, sub_edges = independent_count(
                Path(sub_base, file).read_text(errors="replace"), sub_base if head == "SPLICE" else base)
            nodes += sub_nodes
            if head == "SPLICE" or sub_edges is None:
                edges = None
            elif edges is not None:
                edges |= sub_edges
        elif head == "CONNECT":
            edges = None
        elif head in ("PARENT", "WEAK") and edges is not None:
            rest = [w for w in words[1:] if w.upper() != "PARENT"] if head == "WEAK" else words[1:]
            upper = [w.upper() for w in rest]
            cut = upper.index("CHILD")
            edges |= {(p, c) for p in rest[:cut] for c in rest[cut + 1:]}
    return nodes, edges


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
    nodes, edges = independent_count(full.read_text(errors="replace"), str(full.parent))
    assert len(dag.nodes) == nodes
    if edges is not None:
        assert dag.edge_count() == len(edges)


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
    nodes, edges = independent_count(prefix + text, str(full.parent))
    assert len(dag.nodes) == nodes
    if edges is not None:
        assert dag.edge_count() == len(edges)


def test_corpus_counts() -> None:
    """The corpus is whole: every .dag of the harvest and every entry of EXPECTED is present."""
    assert len(REPO_DAGS) >= 230
    assert all((CORPUS / path).exists() for path in EXPECTED)
    sources = (CORPUS / "SOURCES").read_text()
    assert all(f"{path} " in sources for path in REPO_DAGS + MANUAL_DAGS)

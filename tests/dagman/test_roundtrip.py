"""Random DAGs written as DAG files, parsed back, and rescued: what was written is what is read."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import scaled

from htcd.dagman import ParseOptions, apply_rescue, parse_dag_text, rescue_text

NAME = st.text(alphabet="abcXYZ019_-.:", min_size=1, max_size=6).filter(
    lambda s: s.upper() not in ("PARENT", "CHILD", "ALL_NODES"))
VALUE = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=12)
OPTIONS = ParseOptions(check_files=False, check_inline=False)


@st.composite
def dags(draw: st.DrawFn) -> tuple[list[str], set[tuple[int, int]], dict[str, str], dict[str, int]]:
    names = draw(st.lists(NAME, min_size=1, max_size=12, unique=True))
    n = len(names)
    edges = draw(st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))
                         .filter(lambda e: e[0] < e[1]), max_size=30))
    values = {name: draw(VALUE) for name in names}
    retries = {name: draw(st.integers(0, 5)) for name in names}
    return names, edges, values, retries


def quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


@settings(max_examples=scaled(200), derandomize=True, deadline=None)
@given(dags())
def test_written_dag_reads_back(dag_parts: tuple[list[str], set[tuple[int, int]],
                                                 dict[str, str], dict[str, int]]) -> None:
    names, edges, values, retries = dag_parts
    lines = []
    for i, name in reversed(list(enumerate(names))):  # PARENT lines before, JOB lines after
        for p, c in sorted(edges):
            if p == i:
                lines.append(f"PARENT {name} CHILD {names[c]}")
    lines += [f"job {name} {name}.sub" for name in names]
    lines += [f'VARS {name} v="{quote(values[name])}"' for name in names]
    lines += [f"Retry {name} {retries[name]}" for name in names]
    dag = parse_dag_text("\n".join(lines) + "\n", "r.dag", options=OPTIONS)
    assert list(dag.nodes) == names
    assert {(p.name, c.name) for p in dag.nodes.values() for c in p.children} == {
        (names[p], names[c]) for p, c in edges}
    assert {n: node.vars[0].value for n, node in dag.nodes.items()} == values
    assert {n: node.retry for n, node in dag.nodes.items()} == retries

    done = [name for i, name in enumerate(names) if i % 2 == 0]
    text = rescue_text(dag, "r.dag", done=done, failed=names[1:2], created=0)
    again = parse_dag_text("\n".join(lines) + "\n", "r.dag", options=OPTIONS)
    apply_rescue(again, text)
    assert [n for n, node in again.nodes.items() if node.done] == done

"""The parsed DAG stays compact: under 2 KB a node (bench/dag_parse_bench.py measures 100,000)."""

from __future__ import annotations

import gc
import tracemalloc

from htcd.dagman import ParseOptions, parse_dag_text

N = 2_000


def test_bytes_per_node_of_a_chain_with_scripts_and_vars() -> None:
    lines = [f"JOB n{i} node.sub" for i in range(N)]
    lines += [f"PARENT n{i} CHILD n{i + 1}" for i in range(N - 1)]
    lines += [f"SCRIPT PRE n{i} pre.sh $JOB" for i in range(N)]
    lines += [f'VARS n{i} index="{i}"' for i in range(N)]
    text = "\n".join(lines) + "\n"
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        dag = parse_dag_text(text, "size.dag", options=ParseOptions(check_files=False))
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(dag.nodes) == N and dag.edge_count() == N - 1
    assert kept / N < 2048, f"{kept / N:.0f} bytes a node"

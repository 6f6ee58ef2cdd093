"""HTCondor's own DAGMan tests (src/condor_tests/job_dagman_*, copied by condor_tests/harvest.py),
run by ``htcd dagman`` to the outcome their .run scripts check."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from pooltools import Pool

from tests.dagrun.dagtools import executions, run_dag

HERE = Path(__file__).resolve().parent / "condor_tests"


def _read(path: Path) -> str:
    return path.read_text() if path.exists() else ""


# test -> (exit status, node executions, files that must exist / must not, {file: regex it must match})
CASES: dict[str, tuple[int, dict[str, int], tuple[str, ...], tuple[str, ...], dict[str, str]]] = {
    # the job exits 3; the POST script turns that into success
    "basic": (0, {"NODERET": 1}, (), (), {}),
    # RETRY 1 UNLESS-EXIT 3 and the node returns 3: not retried, the DAG fails
    "unlessexit": (1, {"NODERET": 1}, (), (), {}),
    # RETRY 1 and the node fails each time: two runs, the DAG fails
    "retry": (1, {"NODERET": 2}, (), (), {}),
    # A runs; B's PRE script fails with a value other than PRE_SKIP's: B never runs
    "pre_skip-A": (1, {"A": 1}, ("job_dagman_pre_skip-A_A.out",), ("job_dagman_pre_skip-A_B.out",), {}),
    # A's PRE script exits with the PRE_SKIP value: A's job and POST are skipped, B runs
    "pre_skip-B": (0, {"B": 1}, (), (), {}),
    # script arguments: macros expanded, every other word passed as written (quotes kept)
    "script_args": (0, {n: 1 for n in ("NodeA", "NodeB", "NodeC", "NodeD")}, (), (), {
        "job_dagman_script_args-NodeA-Pre.out": r'<"Cadel_Evans"> <0>',
        "job_dagman_script_args-NodeA-Post.out": r"<0> <Mark_Cavendish> <Heinrich_Haussler> <0> <[0-9]*\.0>",
        "job_dagman_script_args-NodeB-Pre.out": r"<'Bernard_Hinault'> <Joop_Zoetemelk> <0>",
        "job_dagman_script_args-NodeB-Post.out": r"<0> <Ottavio_Bottechia> <0> <[0-9]*\.0>",
        "job_dagman_script_args-NodeC-Pre.out": r"<Miguel> <\\Indurain> <0>",
        "job_dagman_script_args-NodeC-Post.out": r"<0> <Laurent> <Jalabert> <0> <[0-9]*\.0>",
        "job_dagman_script_args-NodeD-Pre.out": r"<Gilles> <Delion> <Charly> <Mottet> <0>",
        "job_dagman_script_args-NodeD-Post.out": r"<0> <Stephen> <Roche> <0> <[0-9]*\.0>"}),
    # a DAG of only a FINAL node: $(DAG_STATUS) and $(FAILED_COUNT) in its submit description
    "final-G": (0, {"G_A": 1}, (), (), {
        "job_dagman_final-G.nodes.out": r"\AJob for node G_A\n  DAG_STATUS=0\n  FAILED_COUNT=0\n  OK done with G_A\n\Z"}),
    # J_A fails; the FINAL node is skipped by PRE_SKIP, so succeeds, and so does the DAG
    "final-J": (0, {"J_A": 1}, (), (), {"job_dagman_final-J.dag.dagman.out": r"(?s)DAG status: 2.*DAG status: 0"}),
    # DAGMAN_MAX_JOBS_SUBMITTED = 1 from the DAG's CONFIG file: nodes start in PRIORITY order
    "node_prio": (0, {n: 1 for n in ("A", "C", *(f"B{i}" for i in range(1, 11)))}, (), (), {
        "job_dagman_node_prio.order": r"A B5 B7 B3 B9 B4 B1 B10 B2 B8 B6 C",
        "job_dagman_node_prio.dag.dagman.out": r"EXITING WITH STATUS 0"}),
}


@pytest.mark.parametrize("test", sorted(CASES))
def test_htcondor_dagman_test(dag_pool: Pool, tmp_path: Path, test: str) -> None:
    for f in HERE.iterdir():
        if f.name.startswith(("job_dagman_", "x_dagman_")):
            shutil.copy2(f, tmp_path / f.name)
    code, runs, present, absent, contents = CASES[test]
    dag = f"job_dagman_{test}.dag"
    done = run_dag(dag_pool, tmp_path, dag)
    out = _read(tmp_path / f"{dag}.dagman.out")
    assert done.returncode == code, done.stderr + out[-3000:]
    assert dict(executions(tmp_path / f"{dag}.nodes.log")) == runs
    for name in present:
        assert (tmp_path / name).exists(), name
    for name in absent:
        assert not (tmp_path / name).exists(), name
    for name, pattern in contents.items():
        assert re.search(pattern, _read(tmp_path / name)), (name, _read(tmp_path / name))

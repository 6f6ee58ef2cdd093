"""``htcd submit_dag`` without a pool: -no_submit, the checks of a previous run's files, the
flags it refuses, and a bad DAG refused with its file and line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pooltools import clean_env


def submit_dag(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "htcd", "submit_dag", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=60, env=clean_env({"HTCD_CONFIG": "/dev/null"}))


def make_dag(tmp_path: Path, text: str = "JOB A a.sub\nJOB B a.sub\nPARENT A CHILD B\n") -> None:
    (tmp_path / "a.sub").write_text("executable = /bin/true\nqueue\n")
    (tmp_path / "d.dag").write_text(text)


def test_no_submit_writes_the_submit_file_and_prints_condor_submit_dags_block(tmp_path: Path) -> None:
    make_dag(tmp_path)
    proc = submit_dag(tmp_path, "-No_Submit", "-MaxIdle", "5", "-batch-name", "nightly", "d.dag")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (
        "-----------------------------------------------------------------------\n"
        "File for submitting this DAG to HTCondor           : d.dag.condor.sub\n"
        "Log of DAGMan debugging messages                   : d.dag.dagman.out\n"
        "Log of HTCondor library output                     : d.dag.lib.out\n"
        "Log of HTCondor library error messages             : d.dag.lib.err\n"
        "Log of the life of condor_dagman itself            : d.dag.dagman.log\n\n"
        "-no_submit given, not submitting DAG to HTCondor. You can do this with:\n"
        '"htcd submit d.dag.condor.sub"\n'
        "-----------------------------------------------------------------------\n")
    text = (tmp_path / "d.dag.condor.sub").read_text()
    assert "universe    = scheduler\n" in text and 'My.JobBatchName = "nightly"\n' in text
    assert " -MaxIdle 5 " in text and "remove_kill_sig = SIGUSR1\n" in text


def test_existing_files_are_refused_without_f_and_update_submit_keeps_limits(tmp_path: Path) -> None:
    make_dag(tmp_path)
    assert submit_dag(tmp_path, "-no_submit", "-maxjobs", "3", "d.dag").returncode == 0
    (tmp_path / "d.dag.lib.out").write_text("old\n")
    before = (tmp_path / "d.dag.condor.sub").read_text()
    proc = submit_dag(tmp_path, "-no_submit", "d.dag")
    assert proc.returncode == 1
    assert proc.stderr.startswith('ERROR: "d.dag.condor.sub" already exists.\nERROR: "d.dag.lib.out" already exists.\n')
    assert '- Use the "-f" option to force them to be overwritten' in proc.stderr
    assert (tmp_path / "d.dag.condor.sub").read_text() == before, "nothing rewritten"

    proc = submit_dag(tmp_path, "-no_submit", "-update_submit", "-maxidle", "9", "d.dag")
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "d.dag.condor.sub").read_text()
    assert " -MaxIdle 9 -MaxJobs 3 " in text, "the old -MaxJobs is kept"
    assert (tmp_path / "d.dag.lib.out").read_text() == "old\n", "-update_submit touches only the .condor.sub"

    (tmp_path / "d.dag.rescue001").write_text("DONE A\n")
    proc = submit_dag(tmp_path, "-no_submit", "-f", "d.dag")
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "d.dag.lib.out").exists() and (tmp_path / "d.dag.rescue001.old").exists()
    assert " -MaxJobs " not in (tmp_path / "d.dag.condor.sub").read_text()


def test_rescue_dag_lets_the_files_be(tmp_path: Path) -> None:
    make_dag(tmp_path)
    assert submit_dag(tmp_path, "-no_submit", "d.dag").returncode == 0
    (tmp_path / "d.dag.rescue002").write_text("DONE A\n")
    proc = submit_dag(tmp_path, "-no_submit", "d.dag")
    assert proc.returncode == 0 and proc.stdout.startswith("Running rescue DAG 2\n"), proc.stderr
    proc = submit_dag(tmp_path, "-no_submit", "-DoRescueFrom", "3", "d.dag")
    assert proc.returncode == 1
    assert "ERROR: -dorescuefrom 3 specified, but rescue DAG file d.dag.rescue003 does not exist!" in proc.stderr


def test_a_bad_dag_is_refused_with_file_and_line(tmp_path: Path) -> None:
    cases = {
        "cycle.dag": ("JOB A a.sub\nJOB B a.sub\nPARENT A CHILD B\nPARENT B CHILD A\n", "cycle.dag:1: "),
        "missing.dag": ("JOB A a.sub\nJOB B nope.sub\n", "missing.dag:2: "),
        "unknown.dag": ("JOB A a.sub\nPARENT A CHILD Z\n", "unknown.dag:2: "),
        "splice.dag": ("JOB A a.sub\nSPLICE S\n", "splice.dag:2: "),
    }
    (tmp_path / "a.sub").write_text("executable = /bin/true\nqueue\n")
    for name, (text, where) in cases.items():
        (tmp_path / name).write_text(text)
        proc = submit_dag(tmp_path, "-no_submit", name)
        assert proc.returncode == 1, name
        assert proc.stderr.startswith(f"ERROR: {where}"), proc.stderr
        assert "Traceback" not in proc.stderr and not (tmp_path / f"{name}.condor.sub").exists()


def test_flags_htcd_cannot_honour_are_refused(tmp_path: Path) -> None:
    make_dag(tmp_path)
    for args, message in ((["-valgrind"], "-valgrind: htcd cannot honour this option"),
                          (["-remote", "other"], "-remote: htcd cannot honour this option"),
                          (["-MaxHold", "2"], "-maxhold: htcd cannot honour this option"),
                          (["-SubmitMethod", "0"], "-SubmitMethod 0: htcd's DAGMan submits node jobs"),
                          (["-RescueFile", "r", "-DoRescueFrom", "1"],
                           "-DoRescueFrom can not be used with the following flag: -RescueFile"),
                          (["-notification", "sometimes"], "-notification must be Never, Always")):
        proc = submit_dag(tmp_path, "-no_submit", *args, "d.dag")
        assert proc.returncode == 1 and message in proc.stderr, (args, proc.stderr)
        assert not (tmp_path / "d.dag.condor.sub").exists()


def test_do_recurse_writes_the_subdags_submit_files_with_the_flags_passed_down(tmp_path: Path) -> None:
    make_dag(tmp_path, "JOB A a.sub\nSUBDAG EXTERNAL S inner.dag DIR sub\nPARENT A CHILD S\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.sub").write_text("executable = /bin/true\nqueue\n")
    (tmp_path / "sub" / "inner.dag").write_text("JOB X a.sub\n")
    proc = submit_dag(tmp_path, "-no_submit", "-do_recurse", "-maxjobs", "2", "-notification", "Error", "d.dag")
    assert proc.returncode == 0, proc.stderr
    inner = (tmp_path / "sub" / "inner.dag.condor.sub").read_text()
    assert "-Dag inner.dag " in inner and " -MaxJobs " not in inner, "only condor_submit_dag's deep flags go down"
    assert " -notification Error " in inner and "notification = Error\n" in inner and " -update_submit" in inner
    assert " -MaxJobs 2 " in (tmp_path / "d.dag.condor.sub").read_text()


def test_several_dag_files_one_submit_file_and_their_conflicts_refused_before_writing(tmp_path: Path) -> None:
    make_dag(tmp_path, "JOB A a.sub\nFINAL F a.sub\n")
    (tmp_path / "e.dag").write_text("JOB A a.sub\nFINAL G a.sub\n")
    proc = submit_dag(tmp_path, "-no_submit", "d.dag", "e.dag")
    assert proc.returncode == 1
    assert proc.stderr.startswith("ERROR: e.dag:2: a second FINAL node 1.G (the first is 0.F at d.dag:2)"), proc.stderr
    assert "Traceback" not in proc.stderr and not list(tmp_path.glob("*.condor.sub"))

    (tmp_path / "e.dag").write_text("JOB A a.sub\nJOB B a.sub\n")
    (tmp_path / "d.dag_multi.rescue001").write_text("DONE 0.A\n")
    proc = submit_dag(tmp_path, "-no_submit", "-f", "d.dag", "e.dag")
    assert proc.returncode == 0, proc.stderr
    assert " -Dag d.dag -Dag e.dag " in (tmp_path / "d.dag.condor.sub").read_text()
    assert (tmp_path / "d.dag_multi.rescue001.old").exists(), "-f renames the combined run's rescue DAGs"

"""condor_dagman's command line as htcd dagman reads it (no pool needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from htcd.dagrun.args import parse_args
from htcd.dagrun.start import insert_env_pairs
from htcd.errors import UserError


def test_the_condor_sub_command_line_is_read_case_insensitively() -> None:
    args = parse_args(["-p", "0", "-f", "-l", ".", "-Debug", "3", "-Lockfile", "x.dag.lock", "-Dag", "x.dag",
                       "-MaxIdle", "10", "-MAXJOBS", "2", "-maxpre", "3", "-MaxPost", "4", "-AlwaysRunPost",
                       "-CsdVersion", "$CondorVersion: 24 $", "-Priority", "-5", "-verbose", "-notification",
                       "never", "-dagman", "/usr/bin/htcd", "-AutoRescue", "0", "-DoRescueFrom", "2",
                       "-include_env", "A,B", "-insert_env", "K=V;L=W", "-do_recurse", "-suppress_notification",
                       "-SubmitMethod", "1", "-force", "-update_submit", "-Batch-name", "b"])
    assert (args.dag_files, args.lock_file, args.max_idle, args.max_jobs, args.max_pre, args.max_post) == \
        (["x.dag"], "x.dag.lock", 10, 2, 3, 4)
    assert args.always_run_post and args.priority == -5 and args.auto_rescue == 0 and args.do_rescue_from == 2
    assert args.batch_name == "b" and args.suppress_notification is True and args.insert_env == ["K=V;L=W"]
    assert args.overrides() == {"DAGMAN_MAX_JOBS_IDLE": "10", "DAGMAN_MAX_JOBS_SUBMITTED": "2",
                                "DAGMAN_MAX_PRE_SCRIPTS": "3", "DAGMAN_MAX_POST_SCRIPTS": "4",
                                "DAGMAN_VERBOSITY": "3", "DAGMAN_AUTO_RESCUE": "false",
                                "DAGMAN_SUPPRESS_NOTIFICATION": "true"}


@pytest.mark.parametrize(("argv", "message"), [
    (["-Dag", "x.dag", "-Bogus"], "unknown argument '-Bogus'"),
    (["-Dag"], "-Dag needs a value"),
    (["-Dag", "x.dag", "-MaxIdle", "many"], "-MaxIdle takes an integer, not 'many'"),
    (["-f"], "no DAG file given (-Dag FILE)"),
])
def test_bad_command_lines_are_refused(argv: list[str], message: str) -> None:
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_args(argv)


def test_several_dag_files_are_kept_in_order() -> None:
    assert parse_args(["-Dag", "a.dag", "-dag", "b.dag", "-Dag", "c.dag"]).dag_files == ["a.dag", "b.dag", "c.dag"]


def test_insert_env_pairs() -> None:
    assert insert_env_pairs("K=V;L=W") == {"K": "V", "L": "W"}
    assert insert_env_pairs("|K=a;b|L=") == {"K": "a;b", "L": ""}
    with pytest.raises(UserError, match="not NAME=VALUE"):
        insert_env_pairs("K")


def test_the_arguments_a_generated_condor_sub_passes_are_all_read(tmp_path: Path) -> None:
    """Every flag htcd.dagman.condor_sub can write is one htcd dagman reads, with its value."""
    from htcd.dagman.condor_sub import SubmitDagOptions, write_condor_sub
    from htcd.jobenv import split_v2

    (tmp_path / "x.dag").write_text("JOB A a.sub\n")
    (tmp_path / "a.sub").write_text("executable = /bin/true\nqueue\n")
    (tmp_path / "x.conf").write_text("DAGMAN_MAX_JOBS_IDLE = 5\n")
    options = SubmitDagOptions(
        cwd=str(tmp_path), maxidle=10, maxjobs=2, maxpre=3, maxpost=4, debug=5, always_run_post=False,
        dorecovery=True, priority=7, rescue_file="x.dag.rescue002", verbose=True, notification="never",
        dagman="/usr/bin/htcd", usedagdir=True, outfile_dir="outs", autorescue=0, do_rescue_from=2,
        allow_version_mismatch=True, import_env=True, include_env=["A,B"], insert_env=["K=V;L=W"],
        do_recurse=True, suppress_notification=True, submit_method=1, force=True, update_submit=True,
        config="x.conf", lockfile="x.lock")
    text = Path(write_condor_sub(["x.dag"], options)).read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("arguments"))
    value = line.split("=", 1)[1].strip()
    words = split_v2(value[1:-1].replace('""', '"')) if value.startswith('"') else value.split()
    assert words[0] == "dagman"
    args = parse_args(words[1:])
    assert args.dag_files == ["x.dag"] and args.lock_file == "x.lock" and args.debug == 5
    assert (args.max_idle, args.max_jobs, args.max_pre, args.max_post) == (10, 2, 3, 4)
    assert args.always_run_post is False and args.do_recovery and args.priority == 7
    assert args.rescue_file == "x.dag.rescue002" and args.verbose and args.notification == "never"
    assert args.dagman_path == "/usr/bin/htcd" and args.use_dag_dir and args.outfile_dir == "outs"
    assert args.auto_rescue == 0 and args.do_rescue_from == 2 and args.allow_version_mismatch
    assert args.import_env and args.include_env == ["A,B"] and args.insert_env == ["K=V;L=W"]
    assert args.do_recurse and args.suppress_notification is True and args.submit_method == 1
    assert args.force and args.update_submit and args.csd_version
    env_line = next(ln for ln in text.splitlines() if ln.startswith("environment"))
    assert "_CONDOR_DAGMAN_LOG=outs/x.dag.dagman.out" in env_line and "_CONDOR_MAX_DAGMAN_LOG=0" in env_line
    assert "_CONDOR_DAGMAN_CONFIG_FILE=x.conf" in env_line

"""condor_dagman's command line as htcd dagman reads it (no pool needed)."""

from __future__ import annotations

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
    (["-Dag", "a.dag", "-Dag", "b.dag"], "more than one -Dag file"),
])
def test_bad_command_lines_are_refused(argv: list[str], message: str) -> None:
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_args(argv)


def test_insert_env_pairs() -> None:
    assert insert_env_pairs("K=V;L=W") == {"K": "V", "L": "W"}
    assert insert_env_pairs("|K=a;b|L=") == {"K": "a;b", "L": ""}
    with pytest.raises(UserError, match="not NAME=VALUE"):
        insert_env_pairs("K")

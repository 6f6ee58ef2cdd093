"""Every option of every HTCondor tool htcd has a condor name for (as the tool's man page lists it,
harvested into htcd/cli/condor_options.tsv) is either accepted by htcd or refused with a message
naming it as that tool's option htcd does not implement -- never a traceback, never an ambiguity."""

from __future__ import annotations

import contextlib
import io

import pytest

from htcd.cli.condor_names import CONDOR_NAMES, NOT_IN_HTCD, condor_options
from htcd.cli.main import SUBCOMMANDS, _unrecognized, asks_version, build_parser

TOOLS = sorted(t for t, words in CONDOR_NAMES.items() if t not in NOT_IN_HTCD and words[0] in SUBCOMMANDS
               and condor_options(t))


def _outcome(tool: str, option: str) -> tuple[str, str]:
    """("accepted" | "refused" | "bad", the message) for ``tool option``: accepted when htcd's
    parser of that tool resolves the option (HTCondor's prefix and -/_ rules) to one of its own."""
    words = list(CONDOR_NAMES[tool])
    if words[0] == "dagman":  # condor_dagman reads its own (case-insensitive) arguments
        return _dagman_outcome(option)
    parser, _ = build_parser(words[0], tool)
    if words[0] == "submit_dag":  # condor_submit_dag's flags are case-insensitive: main lowers them first
        from htcd.cli.submit_dag import normalize_argv

        option = normalize_argv(["submit_dag", option])[1]
    sub = parser.chosen
    assert sub is not None
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            resolved = sub.condor_spelling([option])
    except SystemExit:
        return "bad", err.getvalue()  # an ambiguous prefix
    if resolved[0] in sub._option_string_actions:
        return "accepted", ""
    msg = _unrecognized(words[0], [option], [*words, option])
    if f"{tool}'s option" in msg and "not implemented by htcd" in msg and "unrecognized" not in msg:
        return "refused", msg
    return "bad", msg


def _dagman_outcome(option: str) -> tuple[str, str]:
    """condor_dagman's options go through htcd.dagrun.args: accepted when it takes the option
    (with a value where the man page gives one), refused when it names the option in its refusal."""
    from htcd.dagrun.args import parse_args
    from htcd.errors import UserError

    kind = condor_options("condor_dagman").get(option, "flag")
    if option.lstrip("-").lower() in ("version", "help"):
        return "accepted", ""  # answered by htcd.cli.main before the arguments are read
    argv = [option, "1"] if kind == "value" else [option]
    if option.lower() not in ("-dag",):
        argv += ["-Dag", "x.dag"]
    try:
        parse_args(argv)
    except UserError as exc:
        msg = str(exc)
        return ("refused" if option in msg else "bad"), msg
    return "accepted", ""


def test_the_table_covers_the_tools() -> None:
    assert {"condor_q", "condor_submit", "condor_rm", "condor_status", "condor_history"} <= set(TOOLS)
    assert condor_options("condor_rm")["-constraint"] == "value"
    assert condor_options("condor_q")["-nobatch"] == "flag"


@pytest.mark.parametrize("tool", TOOLS)
def test_every_man_page_option_is_accepted_or_refused_clearly(tool: str) -> None:
    counts = {"accepted": 0, "refused": 0}
    for option in sorted(condor_options(tool)):
        outcome, msg = _outcome(tool, option)
        assert outcome != "bad", f"{tool} {option}: {msg}"
        assert "Traceback" not in msg
        counts[outcome] += 1
    print(f"{tool}: {counts['accepted']} accepted, {counts['refused']} refused")


@pytest.mark.parametrize("tool", TOOLS)
def test_version_is_on_every_tool(tool: str) -> None:
    words = list(CONDOR_NAMES[tool])
    parser, _ = build_parser(words[0], tool)
    assert asks_version(parser, [*words, "-version"]) and asks_version(parser, [*words, "-vers"])
    assert not asks_version(parser, list(words))

"""The statements that shape a submit description: include, if/elif/else/endif, use, error,
warning, and the JOB_DEFAULT_* knobs.

Most tests read through an in-memory ``Sources`` (files and commands as dicts), so they need no
file system; the differential test compares the same statements with HTCondor's own code.
Errors must name the file and line of the problem: an included file's own name and line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from htcd.config import load
from htcd.submit import SubmitError, parse_submit
from htcd.submit.sources import LocalSources, SourceError
from htcd.submit.templates import TemplateSet

EXE = "executable = /bin/true\ntransfer_executable = false\n"
ENV = {"HOME": "/home/bob"}
CONFIG = {"FILESYSTEM_DOMAIN": "example.org", "ARCH": "X86_64", "OPSYS": "LINUX"}


class MemorySources:
    """Files (by name) and commands (by command line) held in dicts."""

    def __init__(self, files: dict[str, str] | None = None, commands: dict[str, str] | None = None) -> None:
        self.files = files or {}
        self.commands = commands or {}
        self.ran: list[str] = []

    def name(self, path: str) -> str:
        return path if path.startswith("/") else "/sub/" + path

    def exists(self, path: str) -> bool:
        return path in self.files

    def read(self, path: str) -> str:
        if path not in self.files:
            raise SourceError("cannot read the file: No such file or directory")
        return self.files[path]

    def run(self, command: str) -> str:
        self.ran.append(command)
        if command not in self.commands:
            raise SourceError("the command failed: exit status 1")
        return self.commands[command]


def ads(text: str, *, files: dict[str, str] | None = None, commands: dict[str, str] | None = None,
        templates: dict[str, str] | None = None, config: dict[str, str] | None = None,
        **kw: object) -> list[dict[str, str]]:
    desc = parse_submit(text, "job.sub", sources=MemorySources(files, commands),
                        templates=TemplateSet(templates), env=ENV, **kw)  # type: ignore[arg-type]
    cfg = {**CONFIG, **(config or {})}
    cluster, procs = desc.make_jobs(5, submit_dir="/sub", owner="bob", qdate=1, env=ENV, config_get=cfg.get)
    return [{**cluster, **p} for p in procs]


def error(text: str, **kw: object) -> SubmitError:
    with pytest.raises(SubmitError) as info:
        ads(text, **kw)  # type: ignore[arg-type]
    return info.value


# ----- include ---------------------------------------------------------------------------------

def test_include_reads_the_file_where_it_stands() -> None:
    files = {"common.sub": "arguments = from include\nrequest_memory = 2G\n"}
    (ad,) = ads(EXE + "include : common.sub\nrequest_memory = 3G\nqueue\n", files=files)
    assert ad["Args"] == '"from include"'
    assert ad["RequestMemory"] == "3072", "a later line of the including file wins"
    (ad,) = ads(EXE + "request_memory = 3G\ninclude : common.sub\nqueue\n", files=files)
    assert ad["RequestMemory"] == "2048", "and the included line wins over an earlier one"


def test_include_nests_and_names_are_macros() -> None:
    files = {"a.sub": "include : b.sub\nouter = o\n", "b.sub": "inner = i\n"}
    (ad,) = ads(EXE + "part = a\nINCLUDE:$(part).sub\narguments = $(inner)$(outer)\nqueue\n", files=files)
    assert ad["Args"] == '"io"'


def test_include_command_output_both_spellings() -> None:
    commands = {"./gen.sh": "arguments = generated\n", "echo +Tag = 1": "+Tag = 1\n"}
    (ad,) = ads(EXE + "include : ./gen.sh |\ninclude command : echo +Tag = 1\nqueue\n", commands=commands)
    assert ad["Args"] == '"generated"' and ad["Tag"] == "1"


def test_include_ifexist_skips_a_missing_file() -> None:
    (ad,) = ads(EXE + "include ifexist : gone.sub\narguments = still\nqueue\n")
    assert ad["Args"] == '"still"'


def test_include_inside_a_false_branch_is_not_read() -> None:
    sources = MemorySources(commands={"./never.sh": "arguments = ran\n"})
    desc = parse_submit(EXE + "if false\n  include : ./never.sh |\nendif\nqueue\n", "job.sub", sources=sources)
    assert sources.ran == [] and not any(getattr(s, "key", "") == "arguments" for s in desc.statements)


@pytest.mark.parametrize(("text", "files", "where", "reason"), [
    ("include : missing.sub\n", {}, "job.sub:3", "include 'missing.sub': cannot read the file"),
    ("include : ./fail.sh |\n", {}, "job.sub:3", "include command './fail.sh': the command failed"),
    ("include : a.sub\n", {"a.sub": "include : b.sub\n", "b.sub": "x = 1\ninclude : a.sub\n"},
     "/sub/b.sub:2", "include each other: /sub/a.sub -> /sub/b.sub -> /sub/a.sub"),
    ("include : job.sub\n", {"job.sub": "x = 1\n"}, "job.sub:3", "include each other: /sub/job.sub -> /sub/job.sub"),
    ("include : bad.sub\n", {"bad.sub": "# a comment\narguments = x\nrequest_memory = 4 XB\n"},
     "/sub/bad.sub:3", "bad unit"),
    ("include : bad.sub\n", {"bad.sub": "arguments = x\nthis is not a statement\n"}, "/sub/bad.sub:2",
     "cannot parse line"),
    ("include : q.sub\n", {"q.sub": "queue 2\n"}, "/sub/q.sub:1", "a queue statement cannot come from an included"),
    ("include\n", {}, "job.sub:3", "include needs ':'"),
    ("include sometimes : x.sub\n", {}, "job.sub:3", "unknown include option 'sometimes'"),
    ("include : \n", {}, "job.sub:3", "include without a file name"),
])
def test_include_errors_name_file_and_line(text: str, files: dict[str, str], where: str, reason: str) -> None:
    err = error(EXE + text + "queue\n", files=files)
    assert str(err).startswith(where + ": "), str(err)
    assert reason in str(err)


def test_a_self_including_command_stops_at_the_depth_limit() -> None:
    err = error(EXE + "include : again |\nqueue\n", commands={"again": "include : again |\n"})
    assert err.source == "<output of 'again'>" and err.line == 1
    assert "nested deeper than 20" in err.message


def test_an_error_at_build_time_names_the_included_line() -> None:
    files = {"exe.sub": "\n\nexecutable = /no/such/program\n"}
    err = error("include : exe.sub\nqueue\n", files=files)
    assert (err.source, err.line) == ("/sub/exe.sub", 3) and "does not exist" in err.message


def test_a_typo_in_an_included_file_names_it() -> None:
    err = error(EXE + "use STRICT : TRUE\ninclude : t.sub\nqueue\n", files={"t.sub": "reqest_memory = 1G\n"})
    assert (err.source, err.line) == ("/sub/t.sub", 1) and "did you mean 'request_memory'" in err.message


def test_local_sources_resolve_against_the_submit_directory(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x.sub").write_text("arguments = here\n")
    src = LocalSources(str(tmp_path))
    assert src.name("d/x.sub") == str(tmp_path / "d" / "x.sub") and src.exists("d/x.sub")
    assert src.read("d/x.sub") == "arguments = here\n"
    assert src.run("pwd").strip() == str(tmp_path)
    with pytest.raises(SourceError, match="No such file"):
        src.read("nope.sub")
    with pytest.raises(SourceError, match="the command failed: boom"):
        src.run("echo boom >&2; exit 2")
    (ad,) = [{**c, **p} for c, ps in [parse_submit(EXE + "include : d/x.sub\n", "job.sub", submit_dir=str(tmp_path))
                                       .make_jobs(1, submit_dir=str(tmp_path), owner="b", qdate=1)] for p in ps]
    assert ad["Args"] == '"here"'


# ----- if / elif / else / endif -------------------------------------------------------------------

@pytest.mark.parametrize(("setup", "condition", "taken"), [
    ("X = 3\n", "defined X", True),
    ("", "defined X", False),
    ("X =\n", "defined X", False),  # an empty value is not defined, as in condor_submit
    ("", "! defined X", True),
    ("X = yes\n", "$(X)", True),
    ("X = 0\n", "$(X)", False),
    ("X = 2.5\n", "$(X)", True),
    ("", "$(UNSET)", False),  # expands to nothing: false
    ("", "! $(UNSET)", True),
    ("A = B\nB = true\n", "$($(A))", True),
    ("", "version >= 24.0", True),
    ("", "version < 9.0", False),
    ("", "true", True),
    ("", "no", False),
    ("", "defined HOME", False),  # the environment is not a submit variable
])
def test_conditions(setup: str, condition: str, taken: bool) -> None:
    (ad,) = ads(EXE + setup + f"if {condition}\n  arguments = taken\nelse\n  arguments = not\nendif\nqueue\n")
    assert ad["Args"] == ('"taken"' if taken else '"not"')


def test_elif_chain_takes_the_first_true_branch_only() -> None:
    text = EXE + "m = 2\nif $(m) == 1\nendif\n"
    assert "complex conditionals are not supported" in str(error(text))
    chain = EXE + "a = 0\nb = 1\nc = 1\nif $(a)\n arguments = a\nelif $(b)\n arguments = b\nelif $(c)\n" \
                  " arguments = c\nelse\n arguments = none\nendif\nqueue\n"
    assert ads(chain)[0]["Args"] == '"b"'


def test_nested_conditionals_and_queue_inside_a_branch() -> None:
    text = EXE + "n = 1\nif defined n\n  if defined m\n    queue 5\n  else\n    arguments = $(Process)\n" \
                 "    queue 2\n  endif\nelse\n  queue 9\nendif\n"
    assert [ad["Args"] for ad in ads(text)] == ['"0"', '"1"']


def test_a_condition_sees_only_lines_above_it() -> None:
    text = EXE + "if defined late\n  arguments = early\nendif\nlate = 1\nqueue\n"
    assert "Args" not in ads(text)[0]


def test_a_condition_does_not_evaluate_in_a_skipped_branch() -> None:
    text = EXE + "if false\n  if $(x) > 1\n  endif\nelif bogus words here\nendif\nqueue\n"
    assert "complex conditionals" in str(error(text)), "the elif of a false if is evaluated"
    (ad,) = ads(EXE + "if true\nelif bogus words here\nendif\nqueue\n")
    assert ad["JobStatus"] == "1", "the elif after a taken branch is not evaluated"


@pytest.mark.parametrize(("text", "line", "reason"), [
    ("if true\narguments = a\n", 3, "if on line 3 has no endif before the end of the file"),
    ("if true\nelse\nelse\nendif\n", 5, "else after else"),
    ("if true\nelse\nelif true\nendif\n", 5, "elif after else"),
    ("endif\n", 3, "endif without matching if"),
    ("else\n", 3, "else without matching if"),
    ("if\nendif\n", 3, "if without a condition"),
    ("x = maybe\nif $(x)\nendif\n", 4, "$(x) is not a valid if condition"),
    ("if version 9\nendif\n", 3, "version test needs an operator"),
    ("if $(broken\nendif\n", 3, "unclosed macro reference"),
])
def test_conditional_errors_name_the_line(text: str, line: int, reason: str) -> None:
    err = error(EXE + text + "queue\n")
    assert (err.source, err.line) == ("job.sub", line), str(err)
    assert reason in err.message


def test_an_unclosed_if_in_an_included_file_names_that_file() -> None:
    err = error(EXE + "include : i.sub\nendif\nqueue\n", files={"i.sub": "x = 1\nif true\n"})
    assert (err.source, err.line) == ("/sub/i.sub", 2) and "no endif" in err.message


def test_a_variable_named_like_a_keyword_is_still_a_variable() -> None:
    (ad,) = ads(EXE + "if = 1\ninclude = 2\nuse = 3\nerror = err.txt\narguments = $(if)$(include)$(use)\nqueue\n")
    assert ad["Args"] == '"123"' and ad["Err"] == '"err.txt"'


# ----- error / warning -------------------------------------------------------------------------------

def test_error_statement_refuses_and_warning_is_reported() -> None:
    err = error(EXE + "what = nothing\nerror : cannot submit $(what)\nqueue\n")
    assert (err.source, err.line, err.message) == ("job.sub", 4, "cannot submit nothing")
    desc = parse_submit(EXE + "warning : mind $ENV(HOME)\nqueue\n", "job.sub", env=ENV)
    assert desc.warnings == ["job.sub:3: mind /home/bob"]


# ----- use templates ---------------------------------------------------------------------------------

TPL = {
    "Big": "request_memory = $(1:2G)\nrequest_cpus = $(2:4)\n+Big = true\n",
    "Args": "if ! $(1?)\n  error : Args needs an argument\nendif\narguments = $(0)|$(1)|$(2+)|$(0#)|$(3?)\n",
    "Queueing": "queue 2\n",
    "Broken": "request_memory = 4 XB\n",
    "Open": "if true\n",
}


def test_use_template_with_and_without_arguments() -> None:
    (ad,) = ads(EXE + "use template : Big\nqueue\n", templates=TPL)
    assert (ad["RequestMemory"], ad["RequestCpus"], ad["Big"]) == ("2048", "4", "true")
    (ad,) = ads(EXE + "USE Template : big(1G, 8), Args(a, b c, d)\nrequest_cpus = 2\nqueue\n", templates=TPL)
    assert (ad["RequestMemory"], ad["RequestCpus"]) == ("1024", "2")
    assert ad["Args"] == '"a, b c, d|a|b c, d|3|1"'


@pytest.mark.parametrize(("text", "reason"), [
    ("use template : Nope", "use template : Nope: unknown TEMPLATE template Nope; known: Args, Big, Broken"),
    ("use colour : Big", "use colour : Big: unknown category colour; known: STRICT, TEMPLATE"),
    ("use template : Args", "use template : Args: Args needs an argument"),
    ("use template : Queueing", "use template : Queueing: a queue statement cannot come from"),
    ("use template : Broken", "RequestMemory: bad unit"),
    ("use template : Open", "use template : Open: if on line 3 has no endif before the end of the template"),
    ("use template : Big(1G", "use template : Big(1G: missing ')'"),
    ("use Big", "use needs 'CATEGORY : Name'"),
])
def test_template_errors_name_the_use_line(text: str, reason: str) -> None:
    err = error(EXE + text + "\nqueue\n", templates=TPL)
    assert (err.source, err.line) == ("job.sub", 3), str(err)
    assert reason in err.message


def test_no_configured_template_says_so() -> None:
    err = error(EXE + "use template : Any\nqueue\n")
    assert "known: none (SUBMIT_TEMPLATE_NAMES lists none)" in err.message


def test_templates_from_the_configuration(tmp_path: Path) -> None:
    cfg_file = tmp_path / "config"
    cfg_file.write_text("FOO = fromconfig\nSUBMIT_TEMPLATE_NAMES = Site, Unset\n"
                        "SUBMIT_TEMPLATE_Site @=end\n  arguments = $(FOO) $(Process) $(mine) $(1)\n"
                        "  +Where = \"$(FOO:x)\"\n@end\nSUBMIT_TEMPLATE_Hidden = +Hidden = 1\n")
    templates = TemplateSet.from_config(load("SUBMIT", env={"HTCD_CONFIG": str(cfg_file)}))
    assert templates.names("template") == ["Site"], "only names SUBMIT_TEMPLATE_NAMES lists, and defined"
    desc = parse_submit(EXE + "mine = m\nuse template : site(arg)\nqueue 2\n", "job.sub", templates=templates)
    _, procs = desc.make_jobs(1, submit_dir=str(tmp_path), owner="b", qdate=1, config_get=CONFIG.get)
    assert [p.get("Args") for p in procs] == ['"fromconfig 0 m arg"', '"fromconfig 1 m arg"']
    err = error(EXE + "use template : Hidden\nqueue\n")
    assert "unknown TEMPLATE template Hidden" in err.message


def test_strict_templates_make_empty_matches_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.dat").write_text("x")

    def build(text: str) -> tuple[list[dict[str, str]], list[str]]:
        desc = parse_submit(EXE + text, "job.sub", submit_dir=str(tmp_path))
        _, procs = desc.make_jobs(1, submit_dir=str(tmp_path), owner="b", qdate=1, config_get=CONFIG.get)
        return procs, desc.warnings

    procs, warnings = build("queue f matching (none*)\n")
    assert procs == [] and warnings == []
    _, warnings = build("use STRICT : TRUE\nqueue f matching files (*.dat a.dat)\n")
    assert warnings == ["job.sub:4: 'a.dat' matching pattern 'a.dat' is a duplicate of item 0, skipping"]
    with pytest.raises(SubmitError, match=r"job.sub:4: no matches for pattern\(s\): 'none\*'"):
        build("use strict : harsh\nqueue f matching (none*)\n")
    _, warnings = build("use STRICT : FALSE\nSubmitWarnEmptyMatches = true\nqueue f matching (none*)\n")
    assert warnings == ["job.sub:5: no matches for pattern(s): 'none*'"]


# ----- JOB_DEFAULT_* ---------------------------------------------------------------------------------

def test_job_defaults_fill_what_the_file_leaves_unset() -> None:
    knobs = {"JOB_DEFAULT_REQUESTMEMORY": "1G", "JOB_DEFAULT_REQUESTDISK": "2048",
             "JOB_DEFAULT_REQUESTCPUS": "2", "JOB_DEFAULT_NOTIFICATION": "Error",
             "JOB_DEFAULT_LEASE_DURATION": "2 * 60"}
    (ad,) = ads(EXE + "queue\n", config=knobs)
    assert (ad["RequestMemory"], ad["RequestDisk"], ad["RequestCpus"]) == ("1024", "2048", "2")
    assert (ad["JobNotification"], ad["JobLeaseDuration"]) == ("3", "2 * 60")
    assert "(TARGET.Cpus >= RequestCpus)" in ad["Requirements"]
    (ad,) = ads(EXE + "request_memory = 3\nrequest_disk = 4\nrequest_cpus = 1\nnotification = never\n"
                "job_lease_duration = 5\nqueue\n", config=knobs)
    assert (ad["RequestMemory"], ad["RequestDisk"], ad["RequestCpus"]) == ("3", "4", "1")
    assert (ad["JobNotification"], ad["JobLeaseDuration"]) == ("0", "5")
    assert "Cpus" not in ad["Requirements"]


def test_without_job_defaults_condor_submits_own_defaults_apply() -> None:
    (ad,) = ads(EXE + "queue\n")
    assert ad["RequestMemory"].startswith("ifthenelse(MemoryUsage isnt undefined")
    assert (ad["RequestDisk"], ad["RequestCpus"], ad["JobNotification"], ad["JobLeaseDuration"]) == \
        ("DiskUsage", "1", "0", "2400")


def test_scheduler_and_local_jobs_get_no_lease() -> None:
    for universe in ("scheduler", "local"):
        (ad,) = ads(f"universe = {universe}\n" + EXE + "queue\n", config={"JOB_DEFAULT_LEASE_DURATION": "60"})
        assert "JobLeaseDuration" not in ad


@pytest.mark.parametrize(("knob", "value", "reason"), [
    ("JOB_DEFAULT_NOTIFICATION", "sometimes",
     "notification (from JOB_DEFAULT_NOTIFICATION in the configuration) must be one of"),
    ("JOB_DEFAULT_REQUESTMEMORY", "4 XB", "RequestMemory (from JOB_DEFAULT_REQUESTMEMORY in the configuration)"),
    ("JOB_DEFAULT_REQUESTCPUS", "1 +", "RequestCpus (from JOB_DEFAULT_REQUESTCPUS in the configuration)"),
    ("JOB_DEFAULT_LEASE_DURATION", "(", "JobLeaseDuration (from JOB_DEFAULT_LEASE_DURATION"),
])
def test_a_bad_job_default_names_the_knob(knob: str, value: str, reason: str) -> None:
    err = error(EXE + "queue\n", config={knob: value})
    assert reason in err.message and err.source == "job.sub"


@pytest.mark.parametrize(("requests", "clauses"), [
    ("request_cpus = 1\n", {"Disk", "Memory"}),
    ("request_cpus = 0\nrequest_memory = 1\n", {"Disk"}),
    ("request_memory = 0\nrequest_disk = 0\n", set()),
    ("request_disk = 1\nrequest_memory = 2\nrequest_cpus = 2\n", {"Disk", "Memory", "Cpus"}),
    ("request_memory = 0 + 0\nrequest_cpus = 1 + 0\n", {"Disk", "Memory", "Cpus"}),
])
def test_requests_too_small_to_matter_add_no_clause(requests: str, clauses: set[str]) -> None:
    (ad,) = ads(EXE + requests + "queue\n")
    assert {c for c in ("Disk", "Memory", "Cpus") if f"(TARGET.{c} >= Request{c})" in ad["Requirements"]} == clauses


# ----- -append / -queue keep their names ------------------------------------------------------------

def test_append_and_queue_errors_still_name_themselves() -> None:
    err = error(EXE + "queue\n", append=["x = 1", "request_disk = 3Q"])
    assert (err.source, err.line) == ("-append", 2)
    err = error(EXE + "queue\n", queue="x in (a")
    assert (err.source, err.line) == ("-queue", None)
    err = error(EXE + "queue\n", append=["include : a.sub"], files={"a.sub": "request_disk = 3Q\n"})
    assert (err.source, err.line) == ("/sub/a.sub", 1)

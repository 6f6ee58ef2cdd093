"""Tests for the submit language library."""

from __future__ import annotations

from pathlib import Path

import pytest

from htcd.errors import UserError
from htcd.submit import SubmitError, parse_submit

ENV = {"HOME": "/home/bob", "PATH": "/usr/bin"}


def jobs(text: str, tmp_path: Path, cluster: int = 7) -> list[dict[str, str]]:
    """Merged per-proc ads (cluster ad + proc ad)."""
    cluster_ad, procs = parse_submit(text, "job.sub").make_jobs(
        cluster, submit_dir=str(tmp_path), owner="bob", qdate=1000, env=ENV,
        config_get=lambda k: {"FILESYSTEM_DOMAIN": "example.org", "ARCH": "X86_64", "OPSYS": "LINUX"}.get(k))
    return [{**cluster_ad, **p} for p in procs]


@pytest.fixture
def exe(tmp_path: Path) -> Path:
    p = tmp_path / "run.sh"
    p.write_text("#!/bin/sh\necho hi\n" * 100)
    return p


def test_simple_vanilla_job(tmp_path: Path, exe: Path) -> None:
    (ad,) = jobs("executable = run.sh\narguments = hello world\nqueue\n", tmp_path)
    assert ad["Cmd"] == f'"{exe}"'
    assert ad["Args"] == '"hello world"'
    assert ad["JobUniverse"] == "5"
    assert ad["JobStatus"] == "1"
    assert ad["ClusterId"] == "7" and ad["ProcId"] == "0"
    assert ad["Owner"] == '"bob"' and ad["QDate"] == "1000"
    assert ad["MyType"] == '"Job"' and ad["TargetType"] == '"Machine"'
    assert ad["In"] == ad["Out"] == ad["Err"] == '"/dev/null"'
    assert ad["Iwd"] == f'"{tmp_path}"'
    assert ad["RequestCpus"] == "1"
    assert ad["RequestDisk"] == "DiskUsage"
    assert ad["ImageSize"] == "2"
    assert ad["Requirements"] == (
        '(TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX") && (TARGET.Disk >= RequestDisk) && '
        "(TARGET.Memory >= RequestMemory) && ((TARGET.FileSystemDomain == MY.FileSystemDomain) || "
        "(TARGET.HasFileTransfer))")
    assert ad["FileSystemDomain"] == '"example.org"'


def test_cluster_and_proc_split(tmp_path: Path, exe: Path) -> None:
    cluster_ad, procs = parse_submit("executable = run.sh\noutput = out.$(Process)\nqueue 3\n").make_jobs(
        3, submit_dir=str(tmp_path), owner="bob", qdate=1, env={})
    assert [p["ProcId"] for p in procs] == ["0", "1", "2"]
    assert procs[2] == {"ProcId": "2", "Out": '"out.2"'}
    assert "Out" not in cluster_ad and "ProcId" not in cluster_ad
    assert cluster_ad["ClusterId"] == "3"


def test_queue_in_list_with_count(tmp_path: Path, exe: Path) -> None:
    ads = jobs("executable = run.sh\narguments = $(Item) $(ItemIndex) $(Step) $(Row)\nqueue 2 in (x, y)\n",
               tmp_path)
    assert [a["Args"] for a in ads] == ['"x 0 0 0"', '"x 0 1 0"', '"y 1 0 1"', '"y 1 1 1"']


def test_queue_named_var_in_multiline(tmp_path: Path, exe: Path) -> None:
    ads = jobs("executable = run.sh\narguments = $(color)\nqueue color in (\n red\n green blue\n)\n", tmp_path)
    assert [a["Args"] for a in ads] == ['"red"', '"green"', '"blue"']


def test_queue_matching(tmp_path: Path, exe: Path) -> None:
    for n in ("b.dat", "a.dat", "c.txt"):
        (tmp_path / n).write_text("")
    (tmp_path / "d.dat").mkdir()
    ads = jobs("executable = run.sh\narguments = $(Item)\nqueue matching *.dat\n", tmp_path)
    assert [a["Args"] for a in ads] == ['"a.dat"', '"b.dat"', '"d.dat/"']
    ads = jobs("executable = run.sh\narguments = $(f)\nqueue f matching files (*.dat)\n", tmp_path)
    assert [a["Args"] for a in ads] == ['"a.dat"', '"b.dat"']


def test_queue_from_file_and_inline(tmp_path: Path, exe: Path) -> None:
    # As in HTCondor, '#' starts no comment in an item file; blank lines are skipped.
    (tmp_path / "rows.txt").write_text("x1, 1\n# comment\n\nx2 2\n")
    ads = jobs("executable = run.sh\narguments = $(a)-$(b)\nqueue a,b from rows.txt\n", tmp_path)
    assert [a["Args"] for a in ads] == ['"x1-1"', '"#-comment"', '"x2-2"']
    ads = jobs("executable = run.sh\narguments = $(a)|$(b)\nqueue a b from (\n 1 2\n 3, 4 5\n)\n", tmp_path)
    assert [a["Args"] for a in ads] == ['"1|2"', '"3|4 5"']


def test_queue_from_missing_file(tmp_path: Path, exe: Path) -> None:
    with pytest.raises(SubmitError) as err:
        jobs("executable = run.sh\nqueue a from nothere.txt\n", tmp_path)
    assert err.value.line == 2


def test_multiple_queue_statements(tmp_path: Path, exe: Path) -> None:
    ads = jobs("executable = run.sh\narguments = one\nqueue\narguments = two\nqueue 2\n", tmp_path)
    assert [(a["ProcId"], a["Args"]) for a in ads] == [("0", '"one"'), ("1", '"two"'), ("2", '"two"')]


def test_queue_slice(tmp_path: Path, exe: Path) -> None:
    ads = jobs("executable = run.sh\narguments = $(Item)\nqueue in [1:3] (a, b, c, d)\n", tmp_path)
    assert [a["Args"] for a in ads] == ['"b"', '"c"']


def test_macros(tmp_path: Path, exe: Path) -> None:
    text = ("executable = run.sh\nn = 3\nbase = x$(n)\n"
            "arguments = $(base) $(undef:dflt) $(undef) $ENV(HOME) $INT(n,%03d) $REAL(n) $(DOLLAR)(x) "
            "$(Cluster).$(ClusterId).$(Process).$(ProcId) $$(Memory)\nqueue\n")
    (ad,) = jobs(text, tmp_path)
    assert ad["Args"] == '"x3 dflt /home/bob 003 3 $(x) 7.7.0.0 $$(Memory)"'


def test_macro_recursion_is_an_error(tmp_path: Path, exe: Path) -> None:
    with pytest.raises(SubmitError) as err:
        jobs("executable = run.sh\na = $(b)x\nb = $(a)y\narguments = $(a)\nqueue\n", tmp_path)
    assert err.value.line == 4


def test_a_value_naming_its_own_variable_reads_the_value_before(tmp_path: Path, exe: Path) -> None:
    # condor_submit's manual: `foo = snap $(foo)` uses foo's previous value (none: empty)
    text = ("executable = run.sh\nfoo = $(Process)\nfoo = snap $(foo)\nbar = $(bar:none) x\n"
            "path = a/b.c\npath = $Fn(path)\narguments = $(foo) $(bar) $(path)\nqueue 2\n")
    assert [p["Args"] for p in jobs(text, tmp_path)] == ['"snap 0 none x b"', '"snap 1 none x b"']


@pytest.mark.parametrize("value,expected", [("100", "100"), ("2G", "2048"), ("2 GB", "2048"),
                                            ("1.5G", "1536"), ("1024K", "1"), ("1T", "1048576"),
                                            ("512m", "512")])
def test_memory_units(tmp_path: Path, exe: Path, value: str, expected: str) -> None:
    (ad,) = jobs(f"executable = run.sh\nrequest_memory = {value}\nqueue\n", tmp_path)
    assert ad["RequestMemory"] == expected


@pytest.mark.parametrize("value,expected", [("100", "100"), ("1G", "1048576"), ("10M", "10240"), ("4K", "4")])
def test_disk_units(tmp_path: Path, exe: Path, value: str, expected: str) -> None:
    (ad,) = jobs(f"executable = run.sh\nrequest_disk = {value}\nqueue\n", tmp_path)
    assert ad["RequestDisk"] == expected


def test_bad_unit(tmp_path: Path, exe: Path) -> None:
    with pytest.raises(SubmitError) as err:
        jobs("executable = run.sh\n\nrequest_memory = 2Q\nqueue\n", tmp_path)
    assert err.value.line == 3 and "unit" in str(err.value)


def test_an_unused_line_warns_with_a_suggestion(tmp_path: Path) -> None:
    desc = parse_submit("executable = /bin/true\nreqest_memory = 1G\nqueue\n", "x.sub")
    assert desc.warnings == ["x.sub:2: the line 'reqest_memory = 1G' was unused by htcd submit. Is it a typo? "
                             "(did you mean 'request_memory'?)"]


@pytest.mark.parametrize("text,strict", [("reqest_memory = 1G\n", True),
                                         ("use STRICT : TRUE\nreqest_memory = 1G\n", False)])
def test_an_unused_line_is_an_error_when_strict(text: str, strict: bool) -> None:
    with pytest.raises(SubmitError) as err:
        parse_submit("executable = /bin/true\n" + text + "queue\n", "x.sub", strict=strict)
    assert str(err.value).startswith(f"x.sub:{text.count(chr(10)) + 1}: the line 'reqest_memory = 1G' was unused")
    assert "did you mean 'request_memory'" in str(err.value)
    assert isinstance(err.value, UserError)


@pytest.mark.parametrize("text", [
    "x = 1\nif defined x\nendif\n", "part = nothere\ninclude ifexist : $(part).sub\n", "v = 1\narguments = $(v)\n",
    "+Custom = 1\n", "DAG_STATUS = 0\n", "LeaveJobInQueue = true\n", "transfer_input = false\n",
])
def test_used_and_known_lines_do_not_warn(text: str) -> None:
    desc = parse_submit("executable = /bin/true\n" + text + "queue\n", "x.sub")
    assert desc.warnings == []


def test_user_variable_is_not_unknown_command(tmp_path: Path, exe: Path) -> None:
    (ad,) = jobs("executable = run.sh\nrequest_mem = 5\narguments = $(request_mem)\nqueue\n", tmp_path)
    assert ad["Args"] == '"5"'


@pytest.mark.parametrize("text,line", [
    ("executable = /bin/true\nthis is not valid\nqueue\n", 2),
    ("executable = /bin/true\nqueue lots\n", 2),
    ("executable = /bin/true\nqueue x in (a, b\n", 2),
    ("executable = /bin/true\nqueue x from\n", 2),
])
def test_syntax_errors(text: str, line: int) -> None:
    with pytest.raises(SubmitError) as err:
        parse_submit(text)
    assert err.value.line == line


def test_missing_executable(tmp_path: Path) -> None:
    with pytest.raises(SubmitError, match="executable"):
        jobs("arguments = x\nqueue\n", tmp_path)
    with pytest.raises(SubmitError) as err:
        jobs("\nexecutable = nothere\nqueue\n", tmp_path)
    assert err.value.line == 2


def test_bad_expression_names_line(tmp_path: Path, exe: Path) -> None:
    with pytest.raises(SubmitError) as err:
        jobs("executable = run.sh\nrequirements = (Memory > 5\nqueue\n", tmp_path)
    assert err.value.line == 2
    with pytest.raises(SubmitError) as err:
        jobs("executable = run.sh\n+Foo = 1 +\nqueue\n", tmp_path)
    assert err.value.line == 2


def test_all_or_nothing(tmp_path: Path, exe: Path) -> None:
    # Only the third item produces a bad unit; no jobs may come back.
    desc = parse_submit("executable = run.sh\nrequest_memory = $(Item)\nqueue in (1G, 2G, 3X)\n")
    with pytest.raises(SubmitError) as err:
        desc.make_jobs(1, submit_dir=str(tmp_path), owner="bob", qdate=0, env={})
    assert err.value.line == 2


def test_arguments_new_syntax(tmp_path: Path, exe: Path) -> None:
    (ad,) = jobs("executable = run.sh\narguments = \"a 'b c' 'it''s' x\"\"y ''\"\nqueue\n", tmp_path)
    assert ad["Arguments"] == '"a b\' \'c it\'\'\'\'s x\\"y \'\'"'
    assert "Args" not in ad


def test_environment_syntaxes(tmp_path: Path, exe: Path) -> None:
    (ad,) = jobs("executable = run.sh\nenvironment = \"Z=1 A='p q'\"\nqueue\n", tmp_path)
    assert ad["Environment"] == '"A=p\' \'q Z=1"'
    (ad,) = jobs("executable = run.sh\nenvironment = FOO=bar;X=1\nqueue\n", tmp_path)
    assert ad["Environment"] == '"FOO=bar X=1"'
    (ad,) = jobs("executable = run.sh\ngetenv = true\nenvironment = \"HOME=/x\"\nqueue\n", tmp_path)
    assert ad["Environment"] == '"HOME=/x PATH=/usr/bin"'


def test_universes(tmp_path: Path, exe: Path) -> None:
    (ad,) = jobs("universe = scheduler\nexecutable = run.sh\nqueue\n", tmp_path)
    assert ad["JobUniverse"] == "7" and "HasFileTransfer" not in ad["Requirements"]
    (ad,) = jobs("universe = local\nexecutable = run.sh\nqueue\n", tmp_path)
    assert ad["JobUniverse"] == "12"
    (ad,) = jobs("universe = docker\ndocker_image = alpine:3\nexecutable = /bin/echo\nqueue\n", tmp_path)
    assert ad["JobUniverse"] == "5" and ad["WantDocker"] == "true" and ad["DockerImage"] == '"alpine:3"'
    assert "TARGET.HasDocker" in ad["Requirements"] and "OpSys" not in ad["Requirements"]
    with pytest.raises(SubmitError):
        jobs("universe = standard\nexecutable = run.sh\nqueue\n", tmp_path)


def test_realistic_submit_file(tmp_path: Path, exe: Path) -> None:
    (tmp_path / "data").mkdir()
    text = """\
# analysis job
universe                = vanilla
executable              = run.sh
arguments               = "--in $(infile) --seed $(Process)"
initialdir              = data
log                     = analysis.log
output                  = out/$(Cluster).$(Process).out
error                   = out/$(Cluster).$(Process).err
request_cpus            = 2
request_memory          = 2 GB
request_disk            = 1G
should_transfer_files   = YES
when_to_transfer_output = ON_EXIT
transfer_input_files    = $(infile), common.tar.gz
transfer_output_files   = results
requirements            = (Machine != "bad.example.org")
rank                    = Memory
priority                = 5
accounting_group        = physics.cms
concurrency_limits      = LIC:2, Foo
notification            = Complete
batch_name              = analysis
periodic_hold           = (JobStatus == 2) && (time() - EnteredCurrentStatus > 3600)
periodic_release        = NumJobStarts < 3
on_exit_hold            = ExitCode != 0
max_retries             = 3
max_idle                = 100
+ProjectName            = "ana"
MY.Weight               = 2 * RequestCpus
queue infile from (
  a.root
  b.root
)
"""
    ads = jobs(text, tmp_path, cluster=42)
    assert len(ads) == 2
    a = ads[1]
    assert a["Arguments"] == '"--in b.root --seed 1"'
    assert a["Iwd"] == f'"{tmp_path / "data"}"'
    assert a["UserLog"] == f'"{tmp_path / "data" / "analysis.log"}"'
    assert a["Out"] == '"out/42.1.out"'
    assert a["RequestCpus"] == "2" and a["RequestMemory"] == "2048" and a["RequestDisk"] == "1048576"
    assert a["TransferInput"] == '"b.root,common.tar.gz"'
    assert a["TransferOutput"] == '"results"'
    assert a["ShouldTransferFiles"] == '"YES"' and a["WhenToTransferOutput"] == '"ON_EXIT"'
    assert a["Requirements"] == (
        '((Machine != "bad.example.org")) && (TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX") && '
        "(TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) && (TARGET.Cpus >= RequestCpus) && "
        "(TARGET.HasFileTransfer)")
    assert a["Rank"] == "Memory" and a["JobPrio"] == "5"
    assert a["AcctGroup"] == '"physics.cms"' and a["AcctGroupUser"] == '"bob"'
    assert a["AccountingGroup"] == '"physics.cms.bob"'
    assert a["ConcurrencyLimits"] == '"foo,lic:2"'
    assert a["JobNotification"] == "2" and a["JobBatchName"] == '"analysis"'
    assert a["PeriodicRelease"] == "NumJobStarts < 3"
    assert a["JobMaxRetries"] == "3" and a["OnExitHold"] == "ExitCode != 0"
    assert a["OnExitRemove"] == "NumJobCompletions > JobMaxRetries || ExitCode is 0"
    assert a["JobMaterializeMaxIdle"] == "100"
    assert a["ProjectName"] == '"ana"' and a["Weight"] == "2 * RequestCpus"
    assert "FileSystemDomain" not in a


@pytest.mark.parametrize("text", ["(a", "a)", '"abc', "a &&", "", "x ="])
def test_fallback_expression_check_rejects(text: str) -> None:
    from htcd.submit.exprcheck import _fallback_check

    with pytest.raises(ValueError):
        _fallback_check(text)


def test_fallback_expression_check_accepts() -> None:
    from htcd.submit.exprcheck import _fallback_check

    _fallback_check('(Machine == "x(") && (Memory > 5) || -1')


def test_only_a_newline_ends_a_line(tmp_path: Path, exe: Path) -> None:
    # HTCondor 24 keeps form feed, vertical tab and \x1c in the value: Args = "a\fb\vc\034d"
    (ad,) = jobs("executable = run.sh\narguments = a\x0cb\x0bc\x1cd\nqueue\n", tmp_path)
    assert ad["Args"] == '"a\\fb\\vc\\034d"'


@pytest.mark.parametrize("value,warns", [("Complete", True), ("Always", True), ("Never", False)])
def test_notification_warns_that_no_mail_is_sent(tmp_path: Path, value: str, warns: bool) -> None:
    desc = parse_submit(f"executable = /bin/true\nnotification = {value}\nnotify_user = a@b.c\nqueue\n", "job.sub")
    desc.make_jobs(1, submit_dir=str(tmp_path), owner="bob", qdate=1000, env=ENV, config_get=lambda k: None)
    said = [w for w in desc.warnings if "htcd sends no email" in w]
    assert bool(said) == warns
    if warns:
        assert said[0].startswith("job.sub:") and f"notification = {value}" in said[0]

"""``htcd submit``: flags, error reporting, and all-or-nothing against a real pool."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pooltools import wait_for

from htcd.classad import parse_old_ads
from htcd.cli.main import main as htcd_main


@pytest.fixture
def subdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "run.sh").write_text("#!/bin/sh\necho hi\n")
    cfg = tmp_path / "config"
    cfg.write_text("FILESYSTEM_DOMAIN = example.org\n")
    monkeypatch.setenv("HTCD_CONFIG", str(cfg))
    monkeypatch.delenv("CONDOR_CONFIG", raising=False)
    return tmp_path


def _ads(path: Path) -> list:
    return parse_old_ads(path.read_text())


def test_dump_one_ad_per_proc(subdir: Path) -> None:
    (subdir / "job.sub").write_text("executable = run.sh\narguments = $(Process)\nqueue 3\n")
    assert htcd_main(["submit", "-dump", str(subdir / "ads"), str(subdir / "job.sub")]) == 0
    text = (subdir / "ads").read_text()
    assert text.count("\n\n") == 3  # a blank line after each ad
    assert [a.get_value("Args") for a in _ads(subdir / "ads")] == ["0", "1", "2"]


def test_append_goes_before_the_queue_statement(subdir: Path) -> None:
    (subdir / "job.sub").write_text("executable = run.sh\nrequest_memory = 1G\nqueue 2\narguments = late\n")
    assert htcd_main(["submit", "-dump", str(subdir / "ads"), "-append", "request_memory = 2G",
                      "-a", "arguments = x$(Process)", str(subdir / "job.sub")]) == 0
    ads = _ads(subdir / "ads")
    assert [a.get_value("RequestMemory") for a in ads] == [2048, 2048]
    assert [a.get_value("Args") for a in ads] == ["x0", "x1"]


def test_queue_flag_replaces_the_queue_statement(subdir: Path) -> None:
    (subdir / "job.sub").write_text("executable = run.sh\narguments = $(color)\nqueue 5\n")
    assert htcd_main(["submit", "-dump", str(subdir / "ads"), "-queue", "color in (red, blue)",
                      str(subdir / "job.sub")]) == 0
    assert [a.get_value("Args") for a in _ads(subdir / "ads")] == ["red", "blue"]


def test_batch_name_flag_wins(subdir: Path) -> None:
    (subdir / "job.sub").write_text("executable = run.sh\nbatch_name = file\nqueue\n")
    assert htcd_main(["submit", "-dump", str(subdir / "ads"), "-batch-name", "flag", str(subdir / "job.sub")]) == 0
    assert _ads(subdir / "ads")[0].get_value("JobBatchName") == "flag"


def test_dry_run_to_stdout(subdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (subdir / "job.sub").write_text("executable = run.sh\nqueue 2\n")
    assert htcd_main(["submit", "-dry-run", "-", str(subdir / "job.sub")]) == 0
    ads = parse_old_ads(capsys.readouterr().out)
    assert [a.get_value("ProcId") for a in ads] == [0, 1]


def test_dry_run_to_file_reports(subdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (subdir / "job.sub").write_text("executable = run.sh\nqueue 4\n")
    assert htcd_main(["submit", "-dry-run", str(subdir / "ads"), str(subdir / "job.sub")]) == 0
    assert "4 job(s) dry-run to cluster 1." in capsys.readouterr().out
    assert len(_ads(subdir / "ads")) == 4


@pytest.mark.parametrize(("text", "args", "where", "reason"), [
    ("executable = run.sh\nreqest_memory = 1G\nqueue\n", ["-strict"], "job.sub:2:", "did you mean 'request_memory'"),
    ("universe = grid\nexecutable = run.sh\nqueue\n", [], "job.sub:1:", "htcd has no grid universe"),
    ("universe = nosuchverse\nexecutable = run.sh\nqueue\n", [], "job.sub:1:",
     "neither HTCondor nor an installed plugin offers it"),
    ("executable = run.sh\nencrypt_execute_directory = true\nqueue\n", [], "job.sub:2:", "cannot encrypt"),
    ("executable = run.sh\nrequest_memory = 4 XB\nqueue\n", [], "job.sub:2:", "bad unit"),
    ("executable = nothere.sh\nqueue\n", [], "job.sub:1:", "does not exist"),
    ("executable = run.sh\nrequirements = Memory > \nqueue\n", [], "job.sub:2:", "invalid ClassAd expression"),
    ("executable = run.sh\nqueue\n", ["-append", "request_disk = 3Q"], "-append:1:", "bad unit"),
    ("executable = run.sh\nqueue\n", ["-queue", "x in (a"], "-queue:", "closing ')'"),
])
def test_errors_name_the_line_without_traceback(subdir: Path, text: str, args: list[str], where: str,
                                                reason: str) -> None:
    (subdir / "job.sub").write_text(text)
    proc = subprocess.run([sys.executable, "-m", "htcd", "submit", "-dump", str(subdir / "ads"), *args, "job.sub"],
                          cwd=subdir, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert where in proc.stderr and reason in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (subdir / "ads").exists()


def test_nothing_reaches_the_queue_when_one_proc_fails(make_pool) -> None:
    pool = make_pool(knobs={"START": "FALSE"})
    (pool.jobs_dir / "run.sh").write_text("#!/bin/sh\ntrue\n")
    (pool.jobs_dir / "bad.sub").write_text("executable = $(exe)\nqueue exe in (run.sh, run.sh, missing.sh)\n")
    bad = pool.htcd("submit", "bad.sub", check=False)
    assert bad.returncode == 1
    assert "bad.sub:1:" in bad.stderr and "missing.sh" in bad.stderr and "Traceback" not in bad.stderr
    assert pool.job_ids() == []
    # The same pool takes a good submission, with the flags that talk to the schedd.
    (pool.jobs_dir / "good.sub").write_text("executable = run.sh\nqueue 2\n")
    good = pool.htcd("submit", "-terse", "-append", "+Tag = 1", "good.sub")
    cluster = good.stdout.split(".")[0]
    assert good.stdout.strip() == f"{cluster}.0 - {cluster}.1"
    assert sorted(pool.job_ids()) == [f"{cluster}.0", f"{cluster}.1"]
    assert pool.job_attr(f"{cluster}.1", "Tag") == "1"
    verbose = pool.htcd("submit", "-verbose", "good.sub").stdout
    assert "2 job(s) submitted to cluster" in verbose and verbose.count("MyType = \"Job\"") == 2


TEMPLATE_CONFIG = """SUBMIT_TEMPLATE_NAMES = Small
SUBMIT_TEMPLATE_Small @=end
  if ! $(1?)
    error : Small needs a tag - Small(tag[, memory])
  endif
  request_memory = $(2:64)
  +Tag = "$(1)"
@end
JOB_DEFAULT_NOTIFICATION = error
"""


def test_include_if_and_template_through_the_cli(subdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (subdir / "config").write_text("FILESYSTEM_DOMAIN = example.org\n" + TEMPLATE_CONFIG)
    (subdir / "parts").mkdir()
    (subdir / "parts" / "common.sub").write_text("executable = run.sh\nmode = fast\n")
    (subdir / "job.sub").write_text("include : parts/common.sub\nif $(mode) == fast\nendif\n")
    assert htcd_main(["submit", "-dump", str(subdir / "ads"), str(subdir / "job.sub")]) == 1
    assert "job.sub:2: $(mode) == fast is not a valid if condition" in capsys.readouterr().err
    (subdir / "job.sub").write_text("include : parts/common.sub\nif defined mode\n  use template : Small(t1)\n"
                                    "else\n  use template : Small(t2, 1G)\nendif\nwarning : from $(mode)\nqueue 2\n")
    assert htcd_main(["submit", "-dry-run", str(subdir / "ads"), str(subdir / "job.sub")]) == 0
    ads = _ads(subdir / "ads")
    assert [a.get_value("Tag") for a in ads] == ["t1", "t1"]
    assert [a.get_value("RequestMemory") for a in ads] == [64, 64]
    assert [a.get_value("JobNotification") for a in ads] == [3, 3]
    out = capsys.readouterr()
    assert "2 job(s) dry-run to cluster 1." in out.out
    assert f"WARNING: {subdir / 'job.sub'}:7: from fast" in out.err


@pytest.mark.parametrize(("files", "where", "reason"), [
    ({"job.sub": "executable = run.sh\ninclude : inc/a.sub\nqueue\n", "inc/a.sub": "\nrequest_disk = 1 ZB\n"},
     "inc/a.sub:2:", "bad unit"),
    ({"job.sub": "executable = run.sh\nif true\nqueue\n"}, "job.sub:2:", "has no endif"),
    ({"job.sub": "executable = run.sh\ninclude : ./gen.sh |\nqueue\n",
      "gen.sh": "#!/bin/sh\necho 'cannot reach the database' >&2\nexit 3\n"},
     "job.sub:2:", "include command './gen.sh': the command failed: cannot reach the database"),
])
def test_statement_errors_name_file_and_line_without_traceback(subdir: Path, files: dict[str, str], where: str,
                                                               reason: str) -> None:
    for rel, text in files.items():
        (subdir / rel).parent.mkdir(exist_ok=True)
        (subdir / rel).write_text(text)
        (subdir / rel).chmod(0o755)
    proc = subprocess.run([sys.executable, "-m", "htcd", "submit", "-dump", str(subdir / "ads"), "job.sub"],
                          cwd=subdir, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert where in proc.stderr and reason in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and not (subdir / "ads").exists()


def test_a_job_using_include_if_and_a_template_runs(make_pool) -> None:
    """Bad submit files leave the queue empty; the good one's job runs to completion with what the
    included file, the taken branch and the configured template said."""
    pool = make_pool(config_text=TEMPLATE_CONFIG)
    jobs = pool.jobs_dir
    (jobs / "run.sh").write_text("#!/bin/sh\necho \"ran with $1\"\n")
    (jobs / "run.sh").chmod(0o755)
    (jobs / "site").mkdir()
    (jobs / "site" / "common.sub").write_text("executable = run.sh\nlog = job.log\noutput = out.$(Process)\n"
                                              "include : site/flavour.sub\n")
    (jobs / "site" / "flavour.sub").write_text("flavour = vanilla\n")
    bad = {
        "missing.sub": ("include : site/nothere.sub\nqueue\n", "missing.sub:1:", "cannot read the file"),
        "unbalanced.sub": ("include : site/common.sub\nif defined flavour\nqueue\n", "unbalanced.sub:2:", "no endif"),
        "else.sub": ("include : site/common.sub\nif true\nelse\nelse\nendif\nqueue\n", "else.sub:4:", "else after else"),
        "notemplate.sub": ("include : site/common.sub\nuse template : Large\nqueue\n", "notemplate.sub:2:",
                           "unknown TEMPLATE template Large; known: Small"),
        "noarg.sub": ("include : site/common.sub\nuse template : Small\nqueue\n", "noarg.sub:2:",
                      "Small needs a tag"),
        "loop.sub": ("include : loop.sub\nqueue\n", "loop.sub:1:", "include each other"),
        "command.sub": ("include : false |\nqueue 3\n", "command.sub:1:", "the command failed"),
    }
    for name, (text, where, reason) in bad.items():
        (jobs / name).write_text(text)
        proc = pool.htcd("submit", name, check=False)
        assert proc.returncode == 1 and where in proc.stderr and reason in proc.stderr, (name, proc.stderr)
        assert "Traceback" not in proc.stderr
    assert pool.job_ids() == [], "a refused submit file submits nothing"

    cluster = pool.submit("include : site/common.sub\nif defined flavour\n  use template : Small(from-$(flavour))\n"
                          "  arguments = $(flavour)\nelse\n  arguments = wrong\nendif\nqueue\n", "good.sub")
    log = jobs / "job.log"
    wait_for(lambda: "005 (" in (log.read_text() if log.exists() else ""), 60, "the terminated event")
    assert (jobs / "out.0").read_text() == "ran with vanilla\n"
    wait_for(lambda: pool.job_ids() == [], 30, "the job to leave the queue")
    history = (pool.local / "spool" / "history").read_text()
    assert f"ClusterId = {cluster}" in history
    assert 'Tag = "from-vanilla"' in history and "RequestMemory = 64" in history
    assert "JobNotification = 3" in history, "JOB_DEFAULT_NOTIFICATION from the pool's configuration"


def test_name_value_arguments_begin_the_file(subdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """condor_submit's ``<submit-variable>=<value>``: read as if placed at the beginning of the
    file, so the file's own settings win; they may come before or after the file and between
    options."""
    (subdir / "job.sub").write_text("executable = run.sh\narguments = $(input) $(Process)\nrequest_memory = 1G\n"
                                    "queue 2\n")
    assert htcd_main(["submit", "input=foo", "-dump", str(subdir / "ads"), str(subdir / "job.sub"),
                      "request_memory=3G", "request_disk=2G"]) == 0
    ads = _ads(subdir / "ads")
    assert [a.get_value("Args") for a in ads] == ["foo 0", "foo 1"]
    assert [a.get_value("RequestMemory") for a in ads] == [1024, 1024], "the file's own setting wins"
    assert [a.get_value("RequestDisk") for a in ads] == [2097152, 2097152]
    assert htcd_main(["submit", "-dump", str(subdir / "ads"), str(subdir / "job.sub"), "other.sub"]) == 1
    assert "more than one submit file given: " in capsys.readouterr().err
    assert htcd_main(["submit", "-dump", str(subdir / "ads"), "request_cpus=(1", str(subdir / "job.sub")]) == 1
    assert "command line:1" in capsys.readouterr().err


def test_an_unused_line_warns_and_the_job_is_built(subdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (subdir / "job.sub").write_text("executable = run.sh\nreqest_memory = 1G\nqueue\n")
    assert htcd_main(["submit", "-dump", str(subdir / "ads"), str(subdir / "job.sub")]) == 0
    assert capsys.readouterr().err == (f"WARNING: {subdir / 'job.sub'}:2: the line 'reqest_memory = 1G' was unused by "
                                       "htcd submit. Is it a typo? (did you mean 'request_memory'?)\n")
    assert len(_ads(subdir / "ads")) == 1


def test_submit_file_macro_names_the_file_as_given(subdir: Path) -> None:
    (subdir / "job.sub").write_text("executable = run.sh\narguments = $(SUBMIT_FILE) $(JobId)\nqueue\n")
    assert htcd_main(["submit", "-dump", str(subdir / "ads"), str(subdir / "job.sub")]) == 0
    assert _ads(subdir / "ads")[0].get_value("Args") == f"{subdir / 'job.sub'} 1.0"

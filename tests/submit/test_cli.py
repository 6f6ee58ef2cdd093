"""``htcd submit``: flags, error reporting, and all-or-nothing against a real pool."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

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
    ("executable = run.sh\nreqest_memory = 1G\nqueue\n", [], "job.sub:2:", "did you mean 'request_memory'"),
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

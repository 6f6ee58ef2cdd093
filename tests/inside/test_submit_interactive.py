"""``htcd submit -interactive`` without a pool (-dry-run): the placeholder job it builds, with and
without a submit file and with INTERACTIVE_SUBMIT_FILE, what it warns about and what it refuses;
the built-in description against HTCondor 24's own submit code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from htcd.classad import parse_old_ads
from htcd.cli.main import main as htcd_main

ROOT = Path(__file__).resolve().parents[2]
ORACLE_PATH = ROOT / ".venv" / "htcondor24"
ORACLE = ROOT / "tests" / "submit" / "oracle_submit.py"
INTERACTIVE_SUB = ROOT / "tests" / "corpus" / "submit" / "src_condor_examples_interactive.sub"  # HTCondor's


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty configuration, and the working directory (the submit directory) in ``tmp_path``."""
    (tmp_path / "htcd_config").write_text("")
    monkeypatch.setenv("HTCD_CONFIG", str(tmp_path / "htcd_config"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def dry_run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, str]], str]:
    """(exit status, the ads -dry-run printed, standard error)."""
    code = htcd_main(["submit", "-interactive", "-dry-run", "-", *args])
    out, err = capsys.readouterr()
    ads = [{k: str(v) for k, v in ad.items()} for ad in parse_old_ads(out)] if code == 0 else []
    return code, ads, err


def test_without_a_file_the_placeholder_of_htcondors_interactive_sub(here: Path, capsys) -> None:
    code, ads, err = dry_run(capsys)
    assert code == 0 and err == "", err
    (ad,) = ads
    assert ad["InteractiveJob"] == "true" and ad["Cmd"] == '"/bin/sh"' and ad["JobUniverse"] == "5"
    assert ad["JobDescription"] == '"interactive job"' and ad["Environment"] == '"TMOUT=7200"'
    assert "sleep' '180" in ad["Arguments"] and ".condor_ssh_to_job_1" in ad["Arguments"]
    assert (ad["JobPrio"], ad["RequestMemory"], ad["TransferExecutable"]) == ("1000", "512", "false")

    # INTERACTIVE_SUBMIT_FILE names the description instead; it is taken as it is
    (here / "mine.sub").write_text("executable = /bin/sleep\narguments = 60\nrequest_cpus = 1\nqueue\n")
    (here / "htcd_config").write_text(f"INTERACTIVE_SUBMIT_FILE = {here / 'mine.sub'}\n")
    code, ads, err = dry_run(capsys)
    assert code == 0 and err == "" and len(ads) == 1, err
    assert (ads[0]["Cmd"], ads[0]["Args"], ads[0]["InteractiveJob"]) == ('"/bin/sleep"', '"60"', "true")
    (here / "htcd_config").write_text(f"INTERACTIVE_SUBMIT_FILE = {here / 'none.sub'}\n")
    code, _, err = dry_run(capsys)
    assert code == 1 and f"INTERACTIVE_SUBMIT_FILE = {here / 'none.sub'}: cannot read it" in err, err


def test_a_submit_files_program_universe_and_count_are_replaced_with_warnings(here: Path, capsys) -> None:
    (here / "job.sub").write_text('universe = local\nexecutable = /bin/false\narguments = "a b"\n'
                                  'request_memory = 64\nrequirements = TARGET.Memory > 1\n'
                                  'description = my shell\nqueue 3\n')
    code, ads, err = dry_run(capsys, "job.sub")
    assert code == 0, err
    assert err.splitlines() == [
        "WARNING: job.sub:7: queue 3: -interactive submits exactly one job; the count is ignored",
        "WARNING: job.sub:1: universe = local is replaced by vanilla: an interactive job is a vanilla universe job",
        "WARNING: job.sub:2: executable = /bin/false is replaced by the placeholder that keeps the slot for the "
        "shell (-interactive)",
        'WARNING: job.sub:3: arguments = "a b" is replaced by the placeholder that keeps the slot for the '
        "shell (-interactive)"]
    (ad,) = ads
    assert (ad["Cmd"], ad["JobUniverse"], ad["TransferExecutable"], ad["InteractiveJob"]) == \
        ('"/bin/sh"', "5", "false", "true")
    assert ".condor_ssh_to_job_1" in ad["Arguments"]
    assert ad["RequestMemory"] == "64" and ad["Requirements"].startswith("(TARGET.Memory > 1)")
    assert ad["JobDescription"] == '"my shell"'  # "interactive job" only where the file names none

    # -queue is a queue statement too
    code, ads, err = dry_run(capsys, "-queue", "2", "job.sub")
    assert code == 0 and len(ads) == 1 and "-queue: queue 2: -interactive submits exactly one job" in err, err


@pytest.mark.parametrize(("text", "where", "why"), [
    ("queue\nqueue\n", "job.sub:2", "-interactive submits exactly one job, and this is a second queue statement "
                                    "(the first is at job.sub:1)"),
    ("queue x in (a, b)\n", "job.sub:1", "a queue statement with items (in ...) makes one per item"),
    ("queue from items.txt\n", "job.sub:1", "a queue statement with items (from ...) makes one per item"),
    ("max_materialize = 2\nqueue\n", "job.sub:1", "max_materialize = 2: interactive jobs cannot be materialized late"),
    ("universe = docker\ndocker_image = debian\nqueue\n", "job.sub:1",
     "universe = docker: an interactive job is a vanilla universe job and htcd's shell runs on the execute point, "
     "not in a container"),
    ("container_image = x.sif\nqueue\n", "job.sub:1", "container_image = x.sif: an interactive job is a vanilla "
                                                      "universe job"),
])
def test_what_one_vanilla_placeholder_cannot_be_is_refused(here: Path, capsys, text: str, where: str,
                                                           why: str) -> None:
    (here / "job.sub").write_text(text)
    (here / "items.txt").write_text("a\nb\n")
    code, _, err = dry_run(capsys, "job.sub")
    assert code == 1 and "Traceback" not in err
    assert f"{where}: " in err and why in err, err


@pytest.mark.skipif(not ORACLE_PATH.is_dir(), reason="the htcondor 24 wheel (make .venv/.dev) is not installed")
def test_the_built_in_description_is_htcondors_interactive_sub(here: Path, capsys) -> None:
    """HTCondor's interactive.sub, with the MY.InteractiveJob=True condor_submit -interactive adds, as
    HTCondor 24's submit code builds it, against htcd's job without a file."""
    text = INTERACTIVE_SUB.read_text()
    assert text.count("\nqueue") == 1
    (here / "interactive.sub").write_text(text.replace("\nqueue", "\nMY.InteractiveJob = True\nqueue"))
    case = {"path": str(here / "interactive.sub"), "config": str(here / "htcd_config"),
            "env": {"PATH": os.environ.get("PATH", "")}, "cluster": 1, "qdate": int(time.time())}
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ORACLE_PATH)}
    proc = subprocess.run([sys.executable, str(ORACLE)], input=json.dumps([case]), env=env, capture_output=True,
                          text=True, timeout=120, check=True)
    (theirs,) = json.loads(proc.stdout)[0]["ads"]
    code, (ours,), err = dry_run(capsys)
    assert code == 0, err
    for attr in ("Cmd", "Arguments", "Environment", "JobPrio", "RequestMemory", "JobNotification",
                 "TransferExecutable", "JobUniverse", "InteractiveJob", "Iwd"):
        assert ours[attr].lower() == theirs[attr].lower(), attr

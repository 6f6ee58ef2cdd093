"""Self-checkpointing without daemons: which exits are checkpoints, what a checkpoint holds, how
the spool keeps it (the previous one stays current until the new one is whole), and the submit
commands (checkpoint_destination and impossible combinations refused with file and line)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from htcd.classad import ClassAd
from htcd.starter import checkpoint
from htcd.submit import SubmitError, parse_submit
from htcd.transfer import TransferError, checkpoints, entries
from htcd.transfer.shadow_side import gather_input
from htcd.universe import ExitStatus


def ad(**attrs: object) -> ClassAd:
    job = ClassAd()
    for k, v in attrs.items():
        job[k] = v
    return job


@pytest.mark.parametrize(("attrs", "status", "expected"), [
    ({"WantFTOnCheckpoint": True, "SuccessCheckpointExitCode": 85}, ExitStatus(exit_code=85), True),
    ({"WantFTOnCheckpoint": True, "SuccessCheckpointExitCode": 85}, ExitStatus(exit_code=0), False),
    ({"WantFTOnCheckpoint": True, "SuccessCheckpointExitCode": 85}, ExitStatus(signal=85), False),
    ({"SuccessCheckpointExitCode": 85}, ExitStatus(exit_code=85), False),  # the starter needs WantFTOnCheckpoint
    ({"WantFTOnCheckpoint": True, "SuccessCheckpointExitBySignal": True, "SuccessCheckpointExitSignal": 10},
     ExitStatus(signal=10), True),
    ({"WantFTOnCheckpoint": True, "SuccessCheckpointExitBySignal": True, "SuccessCheckpointExitSignal": 10},
     ExitStatus(exit_code=10), False),
])
def test_which_exits_are_checkpoints(attrs: dict[str, object], status: ExitStatus, expected: bool) -> None:
    assert checkpoint.is_checkpoint_exit(ad(**attrs), status) is expected


def test_checkpoints_are_numbered_from_the_job_ad_on() -> None:
    assert checkpoint.next_number(ad(), None) == 0
    assert checkpoint.next_number(ad(CheckpointNumber=4), None) == 5
    assert checkpoint.next_number(ad(CheckpointNumber=4), 6) == 7


def test_a_checkpoint_is_its_listed_files_and_the_output_so_far(tmp_path: Path) -> None:
    (tmp_path / "state").write_text("7")
    (tmp_path / "other").write_text("not in the checkpoint")
    (tmp_path / "_condor_stdout").write_text("started\n")
    (tmp_path / "_condor_stderr").write_text("")
    files, why = checkpoint.collect(str(tmp_path), ad(TransferCheckpoint="state"), {}, set(), "slot1")
    assert why == ""
    assert sorted(files) == ["_condor_stderr", "_condor_stdout", "state"]
    assert entries.normal(files["state"])["data"] == b"7"
    # without a list, the output rules: new and changed files
    files, why = checkpoint.collect(str(tmp_path), ad(), {}, set(), "slot1")
    assert sorted(files) == ["_condor_stderr", "_condor_stdout", "other", "state"]
    files, why = checkpoint.collect(str(tmp_path), ad(TransferCheckpoint="state, gone"), {}, set(), "slot1")
    assert files == {} and why.startswith("Checkpoint transfer failure") and "gone" in why


def test_the_spool_keeps_the_last_whole_checkpoint(tmp_path: Path) -> None:
    d = str(tmp_path / "1" / "0" / "cluster1.proc0.checkpoint")
    assert checkpoints.current(d) is None
    checkpoints.store(d, 0, {"count": entries.file(b"3", 0o644), "sub": entries.directory(0o755),
                             "sub/x": entries.file(b"x", 0o600)})
    number, path = checkpoints.current(d) or (None, "")
    assert number == 0 and Path(path, "count").read_text() == "3" and Path(path, "sub/x").read_text() == "x"
    with pytest.raises(TransferError):  # a bad path: the new checkpoint is dropped, the old one stays
        checkpoints.store(d, 1, {"count": entries.file(b"6", 0o644), "../escape": entries.file(b"", 0o644)})
    assert checkpoints.current(d) == (0, path)
    assert not (tmp_path / "1" / "0" / "escape").exists()
    checkpoints.store(d, 1, {"count": entries.file(b"6", 0o644)})
    number, path = checkpoints.current(d) or (None, "")
    assert number == 1 and Path(path, "count").read_text() == "6"
    assert sorted(os.listdir(d)) == ["1", "CURRENT"], "older checkpoints are removed"
    checkpoints.remove(d)
    assert not (tmp_path / "1" / "0").exists()


def test_a_restarted_job_gets_its_checkpoint_over_its_input(tmp_path: Path) -> None:
    iwd = tmp_path / "iwd"
    iwd.mkdir()
    (iwd / "run.sh").write_text("#!/bin/sh\n")
    (iwd / "count").write_text("0")
    d = str(tmp_path / "spool" / "cluster1.proc0.checkpoint")
    checkpoints.store(d, 2, {"count": entries.file(b"6", 0o644), "_condor_stdout": entries.file(b"out\n", 0o644)})
    job = {"Iwd": str(iwd), "Cmd": "run.sh", "TransferInput": "count"}
    files = gather_input(lambda k, default=None: job.get(k, default), checkpoint=d)
    assert entries.normal(files["count"])["data"] == b"6"
    assert entries.normal(files["_condor_stdout"])["data"] == b"out\n"
    assert "run.sh" in files
    assert entries.normal(gather_input(lambda k, default=None: job.get(k, default),
                                       checkpoint=str(tmp_path / "none"))["count"])["data"] == b"0"


def _job(text: str, tmp_path: Path) -> dict[str, str]:
    (tmp_path / "run.sh").write_text("#!/bin/sh\n")
    cluster_ad, procs = parse_submit(text, "job.sub").make_jobs(
        1, submit_dir=str(tmp_path), owner="bob", qdate=1000, env={},
        config_get=lambda k: {"FILESYSTEM_DOMAIN": "example.org"}.get(k))
    return {**cluster_ad, **procs[0]}


def test_submit_sets_what_the_starter_reads(tmp_path: Path) -> None:
    job = _job("executable = run.sh\ncheckpoint_exit_code = 85\ntransfer_checkpoint_files = a,b\nqueue\n", tmp_path)
    assert (job["SuccessCheckpointExitCode"], job["WantFTOnCheckpoint"], job["TransferCheckpoint"]) == \
        ("85", "true", '"a,b"')
    assert job["Requirements"].endswith("&& TARGET.HasSelfCheckpointTransfers")


@pytest.mark.parametrize(("text", "message"), [
    ("checkpoint_exit_code = 85\ncheckpoint_destination = https://store.example.org/ckpt\n",
     "job.sub:3: checkpoint_destination: .*no transfer plugins that store checkpoints at a URL"),
    ("checkpoint_exit_code = 85\nshould_transfer_files = NO\n", "job.sub:2: .*needs file transfer"),
    ("universe = local\ncheckpoint_exit_code = 85\n", "job.sub:3: .*not the local universe"),
    ("checkpoint_exit_code = often\n", "job.sub:2: checkpoint_exit_code must be a whole number"),
])
def test_submit_refuses_what_htcd_cannot_do(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(SubmitError, match=message):
        _job("executable = run.sh\n" + text + "queue\n", tmp_path)

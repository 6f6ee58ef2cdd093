"""Self-checkpointing jobs on the execute point: when an exit is a checkpoint, and what the
checkpoint holds.

A job with ``WantFTOnCheckpoint`` (condor_submit sets it with ``checkpoint_exit_code``) that
exits as ``SuccessCheckpointExitCode`` (or, with ``SuccessCheckpointExitBySignal``, on
``SuccessCheckpointExitSignal``) has taken a checkpoint: the starter sends the checkpoint to the
access point's spool and restarts the job in the same sandbox (docs/checkpoint.md).  The
checkpoint is ``TransferCheckpoint`` (transfer_checkpoint_files), else the output as
``transfer_output_files`` or the new-and-changed rule would send it, and always the job's stdout
and stderr so far -- as HTCondor's starter sends them.
"""

from __future__ import annotations

import os
from typing import Any

from htcd.classad import ClassAd
from htcd.transfer import entries
from htcd.transfer.starter_side import collect_output
from htcd.universe import ExitStatus

# A checkpoint travels whole inside one message to the shadow: at most this many bytes of files.
MAX_CHECKPOINT_BYTES = 64 * 1024 * 1024
STD_FILES = ("_condor_stdout", "_condor_stderr")


def wants_transfer(job_ad: ClassAd) -> bool:
    return job_ad.get_value("WantFTOnCheckpoint") is True


def is_checkpoint_exit(job_ad: ClassAd, status: ExitStatus) -> bool:
    """Whether the job's exit is the one it promised after a successful checkpoint."""
    if not wants_transfer(job_ad):
        return False
    if job_ad.get_value("SuccessCheckpointExitBySignal") is True:
        sig = _int(job_ad.get_value("SuccessCheckpointExitSignal"))
        return status.by_signal and sig is not None and status.signal == sig
    code = _int(job_ad.get_value("SuccessCheckpointExitCode"))
    return not status.by_signal and code is not None and status.exit_code == code


def next_number(job_ad: ClassAd, last: int | None) -> int:
    """The checkpoint's number: one past the last one taken (this run's, else the job ad's
    ``CheckpointNumber``); the first is 0, as HTCondor numbers them."""
    if last is None:
        last = _int(job_ad.get_value("CheckpointNumber"))
    return (-1 if last is None else last) + 1


def collect(sandbox: str, job_ad: ClassAd, sent: dict[str, Any], before: set[str],
            where: str) -> tuple[dict[str, Any], str]:
    """(the checkpoint's entries keyed by sandbox path, "" or why it cannot be sent)."""
    listed = job_ad.get_value("TransferCheckpoint")
    names = listed if isinstance(listed, str) else None
    files, _missing, failure = collect_output(sandbox, job_ad, sent, before, {*STD_FILES, ".job.ad", ".machine.ad"},
                                              where, None, listed=names)
    if failure is not None:
        return {}, str(failure.get("message") or "a checkpoint file could not be read").replace(
            "Transfer output files failure", "Checkpoint transfer failure")
    for name in STD_FILES:
        path = os.path.join(sandbox, name)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue
        with os.fdopen(fd, "rb") as f:
            files[name] = entries.file(f.read(), 0o644)
    size = entries.inline_size(files)
    if size > MAX_CHECKPOINT_BYTES:
        return {}, (f"Checkpoint transfer failure: the checkpoint is {size} bytes, more than the "
                    f"{MAX_CHECKPOINT_BYTES} bytes htcd sends in one checkpoint")
    return files, ""


def _int(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value)

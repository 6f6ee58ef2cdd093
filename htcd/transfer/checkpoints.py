"""A self-checkpointing job's last checkpoint, kept in the access point's spool.

Layout: ``$(SPOOL)/<cluster>/<proc>/cluster<C>.proc<P>.checkpoint/`` holds one directory per
stored checkpoint, named by its number, and ``CURRENT``, which names the complete one.  A new
checkpoint is written (and fsync'ed) into ``.part-<n>``, renamed to ``<n>``, and only then does
``CURRENT`` (replaced atomically) name it; the older ones go after that.  So a crash at any point
leaves the previous checkpoint whole and current, and a checkpoint is never half read.
The files are written and read by the schedd itself (the spool is its directory): their paths
are the sandbox's relative paths, created beneath the directory without following any link.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from typing import Any

from htcd.transfer import entries
from htcd.transfer.paths import mkdir_beneath, open_beneath, safe_relpath

CURRENT = "CURRENT"


def checkpoint_dir(spool: str, cluster: int, proc: int) -> str:
    return os.path.join(spool, str(cluster), str(proc), f"cluster{cluster}.proc{proc}.checkpoint")


def current(directory: str) -> tuple[int, str] | None:
    """(number, directory) of the complete checkpoint, or None when there is none."""
    try:
        with open(os.path.join(directory, CURRENT)) as f:
            number = int(f.read().strip())
    except (OSError, ValueError):
        return None
    path = os.path.join(directory, str(number))
    return (number, path) if os.path.isdir(path) else None


def store(directory: str, number: int, files: dict[str, Any]) -> int:
    """Keep checkpoint ``number`` (entries keyed by sandbox path) as the current one; the bytes
    written.  Raises OSError (or TransferError for a bad path) and leaves the previous one."""
    os.makedirs(directory, mode=0o700, exist_ok=True)
    part = os.path.join(directory, f".part-{number}")
    final = os.path.join(directory, str(number))
    for old in (part, final):
        shutil.rmtree(old, ignore_errors=True)
    os.mkdir(part, 0o700)
    written = 0
    try:
        for name, raw in files.items():
            rel = safe_relpath(str(name), "the checkpoint")
            entry = entries.normal(raw)
            if entry.get("dir"):
                mkdir_beneath(part, rel)
                continue
            data = entry.get("data") or b""
            fd = open_beneath(part, rel, os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
                              int(entry.get("mode", 0o644)) & 0o777, make_parents=True)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            written += len(data)
        _fsync_dir(part)
        os.rename(part, final)
        _fsync_dir(directory)
        tmp = os.path.join(directory, f".{CURRENT}.tmp")
        with open(tmp, "w") as f:
            f.write(f"{number}\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.join(directory, CURRENT))
        _fsync_dir(directory)
    except BaseException:
        shutil.rmtree(part, ignore_errors=True)
        raise
    for name in os.listdir(directory):  # the checkpoints before this one
        if name not in (CURRENT, str(number)):
            path = os.path.join(directory, name)
            if os.path.isdir(path):
                shutil.rmtree(path, ignore_errors=True)
    return written


def remove(directory: str) -> None:
    """The job left the queue: its checkpoint goes, and the proc's spool directory if now empty."""
    with contextlib.suppress(FileNotFoundError):
        shutil.rmtree(directory)
    with contextlib.suppress(OSError):
        os.rmdir(os.path.dirname(directory))


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

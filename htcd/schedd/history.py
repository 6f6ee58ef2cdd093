"""The history file: ads of jobs that left the queue, each ended by HTCondor's ``***`` banner.

The file rotates when it passes ``MAX_HISTORY_LOG`` bytes to ``<HISTORY>.<timestamp>``, keeping
``MAX_HISTORY_ROTATIONS`` old files.  Readers go newest first, reading each file backwards in
blocks, so ``htcd history -limit N`` touches only the end of the history.
"""

from __future__ import annotations

import glob
import os
import re
import time
from collections.abc import Iterator
from typing import BinaryIO

from htcd.classad import ClassAd

BLOCK = 64 * 1024


def banner(ad: ClassAd) -> str:
    fields = " ".join(f"{k} = {ad[k]}" for k in ("Owner", "ClusterId", "ProcId", "CompletionDate",
                                                  "EnteredCurrentStatus") if k in ad)
    return f"*** {fields}\n"


def rotated(path: str) -> list[str]:
    """Rotated files, newest first (by modification time: the last write before the rename)."""
    stamped: list[tuple[int, str]] = []
    for p in glob.glob(glob.escape(path) + ".*"):
        if not p[len(path) + 1:][:1].isdigit():
            continue
        try:
            stamped.append((os.stat(p).st_mtime_ns, p))
        except FileNotFoundError:  # deleted by a rotation between the listing and the stat
            continue
    return [p for _, p in sorted(stamped, reverse=True)]


def _rotate(path: str, max_size: int, keep: int) -> None:
    try:
        if os.path.getsize(path) < max_size:
            return
    except OSError:
        return
    stamp = time.strftime("%Y%m%dT%H%M%S")
    target = f"{path}.{stamp}"
    n = 0
    while os.path.exists(target):
        n += 1
        target = f"{path}.{stamp}.{n}"
    os.rename(path, target)
    for old in rotated(path)[max(keep, 0):]:
        os.unlink(old)


def append(path: str | None, ads: list[ClassAd], max_size: int = 0, keep: int = 1) -> None:
    """Append ads (one write); rotate first when the file has grown past ``max_size`` (0 = never)."""
    if not path or not ads:
        return
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    if max_size > 0:
        _rotate(path, max_size, keep)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, "".join(ad.to_old() + banner(ad) for ad in ads).encode())
    finally:
        os.close(fd)


BANNER = re.compile(rb"(?m)^\*\*\* ")


def _records_backwards(f: BinaryIO) -> Iterator[str]:
    """The ad texts of one file, last first, reading from the end in blocks.  A record is the
    text between two banner lines; text after the last banner (a write cut short) is skipped."""
    pos = f.seek(0, os.SEEK_END)
    buf = b""
    while pos > 0:
        step = min(BLOCK, pos)
        pos -= step
        f.seek(pos)
        buf = f.read(step) + buf
        starts = [m.start() for m in BANNER.finditer(buf) if m.start() > 0 or pos == 0]
        if not starts:
            continue
        ends = [buf.find(b"\n", s) + 1 or len(buf) for s in starts]
        for j in range(len(starts) - 1, 0, -1):
            yield buf[ends[j - 1]:starts[j]].decode(errors="replace")
        if pos == 0:
            yield buf[:starts[0]].decode(errors="replace")
        buf = buf[:ends[0]]


def _records_forwards(f: BinaryIO) -> Iterator[str]:
    """The ad texts of one file, first first, reading in blocks; text after the last banner (a
    write cut short or still going on) is left out."""
    buf = b""
    while block := f.read(BLOCK):
        buf += block
        start = 0
        for m in BANNER.finditer(buf):
            if m.start() > 0 and buf[m.start() - 1:m.start()] != b"\n":
                continue
            end = buf.find(b"\n", m.start())
            if end < 0:
                break  # the banner line goes on in the next block
            yield buf[start:m.start()].decode(errors="replace")
            start = end + 1
        buf = buf[start:]


def files(path: str, forwards: bool = False) -> list[str]:
    """The history's files in reading order: newest first (the current file, then rotated
    files), or oldest first."""
    newest_first = [path, *rotated(path)]
    return newest_first[::-1] if forwards else newest_first


def records(path: str, forwards: bool = False) -> Iterator[str]:
    """The ad texts of the whole history, newest first or (``forwards``) oldest first.  Every
    file is opened before the first is read: a rotation while a long read goes on (a rename,
    old files deleted) changes nothing the reader sees."""
    opened: list[BinaryIO] = []
    try:
        for p in files(path, forwards):
            try:
                opened.append(open(p, "rb"))  # noqa: SIM115 - closed in the finally below
            except FileNotFoundError:
                continue
        for f in opened:
            yield from (_records_forwards(f) if forwards else _records_backwards(f))
    finally:
        for f in opened:
            f.close()


def read(path: str, forwards: bool = False) -> Iterator[ClassAd]:
    """Every job ad of the history, newest first (current file, then rotated files), or oldest first."""
    from htcd.classad import parse_old_ad

    for text in records(path, forwards):
        if text.strip():
            yield parse_old_ad(text)

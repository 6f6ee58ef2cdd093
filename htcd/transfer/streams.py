"""Input too big for one message, between the shadow and the startd, as a chunk stream.

``gather_input`` leaves unread, as a ``stream`` entry, every file over ``STREAM_OVER`` bytes and
every file that would take the activation's file data past ``INLINE_BUDGET``.
The shadow sends ``ACTIVATE_CLAIM`` with those entries (their sizes, no data); the startd, before
it starts anything, answers with the partial reply ``{update: "send_input", files: [...]}`` and
reads the chunk stream (``htcd.transfer.chunks``) the shadow then sends on the same connection
into a staging directory under ``EXECUTE``; the starter moves each file into the sandbox
(``write_input``, by rename).  Neither side ever holds more than a chunk of a file in memory,
and the shadow reads each file as the job's owner again when it sends it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from typing import Any

from htcd.transfer import chunks
from htcd.transfer.paths import Owner, TransferError, open_as_owner, safe_relpath

STREAM_OVER = chunks.CHUNK  # files bigger than one chunk follow the activation as a stream
INLINE_BUDGET = 16 * 1024 * 1024  # at most this much file data rides inside the activation (each daemon holds a few copies)
FRAME_TIMEOUT = 300.0  # seconds the startd waits for the next frame of the input
STAGING_PREFIX = ".incoming_"
_LOCAL_KEYS = ("path", "staged", "staged_root")  # never taken from (or sent over) the wire


def streamed(files: dict[str, Any]) -> list[str]:
    return [rel for rel, e in files.items() if isinstance(e, dict) and e.get("stream")]


def wire_files(files: dict[str, Any]) -> dict[str, Any]:
    """The entries as they travel: a streamed file's local path stays at home."""
    return {rel: {k: v for k, v in e.items() if k not in _LOCAL_KEYS} if isinstance(e, dict) else e
            for rel, e in files.items()}


async def send_input(writer: asyncio.StreamWriter, files: dict[str, Any], owner: Owner | None) -> int:
    """Send the streamed files (the startd asked for them); the bytes sent.  Each file is read a
    chunk at a time in a worker thread, reopened as ``owner``."""
    from htcd.wire.framing import encode

    count = total = 0
    for rel in streamed(files):
        entry = files[rel]
        # the spool's files (a checkpoint, kept output) are the schedd's own: read as the schedd
        fd = open_as_owner(str(entry["path"]), None if entry.get("spooled") or entry.get("checkpoint") else owner,
                           write=False)
        frames = chunks.file_frames(fd, rel, int(entry.get("mode") or 0o644))
        try:
            while (frame := await asyncio.to_thread(next, frames, None)) is not None:
                if "end" in frame:
                    count += 1
                    total += int(frame["size"])
                writer.write(encode(frame))
                await writer.drain()
        finally:
            frames.close()
    writer.write(encode(chunks.done_frame(count, total)))
    await writer.drain()
    return total


async def receive_input(req: Any, files: dict[str, Any], execute_dir: str) -> dict[str, Any]:
    """The startd's side: ask for the streamed files and stage them under ``execute_dir``; the
    entries to give the starter (a staged file's entry names where it waits).  ``req`` is the
    ``ACTIVATE_CLAIM`` request (its connection carries the stream)."""
    from htcd.wire.framing import read_frame

    files = {rel: {k: v for k, v in e.items() if k not in _LOCAL_KEYS} if isinstance(e, dict) else e
             for rel, e in files.items()}
    names = streamed(files)
    if not names:
        return files
    for rel in names:
        safe_relpath(str(rel), "transfer_input_files")
    staging = tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=execute_dir)
    receiver = chunks.Receiver(*chunks.beneath(staging), "the job's input")
    try:
        await req.send_partial({"update": "send_input", "files": names})
        while not receiver.done:
            frame = await asyncio.wait_for(read_frame(req.conn.reader), FRAME_TIMEOUT)
            if frame is None:
                raise TransferError("the shadow closed the connection while sending the job's input")
            if receiver.feed(frame) is not None:
                raise TransferError(f"unexpected frame in the job's input: {sorted(frame)}")
        if sorted(receiver.received) != sorted(names):
            raise TransferError(f"the job's input arrived incomplete: {sorted(set(names) - set(receiver.received))}")
    except BaseException as exc:
        receiver.close()
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(exc, TransferError) and not receiver.done:
            with contextlib.suppress(Exception):  # the shadow is still sending: stay in step to answer
                while (frame := await asyncio.wait_for(read_frame(req.conn.reader), FRAME_TIMEOUT)) is not None \
                        and not frame.get("done"):
                    pass
        raise
    out = dict(files)
    for rel in names:
        out[rel] = {**files[rel], "staged": os.path.join(staging, rel), "staged_root": staging}
    return out


def move_staged(sandbox: str, rel: str, entry: dict[str, Any]) -> None:
    """Move a staged input file into the sandbox (a rename: no copy), following no link; note its
    size and time so that output collection can tell whether the job changed it."""
    from htcd.transfer.paths import mkdir_beneath, open_beneath

    staged, root = str(entry["staged"]), str(entry["staged_root"])
    if not (os.path.basename(root).startswith(STAGING_PREFIX) and staged.startswith(root + os.sep)):
        raise TransferError(f"the staged input {staged!r} is not in a staging directory")
    parent, _, leaf = rel.rpartition("/")
    if parent:
        mkdir_beneath(sandbox, parent)
    dfd = open_beneath(sandbox, parent, os.O_RDONLY | os.O_DIRECTORY) if parent else os.open(sandbox, os.O_RDONLY)
    try:
        os.rename(staged, leaf, dst_dir_fd=dfd)
        st = os.stat(leaf, dir_fd=dfd, follow_symlinks=False)
    finally:
        os.close(dfd)
    entry["size"], entry["mtime_ns"] = st.st_size, st.st_mtime_ns
    drop_staging(root, staged)


def drop_staging(root: str, staged: str) -> None:
    """Remove the staging directories left empty (the whole staging root once all moved)."""
    here = os.path.dirname(staged)
    while here.startswith(root):
        try:
            os.rmdir(here)
        except OSError:
            return
        here = os.path.dirname(here)


def unchanged(st: os.stat_result, entry: dict[str, Any]) -> bool:
    """Whether a staged input file is as it arrived (size and modification time)."""
    return st.st_size == int(entry.get("size", -1)) and st.st_mtime_ns == int(entry.get("mtime_ns", -1))


def forget(entry: Any) -> None:
    """Remove a staged file that never reached a sandbox (the job did not start)."""
    if isinstance(entry, dict) and entry.get("staged_root"):
        with contextlib.suppress(OSError):
            shutil.rmtree(str(entry["staged_root"]))


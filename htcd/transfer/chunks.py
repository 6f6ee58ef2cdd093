"""Chunk streams: files of any size as a sequence of bounded frames.

One frame carries at most ``CHUNK`` bytes of file data, so neither end ever holds a whole file
in memory and no file is limited by the frame size.  A stream is a sequence of maps:

    {"dir": REL, "mode": M}                    a directory (before its contents)
    {"file": REL, "mode": M, "size": N}        a file begins
    {"data": BYTES}                            its next piece (at most CHUNK bytes)
    {"end": REL, "size": N, "sha256": HEX}     the file is complete: its size and checksum
    {"done": true, "files": F, "bytes": B}     the stream ends

A producer may put its own maps between files (the spool puts ``{"job": "C.P"}`` before each
job's files); the receiver hands those back to its caller.  ``REL`` is a path relative to the
receiver's root; the receiver checks it (``safe_relpath``) and opens through the callbacks it
was given, so a hostile sender can neither escape the root nor follow a link.  A file whose
size or checksum does not match is an error naming the file; it is never counted as received.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Callable, Generator, Iterator
from typing import Any

from htcd.transfer.paths import TransferError, open_beneath, safe_relpath

CHUNK = 4 * 1024 * 1024  # bytes of file data per frame

Frame = dict[str, Any]
OpenFile = Callable[[str, int], int]  # (relative path, mode) -> a descriptor open for writing
MakeDir = Callable[[str, int], None]  # (relative path, mode)


def file_frames(fd: int, rel: str, mode: int, chunk: int = CHUNK) -> Generator[Frame, None, None]:
    """The frames of one open file, read ``chunk`` bytes at a time (the descriptor is closed)."""
    digest = hashlib.sha256()
    size = 0
    with os.fdopen(fd, "rb", buffering=0) as f:
        yield {"file": rel, "mode": mode & 0o7777, "size": os.fstat(f.fileno()).st_size}
        while True:
            data = f.read(chunk)
            if not data:
                break
            digest.update(data)
            size += len(data)
            yield {"data": data}
    yield {"end": rel, "size": size, "sha256": digest.hexdigest()}


def tree_frames(root: str, rel: str, chunk: int = CHUNK) -> Iterator[Frame]:
    """The frames of ``rel`` under ``root`` (a file, or a directory and all it holds), opened
    without following a symbolic link (links inside are left out)."""
    st = _lstat_beneath(root, rel)
    if stat.S_ISDIR(st.st_mode):
        yield {"dir": rel, "mode": st.st_mode & 0o7777}
        dfd = open_beneath(root, rel, os.O_RDONLY | os.O_DIRECTORY)
        try:
            names = sorted(os.listdir(dfd))
        finally:
            os.close(dfd)
        for name in names:
            yield from tree_frames(root, f"{rel}/{name}", chunk)
    elif stat.S_ISREG(st.st_mode):
        yield from file_frames(open_beneath(root, rel, os.O_RDONLY | os.O_NONBLOCK), rel, st.st_mode, chunk)


def _lstat_beneath(root: str, rel: str) -> os.stat_result:
    parent, _, leaf = safe_relpath(rel).rpartition("/")
    fd = open_beneath(root, parent, os.O_RDONLY | os.O_DIRECTORY) if parent else os.open(root, os.O_RDONLY)
    try:
        return os.stat(leaf, dir_fd=fd, follow_symlinks=False)
    finally:
        os.close(fd)


def done_frame(files: int, size: int) -> Frame:
    return {"done": True, "files": files, "bytes": size}


class Receiver:
    """Writes a chunk stream through ``open_file``/``make_dir``; one frame at a time, so memory
    stays at one chunk whatever the file sizes."""

    def __init__(self, open_file: OpenFile, make_dir: MakeDir, what: str = "the transfer") -> None:
        self.open_file = open_file
        self.make_dir = make_dir
        self.what = what
        self.files = 0
        self.bytes = 0
        self.done = False
        self.received: list[str] = []  # files complete and checked, in order
        self._rel: str | None = None
        self._fd = -1
        self._size = 0
        self._digest: Any = None

    def feed(self, frame: Frame) -> Frame | None:
        """Take one frame; a frame that is not part of the stream's files is returned."""
        if not isinstance(frame, dict):
            raise TransferError(f"{self.what}: a chunk stream frame must be a map")
        if "data" in frame:
            self._data(frame["data"])
        elif "file" in frame:
            self._begin(frame)
        elif "end" in frame:
            self._end(frame)
        elif "dir" in frame:
            self._need_idle("a directory")
            rel = safe_relpath(str(frame["dir"]), self.what)
            try:
                self.make_dir(rel, int(frame.get("mode") or 0o755) & 0o7777)
            except OSError as exc:
                raise TransferError(f"{self.what}: cannot make the directory {rel}: {exc.strerror}", 13,
                                    exc.errno or 0) from None
        elif frame.get("done"):
            self._need_idle("the end of the stream")
            if int(frame.get("files", self.files)) != self.files:
                raise TransferError(f"{self.what}: the sender sent {frame.get('files')} files, "
                                    f"{self.files} arrived whole")
            self.done = True
        else:
            return frame
        return None

    def _need_idle(self, what: str) -> None:
        if self._rel is not None:
            raise TransferError(f"{self.what}: {what} arrived in the middle of {self._rel}")

    def _begin(self, frame: Frame) -> None:
        self._need_idle("a new file")
        rel = safe_relpath(str(frame["file"]), self.what)
        try:
            self._fd = self.open_file(rel, int(frame.get("mode") or 0o644) & 0o7777)
        except OSError as exc:
            raise TransferError(f"{self.what}: cannot write {rel}: {exc.strerror}", 13, exc.errno or 0) from None
        self._rel, self._size = rel, 0
        self._digest = hashlib.sha256()

    def _data(self, data: Any) -> None:
        if self._rel is None:
            raise TransferError(f"{self.what}: file data arrived outside a file")
        if not isinstance(data, (bytes, bytearray)) or len(data) > CHUNK:
            raise TransferError(f"{self.what}: a data chunk of {self._rel} is not bytes of at most {CHUNK}")
        self._digest.update(data)
        self._size += len(data)
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view):]
        except OSError as exc:
            raise TransferError(f"{self.what}: cannot write {self._rel}: {exc.strerror}", 13,
                                exc.errno or 0) from None

    def _end(self, frame: Frame) -> None:
        rel = self._rel
        if rel is None or str(frame["end"]) != rel:
            raise TransferError(f"{self.what}: the end of {frame['end']!r} arrived outside that file")
        self.close()
        size, digest = int(frame.get("size", -1)), str(frame.get("sha256") or "")
        if size != self._size or digest != self._digest.hexdigest():
            raise TransferError(f"{self.what}: {rel} arrived damaged ({self._size} bytes, sha256 "
                                f"{self._digest.hexdigest()[:12]}...; the sender sent {size} bytes, sha256 "
                                f"{digest[:12]}...)", 13, errno.EIO)
        self.files += 1
        self.bytes += size
        self.received.append(rel)

    def close(self) -> None:
        """Close the file being written (a broken stream leaves it unfinished: not received)."""
        if self._fd >= 0:
            os.close(self._fd)
        self._fd = -1
        self._rel = None


def beneath(root: str) -> tuple[OpenFile, MakeDir]:
    """Callbacks writing under the directory ``root`` without following any link."""
    def open_file(rel: str, mode: int) -> int:
        fd = open_beneath(root, rel, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode & 0o777, make_parents=True)
        os.fchmod(fd, mode & 0o777)
        return fd

    def make_dir(rel: str, mode: int) -> None:
        from htcd.transfer.paths import mkdir_beneath

        mkdir_beneath(root, rel)
        fd = open_beneath(root, rel, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fchmod(fd, (mode & 0o777) | 0o700)
        finally:
            os.close(fd)

    return open_file, make_dir

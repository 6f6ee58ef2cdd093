"""Output too big for the starter's final reply, back from the execute point as a chunk stream.

The starter (``Staging``) leaves unread every output file over ``STREAM_OVER`` bytes, and those
that would take the reply's file data past ``INLINE_BUDGET``: before the sandbox goes it moves
each, by rename (no copy), into a staging directory ``.outgoing_*`` under EXECUTE, and the result
names them without their data -- ``{"stream": True, "key": K, "size": N, "mode": M}``, where ``K``
is ``out/<path>`` for a file and ``stdout``/``stderr`` for the job's standard output and error.
The startd keeps each staging directory under a secret id (``Store``; the result carries
``output_stream: {id, files, bytes}``) until the shadow asks for it: ``FETCH_OUTPUT {id}`` answers
with the chunk stream of the files ``keys`` names (those the shadow has a place for) as
partial replies and its end as the final reply (``serve_fetch``); ``FETCH_OUTPUT {id, drop:
true}`` only removes it.  Staged output nobody asks for expires.

The shadow (``write_output``, ``keep_evicted``) first checks that every destination may be
written, then receives each streamed file under a temporary name beside its destination and
renames it into place only once every file arrived whole (size and SHA-256 checked): a stream
that breaks leaves no file that looks complete, and nothing outside the announced destinations
can be written (an unannounced or escaping name in the stream is refused).  Neither end holds
more than a chunk of a file in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from htcd.transfer import chunks, entries
from htcd.transfer.paths import (
    Owner,
    TransferError,
    check_writable_as_owner,
    mkdir_as_owner,
    mkdir_beneath,
    open_as_owner,
    open_beneath,
    rename_as_owner,
    safe_relpath,
    unlink_as_owner,
)

STREAM_OVER = chunks.CHUNK  # a bigger file stays out of the final reply
INLINE_BUDGET = 16 * 1024 * 1024  # at most this much file data rides inside the final reply (each daemon holds a few copies)
STAGING_PREFIX = ".outgoing_"
PART = ".htcd-part-"  # a file being received is ".<name>.htcd-part-<random>" beside its destination
KEEP = 600.0  # seconds delivered staged output waits for the shadow to fetch it
FRAME_TIMEOUT = 300.0  # seconds the shadow waits for the next frame of the output
OUTPUT_HOLD = 12  # HTCondor's HoldReasonCode TransferOutputError

Frames = Callable[[list[str]], AsyncGenerator[Any, None]]  # opens the FETCH_OUTPUT stream of those keys


class StreamBroken(TransferError):
    """The output stream stopped half way: the connection it came on is out of step."""


def shown(key: str) -> str:
    """A staged file's name as the job knows it."""
    return key[4:] if key.startswith("out/") else {"stdout": "_condor_stdout", "stderr": "_condor_stderr"}.get(key, key)


async def settled(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` in a worker thread; a cancelled caller still waits for it to return, so that
    nothing closes the file it is working on under it."""
    fut = asyncio.get_running_loop().run_in_executor(None, fn, *args)
    try:
        return await asyncio.shield(fut)
    except asyncio.CancelledError:
        with contextlib.suppress(BaseException):
            await asyncio.wait({fut})
        raise


# -- the starter ---------------------------------------------------------------------------
class Staging:
    """One job's output set aside for streaming: files moved out of the sandbox by rename into
    a staging directory (made when the first one is moved), as the startd (root) does it."""

    def __init__(self, execute_dir: str, where: str) -> None:
        self.execute_dir = execute_dir
        self.where = where
        self.root: str | None = None
        self.keys: list[str] = []
        self.bytes = 0

    def _dir(self, key: str) -> int:
        if self.root is None:
            self.root = tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=self.execute_dir)
        parent = key.rpartition("/")[0]
        if not parent:
            return os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
        mkdir_beneath(self.root, parent)
        return open_beneath(self.root, parent, os.O_RDONLY | os.O_DIRECTORY)

    def move(self, sandbox: str, local: str, key: str) -> int:
        """Move the sandbox's regular file ``local`` to ``key``, following no link; its size."""
        parent, _, leaf = safe_relpath(local).rpartition("/")
        src = (open_beneath(sandbox, parent, os.O_RDONLY | os.O_DIRECTORY) if parent
               else os.open(sandbox, os.O_RDONLY | os.O_DIRECTORY))
        try:
            st = os.stat(leaf, dir_fd=src, follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode):
                raise OSError(errno.ELOOP if stat.S_ISLNK(st.st_mode) else errno.EINVAL, "not a regular file")
            dst = self._dir(key)
            try:
                os.rename(leaf, key.rpartition("/")[2], src_dir_fd=src, dst_dir_fd=dst)
            finally:
                os.close(dst)
        finally:
            os.close(src)
        self.keys.append(key)
        self.bytes += st.st_size
        return st.st_size

    def files(self, sandbox: str, files: dict[str, Any],
              failure: dict[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """``collect_output``'s entries with each file left to stream moved out of the sandbox;
        a file that cannot be moved is the job's output failure (as one that cannot be read)."""
        out: dict[str, Any] = {}
        for rel, entry in files.items():
            if isinstance(entry, dict) and entry.get("local"):
                key = f"out/{rel}"
                try:
                    size = self.move(sandbox, str(entry["local"]), key)
                except OSError as exc:
                    if failure is None:
                        failure = {"message": f"Transfer output files failure at execution point {self.where} "
                                              "while sending files to access point. Details: reading from file "
                                              f"{os.path.join(sandbox, str(entry['local']))}: (errno {exc.errno}) "
                                              f"{exc.strerror}", "subcode": exc.errno or 0}
                    continue
                entry = {**{k: v for k, v in entry.items() if k != "local"}, "key": key, "size": size}
            out[rel] = entry
        return out, failure

    def std(self, sandbox: str, name: str, key: str) -> bytes | dict[str, Any]:
        """The starter's file ``name`` (the job's stdout or stderr): its bytes, or moved out to
        stream when it is bigger than a chunk.  Opened without following a link: a job that
        replaced it with one gets nothing back through it."""
        try:
            fd = open_beneath(sandbox, name, os.O_RDONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENXIO, errno.EISDIR):
                return b""
            raise
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                return b""
            if st.st_size <= STREAM_OVER:
                return f.read()
        return {"stream": True, "key": key, "size": self.move(sandbox, name, key), "mode": 0o644}

    def note(self) -> dict[str, Any] | None:
        """What the startd keeps (never sent): the staging directory and its files in order."""
        if not self.keys:
            self.discard()
            return None
        return {"root": self.root, "keys": list(self.keys), "bytes": self.bytes, "where": self.where}

    def discard(self) -> None:
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None


# -- the startd ----------------------------------------------------------------------------
@dataclass
class Staged:
    root: str
    keys: list[str]
    size: int
    where: str
    timer: asyncio.TimerHandle | None = None


class Store:
    """The startd's staged output by id, each until fetched, dropped or expired."""

    def __init__(self, log: logging.Logger) -> None:
        self.log = log
        self.items: dict[str, Staged] = {}

    def add(self, note: dict[str, Any], ttl: float) -> dict[str, Any]:
        """Keep the starter's staged output for ``ttl`` seconds; what the result tells the shadow."""
        oid = secrets.token_hex(16)
        item = Staged(str(note["root"]), [str(k) for k in note["keys"]], int(note.get("bytes") or 0),
                      str(note.get("where") or ""))
        self.items[oid] = item
        self._arm(oid, ttl)
        return {"id": oid, "files": len(item.keys), "bytes": item.size}

    def _arm(self, oid: str, ttl: float) -> None:
        item = self.items.get(oid)
        if item is None:
            return
        if item.timer is not None:
            item.timer.cancel()
        item.timer = asyncio.get_running_loop().call_later(max(0.0, ttl), self._expire, oid)

    def _expire(self, oid: str) -> None:
        item = self.items.get(oid)
        if item is not None:
            self.log.info("%s: %d output files (%d bytes) nobody fetched: removed", item.where, len(item.keys),
                          item.size)
            self.drop(oid)

    @staticmethod
    def _id(result: dict[str, Any]) -> str:
        note = result.get("output_stream")
        return str(note.get("id") or "") if isinstance(note, dict) else ""

    def delivered(self, result: dict[str, Any]) -> None:
        """The result went to the shadow: its output waits ``KEEP`` seconds more to be fetched."""
        self._arm(self._id(result), KEEP)

    def forget(self, result: dict[str, Any]) -> None:
        """The result itself was dropped: so is its output."""
        self.drop(self._id(result))

    def take(self, oid: str) -> Staged | None:
        item = self.items.pop(oid, None)
        if item is not None and item.timer is not None:
            item.timer.cancel()
        return item

    def drop(self, oid: str) -> None:
        item = self.take(oid)
        if item is not None:
            shutil.rmtree(item.root, ignore_errors=True)

    def clear(self) -> None:
        for oid in list(self.items):
            self.drop(oid)


def clean_orphans(execute_dir: str) -> int:
    """Staging directories an earlier startd left (input and output): removed; how many."""
    from htcd.transfer.streams import STAGING_PREFIX as INCOMING

    try:
        names = os.listdir(execute_dir)
    except FileNotFoundError:
        return 0
    gone = 0
    for name in names:
        path = os.path.join(execute_dir, name)
        if name.startswith((STAGING_PREFIX, INCOMING)) and os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
            gone += 1
    return gone


async def serve_fetch(req: Any, store: Store, log: logging.Logger) -> dict[str, Any]:
    """``FETCH_OUTPUT {id, keys, drop?}``: stream the staged files ``keys`` names (partial replies,
    in the order they were staged), then the stream's end (the final reply; ``{error, subcode}``
    instead when a file cannot be read).  The staged output is removed afterwards, whatever
    happened: it is asked for once."""
    from htcd.wire.errors import CommandError

    oid = req.arg_str("id", required=True)
    keys = req.arg_list("keys", str)
    item = store.take(oid)
    if item is None:
        raise CommandError("no staged output has that id: it was fetched or dropped already, or it expired",
                           "NO_OUTPUT")
    try:
        if req.arg_bool("drop"):
            return {"dropped": len(item.keys)}
        unknown = sorted(set(keys) - set(item.keys))
        if unknown:
            return {"error": f"Transfer output files failure at execution point {item.where}: "
                             f"{', '.join(map(shown, unknown))} not staged", "subcode": errno.ENOENT}
        log.info("%s: sending %d of %d staged output files to %s as a chunk stream", item.where, len(keys),
                 len(item.keys), req.identity)
        return await _send(req, item, [k for k in item.keys if k in set(keys)])
    finally:
        await asyncio.to_thread(shutil.rmtree, item.root, True)


async def _send(req: Any, item: Staged, keys: list[str]) -> dict[str, Any]:
    files = total = 0
    for key in keys:
        try:
            fd = open_beneath(item.root, key, os.O_RDONLY | os.O_NONBLOCK)
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                os.close(fd)
                raise OSError(errno.EINVAL, "not a regular file")
            frames = chunks.file_frames(fd, key, st.st_mode)
            try:
                while (frame := await settled(next, frames, None)) is not None:
                    if "end" in frame:
                        files += 1
                        total += int(frame["size"])
                    await req.send_partial(frame)
            finally:
                frames.close()
        except OSError as exc:
            if isinstance(exc, ConnectionError):
                raise
            return {"error": f"Transfer output files failure at execution point {item.where} while sending files "
                             f"to access point. Details: reading from file {shown(key)}: (errno {exc.errno}) "
                             f"{exc.strerror}", "subcode": exc.errno or 0}
    return chunks.done_frame(files, total)


# -- the shadow ----------------------------------------------------------------------------
class Sink(Protocol):
    temps: list[tuple[str, str]]

    def open_temp(self, final: str, mode: int) -> int: ...
    def commit(self) -> None: ...
    def discard(self) -> None: ...


def _part(leaf: str) -> str:
    return f".{leaf[:180]}{PART}{secrets.token_hex(4)}"


class OwnerSink:
    """Temporary files beside absolute destinations, made and renamed as the job's owner."""

    def __init__(self, owner: Owner | None) -> None:
        self.owner = owner
        self.temps: list[tuple[str, str]] = []  # (temporary, destination)

    def open_temp(self, final: str, mode: int) -> int:
        tmp = os.path.join(os.path.dirname(final), _part(os.path.basename(final)))
        fd = open_as_owner(tmp, self.owner, write=True, mode=mode & 0o777)
        self.temps.append((tmp, final))
        return fd

    def commit(self) -> None:
        while self.temps:
            tmp, final = self.temps[0]
            rename_as_owner(tmp, final, self.owner)
            self.temps.pop(0)

    def discard(self) -> None:
        while self.temps:
            unlink_as_owner(self.temps.pop()[0], self.owner)


class BeneathSink:
    """Temporary files beside destinations relative to ``root`` (the spool), following no link."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.temps: list[tuple[str, str]] = []

    def open_temp(self, final: str, mode: int) -> int:
        parent, _, leaf = safe_relpath(final).rpartition("/")
        tmp = f"{parent}/{_part(leaf)}" if parent else _part(leaf)
        fd = open_beneath(self.root, tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode & 0o777, make_parents=True)
        self.temps.append((tmp, final))
        return fd

    def _parent(self, rel: str) -> tuple[int, str]:
        parent, _, leaf = rel.rpartition("/")
        fd = (open_beneath(self.root, parent, os.O_RDONLY | os.O_DIRECTORY) if parent
              else os.open(self.root, os.O_RDONLY | os.O_DIRECTORY))
        return fd, leaf

    def commit(self) -> None:
        while self.temps:
            tmp, final = self.temps[0]
            dfd, leaf = self._parent(final)
            try:
                os.rename(tmp.rpartition("/")[2], leaf, src_dir_fd=dfd, dst_dir_fd=dfd)
            finally:
                os.close(dfd)
            self.temps.pop(0)

    def discard(self) -> None:
        while self.temps:
            tmp = self.temps.pop()[0]
            with contextlib.suppress(OSError):
                dfd, leaf = self._parent(tmp)
                try:
                    os.unlink(leaf, dir_fd=dfd)
                finally:
                    os.close(dfd)


async def receive(frames: Frames, wanted: dict[str, str], sink: Sink, where: str = "") -> int:
    """Read the output stream into temporary files (``sink``) for the destinations ``wanted``
    ({key: destination}); the bytes received.  Each frame is written in a worker thread (the
    schedd's loop keeps serving).  TransferError (hold code 12) when the execute point reports a
    failure; StreamBroken when the stream stops or goes wrong half way."""
    from htcd.wire.errors import RemoteError, WireError

    what = f"the output from {where}" if where else "the job's output"

    def open_file(rel: str, mode: int) -> int:
        target = wanted.get(rel)
        if target is None:
            raise TransferError(f"{what}: {rel!r} is not one of the files announced", OUTPUT_HOLD, errno.EPERM)
        return sink.open_temp(target, mode)

    def make_dir(rel: str, mode: int) -> None:
        raise TransferError(f"{what}: the directory {rel!r} was not announced", OUTPUT_HOLD, errno.EPERM)

    def failed(detail: object, subcode: int, cls: type[TransferError] = StreamBroken) -> TransferError:
        return cls(f"Transfer output files failure at access point while receiving files from the execution "
                   f"point {where}. Details: {detail}", OUTPUT_HOLD, subcode)

    receiver = chunks.Receiver(open_file, make_dir, what)
    try:
        async with contextlib.aclosing(frames(sorted(wanted))) as stream:
            async for part in stream:
                if isinstance(part, dict) and "error" in part:  # the final reply: the stream is in step
                    raise TransferError(str(part["error"]), OUTPUT_HOLD, int(part.get("subcode") or 0))
                try:
                    if await settled(receiver.feed, part) is not None:
                        raise TransferError(f"{what}: an unexpected frame {sorted(part)}", OUTPUT_HOLD, errno.EPROTO)
                except TransferError as exc:
                    raise (failed(exc, exc.subcode, TransferError) if receiver.done
                           else failed(exc, exc.subcode)) from None
                except OSError as exc:
                    raise failed(f"(errno {exc.errno}) {exc.strerror}", exc.errno or 0) from None
    except RemoteError as exc:
        raise failed(exc, 0, TransferError) from None
    except WireError as exc:
        raise failed(exc, errno.ECONNRESET) from None
    finally:
        receiver.close()
    if not receiver.done:
        raise failed("the stream ended early", errno.EIO)
    if sorted(receiver.received) != sorted(wanted):
        raise failed(f"missing {sorted(set(wanted) - set(receiver.received))}", errno.ENOENT, TransferError)
    return receiver.bytes


async def write_output(get: Any, result: dict[str, Any], owner: Owner | None, frames: Frames,
                       where: str = "") -> tuple[int, int]:
    """Write a finished job's output as its owner, streamed files included; (the bytes written,
    how many of them were streamed).
    Every destination is checked before anything is sent; streamed files go in place only once
    all arrived whole.  Raises TransferError (hold code 12) naming the file and the reason."""
    from htcd.transfer.shadow_side import output_failure, output_targets

    failure = output_failure(result)
    if failure is not None:
        raise failure
    targets = output_targets(get, result)
    sink = OwnerSink(owner)
    written = streamed = 0
    path = ""
    try:
        for path, entry in targets:
            if entry.get("dir"):
                mkdir_as_owner(path, owner, entry.get("mode", 0o755) & 0o7777)
            else:
                check_writable_as_owner(path, owner)
        wanted = {str(e.get("key")): p for p, e in targets if e.get("stream")}
        if wanted:
            written = streamed = await receive(frames, wanted, sink, where)
        written += _write_inline(targets, lambda path, mode: open_as_owner(path, owner, write=True, mode=mode))
        for tmp, path in list(sink.temps):
            rename_as_owner(tmp, path, owner)
            sink.temps.remove((tmp, path))
    except OSError as exc:
        raise TransferError(f"Transfer output files failure at access point while writing {path}: "
                            f"(errno {exc.errno}) {exc.strerror}", OUTPUT_HOLD, exc.errno or 0) from None
    finally:
        sink.discard()
    return written, streamed


def _write_inline(items: list[tuple[str, dict[str, Any]]], opener: Callable[[str, int], int]) -> int:
    """Write the files that came inline in the reply (not directories, not streamed ones), each
    opened by ``opener(where, mode)``; the bytes written."""
    written = 0
    for where, entry in items:
        if entry.get("dir") or entry.get("stream"):
            continue
        fd = opener(where, entry.get("mode", 0o644) & 0o777)
        with os.fdopen(fd, "wb") as f:
            f.write(entry["data"])
        written += len(entry["data"])
    return written


async def keep_evicted(directory: str, result: dict[str, Any], frames: Frames, where: str = "") -> tuple[int, int]:
    """ON_EXIT_OR_EVICT: the evicted job's files, kept (as the schedd) under ``directory`` to go
    back as input, streamed files included; (the bytes kept, how many of them were streamed)."""
    items = [(safe_relpath(str(rel), "the job's output"), entries.normal(e))
             for rel, e in (result.get("files") or {}).items()]
    if not items:
        return 0, 0
    os.makedirs(directory, mode=0o700, exist_ok=True)
    sink = BeneathSink(directory)
    written = streamed = 0
    try:
        for rel, ent in items:
            if ent.get("dir"):
                mkdir_beneath(directory, rel)
        wanted = {str(e.get("key")): rel for rel, e in items if e.get("stream")}
        if wanted:
            written = streamed = await receive(frames, wanted, sink, where)
        written += _write_inline(items, lambda rel, mode: open_beneath(
            directory, rel, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode, make_parents=True))
        sink.commit()
    finally:
        sink.discard()
    return written, streamed

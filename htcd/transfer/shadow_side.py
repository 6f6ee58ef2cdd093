"""The access point's side: a job's input, read from its submit directory (or its spool), and
its output, written back there as its owner.

Files travel inline in the claim protocol as entries keyed by their path relative to the
sandbox (see ``htcd.transfer.entries``); big ones as chunk streams (``streams`` for input,
``outgoing`` for output, which also writes a job's output when part of it is streamed).  Reading and writing go through
``htcd.transfer.paths`` so that a root schedd does only what the job's owner could do.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from collections.abc import Callable
from typing import Any

from htcd.transfer import checkpoints, entries
from htcd.transfer.paths import (
    Owner,
    TransferError,
    is_url,
    mkdir_as_owner,
    open_as_owner,
    owner_may,
    safe_relpath,
)
from htcd.transfer.remaps import RemapError, parse_remaps

Getter = Callable[[str, Any], Any]  # a job attribute's value: ``job.get(name, default)``
# What one ACTIVATE_CLAIM may carry: the frame limit less room for the job ad and framing.
MAX_INLINE = 256 * 1024 * 1024 - 4 * 1024 * 1024


def in_iwd(iwd: str, name: str) -> str:
    return name if os.path.isabs(name) else os.path.join(iwd, name)


def split_list(value: object) -> list[str]:
    """A transfer list attribute (comma separated, as condor_submit writes it)."""
    if not isinstance(value, str):
        return []
    return [n.strip() for n in value.split(",") if n.strip()]


def input_names(get: Getter) -> list[str]:
    """What the job asks to have in its sandbox: executable, stdin, transfer_input_files."""
    names: list[str] = []
    if get("TransferExecutable", True) is not False:
        names.append(str(get("Cmd", "")))
    stdin = str(get("In", "/dev/null") or "/dev/null")
    if stdin != "/dev/null" and get("TransferIn", True) is not False:
        names.append(stdin)
    return names + split_list(get("TransferInput", None))


def gather_input(get: Getter, owner: Owner | None = None, spool: str | None = None,
                 limit: int = MAX_INLINE, inline: entries.Inline | None = None,
                 checkpoint: str | None = None) -> dict[str, Any]:
    """The sandbox's input entries ({relative path: entry}), read as ``owner``.

    ``name`` is sent by its basename; ``dir`` sends the directory itself and ``dir/`` only its
    contents (HTCondor's rule); ``scheme://...`` is left for the execute point's transfer
    plugin.  ``spool`` holds output kept from an eviction (ON_EXIT_OR_EVICT): it goes in last
    and so replaces the original input of the same name.  Over ``limit`` bytes the job cannot
    travel in one message and is refused (a hold) before anything is sent.  ``checkpoint`` is a
    self-checkpointing job's checkpoint directory (``htcd.transfer.checkpoints``): its current
    checkpoint goes in over the original input, so the job resumes from it.  With ``inline``, a
    file it does not let ride inside the activation (too big, or past the budget) is not read
    here: its entry says ``stream`` (with its size and local ``path``) and it follows the
    activation as a chunk stream (``streams``), so the input as a whole has no size limit."""
    iwd = str(get("Iwd", "") or "")
    files: dict[str, Any] = {}
    for name in input_names(get):
        if is_url(name):
            files[entries.url_name(name)] = entries.url(name)
            continue
        path = in_iwd(iwd, name)
        try:
            _add_path(files, path, "" if name.endswith("/") else entries.base(name), owner, inline)
        except OSError as exc:
            raise TransferError(f"Transfer input files failure at access point while reading {path}: "
                                f"(errno {exc.errno}) {exc.strerror}", 13, exc.errno or 0) from None
    got = checkpoints.current(checkpoint) if checkpoint else None
    if got is not None:
        try:
            restored: dict[str, Any] = {}
            _add_path(restored, got[1], "", None, inline)
            files.update({rel: {**entry, "checkpoint": True} for rel, entry in restored.items()})
        except OSError as exc:
            raise TransferError(f"Transfer input files failure: cannot read checkpoint {got[0]} in {got[1]}: "
                                f"{exc.strerror}", 13, exc.errno or 0) from None
    if spool and os.path.isdir(spool):
        try:
            kept: dict[str, Any] = {}
            _add_path(kept, spool, "", None, inline)
            for rel, entry in kept.items():  # the job's own files: output again at its end
                files[rel] = {**entry, "spooled": True}
        except OSError as exc:
            raise TransferError(f"Transfer input files failure: cannot read the spooled output in {spool}: "
                                f"{exc.strerror}", 13, exc.errno or 0) from None
    size = entries.inline_size(files)
    if size > limit:
        raise TransferError(f"Transfer input files failure: the input is {size} bytes, more than the {limit} "
                            "bytes one claim activation can carry", 13, errno.EFBIG)
    return files


def _add_path(files: dict[str, Any], path: str, rel: str, owner: Owner | None,
              inline: entries.Inline | None = None) -> None:
    """Add the file or directory ``path`` as ``rel`` ("" for a directory's contents only)."""
    try:
        fd = open_as_owner(path, owner, write=False)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.EISDIR):
            raise
        fd = -1
    if fd >= 0:
        files[rel or entries.base(path)] = _file_entry(fd, path, inline)
        return
    _add_dir(files, path, rel, owner, inline)


def _file_entry(fd: int, path: str, inline: entries.Inline | None) -> dict[str, Any]:
    """An open file's entry: its bytes, or (when ``inline`` does not take it) a note to stream it later."""
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if inline is not None and not inline.fits(st.st_size):
            return {"stream": True, "size": st.st_size, "mode": st.st_mode & 0o7777, "path": path}
        return entries.file(f.read(), st.st_mode)


def _add_dir(files: dict[str, Any], path: str, rel: str, owner: Owner | None,
             inline: entries.Inline | None = None) -> None:
    st = os.stat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise OSError(errno.EINVAL, "neither a regular file nor a directory", path)
    if not owner_may(st, owner, 5):
        raise OSError(errno.EACCES, "permission denied for the job's owner", path)
    if rel:
        files[rel] = entries.directory(st.st_mode)
    for name in sorted(os.listdir(path)):
        child = os.path.join(path, name)
        sub = f"{rel}/{name}" if rel else name
        lst = os.lstat(child)
        if stat.S_ISLNK(lst.st_mode):  # a link to a file is followed (as the owner); to a directory, not
            try:
                lst = os.stat(child)
            except OSError:
                continue
            if not stat.S_ISREG(lst.st_mode):
                continue
        if stat.S_ISDIR(lst.st_mode):
            _add_dir(files, child, sub, owner, inline)
        elif stat.S_ISREG(lst.st_mode):
            files[sub] = _file_entry(open_as_owner(child, owner, write=False), child, inline)


def output_targets(get: Getter, result: dict[str, Any]) -> list[tuple[str, Any]]:
    """Where each piece of a finished job's output goes: (absolute path, entry), in order
    (a directory before its contents).  Out/Err are not written when the job ran in its Iwd
    on a shared file system (it wrote them itself)."""
    iwd = str(get("Iwd", "") or "")
    try:
        remaps = parse_remaps(str(get("TransferOutputRemaps", "") or ""))
    except RemapError as exc:
        raise TransferError(f"Transfer output files failure: {exc}", 12) from None
    outputs: list[tuple[str, Any]] = []
    if not result.get("shared_fs"):
        for attr, key in (("Out", "stdout"), ("Err", "stderr")):
            dest = str(get(attr, "/dev/null") or "/dev/null")
            if dest != "/dev/null":
                value = result.get(key)  # its bytes, or a streamed file's entry (htcd.transfer.outgoing)
                entry = dict(value) if isinstance(value, dict) else entries.file(value or b"", 0o644)
                outputs.append((in_iwd(iwd, dest), entry))
    for rel, entry in (result.get("files") or {}).items():
        rel = safe_relpath(str(rel), "the job's output")
        ent = entries.normal(entry)
        src = str(ent.get("src") or rel)
        target = remaps.get(src) or remaps.get(rel) or remaps.get(entries.base(rel))
        outputs.append((in_iwd(iwd, target) if target else os.path.join(iwd, rel), ent))
    return outputs


def output_failure(result: dict[str, Any]) -> TransferError | None:
    """The execute point's report that output could not be sent: a missing listed file or a
    refused one (a symbolic link)."""
    err = result.get("transfer_failure")
    if isinstance(err, dict) and err.get("message"):
        return TransferError(str(err["message"]), 12, int(err.get("subcode") or 0))
    return None


def write_output(get: Getter, result: dict[str, Any], owner: Owner | None) -> int:
    """Write a finished job's output as its owner; the bytes written.  Raises TransferError
    (hold code 12) naming the file and the reason when a piece cannot be written."""
    failure = output_failure(result)
    if failure is not None:
        raise failure
    written = 0
    for path, entry in output_targets(get, result):
        try:
            if entry.get("dir"):
                mkdir_as_owner(path, owner, entry.get("mode", 0o755) & 0o7777)
                continue
            fd = open_as_owner(path, owner, write=True, mode=entry.get("mode", 0o644) & 0o777)
            with os.fdopen(fd, "wb") as f:
                f.write(entry["data"])
            written += len(entry["data"])
        except OSError as exc:
            raise TransferError(f"Transfer output files failure at access point while writing {path}: "
                                f"(errno {exc.errno}) {exc.strerror}", 12, exc.errno or 0) from None
    return written


def spool_dir(spool: str, cluster: int, proc: int) -> str:
    """Where output kept from an eviction waits for the job's next start (beside the proc's
    spooled input, ``cluster<C>.proc<P>.subproc0``, never inside it)."""
    return os.path.join(spool, str(cluster), str(proc), f"cluster{cluster}.proc{proc}.evicted")


def drop_spool(directory: str) -> None:
    """Remove the kept output, and the proc's and cluster's spool directories left empty."""
    with contextlib.suppress(FileNotFoundError):
        shutil.rmtree(directory)
    for parent in (os.path.dirname(directory), os.path.dirname(os.path.dirname(directory))):
        with contextlib.suppress(OSError):
            os.rmdir(parent)


def spooled_output_target(place: dict[str, str], rel: str) -> str:
    """Where a spooled job's output file goes when ``htcd transfer_data`` fetches it: ``place``
    holds the submitter's Iwd, Out, Err, transfer_output_files and remaps (as submitted) and the
    names Out/Err have in the spool; the rest follows ``output_targets``' rules."""
    iwd = place.get("Iwd") or os.getcwd()
    rel = safe_relpath(rel, "the spooled output")
    for spooled, submitted in ((place.get("SpoolOut"), place.get("Out")),
                               (place.get("SpoolErr"), place.get("Err"))):
        if spooled and rel == spooled and submitted:
            return in_iwd(iwd, submitted)
    try:
        remaps = parse_remaps(place.get("TransferOutputRemaps") or "")
    except RemapError as exc:
        raise TransferError(f"Transfer output files failure: {exc}", 12) from None
    listed = {entries.base(n): n for n in split_list(place.get("TransferOutput"))}
    src = listed.get(rel, rel)
    target = remaps.get(src) or remaps.get(rel) or remaps.get(entries.base(rel))
    return in_iwd(iwd, target) if target else os.path.join(iwd, rel)

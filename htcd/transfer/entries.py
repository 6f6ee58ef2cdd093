"""The shape files travel in: ``{relative path: entry}``, a directory before its contents.

An entry is a dict (``"spooled": True`` marks the job's own files kept from an eviction): ``{"data": bytes, "mode": int}`` for a file (its permission bits kept, as
HTCondor keeps them), ``{"dir": True, "mode": int}`` for a directory, ``{"url": str}`` for a
file the execute point fetches itself through the transfer plugin of the URL's scheme,
``{"stream": True, "size": int, "mode": int}`` for a file too big to travel inside the message:
it follows as a chunk stream (``htcd.transfer.streams``); an output file too big for the reply is
``{"stream": True, "key": str, "size": int, "mode": int}``, fetched from the startd by its key
(``htcd.transfer.outgoing``).  Output
entries may add ``"src"``: the name as transfer_output_files listed it (what remaps match).
A bare ``bytes`` value is a file with mode 0644.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import unquote, urlsplit


def file(data: bytes, mode: int = 0o644, src: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"data": data, "mode": mode & 0o7777}
    if src is not None:
        entry["src"] = src
    return entry


def directory(mode: int = 0o755, src: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"dir": True, "mode": mode & 0o7777}
    if src is not None:
        entry["src"] = src
    return entry


def url(address: str) -> dict[str, Any]:
    return {"url": address}


def base(name: str) -> str:
    return os.path.basename(name.rstrip("/"))


def url_name(address: str) -> str:
    """The sandbox name of a URL's file: the last component of its path, as HTCondor names it."""
    name = base(unquote(urlsplit(address).path))
    return name or "index"


def normal(entry: Any) -> dict[str, Any]:
    if isinstance(entry, (bytes, bytearray)):
        return file(bytes(entry))
    if isinstance(entry, dict):
        return entry
    raise TypeError(f"a transfer entry must be bytes or a mapping, not {type(entry).__name__}")


def size(files: dict[str, Any]) -> int:
    """The bytes of file data in ``files``, streamed files included (what the terminate event counts)."""
    return sum(int(e.get("size") or 0) if e.get("stream") else len(e.get("data") or b"")
               for e in map(normal, files.values()))


def inline_size(files: dict[str, Any]) -> int:
    """The bytes of file data carried inside the message itself (streamed files are not)."""
    return sum(len(normal(e).get("data") or b"") for e in files.values())


class Inline:
    """How much file data may still ride inside one message (a claim activation, a job's final
    reply): a file over ``stream_over`` bytes, or one that would take the total past ``budget``,
    goes as a chunk stream instead."""

    def __init__(self, stream_over: int, budget: int) -> None:
        self.stream_over = stream_over
        self.left = budget

    def fits(self, size: int) -> bool:
        if size > self.stream_over or size > self.left:
            return False
        self.left -= size
        return True


def wants_transfer(get: Any, exec_fs_domain: str | None) -> bool:
    """Whether files move at all: should_transfer_files YES, or IF_NEEDED on an execute point
    of another FileSystemDomain.  NO, or IF_NEEDED in the job's own domain: the job runs in its
    Iwd on the shared file system.  ``get`` is ``job.get``/``ad.get_value``."""
    stf = str(get("ShouldTransferFiles", "YES") or "YES").upper()
    if stf == "NO":
        return False
    if stf == "IF_NEEDED" and exec_fs_domain:
        return str(get("FileSystemDomain", "") or "").lower() != exec_fs_domain.lower()
    return True

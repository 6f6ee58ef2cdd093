"""The access point's side: a job's input files, read from its submit directory, and its output
files, written back there."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from htcd.transfer.paths import TransferError

Getter = Callable[[str, Any], Any]  # a job attribute's value: ``job.get(name, default)``


def in_iwd(iwd: str, name: str) -> str:
    return name if os.path.isabs(name) else os.path.join(iwd, name)


def gather_input(get: Getter) -> dict[str, bytes]:
    """The files sent to the sandbox: executable, stdin, transfer_input_files (by basename)."""
    iwd = str(get("Iwd", "") or "")
    names: list[str] = []
    if get("TransferExecutable", True) is not False:
        names.append(str(get("Cmd", "")))
    stdin = str(get("In", "/dev/null") or "/dev/null")
    if stdin != "/dev/null":
        names.append(stdin)
    extra = get("TransferInput", None)
    if isinstance(extra, str):
        names += [n.strip() for n in extra.split(",") if n.strip()]
    files: dict[str, bytes] = {}
    for name in names:
        path = in_iwd(iwd, name)
        try:
            with open(path, "rb") as f:
                files[os.path.basename(name.rstrip("/"))] = f.read()
        except OSError as exc:
            raise TransferError(f"Transfer input files failure: cannot read {path}: {exc.strerror}") from None
    return files


def output_targets(get: Getter, result: dict[str, Any]) -> list[tuple[str, bytes]]:
    """Where each piece of a finished job's output goes: (absolute path, data)."""
    iwd = str(get("Iwd", "") or "")
    outputs: list[tuple[str, bytes]] = []
    for attr, key in (("Out", "stdout"), ("Err", "stderr")):
        dest = str(get(attr, "/dev/null") or "/dev/null")
        if dest != "/dev/null":
            outputs.append((in_iwd(iwd, dest), result.get(key) or b""))
    for name, data in (result.get("files") or {}).items():
        base = os.path.basename(name)
        if base and base not in (".", ".."):
            outputs.append((os.path.join(iwd, base), data))
    return outputs

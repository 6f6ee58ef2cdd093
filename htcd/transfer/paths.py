"""Path safety: what a transfer list may name, so that no file lands outside the sandbox or the
job's submit directory."""

from __future__ import annotations

import os


class TransferError(Exception):
    """A transfer failed or was refused; the message becomes the job's hold reason."""


def safe_name(name: str) -> str:
    """A transferred file's name: one path component, no escape from the sandbox."""
    base = os.path.basename(name.rstrip("/"))
    if base in ("", ".", "..") or "/" in base or "\0" in base:
        raise TransferError(f"unsafe file name {name!r} in the transfer list")
    return base

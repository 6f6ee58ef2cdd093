"""The history file: ads of jobs that left the queue, each ended by HTCondor's ``***`` banner."""

from __future__ import annotations

import os

from htcd.classad import ClassAd


def banner(ad: ClassAd) -> str:
    fields = " ".join(f"{k} = {ad[k]}" for k in ("Owner", "ClusterId", "ProcId", "CompletionDate",
                                                  "EnteredCurrentStatus") if k in ad)
    return f"*** {fields}\n"


def append(path: str | None, ad: ClassAd) -> None:
    if not path:
        return
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (ad.to_old() + "\n" + banner(ad)).encode())
    finally:
        os.close(fd)

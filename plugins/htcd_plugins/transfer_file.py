"""The ``file`` transfer plugin: ``file:///path`` copies a file of the execute point's own file
system into the sandbox, read as the job's user (a root starter must not read for the job what
the job could not read itself)."""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import BinaryIO
from urllib.parse import unquote, urlsplit

from htcd.hookspecs import hookimpl


def fetch(url: str, dest: BinaryIO, uid: int | None = None, gid: int | None = None) -> None:
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        raise ValueError(f"{url}: a file URL names a file of this host (file:///path), not of {parts.netloc}")
    path = unquote(parts.path)
    if os.geteuid() == 0 and uid is not None and uid != 0:
        dest.flush()
        proc = subprocess.run(["cat", "--", path], stdout=dest, stderr=subprocess.PIPE, user=uid,
                              group=gid, extra_groups=[], timeout=3600, check=False)
        if proc.returncode != 0:
            why = proc.stderr.decode(errors="replace").strip().split(": ", 1)[-1]
            raise OSError(f"cannot read {path}: {why or f'cat exited {proc.returncode}'}")
        return
    try:
        with open(path, "rb") as src:
            shutil.copyfileobj(src, dest)
    except OSError as exc:
        raise OSError(f"cannot read {path}: {exc.strerror}") from None


@hookimpl
def htcd_transfer_plugins() -> dict[str, object]:
    return {"file": fetch}

"""Looking inside a running job (condor_tail): who may, and the bytes of its output files.

HTCondor's condor_tail asks the schedd for the starter's address and a session, then sends
``STARTER_PEEK`` to the starter.  In htcd the starter is a task of the startd, so the tool
sends ``STARTER_PEEK`` to the startd itself over its authenticated channel, and the startd
decides here: the job's owner (its ``User``, exactly) or a queue superuser may look, nobody
else -- the same rule the schedd applies to rm, hold and qedit (docs/inside.md).
"""

from __future__ import annotations

import os
from typing import Any

from htcd.classad import ClassAd
from htcd.daemon.queue_users import authenticated, is_super_user
from htcd.wire.auth import Identity

DEFAULT_MAXBYTES = 1024  # condor_tail's default per tail


def refusal(config: Any, identity: Identity, job: ClassAd, what: str) -> str | None:
    """Why ``identity`` may not ``what`` (look at, run a command in...) ``job``; None when it may."""
    jid = f"{job.get_value('ClusterId')}.{job.get_value('ProcId')}"
    if not authenticated(identity):
        return f"{identity} is not authenticated (method {identity.method}): only job {jid}'s owner may {what} it"
    if is_super_user(config, identity):
        return None
    owner = str(job.get_value("Owner", "") or "")
    user = str(job.get_value("User", "") or "")
    if identity.user == owner and (not user or user.lower() == str(identity).lower()):
        return None
    return (f"{identity} may not {what} job {jid}: it belongs to {user or owner}; only the job's owner or a "
            "queue superuser (QUEUE_SUPER_USERS) may")


def read(path: str, offset: int | None, maxbytes: int) -> tuple[bytes, int]:
    """At most ``maxbytes`` of ``path`` from ``offset`` (None: its last ``maxbytes``), and the
    offset after them.  A file that shrank (rewritten) is read again from its start."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if offset is None:
                offset = max(0, size - maxbytes)
            elif offset > size:
                offset = 0
            if size - offset > maxbytes:  # condor_tail shows the last maxbytes of what is new
                offset = size - maxbytes
            f.seek(offset)
            data = f.read(maxbytes)
    except FileNotFoundError:
        return b"", offset or 0
    return data, offset + len(data)


def output_names(job: ClassAd) -> set[str]:
    """The names in ``transfer_output_files``: the only files other than stdout and stderr a
    tool may tail, as condor_tail allows."""
    text = str(job.get_value("TransferOutput", "") or "")
    return {os.path.basename(n.strip()) for n in text.split(",") if n.strip()}


def path_of(job: ClassAd, sandbox: str, shared_fs: bool, which: str, stdout: str, stderr: str) -> str:
    """Where the running job writes ``which`` ("stdout", "stderr" or an output file's name): its
    sandbox's stdio files, or with a shared file system its Out/Err in its Iwd."""
    iwd = str(job.get_value("Iwd", "") or "") if shared_fs else sandbox
    if which in ("stdout", "stderr"):
        if not shared_fs:
            return os.path.join(sandbox, stdout if which == "stdout" else stderr)
        name = str(job.get_value("Out" if which == "stdout" else "Err", "/dev/null") or "/dev/null")
        return name if os.path.isabs(name) else os.path.join(iwd, name)
    return os.path.join(iwd, os.path.basename(which))

"""``htcd chirp``: a running job reads and changes its own ad and writes to its user log (condor_chirp).

``htcd chirp set_job_attr ATTR VALUE``, ``get_job_attr ATTR``, ``set_job_attr_delayed ATTR VALUE``,
``get_job_attr_delayed ATTR`` and ``ulog MESSAGE``, run inside a job submitted with
``+WantIOProxy = true``: the tool finds the startd and the job's cookie in ``.chirp.config``
(docs/inside.md).  condor_chirp's file operations (fetch, put, read, write...) are refused by
name.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from htcd.errors import UserError

NOT_OFFERED = ("fetch", "put", "remove", "get_file", "read", "write", "rmdir", "getdir", "whoami",
               "whoareyou", "link", "readlink", "stat", "lstat", "statfs", "access", "chmod", "chown",
               "lchown", "truncate", "utime", "phase")
USAGE = {"set_job_attr": 2, "set_job_attr_delayed": 2, "get_job_attr": 1, "get_job_attr_delayed": 1, "ulog": 1}


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.add_argument("op", metavar="COMMAND", help="set_job_attr, get_job_attr, their _delayed forms, or ulog")
    p.add_argument("words", metavar="ARG", nargs="*", help="the command's arguments")
    return _run


def _run(args: argparse.Namespace) -> int:
    from htcd.client import inside

    op, words = args.op, list(args.words)
    if op in NOT_OFFERED:
        raise UserError(f"chirp {op}: htcd's chirp does not offer file operations; only "
                        f"{', '.join(USAGE)}")
    if op not in USAGE:
        raise UserError(f"chirp: unknown command {op!r} (one of {', '.join(USAGE)})")
    if len(words) != USAGE[op]:
        want = "ATTR VALUE" if USAGE[op] == 2 else ("MESSAGE" if op == "ulog" else "ATTR")
        raise UserError(f"usage: htcd chirp {op} {want}")
    if op.endswith("_delayed") and not words[0].startswith("Chirp"):
        raise UserError(f"chirp {op}: the attribute name must begin with Chirp (case-sensitive), not {words[0]!r}")
    env = dict(os.environ)
    base = op.removesuffix("_delayed")
    if base == "ulog":
        inside.chirp(env, "ulog", text=words[0])
    elif base == "set_job_attr":
        inside.chirp(env, "set_job_attr", attr=words[0], value=words[1])
    else:
        value = inside.chirp(env, "get_job_attr", attr=words[0]).get("value")
        if value is None:
            raise UserError(f"chirp get_job_attr: the job has no attribute {words[0]}")
        sys.stdout.write(f"{value}\n")
    return 0

"""``htcd tail``: the last bytes of a running job's stdout, stderr or output file (condor_tail).

``htcd tail [-name SCHEDD] [-maxbytes N] [-auto-retry] [-f | -follow] [-no-stdout] [-stderr]
JOBID [FILE ...]``.  The job's startd comes from the schedd's ad (``StartdIpAddr``); the tool
asks it with ``STARTER_PEEK`` over its authenticated channel, and only the job's owner or a
queue superuser gets an answer.  ``-follow`` polls every 2 seconds, as condor_tail, until the
job stops running (or an interrupt).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

from htcd.errors import UserError

POLL = 2.0  # condor_tail's period for -follow and -auto-retry


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.add_argument("job", metavar="JOBID", help="cluster.proc, or cluster for its first job")
    p.add_argument("files", metavar="FILE", nargs="*", help="files of transfer_output_files to tail instead")
    p.add_argument("-name", help="the schedd (default: this host's)")
    p.add_argument("-maxbytes", type=int, default=1024, help="at most this many bytes per tail (default 1024)")
    p.add_argument("-auto-retry", dest="auto_retry", action="store_true",
                   help="wait (polling every 2 s) for the job to start running")
    p.add_argument("-f", "-follow", dest="follow", action="store_true",
                   help="keep printing what the job writes until it stops running")
    p.add_argument("-no-stdout", dest="no_stdout", action="store_true", help="do not tail stdout")
    p.add_argument("-stderr", action="store_true", help="tail stderr instead of stdout")
    return _run


def _wanted(args: argparse.Namespace) -> list[str]:
    files = list(args.files)
    if args.stderr:
        files.insert(0, "stderr")
    elif not args.no_stdout and not files:
        files.insert(0, "stdout")
    if not files:
        raise UserError("nothing to tail: -no-stdout without -stderr or a file name")
    return files


def _run(args: argparse.Namespace) -> int:
    from htcd.cli import common
    from htcd.client import inside, schedd

    if args.maxbytes < 0:
        raise UserError(f"-maxbytes {args.maxbytes}: must be 0 or more")
    files = _wanted(args)
    cfg = common.config()
    address = schedd.address(cfg, args.name)[0]
    where = inside.locate_running(address, args.job, args.auto_retry, POLL)
    offsets: dict[str, int | None] = dict.fromkeys(files)
    out = sys.stdout.buffer
    while True:
        for name in files:
            data, offsets[name] = inside.peek(where, name, offsets[name], args.maxbytes)
            out.write(data)
        out.flush()
        if not args.follow:
            return 0
        time.sleep(POLL)
        try:
            now = inside.locate(address, args.job)
        except UserError:  # left the queue
            return 0
        if now.status != inside.RUNNING or now.startd != where.startd:
            return 0

"""``htcd wait LOG [ID]``: wait until jobs in an event log have completed or been removed (condor_wait).

Exit status as condor_wait: 0 when the jobs are done, 1 when the time limit ran out or the log
cannot be read.  Only the log is read, so it works while the schedd is down or on another host.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

POLL = 0.2  # seconds between reads of the log; condor_wait also polls


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.add_argument("log", metavar="LOG", help="the job event log to watch")
    p.add_argument("job", nargs="?", metavar="CLUSTER[.PROC]", help="only these jobs (default: all in the log)")
    p.add_argument("-wait", type=float, metavar="SECONDS", help="give up after this long (default: never)")
    p.add_argument("-num", type=int, metavar="N", help="return once N jobs have ended")
    p.add_argument("-echo", action="store_true", help="print the events as they are read")
    p.add_argument("-status", action="store_true", help="print when jobs are submitted, start and end")
    p.add_argument("-debug", action="store_true", help="say what is being waited for")
    return run


def _job_filter(text: str | None) -> Callable[[tuple[int, int]], bool]:
    from htcd.errors import UserError

    if text is None:
        return lambda _id: True
    c, dot, p = text.partition(".")
    try:
        cluster = int(c)
        proc = int(p) if dot else None
    except ValueError:
        raise UserError(f"bad job id {text!r}: expected CLUSTER or CLUSTER.PROC") from None
    if proc is None:
        return lambda jid: jid[0] == cluster
    return lambda jid: jid == (cluster, proc)


def run(args: argparse.Namespace) -> int:
    import os

    from htcd.errors import UserError
    from htcd.eventlog import DONE, EXECUTE, SUBMIT, LogFollower

    if args.num is not None and args.num < 1:
        raise UserError("-num takes a number of jobs of at least 1")
    wanted = _job_filter(args.job)
    if not os.path.exists(args.log):
        print(f"Couldn't open {args.log}: no such file", file=sys.stderr)
        return 1
    follower = LogFollower(args.log)
    deadline = None if args.wait is None else time.monotonic() + args.wait
    seen: set[tuple[int, int]] = set()
    ended: set[tuple[int, int]] = set()
    out = sys.stdout
    while True:
        for ev in follower.poll():
            if not wanted(ev.job_id):
                continue
            if args.echo:
                out.write(ev.raw)
            seen.add(ev.job_id)
            if ev.type in DONE:
                ended.add(ev.job_id)
            if args.status:
                what = {SUBMIT: "submitted", EXECUTE: "executing"}.get(ev.type) or (
                    "completed" if ev.type in DONE else None)
                if what:
                    out.write(f"{ev.cluster}.{ev.proc}.0 {what}\n")
        if args.num is not None and len(ended) >= args.num:
            out.write(f"Specified number of jobs ({args.num}) done.\n")
            return 0
        if args.num is None and seen and ended >= seen:
            out.write("All jobs done.\n")
            return 0
        if args.debug:
            print(f"waiting: {len(seen) - len(ended)} of {len(seen)} jobs not done", file=sys.stderr)
        out.flush()
        if deadline is not None and time.monotonic() >= deadline:
            if args.job and not seen:
                out.write(f"Specified job {args.job} not found in the log.\n")
            out.write("Time expired.\n")
            return 1
        time.sleep(POLL if deadline is None else max(0.0, min(POLL, deadline - time.monotonic())))

"""``htcd submit FILE``: parse locally, reserve a cluster id, commit every proc in one transaction."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.add_argument("file", nargs="?", help="the submit description (default: standard input)")
    p.add_argument("-terse", action="store_true", help="print only the job id range")
    p.add_argument("-dump", metavar="FILE", help="write the job ads to FILE instead of submitting")
    p.add_argument("-batch-name", dest="batch_name", help="the JobBatchName of these jobs")
    p.add_argument("-name", help="the schedd to submit to (default: this host's)")
    return run


def run(args: argparse.Namespace) -> int:
    import pwd

    from htcd.cli import common
    from htcd.errors import UserError
    from htcd.submit import parse_submit

    if args.file and args.file != "-":
        try:
            with open(args.file) as f:
                text = f.read()
        except OSError as exc:
            raise UserError(f"cannot read submit file {args.file}: {exc.strerror}") from None
        filename, submit_dir = args.file, os.path.dirname(os.path.abspath(args.file))
    else:
        text, filename, submit_dir = sys.stdin.read(), "<stdin>", os.getcwd()
    if args.batch_name:
        text = f"batch_name = {args.batch_name}\n" + text
    desc = parse_submit(text, filename)
    cfg = common.config("SUBMIT")
    owner = pwd.getpwuid(os.geteuid()).pw_name
    if args.dump:
        cluster_ad, procs = desc.make_jobs(1, submit_dir=submit_dir, owner=owner, qdate=int(time.time()),
                                           config_get=cfg.get)
        from htcd.classad import ClassAd
        with open(args.dump, "w") as out:
            for p in procs:
                out.write(ClassAd.from_wire({**cluster_ad, **p}).to_old() + "\n\n")
        return 0
    addr, _ = common.schedd_address(cfg, args.name)
    from htcd.wire.client import Connection
    from htcd.wire.errors import WireError

    try:
        with Connection(addr) as conn:
            cid = conn.call("RESERVE_CLUSTER")["cluster_id"]
            cluster_ad, procs = desc.make_jobs(cid, submit_dir=submit_dir, owner=owner, qdate=int(time.time()),
                                               config_get=cfg.get)
            reply = conn.call("SUBMIT", cluster_id=cid, cluster_ad=cluster_ad, proc_ads=procs)
    except WireError as exc:
        raise UserError(f"cannot submit to the schedd: {exc}") from None
    n = reply["procs"]
    if args.terse:
        print(f"{cid}.0 - {cid}.{n - 1}")
    else:
        print("Submitting job(s)" + "." * min(n, 50))
        print(f"{n} job(s) submitted to cluster {cid}.")
    return 0

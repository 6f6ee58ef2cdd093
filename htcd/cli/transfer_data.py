"""``htcd transfer_data``: fetch the output of spooled jobs (condor_transfer_data).

Jobs submitted with ``htcd submit -spool`` keep their output in the schedd's spool when they
complete; this tool brings it back to where their submit files said (Iwd, output, error,
transfer_output_remaps) and lets the jobs leave the queue.  Jobs are chosen as for ``htcd rm``:
CLUSTER, CLUSTER.PROC, OWNER, ``-constraint EXPR`` or ``-all``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    from htcd.cli.spooling import add_target_options

    p.add_argument("targets", nargs="*", metavar="CLUSTER|CLUSTER.PROC|OWNER")
    p.add_argument("-all", action="store_true", help="all your spooled jobs")
    p.add_argument("-constraint", help="jobs satisfying this ClassAd expression")
    add_target_options(p)
    return run


def run(args: argparse.Namespace) -> int:
    from htcd.cli import common, spooling
    from htcd.client import spool
    from htcd.client.schedd import ScheddClient
    from htcd.errors import UserError

    ids, constraint = common.job_selection(args.targets, args.constraint, args.all)
    if not ids and not constraint:
        raise UserError("say which jobs: CLUSTER, CLUSTER.PROC, OWNER, -constraint EXPR or -all")
    addr = spooling.schedd_address(args)
    print("Fetching data files...")
    with ScheddClient(addr) as schedd:
        done, skipped, _, _ = spool.fetch(schedd.conn, ids, constraint)
    for job, why in sorted(skipped.items()):
        if why != "not spooled" or ids:
            print(f"Job {job}: {why}", file=sys.stderr)
    if not done:
        raise UserError("no spooled output was fetched: no completed spooled job matched")
    return 0

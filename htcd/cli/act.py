"""``htcd rm``, ``htcd hold``, ``htcd release``: act on jobs by id, cluster, owner or constraint."""

from __future__ import annotations

import argparse
from collections.abc import Callable

ACTIONS = {"rm": ("remove", "marked for removal"), "hold": ("hold", "held"), "release": ("release", "released")}


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.add_argument("targets", nargs="*", metavar="CLUSTER|CLUSTER.PROC|OWNER")
    p.add_argument("-all", action="store_true", help="all jobs you may act on")
    p.add_argument("-constraint", help="jobs satisfying this ClassAd expression")
    p.add_argument("-reason", help="the reason recorded in the job")
    p.add_argument("-name", help="the schedd (default: this host's)")

    def run(args: argparse.Namespace) -> int:
        return act(name, args)

    return run


def act(tool: str, args: argparse.Namespace) -> int:
    from htcd.cli import common
    from htcd.errors import UserError

    action, done = ACTIONS[tool]
    ids = [t for t in args.targets if t.replace(".", "", 1).isdigit()]
    owners = [t for t in args.targets if t not in ids]
    constraints = [f"({args.constraint})"] if args.constraint else []
    if owners:
        constraints.append("(" + " || ".join(f'Owner == "{o}"' for o in owners) + ")")
    if args.all:
        constraints.append("true")
    if not ids and not constraints:
        raise UserError("say which jobs: CLUSTER, CLUSTER.PROC, OWNER, -constraint EXPR or -all")
    cfg = common.config()
    addr, _ = common.schedd_address(cfg, args.name)
    try:
        reply = common.call(addr, "ACT_ON_JOBS", "cannot reach the schedd", action=action, ids=ids,
                            constraint=" || ".join(constraints) or None, reason=args.reason)
    except UserError as exc:
        if "no jobs matched" in str(exc):
            raise UserError(f"couldn't find/{action} any jobs matching {' '.join(args.targets) or args.constraint}") from None
        raise
    failed = 0
    for job_id, outcome in reply["results"].items():
        if outcome.startswith(("denied", "not ")):
            failed += 1
            print(f"Job {job_id} not {done}: {outcome}")
        else:
            print(f"Job {job_id} {done}")
    return 1 if failed else 0

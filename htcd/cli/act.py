"""``htcd rm``, ``htcd hold``, ``htcd release``: act on jobs by id, cluster, owner or constraint;
``htcd qedit``: set attributes of such jobs (one transaction for all of them)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from htcd.client.schedd import ScheddClient

ACTIONS = {"rm": ("remove", "marked for removal"), "hold": ("hold", "held"), "release": ("release", "released")}


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    if name == "qedit":
        p.add_argument("words", nargs="+", metavar="[CLUSTER|CLUSTER.PROC|OWNER] ATTR VALUE ...")
    else:
        p.add_argument("targets", nargs="*", metavar="CLUSTER|CLUSTER.PROC|OWNER")
        p.add_argument("-all", action="store_true", help="all jobs you may act on")
        p.add_argument("-reason", help="the reason recorded in the job")
    p.add_argument("-constraint", help="jobs satisfying this ClassAd expression")
    p.add_argument("-name", help="the schedd (default: this host's)")

    def run(args: argparse.Namespace) -> int:
        return qedit(args) if name == "qedit" else act(name, args)

    return run


def _schedd(args: argparse.Namespace) -> ScheddClient:
    from htcd.cli import common
    from htcd.client import schedd

    addr, _ = schedd.address(common.config(), args.name)
    return schedd.ScheddClient(addr)


def act(tool: str, args: argparse.Namespace) -> int:
    from htcd.cli import common
    from htcd.errors import UserError

    action, done = ACTIONS[tool]
    ids, constraint = common.job_selection(args.targets, args.constraint, args.all)
    if not ids and not constraint:
        raise UserError("say which jobs: CLUSTER, CLUSTER.PROC, OWNER, -constraint EXPR or -all")
    try:
        with _schedd(args) as schedd:
            results = schedd.act(action, ids, constraint, args.reason)
    except UserError as exc:
        if "no jobs matched" in str(exc):
            raise UserError(f"couldn't find/{action} any jobs matching {' '.join(args.targets) or args.constraint}") from None
        raise
    failed = 0
    for job_id, outcome in results.items():
        if outcome.startswith(("denied", "not ")):
            failed += 1
            print(f"Job {job_id} not {done}: {outcome}")
        else:
            print(f"Job {job_id} {done}")
    return 1 if failed else 0


def qedit(args: argparse.Namespace) -> int:
    """``htcd qedit [CLUSTER|CLUSTER.PROC|OWNER | -constraint EXPR] ATTR VALUE [ATTR VALUE ...]``."""
    from htcd.cli import common
    from htcd.errors import UserError

    words = list(args.words)
    targets = [] if args.constraint else words[:1]
    pairs = words[len(targets):]
    if not pairs or len(pairs) % 2:
        raise UserError("usage: htcd qedit [CLUSTER|CLUSTER.PROC|OWNER | -constraint EXPR] ATTR VALUE ...")
    attrs = dict(zip(pairs[::2], pairs[1::2], strict=True))
    ids, constraint = common.job_selection(targets, args.constraint)
    with _schedd(args) as schedd:
        n = schedd.set_attributes(ids, constraint, attrs)
    for k, v in attrs.items():
        print(f"Set attribute \"{k}\" to {v} for {n} job(s).")
    return 0

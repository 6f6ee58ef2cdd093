"""``htcd vacate`` and ``htcd vacate_job``: send running jobs away from where they run.

``htcd vacate [-graceful | -fast] [-name HOST | HOST ... | SLOT ...]`` (condor_vacate) ends the
claims on a machine (this host's by default), or on the named slots of it; their jobs are vacated
(KillSig, then killed after MachineMaxVacateTime) or, with ``-fast``, killed, and go back to idle
in their queues.  ``htcd vacate_job [-fast] [-name SCHEDD] CLUSTER|CLUSTER.PROC|OWNER ... |
-constraint EXPR | -all`` (condor_vacate_job) asks the schedd to vacate its running jobs: they
return to idle and their claims are released.
"""

from __future__ import annotations

import argparse
import socket
from collections.abc import Callable

from htcd.errors import UserError


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    if name == "vacate_job":
        p.add_argument("targets", nargs="*", metavar="CLUSTER|CLUSTER.PROC|OWNER")
        p.add_argument("-all", action="store_true", help="all jobs you may act on")
        p.add_argument("-constraint", help="jobs satisfying this ClassAd expression")
        p.add_argument("-name", help="the schedd (default: this host's)")
        p.add_argument("-fast", action="store_true", help="kill the jobs at once instead of a soft kill")
        return _vacate_job
    how = p.add_mutually_exclusive_group()
    how.add_argument("-graceful", action="store_true", help="(the default) soft-kill the jobs, then kill them")
    how.add_argument("-fast", action="store_true", help="hard-kill the jobs at once")
    p.add_argument("-name", dest="names", action="append", default=[], metavar="HOST",
                   help="the machine (its name, or a slot name slotN@HOST)")
    p.add_argument("hosts", nargs="*", metavar="HOST|SLOT", help="machines or slots (default: this host)")
    return _vacate


def _vacate(args: argparse.Namespace) -> int:
    from htcd.cli import common
    from htcd.client import startd

    cfg = common.config()
    targets = [*args.names, *args.hosts] or [socket.getfqdn()]
    command = "Vacate-All-Fast" if args.fast else "Vacate-All-Claims"
    failed = 0
    for target in targets:
        slot = target.split("@", 1)[0] if "@" in target or target.lower().startswith("slot") else ""
        addr, name = startd.find(cfg, target if "@" in target or not slot else socket.getfqdn())
        try:
            vacated = startd.vacate_claims(addr, bool(args.fast), [target] if slot else [], command)
        except UserError as exc:
            print(f"Can't send {command} command to startd {name}: {exc}")
            failed += 1
            continue
        what = ("Vacate-Claim-Fast" if args.fast else "Vacate-Claim") if slot else command
        print(f'Sent "{what}" command{f" for {target}" if slot else ""} to startd {name}')
        if slot and not vacated:
            print(f"\t{target} holds no claim")
    return 1 if failed else 0


def _vacate_job(args: argparse.Namespace) -> int:
    from htcd.cli import common
    from htcd.client import schedd

    ids, constraint = common.job_selection(args.targets, args.constraint, args.all)
    if not ids and not constraint:
        raise UserError("say which jobs: CLUSTER, CLUSTER.PROC, OWNER, -constraint EXPR or -all")
    addr, _ = schedd.address(common.config(), args.name)
    results = schedd.vacate_jobs(addr, ids, constraint, bool(args.fast), " ".join(args.targets) or str(args.constraint))
    failed = 0
    for job_id, outcome in results.items():
        if outcome in ("vacated", "fast-vacated"):
            print(f"Job {job_id} {outcome}")
        else:
            failed += 1
            print(f"Job {job_id} not vacated: {outcome}")
    return 1 if failed else 0

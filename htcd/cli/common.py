"""What the tools share: loading config, naming jobs on the command line, time stamps.  Talking
to the daemons is :mod:`htcd.client`'s."""

from __future__ import annotations

import argparse
import time

from htcd.config import Config
from htcd.config import load as load_config


def config(subsystem: str = "TOOL") -> Config:
    return load_config(subsystem)


def job_selection(targets: list[str], constraint: str | None,
                  everything: bool = False) -> tuple[list[str], str | None]:
    """(job ids, constraint) for ``CLUSTER``/``CLUSTER.PROC`` ids, owners, ``-constraint`` and
    ``-all``, as ``rm``, ``hold``, ``release``, ``qedit``, ``vacate_job`` and ``transfer_data`` take them."""
    ids = [t for t in targets if t.replace(".", "", 1).isdigit()]
    owners = [t for t in targets if t not in ids]
    constraints = [f"({constraint})"] if constraint else []
    if owners:
        constraints.append("(" + " || ".join(f'Owner == "{o}"' for o in owners) + ")")
    if everything:
        constraints.append("true")
    return ids, " || ".join(constraints) or None


def job_constraint(args: argparse.Namespace) -> str | None:
    """The one constraint of ``q``/``history`` arguments: ``-constraint``, then ids or owners
    (any of them), then ``-run``/``-hold``/``-idle`` (any of them)."""
    parts = [f"({args.constraint})"] if args.constraint else []
    alts = []
    for t in args.targets:
        if t.replace(".", "", 1).isdigit():
            c, _, p = t.partition(".")
            alts.append(f"(ClusterId == {c} && ProcId == {p})" if p else f"ClusterId == {c}")
        else:
            alts.append(f'Owner == "{t}"')
    if alts:
        parts.append("(" + " || ".join(alts) + ")")
    states = [f"JobStatus == {n}" for flag, n in (("run", 2), ("hold", 5), ("idle", 1)) if getattr(args, flag, False)]
    if states:
        parts.append("(" + " || ".join(states) + ")")
    return " && ".join(parts) or None


def now_stamp() -> str:
    return time.strftime("%m/%d/%y %H:%M:%S")

"""``htcd rm``, ``htcd hold``, ``htcd release``: act on jobs by id, cluster, owner or constraint;
``htcd qedit``: set attributes of such jobs (one transaction for all of them)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

from htcd.errors import UserError

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


# HTCondor's words for an action: (verb, past) as condor_rm/hold/release print them
WORDS = {"rm": ("remove", "marked for removal"), "hold": ("hold", "held"), "release": ("release", "released")}
SUCCESS = {"removed", "removing", "held", "released"}


def job_message(tool: str, job_id: str, outcome: str) -> tuple[bool, str]:
    """(success, HTCondor's line) for one job's outcome, as condor_rm/hold/release print it."""
    verb, past = WORDS[tool]
    if outcome in SUCCESS:
        return True, f"Job {job_id} {past}"
    if outcome.startswith("denied"):
        return False, f"Permission denied to {verb} job {job_id}"
    if outcome == "already removed":
        return False, f"Job {job_id} already marked for removal"
    if tool == "hold" and outcome == "not held: status 5":
        return False, f"Job {job_id} already held"
    if tool == "release" and outcome.startswith("not held"):
        return False, f"Job {job_id} not held to be released"
    return False, f"Job {job_id} not {past}: {outcome}"


def summary_constraint(targets: list[str], constraint: str | None, everything: bool) -> tuple[str | None, str]:
    """The one constraint condor_rm builds from clusters, users, ``-constraint`` and ``-all``, and
    the words its summary line names it by (`` in cluster 12``, `` of user "bob"``, ...)."""
    alts: list[str] = []
    kinds: set[str] = set()
    for t in targets:
        if t.isdigit():
            alts.append(f"ClusterId == {int(t)}")
            kinds.add("cluster")
        elif not _is_proc(t):
            alts.append(f'Owner == "{t}"')
            kinds.add("user")
    usercluster = " || ".join(alts)
    simple = len(alts) == 1
    if everything:
        text, kind = "ClusterId >= 0", "all"
        if constraint or usercluster:
            raise UserError("can't mix -all with other constraints")
    elif constraint and usercluster:
        text, kind = f"({constraint}) && ({usercluster})", "complex"
    elif constraint:
        text, kind = constraint, "complex"
    elif usercluster:
        text, kind = usercluster, (kinds.pop() if simple else "complex")
    else:
        return None, ""
    if kind == "all":
        return text, ""
    if kind in ("cluster", "user"):
        word = "in cluster" if kind == "cluster" else "of user"
        return text, f" {word} {text.split(' == ', 1)[1]}"
    return text, f" matching constraint ({text})"


def _is_proc(t: str) -> bool:
    c, dot, p = t.partition(".")
    return bool(dot) and c.isdigit() and p.isdigit()


def act(tool: str, args: argparse.Namespace) -> int:
    """condor_rm/hold/release: each CLUSTER.PROC gets its own line; clusters, users,
    ``-constraint`` and ``-all`` together one ("All jobs in cluster 12 have been marked for
    removal"), as HTCondor's tools print them.  Exit 1 if anything failed."""
    import sys

    action, _ = ACTIONS[tool]
    verb, past = WORDS[tool]
    procs = [t for t in args.targets if _is_proc(t)]
    constraint, cmsg = summary_constraint(args.targets, args.constraint, args.all)
    if not procs and constraint is None:
        raise UserError("You did not specify any jobs (CLUSTER, CLUSTER.PROC, USER, -constraint EXPR or -all)")
    failed = False
    with _schedd(args) as schedd:
        if procs:
            try:
                results = schedd.act(action, procs, None, args.reason)
            except UserError as exc:
                if "no jobs matched" not in str(exc):
                    raise
                results = {}
            for job_id in procs:
                ok, line = job_message(tool, job_id, results.get(job_id, "not found")) \
                    if job_id in results else (False, f"Job {job_id} not found")
                failed |= not ok
                print(line, file=sys.stdout if ok else sys.stderr)
        if constraint is not None:
            try:
                results = schedd.act(action, [], constraint, args.reason)
            except UserError as exc:
                if "no jobs matched" not in str(exc):
                    raise
                results = {}
            if any(o in SUCCESS for o in results.values()):
                print(f"All jobs{cmsg} have been {past}")
            else:
                for job_id, outcome in results.items():
                    print(job_message(tool, job_id, outcome)[1], file=sys.stderr)
                print(f"Couldn't find/{verb} all jobs{cmsg}", file=sys.stderr)
                failed = True
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

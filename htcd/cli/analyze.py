"""``htcd q -better-analyze JOBID``: why a job is idle, in HTCondor's report layout.

The job comes from the schedd, the slot ads from the collector; htcd.classad.analyze does the
counting.  Beside HTCondor's sections the report says, per condition, on how many slots it is
undefined, and ends with a one-line verdict in plain words.
"""

from __future__ import annotations

import argparse
import sys

from htcd.classad import ClassAd, Expr
from htcd.classad.analyze import AP_UNIVERSES, Analysis, analyze, and_operands, universe_asked
from htcd.errors import UserError

WIDTH = 100
PRIORITY_NOTE = ("User priority: not known.  This analysis does not ask the negotiator's accountant (see\n"
                 "htcd userprio), so it cannot say whether other users are ahead of you in line.\n")
STATUS_NOTES = {2: "Job is running.", 3: "Job has been removed.", 4: "Job is completed.",
                5: "Job is held.", 7: "Job is suspended."}


def run(args: argparse.Namespace) -> int:
    from htcd.cli import common
    from htcd.client import collector
    from htcd.client.schedd import ScheddClient, address

    ids = [*args.analyze, *args.targets]
    if not ids:
        raise UserError("-better-analyze needs a job: htcd q -better-analyze CLUSTER.PROC")
    cfg = common.config()
    addr, name = address(cfg, args.name)
    constraint = common.job_constraint(argparse.Namespace(constraint=args.constraint, targets=ids))
    with ScheddClient(addr, timeout=300.0) as schedd:
        wires = [w for chunk in schedd.query(constraint) for w in chunk]
    if not wires:
        raise UserError(f"no job {' '.join(ids)} in the queue of schedd {name}")
    jobs = sorted((ClassAd.from_wire(w) for w in wires),
                  key=lambda a: (a.get_value("ClusterId", 0), a.get_value("ProcId", 0)))
    slots = collector.query(cfg, "Machine")
    out = sys.stdout
    out.write(f"\n\n-- Schedd: {name} : {addr}\n")
    for job in jobs:
        out.write(report(job, analyze(job, slots)))
    return 0


def job_id(job: ClassAd) -> str:
    """HTCondor's ``012.000``."""
    return f"{int(job.get_value('ClusterId', 0) or 0):03d}.{int(job.get_value('ProcId', 0) or 0):03d}"


def wrap_requirements(req: Expr | None, indent: str = "    ") -> str:
    """The expression on lines of at most WIDTH characters, broken after a top-level ``&&``."""
    if req is None:
        return indent + "(none)\n"
    parts = [str(p) for p in and_operands(req)]
    lines, line = [], ""
    for i, p in enumerate(parts):
        piece = p + (" &&" if i < len(parts) - 1 else "")
        if line and len(indent) + len(line) + 1 + len(piece) > WIDTH:
            lines.append(line)
            line = piece
        else:
            line = f"{line} {piece}" if line else piece
    lines.append(line)
    return "".join(indent + x + "\n" for x in lines)


def universe_notes(job: ClassAd, a: Analysis) -> list[str]:
    """Lines on the job's universe: one run on the access point, or one no slot offers."""
    universe = job.get_value("JobUniverse")
    if universe in AP_UNIVERSES and job.get_value("JobStatus") == 1:
        name, knob = AP_UNIVERSES[universe]
        return [f"\nUniverse: {name}.  The schedd runs this job itself, on the access point, when {knob}\n"
                "is true; the slots above play no part.\n"]
    out = []
    for c in a.conditions:
        asked = universe_asked(None, c.expr)
        if asked is not None and c.matched == 0:
            out.append(f"\nUniverse: the job needs the {asked[0]} universe (step [{c.step}], {c.reduced}),\n"
                       f"and no slot offers it: {c.reason.split('; ', 1)[-1]}.\n")
    return out


def report(job: ClassAd, a: Analysis) -> str:
    jid = job_id(job)
    out = [f"The Requirements expression for job {jid} is\n\n", wrap_requirements(job.lookup("Requirements")),
           "\n"]
    if a.job_attributes:
        out.append(f"Job {jid} defines the following attributes:\n\n")
        out += [f"    {n} = {text}\n" for n, text in a.job_attributes]
        out.append("\n")
    if a.conditions:
        out.append(f"The Requirements expression for job {jid} reduces to these conditions:\n\n")
        out.append("         Slots\nStep    Matched  Condition\n-----  --------  ---------\n")
        for c in a.conditions:
            note = f"   (undefined on {c.undefined} {'slot' if c.undefined == 1 else 'slots'})" if c.undefined else ""
            out.append(f"{f'[{c.step}]':<5}  {c.matched:>8}  {c.reduced}{note}\n")
        out.append("\n")
    status = job.get_value("JobStatus")
    if status in STATUS_NOTES:
        out.append(f"\n{jid}:  {STATUS_NOTES[status]}\n")
        if status == 5 and isinstance(job.get_value("HoldReason"), str):
            out.append(f"\nHold reason: {job.get_value('HoldReason')}\n")
    s = a.summary
    out.append(f"\n{jid}:  Run analysis summary ignoring user priority.  Of {s.slots} machines,\n"
               f"  {s.rejected_by_job:>5} are rejected by your job's requirements\n"
               f"  {s.reject_job:>5} reject your job because of their own requirements\n"
               f"  {s.running_yours:>5} match and are already running your jobs\n"
               f"  {s.serving_others:>5} match but are serving other users\n"
               f"  {s.available:>5} are able to run your job\n")
    if s.slot_rejects_job > s.reject_job:
        out.append(f"  ({s.slot_rejects_job} of the {s.slots} refuse your job by their own requirements, "
                   "whatever the job asks for)\n")
    if s.slots and s.rejected_by_job == s.slots:
        out.append("\nWARNING:  Be advised:\n   No machines matched the jobs's constraints\n")
    suggested = sorted((c for c in a.conditions if c.suggestion), key=lambda c: -c.matched_without)
    if suggested:
        out.append("\nSuggestions:\n\n"
                   "    Condition                         Machines Matched    If Removed    Suggestion\n"
                   "    ---------                         ----------------    ----------    ----------\n")
        for i, c in enumerate(suggested, 1):
            cond = f"( {c.reduced} )"
            out.append(f"{i:<4}{cond:<34}{c.matched:<20}{c.matched_without:<14}{c.suggestion}\n")
    out += universe_notes(job, a)
    out.append("\n" + PRIORITY_NOTE)
    out.append(f"\nVerdict: {a.verdict}\n\n")
    return "".join(out)

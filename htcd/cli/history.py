"""``htcd history``: ads of jobs that left the queue, newest first: the schedd's (``-name``,
``-pool``: asked over the wire, as condor_history does), or this host's HISTORY file.

``-limit N`` stops after N ads; the file is read backwards from its end, so that costs only the
last N ads however long the history is.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from htcd.classad import ClassAd
from htcd.cli import output

STATUS = {1: "I", 2: "R", 3: "X", 4: "C", 5: "H", 6: ">", 7: "S"}


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.add_argument("targets", nargs="*", metavar="OWNER|CLUSTER|CLUSTER.PROC", help="restrict to these")
    output.add_output_arguments(p, "job ads")
    p.add_argument("-constraint", help="a ClassAd expression the jobs must satisfy")
    p.add_argument("-limit", "-match", dest="limit", type=int, default=0, help="at most this many jobs")
    p.add_argument("-file", help="read this history file (default: the HISTORY knob)")
    p.add_argument("-name", help="ask this schedd for its history (over the wire) instead of reading a local file")
    p.add_argument("-pool", dest="tool_pool", metavar="HOST[:PORT]",
                   help="the pool's central manager (collector) that locates the schedd; asks it over the wire")
    order = p.add_mutually_exclusive_group()
    order.add_argument("-backwards", dest="forwards", action="store_false", help="newest first (the default)")
    order.add_argument("-forwards", dest="forwards", action="store_true", help="oldest first")
    p.set_defaults(forwards=False)
    p.add_argument("-since", metavar="JOBID|EXPR",
                   help="stop scanning at this job (CLUSTER or CLUSTER.PROC) or where this expression is true")
    p.add_argument("-completedsince", metavar="TIME",
                   help="stop at the first job that completed on or before this time (an expression)")
    p.add_argument("-scanlimit", type=int, default=0, help="stop after reading this many ads")
    return run


TABLE_ATTRS = ["ClusterId", "ProcId", "Owner", "QDate", "RemoteWallClockTime", "JobStatus", "CompletionDate",
               "EnteredCurrentStatus", "Cmd", "Arguments", "Args"]


def since_expression(args: argparse.Namespace) -> str | None:
    """-since (a job id becomes ``ClusterId == C && ProcId == P``) or -completedsince
    (``CompletionDate <= T``), as condor_history reads them: the scan stops where it is true."""
    from htcd.errors import UserError

    if args.since and args.forwards:
        raise UserError("Argument -forwards cannot be combined with -since.")
    if args.since and args.completedsince:
        raise UserError("-since and -completedsince both say where to stop: give one of them")
    parts = []
    since = (args.since or "").strip()
    if since:
        c, dot, p = since.partition(".")
        if c.isdigit() and (not dot or p.isdigit()):
            parts.append(f"(ClusterId == {c} && ProcId == {p})" if dot else f"ClusterId == {c}")
        else:
            parts.append(f"({since})")
    if args.completedsince:
        parts.append(f"(CompletionDate <= ({args.completedsince}))")
    return " || ".join(parts) or None


def _parsed(text: str | None, what: str) -> Any:
    from htcd.classad import ClassAdSyntaxError, parse_expr
    from htcd.errors import UserError

    try:
        return parse_expr(text) if text else None
    except ClassAdSyntaxError as exc:
        raise UserError(f"bad {what} {text!r}: {exc}") from None


def _matching(ads: Iterator[ClassAd], args: argparse.Namespace) -> Iterator[ClassAd]:
    """The local file's ads as the schedd would select them: constraint, -since, -scanlimit."""
    from htcd.classad import is_true
    from htcd.cli import common

    expr = _parsed(common.job_constraint(args), "constraint")
    stop = _parsed(since_expression(args), "-since")
    for n, ad in enumerate(ads, 1):
        if stop is not None and is_true(stop.eval(ad)):
            return
        if expr is None or is_true(expr.eval(ad)):
            yield ad
        if 0 < args.scanlimit <= n:
            return


def _local(args: argparse.Namespace) -> Iterator[ClassAd]:
    from htcd.cli import common
    from htcd.errors import UserError
    from htcd.schedd import history

    path = args.file or common.config().get("HISTORY")
    if not path:
        raise UserError("no history: the HISTORY knob is empty, so completed jobs are not kept")
    if not os.path.exists(path) and not history.rotated(path):
        raise UserError(f"no history file {path} (no job has left the queue yet)")
    ads = _matching(history.read(path, args.forwards), args)
    return itertools.islice(ads, args.limit) if args.limit > 0 else ads


def _remote(args: argparse.Namespace) -> Iterator[ClassAd]:
    """The schedd's history over the wire: it evaluates the constraint and -since, and streams."""
    from htcd.cli import common
    from htcd.client.schedd import ScheddClient, address

    constraint, since = common.job_constraint(args), since_expression(args)
    _parsed(constraint, "constraint")  # a syntax error is the user's: said here, before any connection
    _parsed(since, "-since")
    addr, _ = address(common.config(), args.name)
    projection = None
    if args.af and all(a.isidentifier() for a in args.af):
        projection = list(args.af)
    elif not (args.long or args.json or args.xml or args.af or args.format):
        projection = TABLE_ATTRS
    with ScheddClient(addr, timeout=300.0) as schedd:
        for chunk in schedd.history(constraint, projection, max(args.limit, 0), since, args.forwards,
                                    max(args.scanlimit, 0)):
            for wire in chunk:
                yield ClassAd.from_wire(wire)


def run(args: argparse.Namespace) -> int:
    if args.file and (args.name or args.tool_pool):
        from htcd.errors import UserError
        raise UserError("-file reads a local file; it cannot be combined with -name or -pool")
    ads = _remote(args) if args.name or args.tool_pool else _local(args)
    out = sys.stdout
    if args.xml:
        _write_xml(ads, out)
    elif args.long:
        for ad in ads:
            out.write(ad.to_old() + "\n")
    elif args.json:
        out.write(output.json_form(list(ads)) + "\n")
    elif args.af:
        if "h" in args.af_options:
            out.write(output.autoformat([], args.af, args.af_options))
        opts = args.af_options.replace("h", "")
        for ad in ads:
            out.write(output.autoformat([ad], args.af, opts))
    elif args.format:
        for ad in ads:
            out.write(output.formatted([ad], args.format))
    else:
        out.write(table(ads))
    return 0


def _write_xml(ads: Iterator[ClassAd], out: TextIO) -> None:
    """As condor_history -xml prints it: the header and each ad followed by a blank line, the
    footer too (header and footer even when no ad matches)."""
    from htcd.classad import xml as classad_xml

    out.write(classad_xml.HEADER + "\n")
    for ad in ads:
        out.write(classad_xml.ad_xml(ad) + "\n\n")
    out.write(classad_xml.FOOTER + "\n")


def table(ads: Iterator[ClassAd]) -> str:
    from htcd.cli.output import duration, short_date

    lines = [" ID     OWNER          SUBMITTED   RUN_TIME     ST  COMPLETED   CMD"]
    for ad in ads:
        cmd = os.path.basename(str(ad.get_value("Cmd", "")))
        arguments = ad.get_value("Arguments") or ad.get_value("Args") or ""
        done = ad.get_value("CompletionDate", 0) or ad.get_value("EnteredCurrentStatus", 0) or 0
        lines.append(f"{ad.get_value('ClusterId')}.{ad.get_value('ProcId'):<5} "
                     f"{str(ad.get_value('Owner', ''))[:14]:<14} {short_date(ad.get_value('QDate', 0) or 0)} "
                     f"{duration(float(ad.get_value('RemoteWallClockTime', 0) or 0)):>12} "
                     f"{STATUS.get(ad.get_value('JobStatus'), '?'):<3} "
                     f"{short_date(done) if done else '   ???    '} {cmd} {arguments}".rstrip())
    return "\n".join(lines) + "\n"

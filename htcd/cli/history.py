"""``htcd history``: ads of jobs that left the queue, newest first, from the schedd's HISTORY file.

``-limit N`` stops after N ads; the file is read backwards from its end, so that costs only the
last N ads however long the history is.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
from collections.abc import Callable, Iterator
from typing import TextIO

from htcd.classad import ClassAd
from htcd.cli import output

STATUS = {1: "I", 2: "R", 3: "X", 4: "C", 5: "H", 6: ">", 7: "S"}


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.add_argument("targets", nargs="*", metavar="OWNER|CLUSTER|CLUSTER.PROC", help="restrict to these")
    output.add_output_arguments(p, "job ads")
    p.add_argument("-constraint", help="a ClassAd expression the jobs must satisfy")
    p.add_argument("-limit", "-match", dest="limit", type=int, default=0, help="at most this many jobs")
    p.add_argument("-file", help="read this history file (default: the HISTORY knob)")
    return run


def _matching(ads: Iterator[ClassAd], args: argparse.Namespace) -> Iterator[ClassAd]:
    from htcd.classad import ClassAdSyntaxError, is_true, parse_expr
    from htcd.cli import common
    from htcd.errors import UserError

    text = common.job_constraint(args)
    try:
        expr = parse_expr(text) if text else None
    except ClassAdSyntaxError as exc:
        raise UserError(f"bad constraint {text!r}: {exc}") from None
    for ad in ads:
        if expr is None or is_true(expr.eval(ad)):
            yield ad


def run(args: argparse.Namespace) -> int:
    from htcd.cli import common
    from htcd.errors import UserError
    from htcd.schedd import history

    path = args.file or common.config().get("HISTORY")
    if not path:
        raise UserError("no history: the HISTORY knob is empty, so completed jobs are not kept")
    if not os.path.exists(path) and not history.rotated(path):
        raise UserError(f"no history file {path} (no job has left the queue yet)")
    ads = _matching(history.read(path), args)
    if args.limit > 0:
        ads = itertools.islice(ads, args.limit)
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

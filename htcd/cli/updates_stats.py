"""``htcd updates_stats``: each sender's update statistics as the collector counted them
(HTCondor's condor_updates_stats), newest update first.

The figures come from the attributes the collector adds to every ad it stores (UpdatesTotal,
UpdatesSequenced, UpdatesLost, UpdatesHistory).  By default the ads are fetched from the
collector; ``-file FILE`` (``-`` for stdin) reads ``htcd status -l`` output instead, as
condor_updates_stats does.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable

from htcd.classad import ClassAd, parse_old_ads
from htcd.errors import UserError

TYPES = {"startd": "Machine", "schedd": "Scheduler", "submitter": "Submitter", "negotiator": "Negotiator",
         "master": "DaemonMaster", "collector": "Collector", "any": "Any"}


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.add_argument("-long", "--long", "-l", dest="long", action="store_true",
                   help="every update of the history (default: only where the state changes)")
    p.add_argument("-history", "--history", metavar="MIN-MAX", help="only updates numbered MIN to MAX (0 = latest)")
    p.add_argument("-interval", "--interval", type=int, metavar="SECONDS",
                   help="the assumed update interval (shows assumed times)")
    p.add_argument("-time", "--time", dest="time", action="store_const", const=True,
                   help="show the assumed time of each update")
    p.add_argument("-notime", "--notime", dest="time", action="store_const", const=False,
                   help="do not show assumed times")
    p.add_argument("-summary", "--summary", "-s", dest="summary", action="store_true",
                   help="only the totals of each ad")
    p.add_argument("-constraint", help="only ads satisfying this ClassAd expression")
    p.add_argument("-file", metavar="FILE", help="read 'htcd status -l' output from FILE ('-': stdin)")
    for flag, ad_type in TYPES.items():
        p.add_argument(f"-{flag}", dest="ad_type", action="store_const", const=ad_type, help=f"{ad_type} ads only")
    return run


def history_range(text: str | None) -> tuple[int, int | None]:
    """``MIN-MAX``, ``MIN-``, ``-MAX`` or empty (everything)."""
    if not text:
        return 0, None
    m = re.fullmatch(r"\s*(\d*)\s*-\s*(\d*)\s*", text)
    if not m:
        raise UserError(f"-history={text}: expected MIN-MAX (either may be left out)")
    return int(m.group(1) or 0), int(m.group(2)) if m.group(2) else None


def history_bits(text: str) -> list[bool]:
    """UpdatesHistory ("0x...", most significant bit = latest update) as lost flags, latest first."""
    t = text.strip().strip('"')
    if not t.lower().startswith("0x"):
        return []
    digits = t[2:]
    try:
        value = int(digits, 16) if digits else 0
    except ValueError:
        return []
    size = 4 * len(digits)
    return [bool(value >> (size - 1 - k) & 1) for k in range(size)]


def report(ad: ClassAd, args: argparse.Namespace, lo: int, hi: int | None) -> str:
    total = int(ad.get_value("UpdatesTotal", 0) or 0)
    seq = int(ad.get_value("UpdatesSequenced", 0) or 0)
    lost = int(ad.get_value("UpdatesLost", 0) or 0)
    name = ad.get_value("Name") or ad.get_value("Machine") or "?"
    lines = [f"*** Name/Machine = '{name}' MyType = '{ad.get_value('MyType', '?')}' ***", " Type: Main",
             f"   Stats: Total={total}, Seq={seq}, Lost={lost} ({100.0 * lost / total if total else 0.0:.2f}%)"]
    if args.summary:
        return "\n".join(lines) + "\n"
    bits = history_bits(str(ad.get_value("UpdatesHistory", "")))[:max(total, 0)]
    last = len(bits) - 1 if hi is None else min(hi, len(bits) - 1)
    interval = args.interval or int(ad.get_value("UpdateInterval", 0) or 0)
    show_time = args.time if args.time is not None else bool(args.interval)
    heard = int(ad.get_value("LastHeardFrom", 0) or 0)
    shown = lo - 1
    for k in range(lo, last + 1):
        if not (args.long or k in (lo, last) or bits[k] != bits[k - 1]):
            continue
        if k - shown > 1:
            lines.append("  ...")
        when = f" @ {time.ctime(heard - k * interval)}" if show_time and heard and interval else ""
        lines.append(f"   {k:4d}{when}: {'Missed' if bits[k] else 'Ok'}")
        shown = k
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    lo, hi = history_range(args.history)
    if args.file:
        if args.file == "-":
            print("(Reading from stdin)")
            text = sys.stdin.read()
        else:
            try:
                with open(args.file) as f:
                    text = f.read()
            except OSError as exc:
                raise UserError(f"cannot read {args.file}: {exc.strerror}") from None
        ads = parse_old_ads(text)
    else:
        from htcd.cli import common
        from htcd.client import collector

        ads = collector.query(common.config(), args.ad_type or "Any", args.constraint)
    # a sender's ad carries its statistics; the collector's own ad (UpdatesInitial...) is not one
    ads = [a for a in ads if "UpdatesTotal" in a and "LastHeardFrom" in a and "UpdatesInitial" not in a]
    if args.constraint and args.file:
        ads = [a for a in ads if a.eval_expr(args.constraint) is True]
    ads.sort(key=lambda a: (str(a.get_value("MyType", "")), str(a.get_value("Name", ""))))
    sys.stdout.write("".join(report(a, args, lo, hi) for a in ads))
    return 0

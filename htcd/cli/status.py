"""``htcd status``: slots (HTCondor's default table and totals) or other daemons' ads."""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Callable

from htcd.classad import ClassAd
from htcd.cli import output

TYPES = {"schedd": "Scheduler", "submitter": "Submitter", "negotiator": "Negotiator", "master": "DaemonMaster",
         "collector": "Collector", "any": "Any", "startd": "Machine"}
STATES = ("Owner", "Claimed", "Unclaimed", "Matched", "Preempting", "Backfill", "Drained")


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    for flag, ad_type in TYPES.items():
        p.add_argument(f"-{flag}", dest="ad_type", action="store_const", const=ad_type,
                       help=f"{ad_type} ads instead of slots")
    output.add_output_arguments(p, "ads")
    p.add_argument("-constraint", help="a ClassAd expression the ads must satisfy")
    p.add_argument("-total", action="store_true", help="only the totals")
    p.add_argument("-limit", type=int, default=0, help="at most this many ads")
    return run


def run(args: argparse.Namespace) -> int:
    from htcd.cli import common

    cfg = common.config()
    ad_type = args.ad_type or "Machine"
    ads = common.query_collector(cfg, ad_type, args.constraint, None, args.limit)
    ads.sort(key=lambda a: str(a.get_value("Name", "")))
    out = sys.stdout
    if args.long:
        out.write(output.long_form(ads))
    elif args.json:
        out.write(output.json_form(ads) + "\n")
    elif args.af:
        out.write(output.autoformat(ads, args.af, args.af_options))
    elif args.format:
        out.write(output.formatted(ads, args.format))
    elif ad_type == "Machine":
        if not args.total:
            out.write(slot_table(ads))
        out.write(slot_totals(ads))
    else:
        out.write(daemon_table(ads))
    return 0


def slot_table(ads: list[ClassAd]) -> str:
    from htcd.cli.output import duration

    now = time.time()
    width = max([len("Name")] + [len(str(a.get_value("Name", ""))) for a in ads]) + 1
    lines = [f"{'Name':<{width}}{'OpSys':<11}{'Arch':<7}{'State':<10}{'Activity':<9}{'LoadAv':>6} {'Mem':<6}"
             f"{'ActvtyTime'}", ""]
    for a in ads:
        since = float(a.get_value("EnteredCurrentActivity", now) or now)
        lines.append(f"{str(a.get_value('Name', '')):<{width}}{str(a.get_value('OpSys', '')):<11}"
                     f"{str(a.get_value('Arch', '')):<7}{str(a.get_value('State', '')):<10}"
                     f"{str(a.get_value('Activity', '')):<9}{float(a.get_value('LoadAvg', 0) or 0):>6.3f} "
                     f"{str(a.get_value('Memory', '')):<6}{duration(now - since)}")
    return "\n".join(lines) + "\n\n"


def slot_totals(ads: list[ClassAd]) -> str:
    rows: dict[str, Counter[str]] = {}
    for a in ads:
        key = f"{a.get_value('Arch', '')}/{a.get_value('OpSys', '')}"
        rows.setdefault(key, Counter())[str(a.get_value("State", ""))] += 1
    head = f"{'':>15}{'Total':>6} " + " ".join(f"{s:>{max(5, len(s))}}" for s in STATES)

    def row(label: str, c: Counter[str]) -> str:
        return f"{label:>15}{sum(c.values()):>6} " + " ".join(f"{c[s]:>{max(5, len(s))}}" for s in STATES)

    total: Counter[str] = Counter()
    lines = [head, ""]
    for key, c in sorted(rows.items()):
        lines.append(row(key, c))
        total.update(c)
    lines += ["", row("Total", total)]
    return "\n".join(lines) + "\n"


def daemon_table(ads: list[ClassAd]) -> str:
    lines = [f"{'Name':<40} {'Type':<14} {'Address'}", ""]
    for a in ads:
        lines.append(f"{str(a.get_value('Name', '')):<40} {str(a.get_value('MyType', '')):<14} "
                     f"{a.get_value('MyAddress', '')}")
    return "\n".join(lines) + "\n"

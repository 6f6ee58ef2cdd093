"""``htcd q``: the job queue, in HTCondor's batch summary, ``-nobatch`` table, ``-l``, ``-af`` or ``-json``."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable

from htcd.classad import ClassAd

STATUS = {1: "I", 2: "R", 3: "X", 4: "C", 5: "H", 6: ">", 7: "S"}


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.add_argument("targets", nargs="*", metavar="OWNER|CLUSTER|CLUSTER.PROC", help="restrict to these")
    p.add_argument("-nobatch", action="store_true", help="one line per job")
    p.add_argument("-batch", action="store_true", help="one line per batch (the default)")
    p.add_argument("-l", "-long", dest="long", action="store_true", help="whole job ads")
    p.add_argument("-af", "-autoformat", dest="af", nargs="+", metavar="ATTR", help="print these attributes")
    p.add_argument("-json", action="store_true", help="job ads as JSON")
    p.add_argument("-constraint", help="a ClassAd expression jobs must satisfy")
    p.add_argument("-totals", action="store_true", help="only the totals")
    p.add_argument("-name", help="the schedd to ask (default: this host's)")
    p.add_argument("-limit", type=int, default=0, help="at most this many jobs")
    return run


def _constraint(args: argparse.Namespace) -> str | None:
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
    return " && ".join(parts) or None


def run(args: argparse.Namespace) -> int:
    from htcd.cli import common, output

    cfg = common.config()
    addr, name = common.schedd_address(cfg, args.name)
    wires = common.call(addr, "QUERY_JOBS", "cannot reach the schedd", constraint=_constraint(args),
                        limit=args.limit)
    ads = [ClassAd.from_wire(w) for w in wires]
    ads.sort(key=lambda a: (a.get_value("ClusterId", 0), a.get_value("ProcId", 0)))
    out = sys.stdout
    if args.long:
        out.write(output.long_form(ads))
        return 0
    if args.json:
        out.write(output.json_form(ads) + "\n")
        return 0
    if args.af:
        out.write(output.autoformat(ads, args.af))
        return 0
    out.write(f"\n\n-- Schedd: {name} : {addr} @ {common.now_stamp()}\n")
    if not args.totals:
        out.write(nobatch(ads) if args.nobatch else batch(ads))
    out.write("\n" + totals("query", ads) + totals("all users", ads) + "\n")
    return 0


def _run_time(ad: ClassAd) -> float:
    total = float(ad.get_value("RemoteWallClockTime", 0) or 0)
    if ad.get_value("JobStatus") == 2:
        total += time.time() - float(ad.get_value("JobCurrentStartDate", time.time()) or time.time())
    return total


def _cmd(ad: ClassAd) -> str:
    cmd = os.path.basename(str(ad.get_value("Cmd", "")))
    args = ad.get_value("Arguments") or ad.get_value("Args") or ""
    return f"{cmd} {args}".strip()


def nobatch(ads: list[ClassAd]) -> str:
    from htcd.cli.output import duration, short_date

    lines = [" ID      OWNER            SUBMITTED     RUN_TIME ST PRI SIZE CMD"]
    for ad in ads:
        size = float(ad.get_value("ImageSize", 0) or 0) / 1024.0
        lines.append(f"{ad.get_value('ClusterId'):>4}.{ad.get_value('ProcId'):<3}  "
                     f"{str(ad.get_value('Owner', ''))[:14]:<14} {short_date(ad.get_value('QDate', 0) or 0)} "
                     f"{duration(_run_time(ad)):>12} {STATUS.get(ad.get_value('JobStatus'), '?'):<2} "
                     f"{ad.get_value('JobPrio', 0) or 0:<3} {size:4.1f} {_cmd(ad)}")
    return "\n".join(lines) + "\n"


def batch(ads: list[ClassAd]) -> str:
    """One line per batch: jobs grouped by owner and JobBatchName (else cluster)."""
    from htcd.cli.output import short_date

    groups: dict[tuple[str, str], list[ClassAd]] = {}
    for ad in ads:
        bname = ad.get_value("JobBatchName")
        key = str(bname) if isinstance(bname, str) else f"ID: {ad.get_value('ClusterId')}"
        groups.setdefault((str(ad.get_value("Owner", "")), key), []).append(ad)
    lines = ["OWNER BATCH_NAME    SUBMITTED   DONE   RUN    IDLE   HOLD  TOTAL JOB_IDS"]
    for (owner, bname), members in groups.items():
        st = [m.get_value("JobStatus") for m in members]
        ids = [f"{m.get_value('ClusterId')}.{m.get_value('ProcId')}" for m in members]
        job_ids = ids[0] if len(ids) == 1 else f"{ids[0]}-{ids[-1].split('.')[-1]}" \
            if len({i.split('.')[0] for i in ids}) == 1 else f"{ids[0]} ... {ids[-1]}"

        def col(n: int) -> str:
            return str(n) if n else "_"

        qdate = min(m.get_value("QDate", 0) or 0 for m in members)
        lines.append(f"{owner} {bname:<13} {short_date(qdate)} {col(st.count(4)):>6} {col(st.count(2)):>5} "
                     f"{col(st.count(1)):>7} {col(st.count(5)):>6} {len(members):>6} {job_ids}")
    return "\n".join(lines) + "\n"


def totals(who: str, ads: list[ClassAd]) -> str:
    st = [a.get_value("JobStatus") for a in ads]
    return (f"Total for {who}: {len(ads)} jobs; {st.count(4)} completed, {st.count(3)} removed, "
            f"{st.count(1)} idle, {st.count(2)} running, {st.count(5)} held, {st.count(7)} suspended\n")

"""``htcd q``: the job queue, in HTCondor's batch summary, ``-nobatch`` table, ``-l``, ``-af``, ``-json`` or ``-xml``."""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from htcd.classad import ClassAd, unparse
from htcd.cli import output

STATUS = {1: "I", 2: "R", 3: "X", 4: "C", 5: "H", 6: ">", 7: "S"}
SCHEDULER_UNIVERSE = 7  # a DAG job (its node jobs name its cluster in DAGManJobId)


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.add_argument("targets", nargs="*", metavar="OWNER|CLUSTER|CLUSTER.PROC", help="restrict to these")
    p.add_argument("-nobatch", action="store_true", help="one line per job")
    p.add_argument("-batch", action="store_true", help="one line per batch (the default)")
    p.add_argument("-dag", action="store_true",
                   help="with -nobatch: node jobs under their DAG job, named by their node")
    output.add_output_arguments(p, "job ads")
    p.add_argument("-constraint", help="a ClassAd expression jobs must satisfy")
    p.add_argument("-totals", action="store_true", help="only the totals")
    p.add_argument("-factory", action="store_true",
                   help="late-materialization factories (clusters with jobs still to materialize), one per line")
    p.add_argument("-name", help="the schedd to ask (default: this host's)")
    p.add_argument("-limit", type=int, default=0, help="at most this many jobs")
    p.add_argument("-autocluster", action="store_true", help="the autoclusters of the idle jobs")
    p.add_argument("-run", action="store_true", help="running jobs, with the slot each runs on")
    p.add_argument("-hold", action="store_true", help="held jobs, with since when and why")
    p.add_argument("-idle", action="store_true", help="idle jobs")
    p.add_argument("-userlog", metavar="FILE", help="the jobs an event log tells of (no schedd asked)")
    p.add_argument("-better-analyze", "-analyze", dest="analyze", nargs="*", metavar="JOBID",
                   help="why these jobs do (not) match: their Requirements against every slot")
    return run


def run(args: argparse.Namespace) -> int:
    from htcd.cli import common

    if args.analyze is not None:
        from htcd.cli import analyze
        return analyze.run(args)

    if args.userlog:
        return _from_userlog(args)

    from htcd.client.schedd import ScheddClient, address

    cfg = common.config()
    addr, name = address(cfg, args.name)
    constraint = common.job_constraint(args)
    out = sys.stdout
    with ScheddClient(addr, timeout=300.0) as schedd:
        if args.autocluster:
            out.write(autoclusters(schedd.autoclusters(constraint)))
            return 0
        if args.af and not args.af_options and all(_NAME.match(a) for a in args.af) \
                and not (args.long or args.json or args.xml):
            for chunk in schedd.query(constraint, list(args.af), args.limit):
                out.write(_af_fast(chunk, args.af))
            return 0
        if args.long or args.json or args.xml or args.af or args.format:
            out.write(_ads_out(_sorted(schedd.query(constraint, None, args.limit)), args))
            return 0
        out.write(f"\n\n-- Schedd: {name} : {addr} @ {common.now_stamp()}\n")
        owners = [t for t in args.targets if not t.replace(".", "", 1).isdigit()]
        if len(owners) == 1 and len(args.targets) == 1 and not args.constraint:
            counts = schedd.totals(None, owners[0])  # the schedd's per-owner counters: no scan
        else:
            counts = schedd.totals(constraint)
        if args.factory and not args.totals:
            out.write(factories(_sorted(schedd.query(constraint, TABLE_ATTRS + FACTORY_ATTRS, args.limit))))
        elif not args.totals:
            out.write(_table(_sorted(schedd.query(constraint, TABLE_ATTRS, args.limit)), args))
    out.write("\n" + totals_line("query", counts["query"]) + totals_line("all users", counts["all"]) + "\n")
    return 0


def _ads_out(ads: list[ClassAd], args: argparse.Namespace) -> str:
    """Whole ads as ``-l``, ``-json``, ``-xml``, ``-af`` or ``-format`` print them."""

    if args.xml:
        return output.xml_form(ads)
    if args.long:
        return output.long_form(ads)
    if args.json:
        return output.json_form(ads) + "\n"
    if args.af:
        return output.autoformat(ads, args.af, args.af_options)
    return output.formatted(ads, args.format)


def _table(ads: list[ClassAd], args: argparse.Namespace) -> str:
    """The table the flags ask for: ``-run`` and ``-hold`` have their own columns; ``-idle``, like
    them, lists jobs one per line; the default is one line per batch."""
    if args.run:
        return run_table(ads)
    if args.hold:
        return hold_table(ads)
    if args.nobatch and getattr(args, "dag", False) and not args.idle:
        return nobatch_dag(ads)
    return nobatch(ads) if args.nobatch or args.idle else batch(ads)


def _from_userlog(args: argparse.Namespace) -> int:
    """``-userlog FILE``: the queue as the event log tells it, filtered and shown like the schedd's."""
    from htcd.classad import ClassAdSyntaxError, is_true, parse_expr
    from htcd.cli import common
    from htcd.errors import UserError
    from htcd.eventlog import job_ads

    try:
        ads = job_ads(args.userlog)
    except OSError as exc:
        raise UserError(f"cannot read event log {args.userlog}: {exc.strerror}") from None
    text = common.job_constraint(args)
    if text:
        try:
            expr = parse_expr(text)
        except ClassAdSyntaxError as exc:
            raise UserError(f"bad constraint {text!r}: {exc}") from None
        ads = [a for a in ads if is_true(expr.eval(a))]
    if args.limit > 0:
        ads = ads[:args.limit]
    out = sys.stdout
    if args.long or args.json or args.xml or args.af or args.format:
        out.write(_ads_out(ads, args))
        return 0
    out.write(f"\n\n-- Event log: {args.userlog}\n")
    if not args.totals:
        out.write(_table(ads, args))
    counts: dict[int, int] = {}
    for a in ads:
        st = int(a.get_value("JobStatus", 1))
        counts[st] = counts.get(st, 0) + 1
    out.write("\n" + totals_line("query", counts) + "\n")
    return 0


def _sorted(chunks: Iterator[list[dict[str, str]]]) -> list[ClassAd]:
    """Ads by (cluster, proc): the schedd streams them in that order unless two submits committed
    out of their reservation order."""
    ads = [ClassAd.from_wire(w) for chunk in chunks for w in chunk]
    ads.sort(key=lambda a: (a.get_value("ClusterId", 0), a.get_value("ProcId", 0)))
    return ads


_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# what the batch and -nobatch tables print
TABLE_ATTRS = ["ClusterId", "ProcId", "Owner", "QDate", "JobStatus", "JobBatchName", "Cmd", "Args", "Arguments",
               "ImageSize", "JobPrio", "RemoteWallClockTime", "JobCurrentStartDate", "RemoteHost",
               "HoldReason", "EnteredCurrentStatus", "JobUniverse", "DAGManJobId", "DAGNodeName", "DAG_NodesTotal",
               "DAG_NodesDone", "TotalSubmitProcs", "JobMaterializeNextProcId", "JobMaterializeLimit",
               "JobMaterializeMaxIdle"]
# what ``-factory`` prints besides
FACTORY_ATTRS = ["JobMaterializePaused"]


def _af_fast(chunk: list[dict[str, str]], attrs: list[str]) -> str:
    """``-af`` of plain attribute names: literal values print straight from their text (one parse
    per distinct text); a job with a computed value is evaluated as a whole ad."""
    from htcd.classad import ClassAdSyntaxError, parse_expr
    from htcd.cli.output import value_text

    memo = _AF_MEMO
    lines = []
    for wire in chunk:
        row = []
        for a in attrs:
            text = wire.get(a)
            if text is None:
                row.append("undefined")
                continue
            shown = memo.get(text)
            if shown is None:
                try:
                    e = parse_expr(text)
                except ClassAdSyntaxError:
                    e = None
                if e is not None and e.is_literal():
                    v = e.const_value()
                    shown = v if isinstance(v, str) else unparse(v)
                    if len(memo) < 200_000:
                        memo[text] = shown
                else:
                    shown = value_text(ClassAd.from_wire(wire), a)
            row.append(shown)
        lines.append(" ".join(row) + "\n")
    return "".join(lines)


_AF_MEMO: dict[str, str] = {}


def autoclusters(rows: list[dict[str, Any]]) -> str:
    """``-autocluster``: each autocluster's id, job count and significant attribute values."""
    lines = []
    for r in rows:
        pairs = " ".join(f"{a}={v}" for a, v in zip(r["attrs"], r["values"], strict=False) if a)
        lines.append(f"{r['id']:>6} {r['count']:>8} {r['owner']} {pairs}".rstrip())
    return (" AUTO_ID JOB_COUNT OWNER SIGNIFICANT_ATTRIBUTES\n" + "\n".join(lines) + "\n") if lines else ""


def _run_time(ad: ClassAd) -> float:
    total = float(ad.get_value("RemoteWallClockTime", 0) or 0)
    if ad.get_value("JobStatus") == 2:
        total += time.time() - float(ad.get_value("JobCurrentStartDate", time.time()) or time.time())
    return total


def _cmd(ad: ClassAd) -> str:
    cmd = os.path.basename(str(ad.get_value("Cmd", "")))
    args = ad.get_value("Arguments") or ad.get_value("Args") or ""
    return f"{cmd} {args}".strip()


def _per_job(ads: list[ClassAd], header: str, rest: Callable[[ClassAd], str]) -> str:
    """One line per job: the id and owner columns every per-job view starts with, then ``rest``."""
    lines = [header]
    for ad in ads:
        lines.append(f"{ad.get_value('ClusterId'):>4}.{ad.get_value('ProcId'):<3}  "
                     f"{str(ad.get_value('Owner', ''))[:14]:<14} {rest(ad)}")
    return "\n".join(lines) + "\n"


def _nobatch_rest(ad: ClassAd) -> str:
    from htcd.cli.output import duration, short_date

    size = float(ad.get_value("ImageSize", 0) or 0) / 1024.0
    return (f"{short_date(ad.get_value('QDate', 0) or 0)} {duration(_run_time(ad)):>12} "
            f"{STATUS.get(ad.get_value('JobStatus'), '?'):<2} {ad.get_value('JobPrio', 0) or 0:<3} "
            f"{size:4.1f} {_cmd(ad)}")


def nobatch(ads: list[ClassAd]) -> str:
    return _per_job(ads, " ID      OWNER            SUBMITTED     RUN_TIME ST PRI SIZE CMD", _nobatch_rest)


def _dag_id(ad: ClassAd) -> int | None:
    value = ad.get_value("DAGManJobId")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def nobatch_dag(ads: list[ClassAd]) -> str:
    """``-nobatch -dag``: each DAG job followed by its node jobs, whose OWNER column is their node
    name after `` |-`` (one more space of indent per level of nested DAG), as condor_q prints it.
    A cluster's procs stay together (condor_q lists only a cluster's first proc under its DAG)."""
    clusters = {ad.get_value("ClusterId") for ad in ads}
    children: dict[int, list[ClassAd]] = {}
    top: list[ClassAd] = []
    for ad in ads:
        parent = _dag_id(ad)
        if parent is not None and parent in clusters and parent != ad.get_value("ClusterId"):
            children.setdefault(parent, []).append(ad)
        else:
            top.append(ad)
    lines = [" ID      OWNER/NODENAME   SUBMITTED     RUN_TIME ST PRI SIZE CMD"]
    seen: set[int] = set()

    def emit(ad: ClassAd, depth: int) -> None:
        cid = ad.get_value("ClusterId")
        node = ad.get_value("DAGNodeName")
        if _dag_id(ad) is not None:
            name = " " * depth + "|-" + (node if isinstance(node, str) else "")
        else:
            name = str(ad.get_value("Owner", ""))
        lines.append(f"{cid:>4}.{ad.get_value('ProcId'):<3}  {name[:14]:<14} {_nobatch_rest(ad)}")
        if isinstance(cid, int) and cid not in seen and ad is last_of_cluster.get(cid):
            seen.add(cid)
            for child in children.get(cid, []):
                emit(child, depth + 1)

    last_of_cluster = {ad.get_value("ClusterId"): ad for ad in ads}
    for ad in top:
        emit(ad, 0)
    return "\n".join(lines) + "\n"


def run_table(ads: list[ClassAd]) -> str:
    """``-run``: HTCondor's columns, with the slot each job runs on."""
    from htcd.cli.output import duration, short_date

    return _per_job(ads, " ID      OWNER            SUBMITTED     RUN_TIME HOST(S)",
                    lambda ad: f"{short_date(ad.get_value('QDate', 0) or 0)} {duration(_run_time(ad)):>12} "
                               f"{ad.get_value('RemoteHost') or ''}")


def hold_table(ads: list[ClassAd]) -> str:
    """``-hold``: since when each job is held and why."""
    from htcd.cli.output import short_date

    return _per_job(ads, " ID      OWNER          HELD_SINCE  HOLD_REASON",
                    lambda ad: f"{short_date(ad.get_value('EnteredCurrentStatus', 0) or 0)} "
                               f"{ad.get_value('HoldReason') or ''}")


def _batch_groups(ads: list[ClassAd]) -> dict[tuple[str, str], tuple[str, list[ClassAd]]]:
    """Jobs by batch: a DAG (its DAG job with its node jobs, nested DAGs too), else the owner's
    JobBatchName, else the cluster; in the order of their first job."""
    by_cluster = {ad.get_value("ClusterId"): ad for ad in ads}

    def root(ad: ClassAd) -> ClassAd:
        seen = set()
        while True:
            parent = _dag_id(ad)
            up = by_cluster.get(parent) if parent is not None else None
            if up is None or parent in seen or parent == ad.get_value("ClusterId"):
                return ad
            seen.add(parent)
            ad = up

    groups: dict[tuple[str, str], tuple[str, list[ClassAd]]] = {}
    for ad in ads:
        top = root(ad)
        owner = str(top.get_value("Owner", ""))
        if top.get_value("JobUniverse") == SCHEDULER_UNIVERSE or _dag_id(ad) is not None:
            bname = top.get_value("JobBatchName")
            key = f"dag {top.get_value('ClusterId')}"
            label = bname if isinstance(bname, str) else (
                f"DAG: {top.get_value('ClusterId')}" if top.get_value("JobUniverse") == SCHEDULER_UNIVERSE
                else f"NODE: {ad.get_value('DAGNodeName')}")
            groups.setdefault((owner, key), (str(label), []))[1].append(ad)
            continue
        bname = ad.get_value("JobBatchName")
        label = str(bname) if isinstance(bname, str) else f"ID: {ad.get_value('ClusterId')}"
        groups.setdefault((owner, "batch " + label), (label, []))[1].append(ad)
    return groups


def batch(ads: list[ClassAd]) -> str:
    """One line per batch, as condor_q: jobs grouped by DAG, else by owner and JobBatchName (else
    cluster).  For a DAG, RUN, IDLE and HOLD count its node jobs' procs (not DAG jobs), DONE and
    TOTAL are the DAG jobs' DAG_NodesDone and DAG_NodesTotal (``_`` when DAGMan has not set them)."""
    from htcd.cli.output import short_date

    lines = ["OWNER BATCH_NAME    SUBMITTED   DONE   RUN    IDLE   HOLD  TOTAL JOB_IDS"]
    for (owner, _key), (bname, members) in _batch_groups(ads).items():
        dags = [m for m in members if m.get_value("JobUniverse") == SCHEDULER_UNIVERSE]
        is_dag = bool(dags) or any(_dag_id(m) is not None for m in members)
        jobs = [m for m in members if m.get_value("JobUniverse") != SCHEDULER_UNIVERSE] if is_dag else members
        st = [m.get_value("JobStatus") for m in jobs]
        ids = [f"{m.get_value('ClusterId')}.{m.get_value('ProcId')}" for m in jobs]
        if not ids:
            job_ids = ""
        elif len(ids) == 1:
            job_ids = ids[0]
        elif len({i.split('.')[0] for i in ids}) == 1:
            job_ids = f"{ids[0]}-{ids[-1].split('.')[-1]}"
        else:
            job_ids = f"{ids[0]} ... {ids[-1]}"

        def col(n: int) -> str:
            return str(n) if n else "_"

        if is_dag:
            done = sum(_int(d.get_value("DAG_NodesDone")) for d in dags)
            total = sum(_int(d.get_value("DAG_NodesTotal")) for d in dags)
        else:
            done, total = _cluster_progress(members)
        qdate = min(m.get_value("QDate", 0) or 0 for m in members)
        lines.append(f"{owner} {bname:<13} {short_date(qdate)} {col(done):>6} {col(st.count(2)):>5} "
                     f"{col(st.count(1) + st.count(7)):>7} {col(st.count(5)):>6} {col(total) if is_dag else total:>6} "
                     f"{job_ids}".rstrip())
    return "\n".join(lines) + "\n"


def factories(ads: list[ClassAd]) -> str:
    """``-factory``: one line per factory, as condor_q -factory.  LIMIT is max_materialize (else
    TotalSubmitProcs), PRESNT the procs in the queue, NEXTID the next proc to materialize, MODE
    ``Held`` (condor_hold of the cluster) or ``Errs`` (the digest cannot build a proc).  htcd keeps
    the digest in the job queue file, not a file of its own: DIGEST says so.  A factory with no
    proc in the queue (held back by MAX_JOBS_PER_OWNER, say) has no line."""
    from htcd.cli.output import short_date

    lines = [" ID     OWNER          SUBMITTED  LIMIT PRESNT   RUN    IDLE   HOLD NEXTID MODE DIGEST"]
    by_cluster: dict[int, list[ClassAd]] = {}
    for ad in ads:
        if isinstance(ad.get_value("JobMaterializeNextProcId"), int):
            by_cluster.setdefault(_int(ad.get_value("ClusterId")), []).append(ad)
    for cid, procs in by_cluster.items():
        first = procs[0]
        limit = first.get_value("JobMaterializeLimit")
        limit = limit if isinstance(limit, int) else first.get_value("TotalSubmitProcs")
        st = [m.get_value("JobStatus") for m in procs]
        paused = first.get_value("JobMaterializePaused")
        mode = {1: "Held", -1: "Errs"}.get(paused if isinstance(paused, int) else 0, "")
        lines.append(f"{str(cid) + '.':<6} {first.get_value('Owner')!s:<14} {short_date(first.get_value('QDate', 0) or 0)} "
                     f"{_int(limit):>6} {len(procs):>6} {st.count(2):>5} {st.count(1):>7} {st.count(5):>6} "
                     f"{_int(first.get_value('JobMaterializeNextProcId')):>6} {mode:<4} (job queue)")
    return "\n".join(lines) + "\n"


def _cluster_progress(members: list[ClassAd]) -> tuple[int, int]:
    """(DONE, TOTAL) of a batch of plain clusters, as condor_q: TOTAL counts each cluster's
    TotalSubmitProcs (a late-materialization factory's unmaterialized procs too), DONE the procs
    that left the queue (of a factory: those materialized, JobMaterializeNextProcId, less those in
    the queue).  A cluster without TotalSubmitProcs counts its procs here and its completed ones."""
    by_cluster: dict[object, list[ClassAd]] = {}
    for m in members:
        by_cluster.setdefault(m.get_value("ClusterId"), []).append(m)
    done = total = 0
    for procs in by_cluster.values():
        submitted = procs[0].get_value("TotalSubmitProcs")
        if not isinstance(submitted, int) or isinstance(submitted, bool):
            done += sum(1 for m in procs if m.get_value("JobStatus") == 4)
            total += len(procs)
            continue
        made = procs[0].get_value("JobMaterializeNextProcId")
        if not isinstance(made, int) or isinstance(made, bool):
            # procs held back in the queue file (a submit that sent them all): those up to the last in the queue
            late = any(isinstance(procs[0].get_value(a), int) for a in ("JobMaterializeLimit", "JobMaterializeMaxIdle"))
            made = max(_int(m.get_value("ProcId")) for m in procs) + 1 if late else submitted
        left = made - len(procs)
        done += max(0, left)
        total += submitted
    return done, total


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def totals_line(who: str, st: dict[int, int]) -> str:
    return (f"Total for {who}: {sum(st.values())} jobs; {st.get(4, 0)} completed, {st.get(3, 0)} removed, "
            f"{st.get(1, 0)} idle, {st.get(2, 0)} running, {st.get(5, 0)} held, {st.get(7, 0)} suspended\n")

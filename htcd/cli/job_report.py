"""``htcd job_report``: what the pool did in a day, for admins: jobs completed and removed, CPU
and wall hours, per user, and why jobs were held.

Every schedd of the pool is asked (``-name`` one of them) over the wire, as ``htcd history
-name`` and ``htcd q`` ask: its history for the jobs that left the queue in the period, and its
queue for jobs that completed or were removed there but have not left yet, and for jobs held in
the period.  A job is counted where its ``EnteredCurrentStatus`` falls: the time it completed,
was removed or was held.  A job removed while held, and a job that was held and released before
it completed or was removed (its ``NumHolds``), is counted among the held too, with its last hold
reason (``LastHoldReason``, which the schedd keeps at a release or removal); the time it was held
is not in its ad, so it counts for the day it left.
CPU hours are ``RemoteUserCpu + RemoteSysCpu``, wall hours ``RemoteWallClockTime``, of the jobs
that left the queue (completed or removed).

The period is the last 24 hours, ``-day YYYY-MM-DD`` (local midnight to midnight), or
``-since``/``-until`` (a date, a date and time, or Unix seconds; ``-until`` defaults to now).
Its start and end go into the JSON as Unix seconds.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from htcd.classad import ClassAd
from htcd.errors import UserError

COMPLETED, REMOVED, HELD = 4, 3, 5
DAY = 86400
# The history is in the order jobs left the queue, newest first; records older than this before the
# period's start end the scan (a job appended late, e.g. by a schedd that restarted, is still seen).
SCAN_SLACK = DAY
ATTRS = ["ClusterId", "ProcId", "Owner", "JobStatus", "LastJobStatus", "EnteredCurrentStatus", "RemoteUserCpu",
         "RemoteSysCpu", "RemoteWallClockTime", "HoldReason", "HoldReasonCode", "HoldReasonSubCode",
         "LastHoldReason", "LastHoldReasonCode", "LastHoldReasonSubCode", "NumHolds"]


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.add_argument("-day", metavar="YYYY-MM-DD", help="that day, local midnight to midnight (default: the last 24 h)")
    p.add_argument("-since", metavar="TIME", help="from this time (YYYY-MM-DD[ HH:MM[:SS]] local, or Unix seconds)")
    p.add_argument("-until", metavar="TIME", help="up to this time (default: now)")
    p.add_argument("-name", help="only this schedd (default: every schedd the collector knows)")
    p.add_argument("-json", action="store_true", help="the report as JSON")
    return run


# ------------------------------------------------------------------------------- the period

def parse_time(text: str, flag: str) -> int:
    """Unix seconds of ``-since``/``-until``: Unix seconds, or an ISO date (and time) in local time."""
    t = text.strip()
    if t.isdigit():
        return int(t)
    try:
        when = dt.datetime.fromisoformat(t)
    except ValueError:
        raise UserError(f"{flag} {text!r}: expected YYYY-MM-DD, 'YYYY-MM-DD HH:MM[:SS]' or Unix seconds") from None
    return int(when.timestamp()) if when.tzinfo else int(time.mktime(when.timetuple()))


def period(args: argparse.Namespace, now: float | None = None) -> tuple[int, int]:
    """[start, end) in Unix seconds from -day, -since and -until."""
    end_now = int(now if now is not None else time.time()) + 1  # [start, end): the current second is in
    if args.day:
        if args.since or args.until:
            raise UserError("-day names the whole period: give either -day or -since/-until")
        try:
            day = dt.date.fromisoformat(args.day.strip())
        except ValueError:
            raise UserError(f"-day {args.day!r}: expected a date, YYYY-MM-DD") from None
        start = int(time.mktime(day.timetuple()))
        return start, int(time.mktime((day + dt.timedelta(days=1)).timetuple()))
    end = parse_time(args.until, "-until") if args.until else end_now
    start = parse_time(args.since, "-since") if args.since else end - DAY
    if start >= end:
        raise UserError(f"the period is empty: -since ({_stamp(start)}) is not before -until ({_stamp(end)})")
    return start, end


def _stamp(t: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(t))


# ------------------------------------------------------------------------------- the figures

@dataclass
class UserFigures:
    completed: int = 0
    removed: int = 0
    held: int = 0
    cpu_hours: float = 0.0
    wall_hours: float = 0.0

    def add(self, other: UserFigures) -> None:
        for k, v in asdict(other).items():
            setattr(self, k, getattr(self, k) + v)


@dataclass
class Report:
    start: int
    end: int
    schedds: list[str] = field(default_factory=list)
    users: dict[str, UserFigures] = field(default_factory=lambda: defaultdict(UserFigures))
    holds: Counter[tuple[int, int, str]] = field(default_factory=Counter)
    unanswered: dict[str, str] = field(default_factory=dict)  # schedd -> why it could not be asked

    def merge(self, other: Report) -> None:
        """Add another schedd's figures (kept apart until its answer is complete)."""
        for user, f in other.users.items():
            self.users[user].add(f)
        self.holds.update(other.holds)

    def count(self, ad: ClassAd) -> None:
        """Add one job ad (from the history or the queue) whose EnteredCurrentStatus is in the period."""
        user = self.users[str(ad.get_value("Owner", "") or "?")]
        status = ad.get_value("JobStatus")
        if status in (COMPLETED, REMOVED):
            if status == COMPLETED:
                user.completed += 1
            else:
                user.removed += 1
            user.cpu_hours += (_num(ad, "RemoteUserCpu") + _num(ad, "RemoteSysCpu")) / 3600
            user.wall_hours += _num(ad, "RemoteWallClockTime") / 3600
        if status == HELD:
            user.held += 1
            self.holds[(int(_num(ad, "HoldReasonCode")), int(_num(ad, "HoldReasonSubCode")),
                        str(ad.get_value("HoldReason", "") or ""))] += 1
        elif status in (COMPLETED, REMOVED) and (ad.get_value("LastJobStatus") == HELD or _num(ad, "NumHolds") > 0):
            # held once (and released, or removed while held): its last hold, under its Last* names
            # (older schedds left HoldReason in a removed job's ad)
            last = "Last" if ad.get_value("LastHoldReason") is not None else ""
            user.held += 1
            self.holds[(int(_num(ad, f"{last}HoldReasonCode")), int(_num(ad, f"{last}HoldReasonSubCode")),
                        str(ad.get_value(f"{last}HoldReason", "") or ""))] += 1

    def total(self) -> UserFigures:
        out = UserFigures()
        for f in self.users.values():
            out.add(f)
        return out

    def as_json(self) -> dict[str, Any]:
        def rounded(f: UserFigures) -> dict[str, Any]:
            return {**asdict(f), "cpu_hours": round(f.cpu_hours, 4), "wall_hours": round(f.wall_hours, 4)}

        return {"start": self.start, "end": self.end, "schedds": self.schedds, "unanswered": self.unanswered,
                "users": {u: rounded(f) for u, f in sorted(self.users.items())}, "total": rounded(self.total()),
                "held_reasons": [{"code": c, "subcode": s, "reason": r, "jobs": n}
                                 for (c, s, r), n in self.held_reasons()]}

    def held_reasons(self) -> list[tuple[tuple[int, int, str], int]]:
        return sorted(self.holds.items(), key=lambda kv: (-kv[1], kv[0]))

    def as_text(self) -> str:
        lines = [f"Job report {_stamp(self.start)} to {_stamp(self.end)}",
                 f"Schedds: {', '.join(self.schedds) or '(none)'}"]
        lines += [f"Not answering (not counted): {name}: {why}" for name, why in self.unanswered.items()]
        lines.append("")
        head = ("USER", "COMPLETED", "REMOVED", "HELD", "CPU_HOURS", "WALL_HOURS")
        rows = [(u, str(f.completed), str(f.removed), str(f.held), f"{f.cpu_hours:.2f}", f"{f.wall_hours:.2f}")
                for u, f in sorted(self.users.items())]
        t = self.total()
        rows.append(("TOTAL", str(t.completed), str(t.removed), str(t.held), f"{t.cpu_hours:.2f}",
                     f"{t.wall_hours:.2f}"))
        lines += _aligned([head, *rows])
        lines += ["", f"Held in the period: {t.held} job{'s' if t.held != 1 else ''}"]
        if self.holds:
            lines += _aligned([("JOBS", "CODE", "SUBCODE", "REASON"),
                               *((str(n), str(c), str(s), r) for (c, s, r), n in self.held_reasons())])
        return "\n".join(lines) + "\n"


def _num(ad: ClassAd, name: str) -> float:
    v = ad.get_value(name, 0)
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else 0.0


def _aligned(rows: Iterable[tuple[str, ...]]) -> list[str]:
    """Columns padded to their widest cell: the first left-aligned, the others right-aligned but
    the last when it is text (a reason)."""
    rows = list(rows)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    text_last = not all(r[-1].replace(".", "").isdigit() for r in rows[1:])
    out = []
    for r in rows:
        cells = [c.ljust(w) if i == 0 or (text_last and i == len(r) - 1) else c.rjust(w)
                 for i, (c, w) in enumerate(zip(r, widths, strict=True))]
        out.append("  ".join(cells).rstrip())
    return out


# ------------------------------------------------------------------------------- asking the schedds

def in_period(start: int, end: int) -> str:
    return f"EnteredCurrentStatus >= {start} && EnteredCurrentStatus < {end}"


def schedds(name: str | None) -> list[tuple[Any, str]]:
    """(address, name) of the schedds to ask: the named one, else every one the collector knows."""
    from htcd.cli import common
    from htcd.client import collector
    from htcd.client.schedd import address
    from htcd.wire.address import Address

    cfg = common.config()
    if name:
        return [address(cfg, name)]
    ads = collector.query(cfg, "Scheduler", None, ["Name", "MyAddress"])
    if not ads:
        return [address(cfg, None)]  # no schedd advertised (yet): this host's, if it has one
    return sorted(((Address.parse(str(ad.get_value("MyAddress"))), str(ad.get_value("Name"))) for ad in ads),
                  key=lambda x: x[1])


def job_ads(addr: Any, start: int, end: int) -> Iterator[ClassAd]:
    """The schedd's jobs that count for [start, end): from its history, and from its queue."""
    from htcd.client.schedd import ScheddClient

    window = in_period(start, end)
    with ScheddClient(addr, timeout=300.0) as schedd:
        for chunk in schedd.history(f"(JobStatus == {COMPLETED} || JobStatus == {REMOVED}) && {window}", ATTRS,
                                    since=f"EnteredCurrentStatus < {start - SCAN_SLACK}"):
            for wire in chunk:
                yield ClassAd.from_wire(wire)
        for chunk in schedd.query(f"(JobStatus == {COMPLETED} || JobStatus == {REMOVED} || JobStatus == {HELD})"
                                  f" && {window}", ATTRS):
            for wire in chunk:
                yield ClassAd.from_wire(wire)


def run(args: argparse.Namespace) -> int:
    """The report of the schedds that answered; one that does not is named on stderr (and in the
    JSON's ``unanswered``) and the exit status is 1, as the report is then incomplete."""
    start, end = period(args)
    report = Report(start, end)
    for addr, name in schedds(args.name):
        figures = Report(start, end)
        try:
            for ad in job_ads(addr, start, end):
                figures.count(ad)
        except UserError as exc:
            report.unanswered[name] = str(exc)
            sys.stderr.write(f"htcd job_report: schedd {name}: {exc}; its jobs are not in this report\n")
            continue
        report.schedds.append(name)
        report.merge(figures)
    sys.stdout.write(json.dumps(report.as_json(), indent=2) + "\n" if args.json else report.as_text())
    return 1 if report.unanswered else 0

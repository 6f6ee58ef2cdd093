"""``htcd userprio``: show and change users' priorities and usage (condor_userprio).

``htcd userprio [-all | -most] [-allusers] [-json]`` prints the accountant's table, best priority
first; ``-setfactor USER F``, ``-setprio USER P``, ``-resetusage USER``, ``-resetall`` and
``-delete USER`` change it (ADMINISTRATOR).  A USER without ``@domain`` gets ``@$(UID_DOMAIN)``.
"""

from __future__ import annotations

import argparse
import json
import socket
import time
from collections.abc import Callable
from typing import Any

from htcd.errors import UserError

ACTIVE_WINDOW = 24 * 3600  # the default table shows users active within a day


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    show = p.add_mutually_exclusive_group()
    show.add_argument("-all", action="store_true", help="every column (real priority, usage start and last usage)")
    show.add_argument("-most", action="store_true", help="most columns")
    p.add_argument("-allusers", action="store_true", help="also users not active in the last day")
    p.add_argument("-json", action="store_true", help="the records as JSON (Accounting ad attributes)")
    edit = p.add_mutually_exclusive_group()
    edit.add_argument("-setfactor", nargs=2, metavar=("USER", "FACTOR"), help="set a user's priority factor")
    edit.add_argument("-setprio", nargs=2, metavar=("USER", "PRIO"), help="set a user's real priority")
    edit.add_argument("-resetusage", metavar="USER", help="reset a user's accumulated usage (and priority)")
    edit.add_argument("-resetall", action="store_true", help="reset every user's accumulated usage")
    edit.add_argument("-delete", metavar="USER", help="remove a user's record")
    p.add_argument("-name", help="the negotiator advertised under this Name (found through the collector; "
                   "default: this host's, else the collector's)")
    return _run


def _negotiator(cfg: Any, name: str | None) -> Any:
    """The negotiator to ask: by Name at the collector (``-name``, with ``-pool`` another pool's),
    else this host's, else the one the collector knows."""
    from htcd.client import collector, negotiator
    from htcd.wire.address import Address

    if not name:
        return negotiator.address(cfg)
    bare = name.replace('"', "")
    ads = collector.query(cfg, "Negotiator", f'Name == "{bare}"', ["MyAddress"], limit=1)
    if not ads or not ads[0].get_value("MyAddress"):
        raise UserError(f"userprio: the collector knows no negotiator named {name}")
    return Address.parse(str(ads[0].get_value("MyAddress")))


def _full(cfg: Any, user: str) -> str:
    if "@" in user:
        return user
    return f"{user}@{cfg.get('UID_DOMAIN') or socket.getfqdn()}"


def _number(text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise UserError(f"userprio: {what} must be a number, not {text!r}") from None


def _run(args: argparse.Namespace) -> int:
    from htcd.cli import common
    from htcd.client import negotiator

    cfg = common.config()
    accountant = negotiator.Accountant(_negotiator(cfg, args.name))
    if args.setfactor:
        user, factor = _full(cfg, args.setfactor[0]), _number(args.setfactor[1], "the priority factor")
        accountant.set_factor(user, factor)
        print(f"The priority factor of {user} was set to {factor:f}")
        return 0
    if args.setprio:
        user, prio = _full(cfg, args.setprio[0]), _number(args.setprio[1], "the priority")
        accountant.set_priority(user, prio)
        print(f"The priority of {user} was set to {prio:f}")
        return 0
    if args.resetusage:
        user = _full(cfg, args.resetusage)
        accountant.reset_usage(user)
        print(f"The accumulated usage of {user} was reset")
        return 0
    if args.resetall:
        accountant.reset_usage(None)
        print("The accumulated usage was reset for all users")
        return 0
    if args.delete:
        user = _full(cfg, args.delete)
        accountant.delete_user(user)
        print(f"The accountant record of {user} was deleted")
        return 0
    reply = accountant.priorities()
    now = float(reply.get("now") or time.time())
    records = [r for r in reply.get("customers") or []
               if args.allusers or args.json or _active(r, now)]
    records.sort(key=lambda r: (float(r.get("Priority") or 0), str(r.get("Name"))))
    if args.json:
        print(json.dumps(records, indent=2, sort_keys=True))
        return 0
    print(table(records, float(reply.get("last_update") or 0), now, "all" if args.all else
                "most" if args.most else "default"))
    return 0


def _active(r: dict[str, Any], now: float) -> bool:
    last = int(r.get("LastUsageTime") or 0)
    return bool(r.get("ResourcesUsed")) or not last or now - last <= ACTIVE_WINDOW


def _since(r: dict[str, Any], now: float) -> str:
    if r.get("ResourcesUsed"):
        return "<now>"
    last = int(r.get("LastUsageTime") or 0)
    if not last:
        return "+ ??"
    secs = max(0, int(now - last))
    return f"{secs // 86400}+{secs % 86400 // 3600:02d}:{secs % 3600 // 60:02d}"


def _stamp(t: float) -> str:
    return time.strftime("%m/%d/%Y %H:%M", time.localtime(t)) if t else "<none>"


# (header line 1, header line 2, width, value) per column; the user name column comes first
_Column = tuple[str, str, int, Callable[[dict[str, Any], float], str]]
_EFFECTIVE: _Column = ("Effective", "Priority", 12, lambda r, n: f"{float(r.get('Priority') or 0):.2f}")
_REAL: _Column = ("Real", "Priority", 9, lambda r, n: f"{float(r.get('RealPriority') or 0):.2f}")
_FACTOR: _Column = ("Priority", "Factor", 9, lambda r, n: f"{float(r.get('PriorityFactor') or 0):.2f}")
_INUSE: _Column = ("Res", "In Use", 6, lambda r, n: f"{int(r.get('ResourcesUsed') or 0)}")
_USAGE: _Column = ("Total Usage", "(wghted-hrs)", 12,
                   lambda r, n: f"{float(r.get('WeightedAccumulatedUsage') or 0) / 3600:.2f}")
_START: _Column = ("Usage", "Start Time", 16, lambda r, n: _stamp(float(r.get("BeginUsageTime") or 0)))
_LAST: _Column = ("Last", "Usage Time", 16, lambda r, n: _stamp(float(r.get("LastUsageTime") or 0)))
_SINCE: _Column = ("Time Since", "Last Usage", 10, _since)
COLUMNS = {"default": [_EFFECTIVE, _FACTOR, _INUSE, _USAGE, _SINCE],
           "most": [_EFFECTIVE, _REAL, _FACTOR, _INUSE, _USAGE, _START, _LAST],
           "all": [_EFFECTIVE, _REAL, _FACTOR, _INUSE, _USAGE, _START, _LAST, _SINCE]}
NAME_WIDTH = 34


def table(records: list[dict[str, Any]], last_update: float, now: float, layout: str = "default") -> str:
    """condor_userprio's table: a two-line header, a row per user, then totals."""
    cols = COLUMNS[layout]
    width = max([NAME_WIDTH, *(len(str(r.get("Name", ""))) for r in records)])
    stamp = time.strftime("%m/%d %H:%M", time.localtime(last_update)) if last_update else "<none>"
    lines = [f"Last Priority Update: {stamp}"]
    lines.append(" " * width + "".join(" " + h1.rjust(w) for h1, _, w, _ in cols))
    lines.append("User Name".ljust(width) + "".join(" " + h2.rjust(w) for _, h2, w, _ in cols))
    rule = "-" * width + "".join(" " + "-" * w for *_, w, _ in cols)
    lines.append(rule)
    for r in records:
        lines.append(str(r.get("Name", "")).ljust(width) + "".join(" " + fn(r, now).rjust(w) for _, _, w, fn in cols))
    lines.append(rule)
    total_use = sum(int(r.get("ResourcesUsed") or 0) for r in records)
    total_hours = sum(float(r.get("WeightedAccumulatedUsage") or 0) for r in records) / 3600
    totals = f"Number of users: {len(records)}".ljust(width)
    for col in cols:
        w = col[2]
        text = str(total_use) if col is _INUSE else f"{total_hours:.2f}" if col is _USAGE else ""
        totals += " " + text.rjust(w)
    lines.append(totals.rstrip())
    return "\n".join(lines)

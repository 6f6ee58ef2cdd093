"""``htcd status``: slots (HTCondor's default table and totals) or other daemons' ads.

Flags follow condor_status: a query option picks the ad type (-schedd, -submitters, -negotiator,
-master, -collector, -any; slots by default), a display option the layout (the default table,
-compact, -total, -l, -json, -xml, -af, -format).  Ads come from the collector, or with ``-direct NAME``
from the daemon itself (``DC_QUERY_SELF``, with ``-statistics SET:LEVEL``).  Only the attributes
the output needs are asked for, and a plain ``-af`` of literal values prints them without parsing.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from typing import Any

from htcd.classad import ClassAd, ClassAdSyntaxError, is_true, parse_expr
from htcd.cli import output
from htcd.config import Config
from htcd.errors import UserError
from htcd.wire.address import Address

# flag(s) -> ad type; -startd is kept for slots (htcd has no separate StartD daemon ad)
TYPES: list[tuple[tuple[str, ...], str]] = [
    (("-schedd",), "Scheduler"), (("-submitters", "-submitter"), "Submitter"),
    (("-negotiator",), "Negotiator"), (("-master",), "DaemonMaster"), (("-collector",), "Collector"),
    (("-any",), "Any"), (("-startd", "-slots"), "Machine"),
]
# where -direct sends the query for each ad type (HTCondor: submitters to the schedd)
DIRECT_TYPE = {"Machine": "Machine", "Scheduler": "Scheduler", "Submitter": "Scheduler",
               "Negotiator": "Negotiator", "DaemonMaster": "DaemonMaster"}
DAEMON_NAMES = {"Machine": "startd", "Scheduler": "schedd", "Negotiator": "negotiator",
                "DaemonMaster": "master", "Collector": "collector"}
SORT_ATTRS = ("Machine", "Name")
_STAT_ITEM = r"[A-Za-z_][A-Za-z0-9_]*(:[0-9A-Za-z!]+)*"
_STATISTICS = re.compile(rf"{_STAT_ITEM}([ ,]+{_STAT_ITEM})*")  # DC:2, DC:1!R, NONE, "DC:2 SCHEDD:1"


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.add_argument("names", nargs="*", metavar="NAME", help="only ads whose Name or Machine is NAME")
    for flags, ad_type in TYPES:
        p.add_argument(*flags, dest="ad_type", action="store_const", const=ad_type,
                       help=f"{ad_type} ads instead of slots" if ad_type != "Machine" else "slot ads (the default)")
    output.add_output_arguments(p, "ads")
    p.add_argument("-constraint", action="append", default=[], metavar="EXPR",
                   help="a ClassAd expression the ads must satisfy (repeatable: all must hold)")
    p.add_argument("-total", action="store_true", help="only the totals")
    p.add_argument("-compact", action="store_true", help="one line per machine (slots only)")
    p.add_argument("-limit", type=int, default=0, metavar="N", help="at most N ads")
    p.add_argument("-attributes", metavar="A,B,...", help="with -l, -json or -xml: only these attributes")
    p.add_argument("-direct", metavar="NAME", help="ask the daemon NAME itself instead of the collector")
    p.add_argument("-statistics", metavar="SET:LEVEL",
                   help="with -direct: statistics the daemon adds to its ad, e.g. DC:2")
    return run


def run(args: argparse.Namespace) -> int:
    from htcd.cli import common
    from htcd.client import collector

    cfg = common.config()
    ad_type = args.ad_type or "Machine"
    check_arguments(args, ad_type)
    constraint = build_constraint(args, ad_type)
    if args.direct or args.statistics:
        ads = direct_query(cfg, args, ad_type, constraint)
    else:
        wanted = projection(args, ad_type)
        ads = collector.query(cfg, ad_type, constraint, wanted, args.limit)
        for _ in range(3):  # values that are expressions over attributes left out: ask again with them
            if wanted is None or not (args.af or args.format):
                break
            more = missing_references(ads, wanted)
            if not more:
                break
            wanted = sorted({*wanted, *more})
            ads = collector.query(cfg, ad_type, constraint, wanted, args.limit)
    if not (args.total and not (args.long or args.json or args.xml or args.af or args.format)):
        ads = sort_ads(ads)  # totals alone need no order
    sys.stdout.write(render(ads, args, ad_type))
    return 0


def check_arguments(args: argparse.Namespace, ad_type: str) -> None:
    if args.compact and ad_type != "Machine":
        raise UserError("-compact applies only to slots; leave out the -schedd/-master/... option")
    if args.limit < 0:
        raise UserError(f"-limit must be a positive number, not {args.limit}")
    if args.statistics is not None and not _STATISTICS.fullmatch(args.statistics.strip()):
        raise UserError(f"-statistics {args.statistics!r}: expected SET:LEVEL items such as DC:2 or "
                        "DC:2,SCHEDD:1")
    if args.statistics is not None and not args.direct and ad_type != "Collector":
        raise UserError("-statistics needs -direct NAME: statistics are asked of the daemon itself "
                        "(or use -collector for the collector's own)")
    if args.direct and ad_type not in DIRECT_TYPE and ad_type != "Collector":
        raise UserError(f"-direct cannot ask {ad_type} ads of a daemon; use it with -schedd, -submitters, "
                        "-negotiator, -master, -collector or for slots")


def build_constraint(args: argparse.Namespace, ad_type: str) -> str | None:
    """The -constraint expressions (each checked here, so a mistake is reported before any query),
    the NAME arguments and the -compact filter, ANDed."""
    parts = []
    for text in args.constraint:
        try:
            parse_expr(text)
        except ClassAdSyntaxError as exc:
            raise UserError(f"-constraint {text!r} is not a valid ClassAd expression: {exc}") from None
        parts.append(text)
    if args.names:
        names = " || ".join(f"Name == {_quote(n)} || Machine == {_quote(n)}" for n in args.names)
        parts.append(names)
    if args.compact and not args.total:
        from htcd.cli.status_tables import COMPACT_CONSTRAINT

        parts.append(COMPACT_CONSTRAINT)
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else " && ".join(f"({p})" for p in parts)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _references(text: str) -> frozenset[str]:
    from htcd.classad.references import references

    try:
        return references(parse_expr(text))[0]
    except ClassAdSyntaxError as exc:
        raise UserError(f"{text!r} is not a valid ClassAd expression: {exc}") from None


def missing_references(ads: list[ClassAd], wanted: list[str]) -> set[str]:
    """Attributes that projected values refer to but the projection left out, so that an
    expression such as ``Requirements = START`` evaluates as in the whole ad.  Literal values, the
    usual case, are recognized from their text and cost no parsing."""
    have = {w.lower() for w in wanted}
    refs_of: dict[str, frozenset[str]] = {}
    found: set[str] = set()
    for ad in ads:
        for name in ad:
            text = ad.expr_text(name)
            if output.literal_text(text) is not None:
                continue
            refs = refs_of.get(text)
            if refs is None:
                try:
                    refs = refs_of[text] = _references(text)
                except UserError:
                    refs = refs_of[text] = frozenset()
            found |= refs
    return found - have


def projection(args: argparse.Namespace, ad_type: str) -> list[str] | None:
    """The attributes the output needs (None: whole ads); the sort keys always come along."""
    from htcd.cli.status_tables import COMPACT_ATTRS, VIEWS

    if args.long or args.json or args.xml:
        return _split(args.attributes) or None
    if args.af:
        names: set[str] = set()
        for a in args.af:
            names |= _references(a)
        return sorted(names | {s.lower() for s in SORT_ATTRS})
    if args.format:
        names = set()
        for _fmt, a in args.format:
            names |= _references(a)
        return sorted(names | {s.lower() for s in SORT_ATTRS})
    if args.compact and not args.total:
        return list(COMPACT_ATTRS)
    view = VIEWS.get(ad_type)
    if view is None:
        return None
    if args.total:
        return list(view.total_attrs or view.attrs)
    return [*view.attrs, *SORT_ATTRS, *view.total_attrs]


def _split(text: str | None) -> list[str]:
    return [a for a in re.split(r"[\s,]+", text or "") if a]


def sort_ads(ads: list[ClassAd]) -> list[ClassAd]:
    """Machine, then Name, numbers in them compared as numbers (condor_status's default order)."""
    cache: dict[str, tuple[Any, ...]] = {}

    def key(ad: ClassAd) -> tuple[Any, ...]:
        machine = output.plain_value(ad, "Machine")
        name = output.plain_value(ad, "Name")
        m = machine if isinstance(machine, str) else ""
        mk = cache.get(m)
        if mk is None:
            mk = cache[m] = output.natural_key(m)
        return mk, output.natural_key(name if isinstance(name, str) else "")

    return sorted(ads, key=key)


def render(ads: list[ClassAd], args: argparse.Namespace, ad_type: str) -> str:
    from htcd.cli.status_tables import VIEWS, compact

    if args.xml:
        return output.xml_form(ads, sort=True, attrs=_split(args.attributes) or None, blank=True)
    if args.long:
        return output.long_form(ads, sort=True, attrs=_split(args.attributes) or None)
    if args.json:
        if args.attributes:
            wanted = {a.lower() for a in _split(args.attributes)}
            ads = [ClassAd.from_wire({k: v for k, v in ad.to_wire().items() if k.lower() in wanted})
                   for ad in ads]
        return output.json_form(ads) + "\n"
    if args.af:
        return output.autoformat(ads, args.af, args.af_options)
    if args.format:
        return output.formatted(ads, args.format)
    if args.compact and not args.total:
        return compact(ads)
    if args.compact:
        print("Warning: ignoring -compact option because -total option is also set", file=sys.stderr)
    view = VIEWS.get(ad_type)
    if view is None:
        return output.long_form(ads, sort=True)
    if args.total and view.totals is None:
        return ""
    return view.render(ads, only_totals=args.total)


# ------------------------------------------------------------------------------- -direct

def direct_query(cfg: Config, args: argparse.Namespace, ad_type: str, constraint: str | None) -> list[ClassAd]:
    """``-direct NAME``: find the daemon's ad at the collector, ask the daemon for its own ads
    (``DC_QUERY_SELF``, with ``statistics`` when -statistics is given) and keep those of the asked
    type that satisfy the constraint.  The collector itself (``-collector``) is asked directly."""
    from htcd.client import collector, daemoncore

    target = DIRECT_TYPE.get(ad_type)
    if target is None:  # the collector: the one the tools talk to
        address, label = collector.address(cfg), "the collector"
    else:
        address, label = locate(cfg, target, args.direct)
    statistics = args.statistics.strip() if args.statistics else None
    wires = daemoncore.query_self(address, f"cannot query {label}", statistics)
    ads = [ClassAd.from_wire(w) for w in wires]
    if ad_type != "Any":
        typed = [ad for ad in ads if str(ad.get_value("MyType", "")).lower() == ad_type.lower()]
        ads = typed if typed or ad_type == "Submitter" else ads
    if constraint:
        expr = parse_expr(constraint)
        ads = [ad for ad in ads if is_true(expr.eval(ad))]
    if args.limit:
        ads = ads[:args.limit]
    return ads


def locate(cfg: Config, ad_type: str, name: str) -> tuple[Address, str]:
    """(address, description) of the daemon named ``name``, from its ad at the collector (its
    MyAddress; a daemon of this host has its Unix socket in it)."""
    from htcd.client import collector
    from htcd.wire.errors import WireError

    daemon = DAEMON_NAMES.get(ad_type, ad_type.lower())
    found = collector.query(cfg, ad_type, f"Name == {_quote(name)} || Machine == {_quote(name)}",
                                   ["Name", "Machine", "MyAddress", "StartdIpAddr", "ScheddIpAddr"], 1)
    if not found:
        raise UserError(f"no {daemon} named {name!r} is known to the collector")
    ad = found[0]
    text = output.plain_value(ad, "MyAddress") or output.plain_value(ad, "StartdIpAddr") \
        or output.plain_value(ad, "ScheddIpAddr")
    if not isinstance(text, str):
        raise UserError(f"the {daemon} {name!r} publishes no address (MyAddress) at the collector")
    try:
        address = Address.parse(text)
    except WireError as exc:
        raise UserError(f"the {daemon} {name!r} publishes a bad address: {exc}") from None
    return address, f"the {daemon} {output.plain_value(ad, 'Name', name)}"

"""``htcd config_val KNOB...``: print configuration values as this host's daemons see them.

Flags follow HTCondor's ``condor_config_val``:

- ``KNOB...`` prints each expanded value (``Not defined: KNOB`` on stderr for one without);
  ``-v`` adds where it was set (``<Default>``: HTCondor's default, from the param table), its raw
  text and, for a knob htcd accepts but does not act on, ``# accepted, not used by htcd``;
  ``-raw`` prints the text as written instead.
- ``-config`` lists the files read, in order.
- ``-dump [PATTERN]`` prints ``KNOB = raw value`` for every knob whose name matches the
  regular expression PATTERN (all knobs without one); ``-expand`` prints expanded values.
- ``-summary`` prints only the knobs whose value differs from the defaults, grouped by the
  file that set them.
- ``-writeconfig:upgrade FILE`` (or ``-writeconfig upgrade FILE``) writes those same
  non-default knobs as a config file to carry to a new version (``-`` writes to stdout).
- ``-reconfig-needs OLD_CONFIG`` compares the effective values of the current config with
  those of the config whose top file is OLD_CONFIG, as seen by each daemon of DAEMON_LIST, and
  says per changed knob which daemons need a reconfig and which a restart (from the param
  table; a knob the table does not know needs a reconfig).
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from htcd.config import Config
    from htcd.wire.address import Address

#: Daemons whose own knobs start with their subsystem name (SCHEDD_..., MAX_SCHEDD_LOG, ...).
_DAEMONS = ("MASTER", "COLLECTOR", "NEGOTIATOR", "SCHEDD", "STARTD", "DEFRAG")
#: Sources that are defaults rather than a site's choice.
_DEFAULT_SOURCES = ("<param table>", "<embedded default>")


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.add_argument("knobs", nargs="*", metavar="KNOB")
    p.add_argument("-subsystem", default="TOOL", help="look up as this daemon would (e.g. SCHEDD)")
    p.add_argument("-local-name", dest="local_name", help="look up with this local name")
    p.add_argument("-v", "-verbose", dest="verbose", action="store_true", help="also say where each is defined")
    p.add_argument("-config", action="store_true", help="list the configuration files read, in order")
    p.add_argument("-raw", action="store_true", help="print values as written, before expansion")
    p.add_argument("-expand", action="store_true", help="with -dump: print expanded values")
    p.add_argument("-dump", nargs="?", const="", metavar="PATTERN",
                   help="print every knob (whose name matches the regular expression PATTERN)")
    p.add_argument("-summary", action="store_true",
                   help="print only the knobs that differ from the defaults, grouped by file")
    p.add_argument("-writeconfig:upgrade", dest="upgrade_file", metavar="FILE",
                   help="write the non-default knobs to FILE ('-' for stdout), to carry to a new version")
    p.add_argument("-writeconfig", nargs=2, metavar=("MODE", "FILE"),
                   help="same as -writeconfig:MODE FILE (MODE: upgrade)")
    p.add_argument("-reconfig-needs", dest="reconfig_needs", metavar="OLD_CONFIG",
                   help="compare with the config whose top file is OLD_CONFIG: which daemons need "
                        "a reconfig or a restart")
    p.add_argument("-set", dest="set_", nargs="+", metavar='"NAME = value"',
                   help="persistently set knobs in a running daemon (then htcd reconfig)")
    p.add_argument("-unset", nargs="+", metavar="NAME", help="remove persistent settings from a running daemon")
    p.add_argument("-rset", nargs="+", metavar='"NAME = value"',
                   help="set knobs in a running daemon until it restarts (then htcd reconfig)")
    p.add_argument("-runset", nargs="+", metavar="NAME", help="remove -rset settings from a running daemon")
    p.add_argument("-daemon", help="with -set/-unset/-rset/-runset: which daemon of this host (default "
                                   "MASTER); with -name: which kind of daemon the name is")
    p.add_argument("-name", help="with -set/-unset/-rset/-runset: the daemon advertised under this Name "
                                 "(found through the collector; on this host or another)")
    return run


#: Ad types in the collector -> the subsystem that advertises them.
_AD_SUBSYS = {"DaemonMaster": "MASTER", "Collector": "COLLECTOR", "Negotiator": "NEGOTIATOR",
              "Scheduler": "SCHEDD", "Machine": "STARTD"}


def _named_daemon(cfg: Config, name: str, daemon: str | None) -> tuple[str, Address]:
    """(subsystem, address) of the daemon advertised as ``name``: its Unix socket on this host,
    else its advertised TCP address (authenticated with this client's token or certificate)."""
    from htcd.client import collector
    from htcd.errors import UserError
    from htcd.wire import locate
    from htcd.wire.address import Address

    quoted = name.replace("\\", "\\\\").replace('"', '\\"')
    kinds = [(t, s) for t, s in _AD_SUBSYS.items() if daemon is None or s == daemon.upper()]
    if not kinds:
        raise UserError(f"-daemon {daemon}: unknown daemon (known: {', '.join(_AD_SUBSYS.values())})")
    for ad_type, subsys in kinds:
        constraint = f'Name == "{quoted}"' + (f' || Machine == "{quoted}"' if subsys == "STARTD" else "")
        ads = collector.query(cfg, ad_type, constraint, ["Name", "MyAddress"], limit=1)
        if not ads:
            continue
        advertised = Address.parse(str(ads[0].get_value("MyAddress")))
        local = locate.local_daemon(cfg, subsys) if subsys != "COLLECTOR" else locate.collector(cfg)
        if local is None or (local.host, local.port) != (advertised.host, advertised.port):
            return subsys, advertised  # another host's daemon: over TCP, with this client's token
        return subsys, local
    raise UserError(f"no daemon named {name!r} is known to the collector; is it running?")


def _remote_config(args: argparse.Namespace) -> int:
    """Send -set/-unset/-rset/-runset to a daemon of this host, which checks and stores them."""
    from htcd.cli import common
    from htcd.client import daemoncore

    cfg = common.config()
    if args.name:
        subsys, addr = _named_daemon(cfg, args.name, args.daemon)
    else:
        subsys = (args.daemon or "MASTER").upper()
        addr = daemoncore.local_address(cfg, subsys)
    if args.set_ or args.unset:
        daemoncore.set_config(addr, f"the {subsys.lower()} refused", True, args.set_ or [], args.unset or [])
    else:
        daemoncore.set_config(addr, f"the {subsys.lower()} refused", False, args.rset or [], args.runset or [])
    for item in [*(args.set_ or []), *(args.rset or [])]:
        print(f"Successfully set configuration \"{item}\" on {subsys.lower()} {addr}.")
    for name in [*(args.unset or []), *(args.runset or [])]:
        print(f"Successfully unset configuration \"{name}\" on {subsys.lower()} {addr}.")
    print("Run htcd reconfig for the change to take effect.")
    return 0


def run(args: argparse.Namespace) -> int:
    from htcd.config import load
    from htcd.errors import UserError

    if args.set_ or args.unset or args.rset or args.runset:
        return _remote_config(args)
    if args.writeconfig:
        mode, path = args.writeconfig
        if mode.lower() != "upgrade":
            raise UserError(f"-writeconfig {mode}: unknown mode (known: upgrade)")
        args.upgrade_file = path
    cfg = load(args.subsystem.upper(), args.local_name)
    if args.config:
        print("Configuration source:")
        for f in cfg.files or ["<embedded default>"]:
            print(f"\t{f}")
        return 0
    if args.dump is not None:
        return _dump(cfg, args.dump, args.expand, args.verbose)
    if args.summary:
        sys.stdout.write(_summary_text(cfg, "summary"))
        return 0
    if args.upgrade_file:
        text = _summary_text(cfg, "upgrade")
        if args.upgrade_file == "-":
            sys.stdout.write(text)
        else:
            try:
                with open(args.upgrade_file, "w", encoding="utf-8") as out:
                    out.write(text)
            except OSError as err:
                raise UserError(f"cannot write {args.upgrade_file}: {err.strerror}") from None
        return 0
    if args.reconfig_needs:
        return _reconfig_needs(cfg, args.reconfig_needs, args.local_name)
    if not args.knobs:
        raise UserError("name at least one knob (or -config, -dump, -summary, -writeconfig:upgrade, "
                        "-reconfig-needs)")
    status = 0
    for knob in args.knobs:
        raw = cfg.raw(knob)
        value = raw if args.raw else cfg.get(knob)
        if not value:
            sys.stdout.flush()
            print(f"Not defined: {knob}", file=sys.stderr)
            hint = _did_you_mean(cfg, knob)
            if hint:
                print(f" # {knob} is not a knob of htcd or HTCondor; did you mean {hint}?", file=sys.stderr)
            status = 1
            continue
        if args.verbose:
            if "\n" in value:  # HTCondor shows a value of several lines as a here-document
                print("\n".join([f"{knob} @=end", *(f"   {v}" for v in value.split("\n") if v), "@end"]))
            else:
                print(f"{knob} = {value}")
            print(_at(cfg.where(knob)))
            if cfg.persistent and (cfg.where(knob) or ("", 0))[0] == cfg.persistent:
                print(" # persistent: set with config_val -set (remove with -unset)")
            if not args.raw:
                text = f"{knob} = {raw}"
                print(" # raw: " + ("".join(f"\n #   {v}" for v in text.split("\n") if v) if "\n" in text else text))
            if not _acted_on(knob):
                print(f" # {NOT_USED}")
            print()
        else:
            print(value)
    return status


#: What ``-v`` says of a knob htcd accepts (HTCondor's) but does not act on.
NOT_USED = "accepted, not used by htcd"


def _acted_on(knob: str) -> bool:
    """False for a knob of HTCondor's param table that htcd's code never reads; a knob the table
    does not know (a site's own macro) is the site's business."""
    from htcd.config._table import lookup

    p = lookup(knob.lower().rsplit(".", 1)[-1], "")
    return p is None or p.acted_on


def _did_you_mean(cfg: Config, knob: str) -> str | None:
    """A known knob close to ``knob`` when ``knob`` is known nowhere (not in the param table,
    not computed, not defined by the config): a typo, most likely."""
    import difflib

    from htcd.config import table
    from htcd.config._table import COMPUTED

    base = knob.rsplit(".", 1)[-1]
    key = base.lower()
    if key in table() or key in COMPUTED or key == "subsystem" or cfg.raw(knob) is not None:
        return None
    names = {p.name.upper(): p.name for p in table().values() if "<" not in p.name}
    close = difflib.get_close_matches(base.upper(), list(names), n=1, cutoff=0.85)
    return names[close[0]] if close else None


def _at(where: tuple[str, int] | None) -> str:
    """HTCondor's `` # at:`` line; a default from the param table is HTCondor's ``<Default>``."""
    if where is None:
        return " # at: <undefined>"
    if where[0] == "<param table>":
        return " # at: <Default>"
    return f" # at: {where[0]}, line {where[1]}" if where[1] else f" # at: {where[0]}"


def _dump(cfg: Config, pattern: str, expand: bool, verbose: bool) -> int:
    from htcd.errors import UserError

    try:
        rx = re.compile(pattern, re.IGNORECASE) if pattern else None
    except re.error as err:
        raise UserError(f"-dump {pattern}: not a valid regular expression: {err}") from None
    # prefixed definitions (SCHEDD.X) are listed too: they are part of the file's content
    names = {n.lower(): n for n in cfg.names()}
    for e in cfg.definitions():
        names.setdefault(e.name.lower(), e.name)
    print(f"# Configuration from machine: {socket.gethostname()}")
    print()
    print(f"# Parameters with names that match {pattern}:")
    for key in sorted(names):
        name = names[key]
        if rx is not None and not rx.search(name):
            continue
        value = cfg.get(name) if expand else cfg.raw(name)
        print(f"{name} = {value or ''}")
        if verbose:
            print(_at(cfg.where(name)))
    return 0


def _non_defaults(cfg: Config) -> list:
    """Definitions a site made: not from a default source, and not equal to the table default."""
    out = []
    for e in cfg.definitions():
        if e.source in _DEFAULT_SOURCES:
            continue
        if e.raw == (cfg.default_raw(e.name) or "") and "." not in e.name:
            continue
        out.append(e)
    return out


def _summary_text(cfg: Config, kind: str) -> str:
    from htcd.config.persist import format_assignment

    entries = _non_defaults(cfg)
    lines: list[str] = []
    if kind == "upgrade":
        lines.append("# The settings of this host that differ from htcd's defaults, written by")
        lines.append("# 'htcd config_val -writeconfig:upgrade'. Read this file after the new version's")
        lines.append("# defaults (e.g. as LOCAL_CONFIG_FILE) to keep them.")
    else:
        lines.append(f"# Configuration from machine: {socket.gethostname()}")
    lines.append("")
    lines.append("# Contributing configuration file(s):")
    for f in cfg.files or ["<embedded default>"]:
        lines.append(f"#\t{f}")
    by_source: dict[str, list] = {}
    for e in entries:
        by_source.setdefault(e.source, []).append(e)
    for source, group in by_source.items():
        lines += ["", "#", f"# from {source}", "#"]
        for e in sorted(group, key=lambda e: e.name.lower()):
            lines.extend(format_assignment(e.name, e.raw))
    return "\n".join(lines) + "\n"


def _reconfig_needs(cfg: Config, old_top: str, local_name: str | None) -> int:
    from htcd.config import load, table
    from htcd.errors import UserError

    if not os.path.exists(old_top):
        raise UserError(f"-reconfig-needs {old_top}: no such file")
    env = dict(os.environ)
    env["HTCD_CONFIG"] = old_top
    daemons = [d.upper() for d in cfg.get_list("DAEMON_LIST")] or list(_DAEMONS)
    changed: dict[str, dict[str, set[str]]] = {}  # knob -> {"reconfig"/"restart": daemons}
    params = table()
    for daemon in daemons:
        new = load(daemon, local_name)
        old = load(daemon, local_name, env=env)
        for name in _all_names(new, old):
            if new.get(name) == old.get(name):
                continue
            if not _concerns(name, daemon):
                continue
            base = name.split(".", 1)[1] if "." in name else name
            p = params.get(base.lower())
            need = "reconfig" if p is None or p.reconfig else "restart"
            changed.setdefault(name, {}).setdefault(need, set()).add(daemon)
    if not changed:
        print("No changes.")
        return 0
    restart: set[str] = set()
    reconfig: set[str] = set()
    for name in sorted(changed, key=str.lower):
        for need, who in sorted(changed[name].items()):
            print(f"{name}: {need} {' '.join(_ordered(who, daemons))}")
            (restart if need == "restart" else reconfig).update(who)
    reconfig -= restart
    print()
    print(f"restart: {' '.join(_ordered(restart, daemons)) or '-'}")
    print(f"reconfig: {' '.join(_ordered(reconfig, daemons)) or '-'}")
    return 0


def _ordered(who: Iterable[str], order: list[str]) -> list[str]:
    s = set(who)
    return [d for d in order if d in s]


def _all_names(a: Config, b: Config) -> list[str]:
    """Unprefixed knob names known to either config (a prefixed definition counts as its base)."""
    names: dict[str, str] = {}
    for cfg in (a, b):
        for n in cfg.names():
            base = n.split(".", 1)[1] if "." in n else n
            names.setdefault(base.lower(), base)
    return sorted(names.values(), key=str.lower)


#: Knobs only one daemon reads, beyond those named after it; helpers count as their daemon.
_OWNERS = {"MAX_JOBS_RUNNING": "SCHEDD", "JOB_QUEUE_LOG": "SCHEDD", "HISTORY": "SCHEDD", "SPOOL": "SCHEDD",
           "START": "STARTD", "SUSPEND": "STARTD", "CONTINUE": "STARTD", "PREEMPT": "STARTD",
           "KILL": "STARTD", "WANT_SUSPEND": "STARTD", "WANT_VACATE": "STARTD", "EXECUTE": "STARTD",
           "NUM_CPUS": "STARTD", "MEMORY": "STARTD", "RANK": "STARTD", "MAXJOBRETIREMENTTIME": "STARTD"}
_HELPERS = {"SHADOW": "SCHEDD", "STARTER": "STARTD"}


def _concerns(name: str, daemon: str) -> bool:
    """Whether a knob concerns ``daemon``: one named after (or owned by) another daemon does not.

    ``*_HOST`` knobs (COLLECTOR_HOST, ...) say where a daemon is and concern every daemon.
    """
    up = name.upper()
    if up in _OWNERS:
        return _OWNERS[up] == daemon
    if up.endswith("_HOST"):
        return True
    for d in (*_DAEMONS, *_HELPERS):
        owner = _HELPERS.get(d, d)
        if owner != daemon and (up.startswith(d + "_") or f"_{d}_" in up):
            return False
    return True

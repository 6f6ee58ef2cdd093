"""``htcd ping``: would a daemon authorize you, level by level, and how you are authenticated (condor_ping).

``htcd ping [-name NAME | -addr SINFUL] [-type DAEMON] [-quiet | -table | -verbose] [TOKEN ...]``:
each TOKEN is an authorization level, ALL, or a command name (which stands for its level in the
command table); the default is WRITE at the local schedd.  One ``DC_SEC_QUERY`` asks the daemon
about every level; the output is condor_ping's (a sentence per token, ``-table``, ``-verbose``) and
the exit status is 1 if any level is refused, with the daemon's reason on stderr.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from htcd.config import Config
from htcd.errors import UserError
from htcd.wire.address import Address

SUBSYSTEMS = ("MASTER", "COLLECTOR", "NEGOTIATOR", "SCHEDD", "STARTD")
AD_TYPES = {"MASTER": "DaemonMaster", "COLLECTOR": "Collector", "NEGOTIATOR": "Negotiator",
            "SCHEDD": "Scheduler", "STARTD": "Machine"}
# condor_ping's order for ALL, without the levels htcd does not have (ALLOW, OWNER)
ALL_LEVELS = ("READ", "WRITE", "NEGOTIATOR", "ADMINISTRATOR", "CONFIG", "DAEMON", "ADVERTISE_STARTD",
              "ADVERTISE_SCHEDD", "ADVERTISE_MASTER")
TABLE_HEAD = "         Instruction Authentication Encryption Integrity Decision Identity"


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.add_argument("tokens", nargs="*", metavar="TOKEN",
                   help="ALL, an authorization level (READ, WRITE, ADMINISTRATOR, ...) or a command name; "
                        "default WRITE (a daemon type such as SCHEDD here works like -type)")
    target = p.add_mutually_exclusive_group()
    target.add_argument("-name", help="the daemon with this name (found at the collector)")
    target.add_argument("-addr", "-address", dest="addr", metavar="SINFUL", help="the daemon at this address")
    p.add_argument("-type", "-subsystem", dest="type", metavar="DAEMON",
                   help=f"which kind of daemon: {', '.join(SUBSYSTEMS)} (default SCHEDD)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("-quiet", action="store_const", dest="mode", const="quiet", help="no output, only the exit status")
    mode.add_argument("-table", action="store_const", dest="mode", const="table", help="one line per token")
    mode.add_argument("-verbose", action="store_const", dest="mode", const="verbose", help="everything known")
    return _ping


@dataclass(frozen=True)
class Item:
    """One token asked about: what was typed, the level it stands for, the command that
    represents it."""

    token: str
    level: str
    command: str


def parse_tokens(tokens: list[str]) -> list[Item]:
    """Tokens -> items; ALL expands to every level.  An unknown token is a user error."""
    from htcd.wire import auth
    from htcd.wire.commands import COMMANDS

    items: list[Item] = []
    for token in tokens or ["WRITE"]:
        word = token.upper()
        if word == "ALL":
            items += [Item(lv, lv, sample_command(lv)) for lv in ALL_LEVELS]
        elif word in auth.LEVELS:
            items.append(Item(word, word, sample_command(word)))
        elif word in COMMANDS:
            items.append(Item(token, COMMANDS[word].level, word))
        else:
            raise UserError(f'could not understand TOKEN "{token}": expected ALL, an authorization level '
                            f"({', '.join(auth.LEVELS)}) or a command name such as QUERY_JOBS")
    return items


def sample_command(level: str) -> str:
    """A command of the table that needs exactly ``level`` (what condor_ping tries for a level)."""
    from htcd.wire.commands import COMMANDS

    return next((c.name for c in COMMANDS.values() if c.level == level), level)


def _ping(args: argparse.Namespace) -> int:
    from htcd.cli import common

    tokens = list(args.tokens)
    subsys = (args.type or "").upper()
    if tokens and tokens[0].upper() in SUBSYSTEMS and not args.type:  # `htcd ping SCHEDD`
        subsys = tokens.pop(0).upper()
    subsys = subsys or "SCHEDD"
    if subsys not in SUBSYSTEMS:
        raise UserError(f"unrecognized daemon type {args.type!r}: expected one of {', '.join(SUBSYSTEMS)}")
    items = parse_tokens(tokens)
    cfg = common.config()
    address = target_address(cfg, subsys, args)
    reply, version = query(address, sorted({i.level for i in items}), subsys, args.mode == "verbose")
    out, errors, ok = render(reply, items, args.mode or "sentence", str(address), version)
    sys.stdout.write(out)
    if args.mode != "quiet":
        sys.stderr.write(errors)
    return 0 if ok else 1


def target_address(cfg: Config, subsys: str, args: argparse.Namespace) -> Address:
    """-addr as given; -name through the daemon's ad at the collector; else this host's daemon."""
    from htcd.cli.output import plain_value
    from htcd.client import collector, daemoncore
    from htcd.wire.errors import WireError

    if args.addr:
        try:
            return Address.parse(args.addr)
        except WireError as exc:
            raise UserError(f"unable to parse sinful string {args.addr!r}: {exc}") from None
    if args.name:
        quoted = '"' + args.name.replace("\\", "\\\\").replace('"', '\\"') + '"'
        ads = collector.query(cfg, AD_TYPES[subsys], f"Name == {quoted} || Machine == {quoted}",
                                     ["Name", "MyAddress"], 1)
        text = plain_value(ads[0], "MyAddress") if ads else None
        if not isinstance(text, str):
            raise UserError(f"couldn't locate {args.name}: no {subsys.lower()} of that name is known to the "
                            "collector")
        try:
            return Address.parse(text)
        except WireError as exc:
            raise UserError(f"{subsys.lower()} {args.name} publishes a bad address: {exc}") from None
    return daemoncore.local_address(cfg, subsys)


def query(address: Address, levels: list[str], subsys: str, want_version: bool) -> tuple[dict[str, Any], str]:
    """The daemon's DC_SEC_QUERY answer (and its version, for -verbose) over one connection."""
    from htcd.client import daemoncore

    return daemoncore.security_query(address, levels, subsys, want_version)


def render(reply: dict[str, Any], items: list[Item], mode: str, address: str,
           remote_version: str = "") -> tuple[str, str, bool]:
    """(stdout text, stderr text, all authorized) in condor_ping's formats: ``sentence`` (the
    default), ``table``, ``verbose`` or ``quiet``."""
    identity, method = str(reply.get("identity", "")), str(reply.get("method", ""))
    crypto = "TLS" if reply.get("encrypted") else "none"  # TLS gives encryption and integrity both
    offered = ", ".join(reply.get("offered") or [method])
    dname = f"{str(reply.get('daemon', '')).lower()} {reply.get('name', '')}".strip()
    levels: dict[str, Any] = reply.get("levels") or {}
    out: list[str] = [TABLE_HEAD + "\n"] if mode == "table" else []
    errors: list[str] = []
    ok = True
    for item in items:
        reason = levels.get(item.level, f"the daemon did not answer for {item.level}")
        allowed = reason is None
        ok = ok and allowed
        if not allowed:
            errors.append(f"{item.token}: {reason}\n")
        if mode == "sentence":
            using = "TLS, TLS" if crypto == "TLS" else "no encryption, no integrity"
            out.append(f"{item.token} command using ({using}, and {method}) "
                       f"{'succeeded' if allowed else 'failed'} as {identity} to {dname}.\n")
        elif mode == "table":
            out.append(f"{item.token:>20}{method:>15}{crypto:>11}{crypto:>10}"
                       f"{'    ALLOW ' if allowed else '     DENY '}{identity}\n")
        elif mode == "verbose":
            from htcd.version import version_string

            out.append(f"Destination:                 {dname} {address}\n"
                       f"Remote Version:              {remote_version}\n"
                       f"Local  Version:              {version_string()}\n"
                       f"Instruction:                 {item.token}\n"
                       f"Command:                     {item.command}\n"
                       f"Encryption:                  {crypto}\n"
                       f"Integrity:                   {crypto}\n"
                       f"Authenticated using:         {method}\n"
                       f"All authentication methods:  {offered}\n"
                       f"Remote Mapping:              {identity}\n"
                       f"Authorized:                  {'TRUE' if allowed else 'FALSE'}\n")
            if not allowed:
                out.append(f"Reason:                      {reason}\n")
            out.append("\n")
    return "".join(out), "".join(errors), ok

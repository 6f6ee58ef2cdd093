"""``htcd on``, ``off``, ``restart``, ``reconfig``, ``version``."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    if name == "version":
        return lambda args: _version()
    if name == "off":
        p.add_argument("-fast", action="store_true", help="kill jobs at once instead of a graceful shutdown")
        p.add_argument("-graceful", action="store_true", help="graceful shutdown (the default)")
        return _off
    if name == "reconfig":
        p.add_argument("-daemon", help="only this daemon of this host (default: the master, which passes it on)")
        return _reconfig
    raise ValueError(f"control has no subcommand {name}")


def _version() -> int:
    from htcd.daemon.core import PLATFORM_STRING, VERSION_STRING

    print(VERSION_STRING)
    print(PLATFORM_STRING)
    return 0


def _off(args: argparse.Namespace) -> int:
    from htcd.cli import common

    addr = common.daemon_address(common.config(), "MASTER")
    common.call(addr, "DAEMONS_OFF", "cannot reach the master", fast=args.fast)
    print("Sent \"Kill-All-Daemons\" command to local master")
    return 0


def _reconfig(args: argparse.Namespace) -> int:
    from htcd.cli import common
    from htcd.errors import UserError

    try:
        cfg = common.config()
    except UserError as exc:
        raise UserError(f"{exc}\nnothing was sent: the daemons keep their running config") from None
    subsys = (args.daemon or "MASTER").upper()
    addr = common.daemon_address(cfg, subsys)
    reply = common.call(addr, "DC_RECONFIG", f"reconfig of the {subsys.lower()} failed")
    print(f'Sent "Reconfig" command to local {subsys.lower()}')
    for knob in reply.get("pending_restart") or []:
        print(f"  {knob} changed: it takes effect only when the daemons restart")
    return 0

"""``htcd drain``: drain a machine of its jobs, or cancel a drain (condor_drain).

``htcd drain [-graceful | -quick | -fast] [-reason TEXT] [-resume-on-completion |
-exit-on-completion | -restart-on-completion] [-check EXPR] [-start EXPR] [-verbose] HOST`` and
``htcd drain -cancel [-request-id ID] HOST``.  HOST is a machine name (the ``Machine`` attribute of
its slot ads) or a slot name.  This host's startd is reached through its address file; another
host's is found through the collector and reached over TCP (the client's token, inside TLS; the
startd grants drains to ADMINISTRATOR).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from htcd.errors import UserError


class UsageError(UserError):
    """A bad combination of options (exit status 2, as condor_drain's)."""

    exit_code = 2


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.add_argument("machine", metavar="HOST", help="the machine to drain (its Machine name, or a slot name)")
    p.add_argument("-cancel", action="store_true", help="stop draining")
    how = p.add_mutually_exclusive_group()
    how.add_argument("-graceful", dest="how", action="store_const", const="graceful",
                     help="(the default) honor MaxJobRetirementTime and MachineMaxVacateTime")
    how.add_argument("-quick", dest="how", action="store_const", const="quick",
                     help="honor MachineMaxVacateTime but not MaxJobRetirementTime")
    how.add_argument("-fast", dest="how", action="store_const", const="fast",
                     help="honor neither: kill the jobs at once")
    p.add_argument("-reason", help="advertise this as the reason (DrainReason) while draining")
    done = p.add_mutually_exclusive_group()
    done.add_argument("-resume-on-completion", dest="on_completion", action="store_const", const="resume",
                      help="when drained, resume normal operation")
    done.add_argument("-exit-on-completion", dest="on_completion", action="store_const", const="exit",
                      help="when drained, the startd exits and is not restarted")
    done.add_argument("-restart-on-completion", dest="on_completion", action="store_const", const="restart",
                      help="when drained, the startd restarts")
    p.add_argument("-request-id", dest="request_id", metavar="ID", help="with -cancel: the drain to cancel")
    p.add_argument("-check", metavar="EXPR", help="must be true for every slot, or the drain is refused")
    p.add_argument("-start", metavar="EXPR", help="the START expression while draining (default: no new jobs)")
    p.add_argument("-verbose", action="store_true", help="also print the drain's request id")
    return _run


def _check(args: argparse.Namespace) -> None:
    if not args.cancel:
        if args.request_id:
            raise UsageError("-request-id may only be used with -cancel")
        return
    for flag, given in (("-check", args.check), ("-reason", args.reason), ("-start", args.start),
                        ("an -on-completion option", args.on_completion),
                        (f"-{args.how}" if args.how else "", args.how)):
        if given:
            raise UsageError(f"cannot use {flag} with -cancel")


def _run(args: argparse.Namespace) -> int:
    from htcd.cli import common
    from htcd.client import startd

    _check(args)
    cfg = common.config()
    addr, name = startd.find(cfg, args.machine)
    if args.cancel:
        startd.cancel_drain(addr, args.request_id)
        print(f"Sent request to cancel draining on {name}")
        return 0
    request: dict[str, Any] = {"how_fast": args.how or "graceful", "on_completion": args.on_completion or "nothing"}
    for key in ("reason", "check", "start"):
        if getattr(args, key) is not None:
            request[key] = getattr(args, key)
    reply = startd.drain(addr, **request)
    print(f"Sent request to drain the startd {addr} with {name}. This only affects the single startd; "
          "any other startds running on the same host will not be drained.")
    if args.verbose and reply.get("request_id"):
        print(f"\tRequest id: {reply['request_id']}")
    return 0

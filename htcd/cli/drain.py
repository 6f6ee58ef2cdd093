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
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from htcd.errors import UserError

if TYPE_CHECKING:
    from htcd.config import Config
    from htcd.wire.address import Address


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


def _local_names(cfg: Config) -> set[str]:
    names = {socket.getfqdn(), socket.gethostname(), "localhost", "127.0.0.1"}
    for knob in ("FULL_HOSTNAME", "HOSTNAME"):
        value = cfg.get(knob)
        if value:
            names.add(value)
    return {n.lower() for n in names}


def find_startd(cfg: Config, host: str) -> tuple[Address, str]:
    """(address, name) of the startd of ``host``: this host's through its address file, else the
    one the collector knows -- which must then be on this host too (its Unix socket)."""
    from htcd.cli import common
    from htcd.daemon import locate
    from htcd.wire.address import Address

    local = locate.local_daemon(cfg, "STARTD")
    bare = host.rsplit("@", 1)[-1].lower()
    if bare in _local_names(cfg):
        if local is None:
            raise UserError(f"Can't find address for startd {host}: no startd runs on this host "
                            f"({cfg.get('STARTD_ADDRESS_FILE')} is missing)")
        return local, host
    quoted = host.replace("\\", "\\\\").replace('"', '\\"')
    ads = common.query_collector(cfg, "Machine", f'Machine == "{quoted}" || Name == "{quoted}"',
                                 ["Name", "Machine", "StartdIpAddr", "MyAddress"], limit=1)
    if not ads:
        raise UserError(f"Can't find address for startd {host}: the collector knows no machine of that name")
    text = str(ads[0].get_value("StartdIpAddr") or ads[0].get_value("MyAddress") or "")
    if not text:
        raise UserError(f"Can't find address for startd {host}: its ad has no StartdIpAddr")
    advertised = Address.parse(text)
    name = str(ads[0].get_value("Machine") or host)
    if local is not None and (local.host, local.port) == (advertised.host, advertised.port):
        return local, name
    return advertised, name  # another host's startd: over TCP, with this client's token


def _run(args: argparse.Namespace) -> int:
    from htcd.cli import common

    _check(args)
    cfg = common.config()
    addr, name = find_startd(cfg, args.machine)
    if args.cancel:
        request: dict[str, Any] = {"request_id": args.request_id} if args.request_id else {}
        common.call(addr, "CANCEL_DRAIN_JOBS", f"Attempt to send CANCEL_DRAIN_JOBS to startd {addr} failed",
                    **request)
        print(f"Sent request to cancel draining on {name}")
        return 0
    request = {"how_fast": args.how or "graceful", "on_completion": args.on_completion or "nothing"}
    for key in ("reason", "check", "start"):
        if getattr(args, key) is not None:
            request[key] = getattr(args, key)
    reply = common.call(addr, "DRAIN_JOBS", f"Attempt to send DRAIN_JOBS to startd {addr} failed", **request)
    print(f"Sent request to drain the startd {addr} with {name}. This only affects the single startd; "
          "any other startds running on the same host will not be drained.")
    if args.verbose and isinstance(reply, dict) and reply.get("request_id"):
        print(f"\tRequest id: {reply['request_id']}")
    return 0

"""``htcd on``, ``off``, ``restart``, ``reconfig``, ``version``: condor_on and friends.

Every command goes to a master: this host's (its address file), or with ``-name HOST`` the one
the collector knows by that Name or Machine.  ``off`` stops the daemons but not the master
(``-master`` or ``-daemon master`` stops it too); ``-daemon X`` acts on one daemon, which stays off
until ``on -daemon X``.  ``-graceful`` (the default), ``-peaceful`` (jobs finish first, however
long that takes) and ``-fast`` (jobs are killed at once) are passed on to the daemons.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

DAEMONS = ("master", "collector", "negotiator", "schedd", "startd", "defrag", "shared_port")


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    if name == "version":
        return lambda args: _version()
    p.add_argument("-name", help="the master to command, by its Name or Machine at the collector "
                   "(default: this host's)")
    p.add_argument("-daemon", type=str.lower, choices=DAEMONS, metavar="DAEMON",
                   help=f"only this daemon ({', '.join(DAEMONS)})")
    if name in ("off", "restart"):
        p.add_argument("-master", action="store_true", help="the master itself (and so every daemon)")
        how = p.add_mutually_exclusive_group()
        how.add_argument("-graceful", action="store_true", help="jobs are vacated gracefully (the default)")
        how.add_argument("-peaceful", action="store_true", help="wait, however long, for running jobs to finish")
        how.add_argument("-fast", action="store_true", help="kill running jobs at once")
    return {"on": _on, "off": _off, "restart": _restart, "reconfig": _reconfig}[name]


def _version() -> int:
    from htcd.version import platform_string, version_string

    print(version_string())
    print(platform_string())
    return 0


def _master(args: argparse.Namespace) -> tuple[Any, str]:
    """(address, how to name it in messages) of the master to talk to."""
    from htcd.cli import common
    from htcd.client import master

    return master.address(common.config(), args.name)


def _send(args: argparse.Namespace, command: str, label: str, subject: str | None = None, /,
          **cmd_args: Any) -> int:
    from htcd.client import master

    addr, who = _master(args)
    master.command(addr, command, f"cannot send {label} to the {who}", **cmd_args)
    about = f' for "{subject}"' if subject else ""
    print(f'Sent "{label}" command{about} to {who}')
    return 0


def _flags(args: argparse.Namespace) -> dict[str, bool]:
    return {"fast": bool(args.fast), "peaceful": bool(args.peaceful)}


def _suffix(args: argparse.Namespace, fast: str, peaceful: str) -> str:
    return fast if args.fast else peaceful if args.peaceful else ""


def _target(args: argparse.Namespace) -> str | None:
    """The daemon named by -daemon / -master, or None for all of them."""
    if getattr(args, "master", False):
        return "master"
    return args.daemon


def _on(args: argparse.Namespace) -> int:
    daemon = args.daemon
    if daemon and daemon != "master":
        return _send(args, "DAEMON_ON", "Spawn-Daemon", daemon, daemon=daemon.upper())
    return _send(args, "DAEMONS_ON", "Spawn-All-Daemons")


def _off(args: argparse.Namespace) -> int:
    daemon = _target(args)
    if daemon == "master":
        label = "Kill-Daemon" + _suffix(args, "-Fast", "-Peacefully")
        return _send(args, "DC_OFF_GRACEFUL", label, "master", **_flags(args))
    if daemon:
        label = "Kill-Daemon" + _suffix(args, "-Fast", "-Peacefully")
        return _send(args, "DAEMON_OFF", label, daemon, daemon=daemon.upper(), **_flags(args))
    return _send(args, "DAEMONS_OFF", "Kill-All-Daemons" + _suffix(args, "-Fast", "-Peacefully"), **_flags(args))


def _restart(args: argparse.Namespace) -> int:
    daemon = _target(args)
    label = "Restart" + _suffix(args, "-Fast", "-Peaceful")
    if daemon and daemon != "master":
        return _send(args, "RESTART", label, daemon, daemon=daemon.upper(), **_flags(args))
    return _send(args, "RESTART", label, **_flags(args))


def _reconfig(args: argparse.Namespace) -> int:
    from htcd.cli import common
    from htcd.client import daemoncore
    from htcd.errors import UserError

    try:
        cfg = common.config()
    except UserError as exc:
        raise UserError(f"{exc}\nnothing was sent: the daemons keep their running config") from None
    subsys = (args.daemon or "master").upper()
    if subsys == "MASTER":
        addr, who = _master(args)
    elif args.name:
        raise UserError("-daemon with -name: send the reconfig to that host's master (without -daemon), "
                        "which passes it on to its daemons")
    else:
        addr, who = daemoncore.local_address(cfg, subsys), f"local {subsys.lower()}"
    pending = daemoncore.reconfig(addr, f"reconfig of the {who} failed")
    print(f'Sent "Reconfig" command to {who}')
    for knob in pending:
        print(f"  {knob} changed: it takes effect only when the daemons restart")
    return 0

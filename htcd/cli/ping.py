"""``htcd ping``: does a daemon answer, and who does it think you are."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.add_argument("daemon", nargs="?", default="SCHEDD",
                   help="which daemon of this host: MASTER, COLLECTOR, NEGOTIATOR, SCHEDD, STARTD")
    return _ping


def _ping(args: argparse.Namespace) -> int:
    from htcd.cli import common

    subsys = args.daemon.upper()
    addr = common.daemon_address(common.config(), subsys)
    reply = common.call(addr, "PING", f"cannot reach the {subsys.lower()}")
    print(f"{subsys} {reply['name']} at {addr}: authenticated as {reply['identity']} by {reply['method']}")
    return 0

"""The options that pick a schedd for ``htcd submit`` and ``htcd transfer_data`` (-name, -pool,
-addr), and the schedd they pick.  The spooling protocol itself is :mod:`htcd.client.spool`."""

from __future__ import annotations

import argparse
from typing import Any

from htcd.errors import UserError


def add_target_options(p: argparse.ArgumentParser, name: bool = True) -> None:
    """-name, -pool, -addr: which schedd (HTCondor's spelling)."""
    if name:
        p.add_argument("-name", help="the schedd (default: this host's)")
    p.add_argument("-pool", metavar="HOST[:PORT]", help="the pool's central manager (collector) to ask")
    p.add_argument("-addr", "-address", dest="addr", metavar="SINFUL", help="the schedd at this address")


def schedd_address(args: argparse.Namespace, subsystem: str = "TOOL") -> Any:
    from htcd.cli import common
    from htcd.client import schedd
    from htcd.wire.address import Address

    if getattr(args, "addr", None):
        try:
            return Address.parse(args.addr)
        except ValueError as exc:
            raise UserError(f"-addr {args.addr}: {exc}") from None
    cfg = common.config(subsystem)
    if getattr(args, "pool", None):
        cfg = cfg.copy()
        cfg.define("COLLECTOR_HOST", args.pool, "<-pool>", 0)
    return schedd.address(cfg, getattr(args, "name", None))[0]

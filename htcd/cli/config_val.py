"""``htcd config_val KNOB...``: print configuration values as this host's daemons see them."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.add_argument("knobs", nargs="*", metavar="KNOB")
    p.add_argument("-subsystem", default="TOOL", help="look up as this daemon would (e.g. SCHEDD)")
    p.add_argument("-local-name", dest="local_name", help="look up with this local name")
    p.add_argument("-v", "-verbose", dest="verbose", action="store_true", help="also say where each is defined")
    p.add_argument("-config", action="store_true", help="list the configuration files read, in order")
    return run


def run(args: argparse.Namespace) -> int:
    from htcd.config import load
    from htcd.errors import UserError

    cfg = load(args.subsystem.upper(), args.local_name)
    if args.config:
        print("Configuration source:")
        for f in cfg.files or ["<embedded default>"]:
            print(f"\t{f}")
        return 0
    if not args.knobs:
        raise UserError("name at least one knob (or -config)")
    status = 0
    for knob in args.knobs:
        value = cfg.get(knob)
        if value is None:
            print(f"Not defined: {knob}")
            status = 1
            continue
        if args.verbose:
            where = cfg.where(knob)
            print(f"{knob} = {value}")
            if where:
                print(f"  # at: {where[0]}, line {where[1]}" if where[1] else f"  # at: {where[0]}")
            print(f"  # raw: {cfg.raw(knob)}")
        else:
            print(value)
    return status

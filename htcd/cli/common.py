"""What the tools share: loading config, finding daemons, and talking to them."""

from __future__ import annotations

import time
from typing import Any

from htcd.classad import ClassAd
from htcd.config import Config
from htcd.config import load as load_config
from htcd.daemon import locate
from htcd.errors import UserError
from htcd.wire.address import Address
from htcd.wire.client import Connection
from htcd.wire.errors import RemoteError, WireError


def config(subsystem: str = "TOOL") -> Config:
    return load_config(subsystem)


def collector(cfg: Config) -> Address:
    """The collector to talk to first (the first of COLLECTOR_HOST found on this host)."""
    return locate.collector(cfg)


def query_collector_wire(cfg: Config, ad_type: str, constraint: str | None = None,
                         projection: list[str] | None = None, limit: int = 0) -> list[dict[str, str]]:
    """The matching ads as the collector sends them (attribute name -> expression text), with
    no ClassAd parsed: the fast path for tools that print plain projected values.  Tries each
    collector of COLLECTOR_HOST in turn until one answers."""
    problems = []
    for addr in locate.collectors(cfg):
        try:
            with Connection(addr) as conn:
                return conn.call("QUERY_ADS", ad_type=ad_type, constraint=constraint, projection=projection,
                                 limit=limit)
        except RemoteError as exc:
            raise UserError(f"the collector at {addr} refused the query: {exc}") from None
        except WireError as exc:
            problems.append(str(exc))
    raise UserError("cannot reach the collector: " + "; ".join(problems))


def query_collector(cfg: Config, ad_type: str, constraint: str | None = None,
                    projection: list[str] | None = None, limit: int = 0) -> list[ClassAd]:
    """The matching ads, from the first collector of COLLECTOR_HOST that answers."""
    return [ClassAd.from_wire(w) for w in query_collector_wire(cfg, ad_type, constraint, projection, limit)]


def daemon_address(cfg: Config, subsystem: str) -> Address:
    """A daemon of this host, by subsystem (the collector may also be another host's)."""
    subsys = subsystem.upper()
    addr = collector(cfg) if subsys == "COLLECTOR" else locate.local_daemon(cfg, subsys)
    if addr is None:
        raise UserError(f"no {subsys.lower()} is running for LOCAL_DIR {cfg.get('LOCAL_DIR')} "
                        f"({cfg.get(subsys + '_ADDRESS_FILE')} is missing)")
    return addr


def schedd_address(cfg: Config, name: str | None = None) -> tuple[Address, str]:
    """(address, name) of the named schedd, or of this host's schedd."""
    if name is None:
        local = locate.local_daemon(cfg, "SCHEDD")
        if local is not None:
            return local, cfg.get("SCHEDD_NAME") or cfg.get("FULL_HOSTNAME") or ""
    ads = query_collector(cfg, "Scheduler", f'Name == "{name}"' if name else None, ["Name", "MyAddress"])
    if not ads:
        raise UserError(f"no schedd {'named ' + repr(name) + ' ' if name else ''}is known to the collector; "
                        "is the pool running?")
    return Address.parse(str(ads[0].get_value("MyAddress"))), str(ads[0].get_value("Name"))


def call(address: Address, command: str, what: str, **args: Any) -> Any:
    try:
        with Connection(address) as conn:
            return conn.call(command, **args)
    except WireError as exc:
        raise UserError(f"{what}: {exc}") from None


def now_stamp() -> str:
    return time.strftime("%m/%d/%y %H:%M:%S")

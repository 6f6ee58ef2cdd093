"""Asking the collector: ads by type and constraint, and daemons' addresses from their ads."""

from __future__ import annotations

from htcd.classad import ClassAd
from htcd.config import Config
from htcd.errors import UserError
from htcd.wire import locate
from htcd.wire.address import Address
from htcd.wire.authn import ClientSecurity
from htcd.wire.client import Connection
from htcd.wire.errors import Refused, RemoteError, WireError


def address(cfg: Config) -> Address:
    """The collector to talk to first (the first of COLLECTOR_HOST found on this host)."""
    return locate.collector(cfg)


def query_wire(cfg: Config, ad_type: str, constraint: str | None = None,
               projection: list[str] | None = None, limit: int = 0,
               security: ClientSecurity | None = None) -> list[dict[str, str]]:
    """The matching ads as the collector sends them (attribute name -> expression text), with
    no ClassAd parsed: the fast path for tools that print plain projected values.  Tries each
    collector of COLLECTOR_HOST in turn until one answers.  ``security``: this client's
    credentials, when not the process's (a harness talking to several pools)."""
    problems = []
    for addr in locate.collectors(cfg):
        try:
            with Connection(addr, security=security) as conn:
                return conn.call("QUERY_ADS", ad_type=ad_type, constraint=constraint, projection=projection,
                                 limit=limit)
        except Refused as exc:  # busy: the next collector may answer
            problems.append(f"the collector at {addr} refused the connection: {exc.reason}")
        except RemoteError as exc:
            raise UserError(f"the collector at {addr} refused the query: {exc}") from None
        except WireError as exc:
            problems.append(str(exc))
    raise UserError("cannot reach the collector: " + "; ".join(problems))


def query(cfg: Config, ad_type: str, constraint: str | None = None,
          projection: list[str] | None = None, limit: int = 0) -> list[ClassAd]:
    """The matching ads, from the first collector of COLLECTOR_HOST that answers."""
    return [ClassAd.from_wire(w) for w in query_wire(cfg, ad_type, constraint, projection, limit)]


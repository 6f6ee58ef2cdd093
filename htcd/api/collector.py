"""``Collector``: ads of the pool's daemons, by type and constraint, and where a daemon is, as
htcondor2's ``Collector`` answers (through :mod:`htcd.client.collector`, as ``htcd status``)."""

from __future__ import annotations

from htcd.client import collector as collector_client
from htcd.config import Config
from htcd.errors import UserError
from htcd.wire.authn import ClientSecurity

from .classad import ClassAd, from_wire
from .config import config
from .enums import AD_TYPE_NAMES, DAEMON_TYPE_NAMES, AdType, DaemonType
from .errors import HTCondorException

#: Attributes a location ad carries (what Schedd(location_ad) and the like need).
LOCATION_ATTRS = ["MyType", "Name", "Machine", "MyAddress", "AddressV1", "CondorVersion", "CondorPlatform"]


class Collector:
    """The pool's collector: ``pool`` names another one (``host[:port]``, or a list of them,
    tried in turn as COLLECTOR_HOST lists them); default the config's COLLECTOR_HOST.
    Security comes from the config, as for every htcd tool (``security`` must stay None)."""

    def __init__(self, pool: str | list[str] | tuple[str, ...] | None = None, security: object = None) -> None:
        if security is not None:
            raise HTCondorException("htcd.api takes its security settings from the config (SEC_CLIENT_*); "
                                    "it has no SecurityContext")
        if pool is not None and not isinstance(pool, (str, list, tuple)):
            raise TypeError("pool must be a string or a list of strings")
        self._pool = None if pool is None else (pool if isinstance(pool, str) else ", ".join(pool))

    def __repr__(self) -> str:
        return f"<Collector {self._pool or 'of the config'}>"

    def _config(self) -> Config:
        cfg = config()
        if self._pool is None:
            return cfg
        mine = cfg.copy()
        mine.define("COLLECTOR_HOST", self._pool, "<htcd.api.Collector>", 0)
        return mine

    def _query(self, type_name: str, constraint: str | None, projection: list[str] | None) -> list[ClassAd]:
        cfg = self._config()
        try:
            wire = collector_client.query_wire(cfg, type_name, constraint or None, projection or None,
                                               security=ClientSecurity.from_config(cfg, "CLIENT"))
        except UserError as exc:
            raise HTCondorException(str(exc)) from None
        return [from_wire(w) for w in wire]

    def query(self, ad_type: AdType = AdType.Any, constraint: str | None = None,
              projection: list[str] | None = None, statistics: str | None = None) -> list[ClassAd]:
        """The ads of ``ad_type`` matching ``constraint``, with only ``projection`` when given."""
        if statistics:
            raise HTCondorException("htcd's collector keeps no statistics levels per query; ask the daemon "
                                    "itself (htcd status -direct NAME -statistics)")
        name = AD_TYPE_NAMES.get(AdType(ad_type))
        if name is None:  # StartdPrivate: claim ids, which htcd's collector gives the negotiator only
            raise HTCondorException(f"htcd.api does not query {AdType(ad_type).name} ads: htcd's collector "
                                    "hands private startd ads to the negotiator only")
        return self._query(name, str(constraint) if constraint is not None else None, projection)

    def locate(self, daemon_type: DaemonType, name: str | None = None) -> ClassAd:
        """The location ad of one daemon (the first the collector has, or the one named)."""
        found = self._locate(daemon_type, name)
        if not found:
            kind = DaemonType(daemon_type).name
            raise HTCondorException(f"Unable to locate {kind.lower()} daemon" + (f" named {name!r}" if name else ""))
        return found[0]

    def locateAll(self, daemon_type: DaemonType) -> list[ClassAd]:
        """The location ads of every daemon of this type."""
        return self._locate(daemon_type, None)

    def _locate(self, daemon_type: DaemonType, name: str | None) -> list[ClassAd]:
        type_name = DAEMON_TYPE_NAMES.get(DaemonType(daemon_type))
        if type_name is None:
            raise HTCondorException(f"htcd has no {DaemonType(daemon_type).name} daemon")
        constraint = None
        if name is not None:
            constraint = f"Name =?= {_quote(name)} || Machine =?= {_quote(name)}"
        ads = self._query(type_name, constraint, LOCATION_ATTRS)
        return [ad for ad in ads if "MyAddress" in ad]


def _quote(text: str) -> str:
    from .classad import quote

    return quote(text)

"""Ads by type, keyed like HTCondor's collector, with expiry (ClassAdLifetime).

Pure data structure: the daemon feeds it updates and queries; nothing here does I/O.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from htcd.classad import ClassAd, Expr, is_true

AD_TYPES = ("Machine", "Scheduler", "Submitter", "Negotiator", "DaemonMaster", "Collector",
            "Accounting", "Generic")
DEFAULT_LIFETIME = 900


@dataclass
class Entry:
    ad: ClassAd
    wire: dict[str, str]
    private: dict[str, str] | None
    expires: float


@dataclass
class AdStore:
    ads: dict[str, dict[str, Entry]] = field(default_factory=lambda: {t.lower(): {} for t in AD_TYPES})

    @staticmethod
    def key(ad_type: str, wire: dict[str, str]) -> str:
        """HTCondor keys submitters by (Name, ScheddName); everything else by Name."""
        lowered = {k.lower(): v for k, v in wire.items()}
        name = lowered.get("name", "")
        if ad_type.lower() == "submitter":
            return f"{name}|{lowered.get('scheddname', '')}"
        return name

    def update(self, ad_type: str, wire: dict[str, str], private: dict[str, str] | None,
               now: float | None = None) -> ClassAd:
        now = time.time() if now is None else now
        ad = ClassAd.from_wire(wire)
        ad["LastHeardFrom"] = int(now)
        lifetime = ad.get_value("ClassAdLifetime", DEFAULT_LIFETIME)
        if not isinstance(lifetime, int) or isinstance(lifetime, bool) or lifetime <= 0:
            lifetime = DEFAULT_LIFETIME
        table = self.ads.setdefault(ad_type.lower(), {})
        table[self.key(ad_type, wire)] = Entry(ad, ad.to_wire(), private, now + lifetime)
        return ad

    def invalidate(self, ad_type: str, name: str) -> int:
        table = self.ads.get(ad_type.lower(), {})
        gone = [k for k in table if k == name or k.split("|", 1)[0] == name]
        for k in gone:
            del table[k]
        return len(gone)

    def expire(self, now: float | None = None) -> int:
        now = time.time() if now is None else now
        removed = 0
        for table in self.ads.values():
            old = [k for k, e in table.items() if e.expires <= now]
            for k in old:
                del table[k]
            removed += len(old)
        return removed

    def query(self, ad_type: str, constraint: Expr | None) -> Iterator[Entry]:
        tables = self.ads.values() if ad_type.lower() == "any" else [self.ads.get(ad_type.lower(), {})]
        for table in tables:
            for entry in list(table.values()):
                if constraint is None or is_true(constraint.eval(entry.ad)):
                    yield entry

    def count(self) -> int:
        return sum(len(t) for t in self.ads.values())


def project(wire: dict[str, str], projection: list[str] | None) -> dict[str, str]:
    if not projection:
        return wire
    wanted = {p.lower() for p in projection}
    return {k: v for k, v in wire.items() if k.lower() in wanted}

"""A job in the schedd's memory: the shared cluster ad plus the proc's own attributes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from htcd.classad import ClassAd, unparse

IDLE, RUNNING, REMOVED, COMPLETED, HELD = 1, 2, 3, 4, 5
STATUS_LETTER = {IDLE: "I", RUNNING: "R", REMOVED: "X", COMPLETED: "C", HELD: "H", 6: ">", 7: "S"}


@dataclass(eq=False)
class Job:
    cluster_id: int
    proc_id: int
    cluster: dict[str, str]  # shared with every proc of the cluster; never mutated per job
    proc: dict[str, str]
    matched: bool = False  # a shadow owns it (in memory only)
    removing: bool = False
    _ad: ClassAd | None = field(default=None, repr=False)

    @property
    def id(self) -> tuple[int, int]:
        return (self.cluster_id, self.proc_id)

    @property
    def id_text(self) -> str:
        return f"{self.cluster_id}.{self.proc_id}"

    def wire(self) -> dict[str, str]:
        merged = dict(self.cluster)
        merged.update(self.proc)
        return merged

    @property
    def ad(self) -> ClassAd:
        if self._ad is None:
            self._ad = ClassAd.from_wire(self.wire())
        return self._ad

    def get(self, name: str, default: Any = None) -> Any:
        return self.ad.get_value(name, default)

    @property
    def status(self) -> int:
        return int(self.get("JobStatus", IDLE) or IDLE)

    @property
    def owner(self) -> str:
        return str(self.get("Owner", "") or "")

    def set(self, **attrs: Any) -> None:
        """Set proc attributes from Python values (the caller persists ``proc``)."""
        for k, v in attrs.items():
            self.proc[k] = unparse(v)
        self._ad = None

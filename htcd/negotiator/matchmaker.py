"""One negotiation cycle's matching, as a pure function of ads (no I/O): testable and
benchmarkable without daemons."""

from __future__ import annotations

from dataclasses import dataclass, field

from htcd.classad import ClassAd, rank, symmetric_match


@dataclass
class Slot:
    ad: ClassAd
    claim_id: str
    taken: bool = False


@dataclass
class Pool:
    slots: list[Slot] = field(default_factory=list)

    def sample(self, most: int = 16) -> list[dict[str, str]]:
        """Slot ads with distinct Requirements/Rank/START (the schedd derives from them which job
        attributes matter for matching, to group its jobs into autoclusters)."""
        seen: dict[tuple[str, ...], dict[str, str]] = {}
        for slot in self.slots:
            key = tuple(slot.ad.expr_text(a) if a in slot.ad else "" for a in ("Requirements", "Rank", "START"))
            if key not in seen and len(seen) < most:
                seen[key] = slot.ad.to_wire()
        return list(seen.values())

    def best_for(self, job: ClassAd) -> Slot | None:
        """The free slot that matches ``job`` with the highest job Rank (first one on ties)."""
        best: Slot | None = None
        best_rank = 0.0
        for slot in self.slots:
            if slot.taken or not symmetric_match(job, slot.ad):
                continue
            r = rank(job, slot.ad)
            if best is None or r > best_rank:
                best, best_rank = slot, r
        return best

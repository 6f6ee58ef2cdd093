"""Job counts by status, overall and per owner, kept as jobs change state.

The Scheduler and Submitter ads and ``htcd q -totals`` read these instead of scanning the queue.
"""

from __future__ import annotations

from collections import Counter


class Counters:
    def __init__(self) -> None:
        self.total: Counter[int] = Counter()
        self.by_owner: dict[str, Counter[int]] = {}

    def add(self, owner: str, status: int, n: int = 1) -> None:
        self.total[status] += n
        self.by_owner.setdefault(owner, Counter())[status] += n

    def remove(self, owner: str, status: int) -> None:
        self.total[status] -= 1
        per = self.by_owner.get(owner)
        if per is not None:
            per[status] -= 1
            if not any(per.values()):
                del self.by_owner[owner]

    def move(self, owner: str, old: int, new: int) -> None:
        if old != new:
            self.add(owner, new)
            self.remove(owner, old)

    def jobs(self, owner: str | None = None) -> int:
        c = self.total if owner is None else self.by_owner.get(owner, Counter())
        return sum(c.values())

    def of(self, owner: str | None = None) -> dict[str, int]:
        """Counts by status (as text keys, for the wire)."""
        c = self.total if owner is None else self.by_owner.get(owner, Counter())
        return {str(k): v for k, v in c.items() if v}

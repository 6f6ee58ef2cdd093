"""Pie slices: each submitter's share of the pool, inversely proportional to its effective priority.

HTCondor's rule: a submitter with EUP 5 gets twice the slots of one with EUP 10 and four times one
with EUP 20.  The slice is the share of the whole pool (in slot weight) less what the submitter
already uses; submitters are served best priority first, and the pie is spun again (slices
recomputed over what is left, among those still wanting) while slots and demand remain.
"""

from __future__ import annotations

from collections.abc import Mapping


def shares(eups: Mapping[str, float], pool: float) -> dict[str, float]:
    """Each submitter's share of ``pool`` (weighted slots), by the inverse of its EUP."""
    inverse = {name: 1.0 / max(eup, 1e-9) for name, eup in eups.items()}
    total = sum(inverse.values())
    if total <= 0:
        return {name: 0.0 for name in eups}
    return {name: pool * inv / total for name, inv in inverse.items()}


def slices(eups: Mapping[str, float], usage: Mapping[str, float], pool: float) -> dict[str, float]:
    """The pie slice of each submitter: its share of the pool less what it already uses (>= 0)."""
    return {name: max(0.0, share - usage.get(name, 0.0)) for name, share in shares(eups, pool).items()}


def order(eups: Mapping[str, float]) -> list[str]:
    """Submitters best (lowest) effective priority first; the name breaks ties."""
    return sorted(eups, key=lambda n: (eups[n], n))

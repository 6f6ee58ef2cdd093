"""Concurrency limits: a job's ``ConcurrencyLimits`` ("name" or "name:weight", comma-separated)
counted against ``<NAME>_LIMIT`` (for ``a.b``: ``A.B_LIMIT``, then ``CONCURRENCY_LIMIT_DEFAULT_A``,
then ``CONCURRENCY_LIMIT_DEFAULT``).  In use is what the claimed slots' ads say their jobs hold
plus what this cycle has matched so far."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable


def parse(text: object) -> dict[str, float]:
    """``"db,licence:2"`` -> {"db": 1.0, "licence": 2.0} (names lower-cased)."""
    if not isinstance(text, str) or not text.strip():
        return {}
    out: dict[str, float] = {}
    for item in text.split(","):
        name, _, weight = item.strip().partition(":")
        name = name.strip().lower()
        if not name:
            continue
        try:
            w = float(weight) if weight.strip() else 1.0
        except ValueError:
            w = 1.0
        out[name] = out.get(name, 0.0) + w
    return out


class Limits:
    def __init__(self, knob: Callable[[str], str | None]) -> None:
        self.knob = knob
        self.in_use: defaultdict[str, float] = defaultdict(float)
        self._max: dict[str, float] = {}

    def count(self, limits_texts: Iterable[object]) -> None:
        for text in limits_texts:
            for name, w in parse(text).items():
                self.in_use[name] += w

    def maximum(self, name: str) -> float:
        got = self._max.get(name)
        if got is None:
            got = self._max[name] = self._read_max(name)
        return got

    def _read_max(self, name: str) -> float:
        for knob in (f"{name}_LIMIT", *( [f"CONCURRENCY_LIMIT_DEFAULT_{name.split('.')[0]}"] if "." in name else [])):
            value = _float(self.knob(knob))
            if value is not None:
                return value
        value = _float(self.knob("CONCURRENCY_LIMIT_DEFAULT"))
        return value if value is not None else 2308032.0

    def blocked(self, wanted: dict[str, float]) -> str | None:
        """The first limit one more job holding ``wanted`` would exceed, or None."""
        for name, w in wanted.items():
            if self.in_use[name] + w > self.maximum(name) + 1e-9:
                return name
        return None

    def take(self, wanted: dict[str, float]) -> None:
        for name, w in wanted.items():
            self.in_use[name] += w


def _float(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        return None

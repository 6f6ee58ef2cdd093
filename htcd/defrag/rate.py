"""How many machines one poll may drain, from DEFRAG_DRAINING_MACHINES_PER_HOUR and
DEFRAG_INTERVAL, as HTCondor counts it.

The rate is split into whole machines per poll, plus what is left over as whole machines per
hour, plus what is left over after that as machines per day (rounded).  The per-hour and per-day
parts are added to the first poll of each new hour (day), prorated by how much of that hour (day)
is still to come, so a fractional rate is honoured over time rather than lost to rounding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

HOUR = 3600
DAY = 24 * HOUR
_EPSILON = 0.00001


@dataclass(frozen=True)
class Rate:
    per_hour: float  # 0 when draining is off (a negative rate, or DEFRAG_INTERVAL above an hour)
    per_poll: int
    extra_per_hour: int
    extra_per_day: int

    @classmethod
    def of(cls, per_hour: float, interval: int) -> Rate:
        per_interval = per_hour / HOUR * interval
        per_poll = max(0, math.floor(per_interval + _EPSILON))
        hour_left = (per_interval - per_poll) / interval * HOUR
        extra_hour = math.floor(hour_left + _EPSILON)
        day_left = (hour_left - extra_hour) * 24.0
        extra_day = math.floor(day_left + 0.5)
        if extra_day < 0 or interval > DAY:
            extra_day = 0
        if per_hour < 0 or interval > HOUR:
            per_hour = 0.0
        return cls(per_hour, per_poll, extra_hour, extra_day)

    def describe(self, interval: int) -> str:
        return (f"polling interval {interval}s, DEFRAG_DRAINING_MACHINES_PER_HOUR = {self.per_hour:f}/hour = "
                f"{self.per_poll}/interval + {self.extra_per_hour}/hour + {self.extra_per_day}/day")

    def to_drain(self, previous_poll: int, now: int, interval: int) -> tuple[int, float]:
        """(machines to drain in the poll at ``now``, the unrounded figure for the log)."""
        count = self.per_poll
        real = float(count)
        if previous_poll:
            frac = 0.0
            if now // HOUR != previous_poll // HOUR:
                part, frac = prorate(self.extra_per_hour, now - now // HOUR * HOUR, HOUR, interval)
                count += part
            if now // DAY != previous_poll // DAY:
                part, frac = prorate(self.extra_per_day, now - now // DAY * DAY, DAY, interval)
                count += part
            real += frac
        return count, real


def prorate(n: int, elapsed: int, period: int, granularity: int) -> tuple[int, float]:
    """``n`` per ``period``, in proportion to what is left of the period once ``elapsed`` of it
    went by, plus one polling interval that may have been missed; never beyond ``n`` in
    magnitude nor of the other sign."""
    frac = (period - elapsed) / period + granularity / period
    real = n * frac
    answer = math.floor(real + 0.5)
    if (n > 0 and answer > n) or (n < 0 and answer < n):
        return n, real
    if answer * n < 0:
        return 0, real
    return answer, real

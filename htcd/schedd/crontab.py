"""cron_minute, cron_hour, ...: a job's crontab schedule and the DeferralTime it gives.

condor_submit writes the schedule into ``CronMinute``, ``CronHour``, ``CronDayOfMonth``,
``CronMonth`` and ``CronDayOfWeek`` (strings; a missing one is ``*``) and the Requirements
that wait for ``DeferralTime``; the schedd, as HTCondor's, sets ``DeferralTime`` of an idle
job to the schedule's next time (local time, the start of a minute, after the current minute)
when it has none or the one it has passed by more than ``DeferralWindow``, and again each time
a run ends with the job still queued.  The starter then starts the job at that time.

The syntax is HTCondor's: comma-separated items, each ``*``, ``N`` or ``A-B`` with an optional
``/S`` that keeps the values divisible by S (HTCondor's reading: ``*/15`` is 0, 15, 30, 45 and
``1-10/3`` is 3, 6, 9); day of week 0-7, 7 and 0 both Sunday.  As in cron, when both the day of
month and the day of week are restricted a day matching either runs the job.
"""

from __future__ import annotations

import datetime
import time
from dataclasses import dataclass

from htcd.schedd.jobs import Job

# (attribute, lowest, highest) in HTCondor's order
FIELDS = (("CronMinute", 0, 59), ("CronHour", 0, 23), ("CronDayOfMonth", 1, 31), ("CronMonth", 1, 12),
          ("CronDayOfWeek", 0, 7))
ATTRS = tuple(f[0] for f in FIELDS)
INVALID_CRON_SETTINGS = 25  # HoldReasonCode InvalidCronSettings
SEARCH_DAYS = 366 * 8  # a schedule with no day in eight years (30 February) never runs


class CronError(ValueError):
    """The schedule does not parse; the message follows "Invalid cron schedule parameters: "."""


def _values(text: str, attr: str, low: int, high: int) -> set[int] | None:
    """The values an item list allows; None for ``*`` alone on the day of week (not restricted)."""
    out: set[int] = set()
    items = text.replace(" ", "").split(",")
    if attr == "CronDayOfWeek" and items == ["*"]:
        return None
    for item in items:
        body, slash, step_text = item.partition("/")
        step = 1
        if slash:
            if not step_text.isdigit() or int(step_text) == 0:
                raise CronError(f"Invalid parameter value '{text}' for {attr}")
            step = int(step_text)
        if body == "*":
            first, last = low, high
        elif "-" in body[1:]:
            a, _, b = body.partition("-")
            if not a.isdigit() or not b.isdigit():
                raise CronError(f"Invalid parameter value '{text}' for {attr}")
            first, last = max(low, int(a)), min(high, int(b))
        elif body.isdigit() and low <= int(body) <= high:
            first = last = int(body)
        else:
            raise CronError(f"Invalid parameter value '{text}' for {attr}")
        out.update(v for v in range(first, last + 1) if v % step == 0)
    if attr == "CronDayOfWeek" and 7 in out:
        out.discard(7)
        out.add(0)
    if not out:
        raise CronError(f"Invalid cron attribute: {text}")
    return out


@dataclass(frozen=True)
class Schedule:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int] | None  # None: the day of week is not restricted
    all_days: bool  # the day of month is *

    @classmethod
    def parse(cls, texts: dict[str, str]) -> Schedule:
        sets = [_values(texts.get(attr, "*") or "*", attr, low, high) for attr, low, high in FIELDS]
        minutes, hours, days, months, weekdays = sets
        assert minutes is not None and hours is not None and days is not None and months is not None
        return cls(frozenset(minutes), frozenset(hours), frozenset(days), frozenset(months),
                   None if weekdays is None or len(weekdays) == 7 else frozenset(weekdays), len(days) == 31)

    def _day_matches(self, day: datetime.date) -> bool:
        if day.month not in self.months:
            return False
        weekday = (day.weekday() + 1) % 7  # Sunday 0
        if self.weekdays is None:
            return day.day in self.days
        if self.all_days:
            return weekday in self.weekdays
        return day.day in self.days or weekday in self.weekdays

    def next_time(self, now: float) -> int | None:
        """The first time of the schedule after the current minute (epoch seconds), or None."""
        start = datetime.datetime.fromtimestamp(int(now) + 60 - int(now) % 60)
        day = start.date()
        for n in range(SEARCH_DAYS):
            if self._day_matches(day):
                for hour in sorted(self.hours):
                    if n == 0 and hour < start.hour:
                        continue
                    for minute in sorted(self.minutes):
                        if n == 0 and hour == start.hour and minute < start.minute:
                            continue
                        when = datetime.datetime(day.year, day.month, day.day, hour, minute)
                        return int(time.mktime(when.timetuple()))
            day += datetime.timedelta(days=1)
        return None


def _number(job: Job, attr: str) -> float | None:
    if job.text(attr) is None:
        return None
    value = job.get(attr)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def next_deferral(job: Job, now: float, force: bool = False) -> int | str | None:
    """For an idle job with a schedule: the DeferralTime to set (int), or why the schedule is
    invalid (str, the hold reason); None when the job has no schedule or its DeferralTime
    still stands (``force``: a run just ended, compute the next one anyway)."""
    if not any(job.text(attr) is not None for attr in ATTRS):
        return None
    if not force:
        deferral = _number(job, "DeferralTime")
        if deferral is not None and now <= deferral + (_number(job, "DeferralWindow") or 0):
            return None
    texts = {}
    for attr in ATTRS:
        if job.text(attr) is not None:
            value = job.get(attr)
            texts[attr] = value if isinstance(value, str) else str(value)
    try:
        when = Schedule.parse(texts).next_time(now)
    except CronError as exc:
        return f"Invalid cron schedule parameters: {exc}"
    if when is None:
        return "Invalid cron schedule parameters: the schedule has no time in the next eight years"
    return when

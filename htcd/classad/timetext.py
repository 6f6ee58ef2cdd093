"""Time text as ClassAds write it: ISO 8601 absolute times and ``[D+]HH:MM:SS`` durations.

Both the parser (``absTime("...")`` literals are read at parse time) and the time built-ins
read these forms."""

from __future__ import annotations

import re

from .values import AbsTime

_ISO = re.compile(
    r"\s*(\d{4})-?(\d{2})-?(\d{2})(?:[T ](\d{2}):?(\d{2})(?::?(\d{2}))?)?\s*"
    r"(Z|[+-]\d{2}(?::?\d{2})?)?\s*\Z", re.IGNORECASE)


def parse_abstime(text: str) -> AbsTime | None:
    """ISO 8601 date and time (``2026-01-01T00:00:00+01:00``, ``20260101T000000Z``, a date alone);
    without a zone the time is UTC."""
    import calendar  # here, not at the top: most programs never read a time literal
    import datetime

    m = _ISO.match(text)
    if m is None:
        return None
    y, mo, d, h, mi, sec, zone = m.groups()
    try:
        datetime.date(int(y), int(mo), int(d))
    except ValueError:
        return None
    hh, mm, ss = int(h or 0), int(mi or 0), int(sec or 0)
    if hh > 23 or mm > 59 or ss > 60:
        return None
    off = 0
    if zone and zone.upper() != "Z":
        digits = zone[1:].replace(":", "")
        off = int(digits[:2]) * 3600 + int(digits[2:4] or 0) * 60
        if zone[0] == "-":
            off = -off
    epoch = calendar.timegm((int(y), int(mo), int(d), hh, mm, ss, 0, 0, 0)) - off
    return AbsTime(epoch, off)


_REL_CLOCK = re.compile(r"\s*(-)?\s*(?:(\d+)\+)?(?:(\d+):)??(?:(\d+):)?(\d+(?:\.\d*)?)\s*\Z")
_REL_UNITS = re.compile(r"\s*(-)?\s*((?:\d+(?:\.\d*)?\s*[dhms]\s*)+)\Z", re.IGNORECASE)
_UNIT = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def parse_reltime(text: str) -> float | None:
    """``[-][D+][HH:][MM:]SS`` or ``1d 2h 3m 4s`` to seconds; None when malformed."""
    m = _REL_CLOCK.match(text)
    if m is not None:
        neg, d, h, mi, s = m.groups()
        total = int(d or 0) * 86400 + int(h or 0) * 3600 + int(mi or 0) * 60 + float(s)
        return -total if neg else total
    m = _REL_UNITS.match(text)
    if m is not None:
        total = 0.0
        for num, unit in re.findall(r"(\d+(?:\.\d*)?)\s*([dhms])", m.group(2), re.IGNORECASE):
            total += float(num) * _UNIT[unit.lower()]
        return -total if m.group(1) else total
    return None

"""Time text as ClassAds write it: ISO 8601 absolute times and ``[D+]HH:MM:SS`` durations.

Both the parser (``absTime("...")`` literals are read at parse time) and the time built-ins
read these forms."""

from __future__ import annotations

import re

from .values import AbsTime

_ATOI = re.compile(r"[ \t\n\v\f\r]*([+-]?\d*)")
_C_SPACE = " \t\n\v\f\r"


def _atoi(text: str) -> int:
    """C atoi: leading blanks, a sign and digits; 0 when there are none."""
    m = _ATOI.match(text)
    digits = m.group(1) if m else ""
    return int(digits) if digits.lstrip("+-") else 0


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (any year; ``d`` may be out of range)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468 + d - 1


def _zone(text: str) -> tuple[str, int | None]:
    """The text without its trailing zone, and the zone's offset in seconds (None: no zone)."""
    end = len(text.rstrip(_C_SPACE)) - 1
    if end > 0 and text[end] in "zZ":
        return text[:end] + text[end + 1:], 0
    n = len(text)
    if n > 6 and text[n - 6] in "+-" and text[n - 3] == ":":
        text = text[:n - 3] + text[n - 2:]
    elif not (n > 5 and text[n - 5] in "+-"):
        return text, None
    zone = text[-5:]
    if zone[0] not in "+-" or not zone[1:].isdigit() or not zone[1:].isascii():
        return text, None
    off = int(zone[1:3]) * 3600 + int(zone[3:5]) * 60
    return text[:-5], -off if zone[0] == "-" else off


def parse_abstime(text: str) -> AbsTime | None:
    """An absolute time read as HTCondor reads one: a year of four characters, then up to five
    two-digit fields (month, day, hours, minutes, seconds), anything but digits between them,
    and an optional zone (``Z``, ``+hhmm``, ``-hh:mm``) at the end; fields out of range carry
    over as C mktime does (a missing day is day 0, the last of the month before).  So
    ``2003-09-03T10:00:00-06:00``, ``20030903T100000Z``, ``2003-09-03T`` and
    ``1970-01-01T:00:00:01Z`` are all read.  Without a zone the time is UTC.  None when there is
    no year, or digits are left over."""
    body, off = _zone(text)
    n = len(body)
    i = 0

    def skip(i: int) -> int:
        while i < n and not ("0" <= body[i] <= "9"):
            i += 1
        return i

    i = skip(i)
    if i > n - 4:
        return None
    fields = [_atoi(body[i:i + 4]), 1, 0, 0, 0, 0]  # year, month, day, hours, minutes, seconds
    i = skip(i + 4)
    for k in range(1, 6):
        if i <= n - 2:
            fields[k] = _atoi(body[i:i + 2])
            i += 2
        i = skip(i)
    if i <= n - 1 and "0" <= body[i] <= "9":
        return None
    year, month, day, hh, mm, ss = fields
    year += (month - 1) // 12
    month = (month - 1) % 12 + 1
    local = _days_from_civil(year, month, day) * 86400 + hh * 3600 + mm * 60 + ss
    if local == -1:  # mktime's failure value: HTCondor refuses this one second
        return None
    zone = 0 if off is None else off
    return AbsTime(local - zone, zone)


def parse_reltime(text: str) -> float | None:
    """A duration read as HTCondor reads one, from the end: seconds (``ss.sss``, optionally
    followed by ``s``), then minutes before ``:`` or ``m``, hours before ``:`` or ``h``, days
    before ``+`` or ``d``, then an optional ``-``; blanks anywhere between, a missing number is
    0 (so ``""`` is 0).  ``1+02:03:04``, ``2:03``, ``1d 2h 3m 4s``, ``-90`` all read.  None
    when anything else is left at the front."""
    i = len(text) - 1

    def back(i: int) -> int:
        while i >= 0 and text[i] in _C_SPACE:
            i -= 1
        return i

    def digits(i: int) -> tuple[str, int]:
        j = i
        while j >= 0 and "0" <= text[j] <= "9":
            j -= 1
        return text[j + 1:i + 1], j

    secs = 0.0
    i = back(i)
    if i >= 0 and (text[i] in "sS" or "0" <= text[i] <= "9"):
        if text[i] in "sS":
            i = back(i - 1)
        num, i = digits(i)
        if i >= 0 and text[i] == ".":
            whole, i = digits(i - 1)
            num = whole + "." + num
        secs = float(num) if num.strip(".") else 0.0
    parts = []
    for marks in ("mM:", "hH:", "dD+"):
        i = back(i)
        n = 0
        if i >= 0 and text[i] in marks:
            num, i = digits(back(i - 1))
            n = int(num) if num and int(num) < 1 << 31 else 0
        parts.append(n)
    mins, hours, days = parts
    i = back(i)
    negative = i >= 0 and text[i] == "-"
    if negative:
        i = back(i - 1)
    if i >= 0:
        return None
    total = days * 86400 + hours * 3600 + mins * 60 + secs
    return -total if negative else total

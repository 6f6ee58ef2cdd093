"""Times: time(), absTime(), relTime(), formatTime(), interval()."""

from __future__ import annotations

import calendar
import math
import time as _time
from collections.abc import Callable
from typing import Any

from ..nodes import ad_class
from ..registry import strict
from ..timetext import parse_abstime, parse_reltime
from ..values import ERROR, UNDEFINED, AbsTime, RelTime, Value
from .convert import is_ad, real_to_int, strtod


@strict("time")
def _now(a: list[Value]) -> object:
    if a:
        return ERROR
    return int(_time.time())


@strict("interval")
def _interval(a: list[Value]) -> object:
    if len(a) != 1:
        return ERROR
    v = a[0]
    t = type(v)
    if t is bool:
        v = int(v)
    elif t is float:
        v = real_to_int(v)
    elif t is str:  # the string's leading number, as HTCondor converts it
        x = strtod(v)
        if x is None:
            return ERROR
        v = real_to_int(x)
    elif t is AbsTime:
        v = real_to_int(v.epoch)
    elif t is RelTime:
        v = real_to_int(v.seconds)
    elif t is not int:
        return ERROR
    # HTCondor formats the count as a C int: the low 32 bits of the 64-bit value
    n: int = (v & 0xFFFFFFFF) - ((v & 0x80000000) << 1)
    sign = "-" if n < 0 else ""
    n = abs(n)
    days, rest = divmod(n, 86400)
    hours, rest = divmod(rest, 3600)
    mins, secs = divmod(rest, 60)
    if days:
        return f"{sign}{days}+{hours:02d}:{mins:02d}:{secs:02d}"
    if hours:
        return f"{sign}{hours}:{mins:02d}:{secs:02d}"
    if mins:
        return f"{sign}{mins}:{secs:02d}"
    return f"{sign}{secs}"


def _offset_arg(v: Value) -> int | None:
    """absTime()'s second argument, the zone offset in seconds: an integer, a real (truncated) or
    a relTime."""
    t = type(v)
    if t is int:
        return v
    if t is float:
        return real_to_int(v)
    if t is RelTime:
        return int(v.seconds)
    return None


@strict("absTime")
def _abstime(a: list[Value]) -> object:
    if len(a) > 2:
        return ERROR
    if not a:
        return AbsTime(int(_time.time()), 0)
    off = 0
    if len(a) == 2:
        o = _offset_arg(a[1])
        if o is None:
            return ERROR
        off = o
    v = a[0]
    t = type(v)
    if v is UNDEFINED:
        return UNDEFINED
    if t is str:
        if len(a) != 1:
            return ERROR
        r = parse_abstime(v)
        return ERROR if r is None else r
    if t is AbsTime:
        return v
    if t is int:
        return AbsTime(v, off)
    if t is float:
        return AbsTime(real_to_int(v), off)
    if t is RelTime:
        return AbsTime(int(v.seconds), off)
    return ERROR


@strict("relTime")
def _reltime(a: list[Value]) -> object:
    if len(a) != 1:
        return ERROR
    v = a[0]
    t = type(v)
    if v is UNDEFINED:
        return UNDEFINED
    if t is str:
        # classad2 gives the number of seconds (a real) for a string argument
        r = parse_reltime(v)
        return ERROR if r is None else float(r)
    if t is RelTime:
        return v
    if t is int:
        return RelTime(v)
    if t is float:  # the fraction is kept (it counts in arithmetic); the value prints whole seconds
        return RelTime(v) if v == v and abs(v) < 9.2e18 else RelTime(real_to_int(v))
    if t is AbsTime:
        return RelTime(real_to_int(v.epoch))
    return ERROR


def _strftime(fmt: str, epoch: int, offset: int) -> str:
    """C strftime on the broken-down time at ``offset`` seconds east of UTC; %s is the epoch."""
    tm = _time.gmtime(epoch + offset)
    out: list[str] = []
    i = 0
    n = len(fmt)
    while i < n:
        ch = fmt[i]
        if ch != "%" or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        d = fmt[i + 1]
        if d == "s":
            out.append(str(epoch))
        elif d == "%":
            out.append("%")
        elif d == "c":
            out.append(_time.strftime("%a %b %e %H:%M:%S %Y", tm))
        elif d in "zZ":  # HTCondor formats fields already shifted by the offset: the zone is UTC's
            out.append("+0000" if d == "z" else _time.tzname[0])
        else:
            try:
                out.append(_time.strftime("%" + d, tm))
            except ValueError:
                out.append("%" + d)
        i += 2
    return "".join(out)


def _c_int(x: float) -> int:
    """C's ``(int) x`` as HTCondor's time splitting casts a real: 32 bits, INT_MIN when out of range."""
    if x != x or not -2147483649.0 < x < 2147483648.0:
        return -(1 << 31)
    return int(x)


def _gmtime(secs: int) -> _time.struct_time | None:
    try:
        return _time.gmtime(secs)
    except (OverflowError, OSError, ValueError):
        return None


def _split_abs(epoch: int, offset: int) -> object:
    tm = _gmtime(epoch + offset)
    if tm is None:
        return ERROR
    make: Any = ad_class()
    return make({"Type": "AbsoluteTime", "Year": tm.tm_year, "Month": tm.tm_mon, "Day": tm.tm_mday,
                       "Hours": tm.tm_hour, "Minutes": tm.tm_min, "Seconds": tm.tm_sec, "Offset": offset})


def _split_rel(secs: float) -> object:
    """HTCondor's fields of a duration: the sign goes on the first nonzero of days, hours,
    minutes, else on the seconds (a real, with the fraction)."""
    neg = secs < 0
    secs = -secs if neg else secs
    whole = int(secs)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    mins, s = divmod(rest, 60)
    sec = s + (secs - math.floor(secs))
    if neg:
        if days:
            days = -days
        elif hours:
            hours = -hours
        elif mins:
            mins = -mins
        else:
            sec = -sec
    make: Any = ad_class()
    return make({"Type": "RelativeTime", "Days": days, "Hours": hours, "Minutes": mins,
                       "Seconds": float(sec)})


@strict("splitTime")
def _split_time(a: list[Value]) -> object:
    """A time as an ad of its fields (Type, Year .. Seconds, Offset; or Days .. Seconds for a
    relTime); numbers are absolute times in seconds since the epoch."""
    if len(a) != 1:
        return ERROR
    v = a[0]
    t = type(v)
    if v is UNDEFINED:
        return UNDEFINED
    if t is int:
        return _split_abs(v, 0)
    if t is float:
        return _split_abs(_c_int(v), 0)
    if t is AbsTime:
        return _split_abs(real_to_int(v.epoch), v.offset)
    if t is RelTime:
        return _split_rel(v.seconds)
    return ERROR


@strict("formatTime")
def _format_time(a: list[Value]) -> object:
    if len(a) > 2:
        return ERROR
    if not a:
        t: object = int(_time.time())
    else:
        t = a[0]
    fmt = "%c"
    if len(a) == 2:
        if type(a[1]) is not str:
            return ERROR
        fmt = a[1]
    if type(t) is AbsTime:
        if _gmtime(real_to_int(t.epoch) + t.offset) is None:
            return ERROR
        return _strftime(fmt, real_to_int(t.epoch), t.offset)
    if type(t) is int and _gmtime(t) is None:
        return ERROR
    if type(t) is int:
        return _strftime(fmt, t, 0)
    if type(t) is float:
        return _strftime(fmt, _c_int(t), 0)
    if is_ad(t):
        return _format_fields(t, fmt)
    return ERROR


def _format_fields(ad: Any, fmt: str) -> object:
    """formatTime() of an ad of time fields (what splitTime() gives): the fields that are
    integers, zero for the others, as HTCondor fills its broken-down time."""
    fields = []
    for name, low in (("Year", 1900), ("Month", 1), ("Day", 0), ("Hours", 0), ("Minutes", 0), ("Seconds", 0)):
        v = ad.eval(name)
        fields.append(v if type(v) is int else low if name in ("Year", "Month") else 0)
    year, month, day, hours, mins, secs = fields
    try:
        epoch = calendar.timegm((year, month, day, hours, mins, secs, 0, 0, 0))
    except (OverflowError, ValueError):
        return ERROR
    return _strftime(fmt, epoch, 0)


# ---------------------------------------------------------------- fields of times (old ClassAds)

@strict("currentTime")
def _current_time(a: list[Value]) -> object:
    return ERROR if a else AbsTime(int(_time.time()), 0)


@strict("timeZoneOffset")
def _tz_offset(a: list[Value]) -> object:
    return ERROR if a else RelTime(_time.localtime().tm_gmtoff)


@strict("dayTime")
def _day_time(a: list[Value]) -> object:
    if a:
        return ERROR
    tm = _time.localtime()
    return RelTime(tm.tm_hour * 3600 + tm.tm_min * 60 + tm.tm_sec)


def _c_div(a: int, b: int) -> int:
    """C's integer division (toward zero)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _c_mod(a: int, b: int) -> int:
    return a - _c_div(a, b) * b


_ABS_FIELDS = {
    "getyear": lambda tm: tm.tm_year, "getmonth": lambda tm: tm.tm_mon,
    "getdayofyear": lambda tm: tm.tm_yday - 1, "getdayofmonth": lambda tm: tm.tm_mday,
    "getdayofweek": lambda tm: (tm.tm_wday + 1) % 7, "gethours": lambda tm: tm.tm_hour,
    "getminutes": lambda tm: tm.tm_min, "getseconds": lambda tm: tm.tm_sec,
}
_REL_FIELDS = {
    "getdays": lambda s: _c_div(s, 86400), "gethours": lambda s: _c_div(_c_mod(s, 86400), 3600),
    "getminutes": lambda s: _c_div(_c_mod(s, 3600), 60), "getseconds": lambda s: _c_mod(s, 60),
}


def _get_field(name: str) -> Callable[[list[Value]], object]:
    """getYear() and friends: a field of an absTime in local time (C's tm: day of year from 0,
    Sunday is day 0 of the week), or of a relTime (days, hours, minutes, seconds)."""
    def fn(a: list[Value]) -> object:
        if len(a) != 1:
            return ERROR
        v = a[0]
        if type(v) is AbsTime:
            get = _ABS_FIELDS.get(name)
            if get is None:
                return ERROR
            try:
                tm = _time.localtime(real_to_int(v.epoch))
            except (OverflowError, OSError, ValueError):
                return ERROR
            return get(tm)
        if type(v) is RelTime:
            rget = _REL_FIELDS.get(name)
            return ERROR if rget is None else rget(real_to_int(v.seconds))
        return ERROR
    return fn


for _name in ("getYear", "getMonth", "getDayOfYear", "getDayOfMonth", "getDayOfWeek", "getDays",
              "getHours", "getMinutes", "getSeconds"):
    strict(_name)(_get_field(_name.lower()))

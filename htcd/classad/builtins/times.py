"""Times: time(), absTime(), relTime(), formatTime(), interval()."""

from __future__ import annotations

import time as _time

from ..registry import strict
from ..timetext import parse_abstime, parse_reltime
from ..values import ERROR, UNDEFINED, AbsTime, RelTime, Value
from .convert import real_to_int


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
    elif t is not int:
        return ERROR
    n: int = v
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


@strict("absTime")
def _abstime(a: list[Value]) -> object:
    if len(a) > 2:
        return ERROR
    if any(v is UNDEFINED for v in a):
        return UNDEFINED
    if not a:
        return AbsTime(int(_time.time()), 0)
    v = a[0]
    t = type(v)
    if t is str:
        if len(a) != 1:
            return ERROR
        r = parse_abstime(v)
        return ERROR if r is None else r
    if t is AbsTime and len(a) == 1:
        return v
    if t is not int and t is not float:
        return ERROR
    off = 0
    if len(a) == 2:
        if type(a[1]) is not int:
            return ERROR
        off = a[1]
    return AbsTime(real_to_int(v) if t is float else v, off)


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
    if t is float:
        return RelTime(real_to_int(v))
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
        elif d in "zZ":
            sign = "-" if offset < 0 else "+"
            o = abs(offset)
            out.append(f"{sign}{o // 3600:02d}{o % 3600 // 60:02d}" if d == "z" else ("UTC" if not offset else ""))
        else:
            try:
                out.append(_time.strftime("%" + d, tm))
            except ValueError:
                out.append("%" + d)
        i += 2
    return "".join(out)


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
        return _strftime(fmt, real_to_int(t.epoch), t.offset)
    if type(t) is int:
        return _strftime(fmt, t, 0)
    return ERROR

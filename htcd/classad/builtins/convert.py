"""Type predicates and conversions: isString() and friends, int(), real(), string(), bool()."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .. import ops
from ..registry import STRICT, Strict, strict
from ..values import ERROR, INT_MIN, UNDEFINED, AbsTime, RelTime, Value, format_real, unparse_value


def is_ad(v: object) -> bool:
    return hasattr(v, "_attrs")


# ---------------------------------------------------------------- type predicates

def _pred(test: Callable[[object], bool]) -> Strict:
    def fn(a: list[Value]) -> object:
        if len(a) != 1:
            return ERROR
        return test(a[0])
    return fn


for _n, _t in {
    "isUndefined": lambda v: v is UNDEFINED,
    "isError": lambda v: v is ERROR,
    "isString": lambda v: type(v) is str,
    "isInteger": lambda v: type(v) is int,
    "isReal": lambda v: type(v) is float,
    "isBoolean": lambda v: type(v) is bool,
    "isList": lambda v: type(v) is list,
    "isClassAd": is_ad,
}.items():
    STRICT[_n.lower()] = _pred(_t)


# ---------------------------------------------------------------- conversions

STRTOD = re.compile(
    r"\s*([+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?"
    r"|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan))",
    re.IGNORECASE,
)


def strtod(s: str) -> float | None:
    """C strtod on a prefix of ``s``; None when nothing converts."""
    m = STRTOD.match(s)
    if m is None:
        return None
    t = m.group(1)
    body = t.lstrip("+-")
    if body[:2].lower() == "0x":
        sign = -1.0 if t.startswith("-") else 1.0
        h = body[2:]
        if "p" not in h.lower():
            h += "p0"
        return sign * float.fromhex("0x" + h)
    return float(t)


def to_real(v: Value) -> float | None:
    """HTCondor's conversion of an argument to a real (pow, quantize): numbers, booleans as
    1.0 / 0.0, a string's leading number (C strtod), times as seconds; None for anything else."""
    t = type(v)
    if t is float or t is int or t is bool:
        return float(v)
    if t is str:
        return strtod(v)
    if t is AbsTime:
        return float(int(v.epoch))
    if t is RelTime:
        return float(int(v.seconds))  # whole seconds, as HTCondor reads a relTime here
    return None


def real_to_int(x: float) -> int:
    """C's double->int64 cast as HTCondor sees it: out of range or NaN gives INT64_MIN."""
    if x != x or not -9.223372036854775808e18 <= x < 9.223372036854775808e18:
        return INT_MIN
    return int(x)


def to_string(v: Value) -> Value:
    """string(): values to their text; strings unchanged."""
    t = type(v)
    if t is str:
        return v
    if v is UNDEFINED or v is ERROR:
        return v
    if t is float:
        return format_real(v)
    if t is AbsTime or t is RelTime:
        return v.text()
    return unparse_value(v)


def string_args(a: list[Value], n: int, undef: Value = ERROR) -> Value:
    """What a function of ``n`` string arguments and an optional last one gives for bad ones:
    ERROR for a wrong count, an ERROR or a non-string, ``undef`` for an UNDEFINED; None if all
    are strings."""
    if len(a) not in (n, n + 1):
        return ERROR
    if any(v is ERROR for v in a):
        return ERROR
    if any(v is UNDEFINED for v in a):
        return undef
    if any(type(v) is not str for v in a):
        return ERROR
    return None


def _convert(a: list[Value], cast: Callable[[Any], object], keep: type) -> object:
    """int()/real(): numbers, string prefixes (C strtod) and times through ``cast``."""
    if len(a) != 1:
        return ERROR
    v = a[0]
    t = type(v)
    if t is keep:
        return v
    if t is int or t is float or t is bool:
        return cast(v)
    if t is str:
        x = strtod(v)
        return ERROR if x is None else cast(x)
    if t is AbsTime:
        return cast(v.epoch)
    if t is RelTime:
        return cast(int(v.seconds))  # whole seconds, as HTCondor reads a relTime
    return UNDEFINED if v is UNDEFINED else ERROR


STRICT["int"] = lambda a: _convert(a, real_to_int, int)
STRICT["real"] = lambda a: _convert(a, float, float)


@strict("string")
def _string(a: list[Value]) -> object:
    if len(a) != 1:
        return ERROR
    return to_string(a[0])


@strict("bool")
def _bool(a: list[Value]) -> object:
    if len(a) != 1:
        return ERROR
    v = a[0]
    t = type(v)
    if t is str:
        low = v.lower()
        if low == "true":
            return True
        if low == "false":
            return False
        return UNDEFINED
    if t is RelTime:
        return int(v.seconds) != 0
    return ops.to_bool3(v)


# ---------------------------------------------------------------- types of times

STRICT["isabstime"] = _pred(lambda v: type(v) is AbsTime)
STRICT["isreltime"] = _pred(lambda v: type(v) is RelTime)

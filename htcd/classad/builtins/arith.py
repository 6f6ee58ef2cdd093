"""Numbers: rounding, pow(), min()/max(), sum()/avg()/quantize() over lists, random()."""

from __future__ import annotations

import math
from collections.abc import Callable

from .. import ops
from ..registry import STRICT, Strict, strict
from ..values import ERROR, INT_MIN, UNDEFINED, AbsTime, RelTime, Value
from .convert import real_to_int, strtod, to_real


def _rounding(op: Callable[[float], float]) -> Strict:
    def fn(a: list[Value]) -> object:
        if len(a) != 1:
            return ERROR
        v = a[0]
        t = type(v)
        if t is int:
            return v
        if t is bool:
            return int(v)
        if t is str:
            x = strtod(v)
            if x is None:
                return ERROR
            v = x
        elif t is AbsTime or t is RelTime:  # whole seconds, as HTCondor converts times
            v = float(to_real(v) or 0.0)
        elif t is not float:
            return ERROR
        r = op(v)
        return real_to_int(r)
    return fn


STRICT["floor"] = _rounding(math.floor)
STRICT["ceiling"] = STRICT["ceil"] = _rounding(math.ceil)
STRICT["round"] = _rounding(lambda x: x if x != x or x in (math.inf, -math.inf) else float(round(x)))


@strict("pow")
def _pow(a: list[Value]) -> object:
    if len(a) != 2:
        return ERROR
    b, e = a
    if type(b) is int and type(e) is int and e >= 0:
        if b in (0, 1):
            return b if e else 1
        if b == -1:
            return -1 if e & 1 else 1
        if e > 63:  # |b| >= 2: out of 64 bits; never build a huge integer
            return INT_MIN
        r = b ** e
        return r if -(1 << 63) <= r < (1 << 63) else INT_MIN
    b, e = to_real(b), to_real(e)
    if b is None or e is None:
        return ERROR
    try:
        return math.pow(b, e)
    except OverflowError:
        return math.inf
    except ValueError:
        if b == 0:
            return math.inf
        return math.nan


def _one_list(a: list[Value]) -> Value:
    """The one list argument of min(), max(), sum() and avg(), or the ERROR/UNDEFINED they give instead."""
    if len(a) != 1:
        return ERROR
    if a[0] is UNDEFINED:
        return UNDEFINED
    if type(a[0]) is not list:
        return ERROR
    return a[0]


def _minmax(pick: Callable[[float, float], bool]) -> Strict:
    def fn(a: list[Value]) -> object:
        lst = _one_list(a)
        if type(lst) is not list:
            return lst
        best: Value = UNDEFINED
        for v in lst:
            t = type(v)
            if v is UNDEFINED:
                continue
            if t not in (int, float):
                return ERROR
            if best is UNDEFINED or pick(v, best):
                best = v
        if best is not UNDEFINED and any(type(x) is float for x in lst):
            best = float(best)
        return best
    return fn


STRICT["min"] = _minmax(lambda x, y: x < y)
STRICT["max"] = _minmax(lambda x, y: x > y)


# ---------------------------------------------------------------- lists of numbers

def _sum_items(lst: list[Value]) -> tuple[Value, int]:
    """(sum, count) of the defined elements, or (ERROR, 0)."""
    total: int | float = 0
    real = False
    n = 0
    for v in lst:
        if v is UNDEFINED:
            continue
        x = ops.as_number(v)
        if x is None:
            return ERROR, 0
        if type(x) is float:
            real = True
        total += x
        n += 1
    if real:
        return float(total), n
    return ops.arith("+", total, 0) if total == total else total, n


@strict("sum")
def _sum(a: list[Value]) -> object:
    lst = _one_list(a)
    if type(lst) is not list:
        return lst
    return _sum_items(lst)[0]


@strict("avg")
def _avg(a: list[Value]) -> object:
    lst = _one_list(a)
    if type(lst) is not list:
        return lst
    total, n = _sum_items(lst)
    if total is ERROR:
        return ERROR
    if n == 0:
        return 0
    return float(total) / n


def _quantize_one(x: float, base: Value, raw: Value) -> object:
    """``raw`` (real value ``x``) rounded up to a multiple of ``base``, as HTCondor does it: an
    integer base keeps an integer argument integral; a zero base (within 1e-8 for a real one)
    gives the argument back as it is."""
    if type(base) is int:
        if base == 0:
            return raw
        if type(raw) is int:
            n = raw + base - 1
            d = abs(n) // abs(base)
            if (n < 0) != (base < 0):
                d = -d
            return ops.arith("*", d, base)
        return c_ceil(x / base) * base
    q = to_real(base)
    if q is None:
        return ERROR
    if -1e-8 <= q <= 1e-8:
        return raw
    return c_ceil(x / q) * q


def c_ceil(x: float) -> float:
    """C's ceil(): a real, keeping the sign of a zero result (``ceil(-0.5)`` is -0.0), so that
    ``quantize(false, -1)`` is 0.0 as in HTCondor, not -0.0."""
    if x != x or x in (math.inf, -math.inf):
        return x
    return math.copysign(float(math.ceil(x)), x)


@strict("quantize")
def _quantize(a: list[Value]) -> object:
    """quantize(x, base): x rounded up to a multiple of base; over a list of bases, the first
    one at least x (returned as it is), else multiples of the last.  Arguments convert to reals
    as HTCondor converts them (strings by their leading number, booleans as 1.0 / 0.0); list
    elements after the one chosen are not looked at."""
    if len(a) != 2:
        return ERROR
    raw, base = a
    x = to_real(raw)
    if x is None:
        return ERROR
    if type(base) is list:
        last: Value = 0.0  # an empty list: no quantizing
        for v in base:
            r = to_real(v)
            if r is None:
                return ERROR
            if r >= x:
                return v
            last = v
        base = last
    elif to_real(base) is None:
        return ERROR
    return _quantize_one(x, base, raw)


@strict("random")
def _random(a: list[Value]) -> object:
    """A value in [0, x): an integer for an integer x, else a real; no argument means x = 1.0."""
    if len(a) > 1:
        return ERROR
    x = a[0] if a else 1.0
    t = type(x)
    if t is int and x > 0:
        return _rng.randrange(x)
    if t is float and x > 0:
        return _rng.random() * x
    return ERROR


_rng = __import__("random").Random()

"""Operator semantics: HTCondor's rules for types, UNDEFINED/ERROR and 64-bit integers.

Kept apart from the compiler so functions and the compiler share one definition of each rule.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from .values import ERROR, INT_MAX, INT_MIN, UNDEFINED, AbsTime, RelTime, Value, wrap64

_U64M = (1 << 64) - 1
_ASCII_LOWER = {c: c + 32 for c in range(65, 91)}


def ascii_lower(s: str) -> str:
    """Lower-case ASCII letters only (C tolower in the C locale), leaving other characters alone."""
    return s.lower() if s.isascii() else s.translate(_ASCII_LOWER)


def to_bool3(v: Value) -> object:
    """Logical view of a value: True/False, UNDEFINED or ERROR (numbers count as nonzero-true)."""
    t = type(v)
    if t is bool:
        return v
    if t is int or t is float:
        return v != 0
    if v is UNDEFINED:
        return UNDEFINED
    return ERROR


def logic(lv: Value, rthunk: Callable[[], object], stop: bool) -> object:
    """Three-valued AND (``stop`` False) or OR (``stop`` True): the left side equal to ``stop``
    or ERROR decides without evaluating the right side."""
    lb = to_bool3(lv)
    if lb is stop or lb is ERROR:
        return lb
    rb = to_bool3(rthunk())
    if lb is not UNDEFINED:
        return rb
    if rb is stop or rb is ERROR:
        return rb
    return UNDEFINED


def as_number(v: Value) -> Value:
    """Numeric view for arithmetic: bool counts as int; None when not a number."""
    t = type(v)
    if t is int or t is float:
        return v
    if t is bool:
        return int(v)
    return None


_INF = float("inf")


def _real_result(x: float) -> object:
    # HTCondor turns a real result of +infinity (overflow) into ERROR; -infinity and NaN stay.
    if x == _INF:
        return ERROR
    return x


def _real_div(x: float, y: float) -> object:
    """IEEE division (x / 0.0 is +-infinity or NaN), then _real_result."""
    if y == 0.0:
        if x != x or x == 0.0:
            return float("nan")
        r = math.copysign(_INF, x) * math.copysign(1.0, y)
        return _real_result(r)
    return _real_result(x / y)


def _idiv(a: int, b: int) -> object:
    if b == 0:
        return ERROR
    if a == INT_MIN and b == -1:
        return INT_MAX
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _imod(a: int, b: int) -> object:
    if b == 0:
        return ERROR
    if a == INT_MIN and b == -1:
        return 0
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def arith(op: str, a: Value, b: Value) -> object:
    """Binary + - * / % on any two values."""
    ta = type(a)
    tb = type(b)
    if ta is int and tb is int:
        if op == "+":
            return wrap64(a + b)
        if op == "-":
            return wrap64(a - b)
        if op == "*":
            return wrap64(a * b)
        if op == "/":
            return _idiv(a, b)
        return _imod(a, b)
    if a is ERROR or b is ERROR:
        return ERROR
    if a is UNDEFINED or b is UNDEFINED:
        return UNDEFINED
    if ta in (AbsTime, RelTime) or tb in (AbsTime, RelTime):
        return _time_arith(op, a, b)
    x = as_number(a)
    y = as_number(b)
    if x is None or y is None:
        return ERROR
    if type(x) is int and type(y) is int:
        return arith(op, x, y)
    x = float(x)
    y = float(y)
    if op == "+":
        return _real_result(x + y)
    if op == "-":
        return _real_result(x - y)
    if op == "*":
        return _real_result(x * y)
    if op == "/":
        return _real_div(x, y)
    return ERROR


def _time_arith(op: str, a: Value, b: Value) -> object:
    ta = type(a)
    tb = type(b)
    if op == "+":
        if ta is AbsTime and tb is RelTime:
            return AbsTime(int(a.epoch) + int(b.seconds), a.offset)  # whole seconds, as in HTCondor
        if ta is RelTime and tb is AbsTime:
            return AbsTime(int(b.epoch) + int(a.seconds), b.offset)
        if ta is RelTime and tb is RelTime:
            return RelTime(a.seconds + b.seconds)
    if op == "-":
        if ta is AbsTime and tb is AbsTime:
            return RelTime(a.epoch - b.epoch)
        if ta is AbsTime and tb is RelTime:
            return AbsTime(int(a.epoch) - int(b.seconds), a.offset)
        if ta is RelTime and tb is RelTime:
            return RelTime(a.seconds - b.seconds)
    if op == "*" or op == "/":  # a duration scaled by a number
        if ta is RelTime and tb in (int, float):
            r, k = a.seconds, b
        elif op == "*" and tb is RelTime and ta in (int, float):
            r, k = b.seconds, a
        else:
            return ERROR
        if op == "/":
            if k == 0:
                return ERROR
            x = r / k
        else:
            x = r * k
        if x != x or x in (float("inf"), float("-inf")):
            return ERROR
        return RelTime(x)
    return ERROR


def _cmp_key(v: Value) -> Value:
    t = type(v)
    if t is AbsTime:
        return v.epoch
    if t is RelTime:
        return v.seconds
    return None


def compare(op: str, a: Value, b: Value) -> object:
    """== != < <= > >= with HTCondor's rules: numbers promote, strings compare without case."""
    if a is ERROR or b is ERROR:
        return ERROR
    if a is UNDEFINED or b is UNDEFINED:
        return UNDEFINED
    ta = type(a)
    tb = type(b)
    if ta is str and tb is str:
        x: Value = ascii_lower(a)
        y: Value = ascii_lower(b)
    else:
        x = as_number(a)
        y = as_number(b)
        if x is None or y is None:
            if ta is tb and ta in (AbsTime, RelTime):
                x = _cmp_key(a)
                y = _cmp_key(b)
            else:
                return ERROR
    if op == "==":
        return x == y
    if op == "!=":
        return x != y
    if op == "<":
        return x < y
    if op == "<=":
        return x <= y
    if op == ">":
        return x > y
    return x >= y


def identical(a: Value, b: Value) -> object:
    """=?= (is): same type and same value, strings case-sensitive, never UNDEFINED."""
    ta = type(a)
    if ta is not type(b):
        return False
    if ta is list or hasattr(a, "_attrs"):
        return ERROR
    if ta is float:
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b or a is b


def bitwise(op: str, a: Value, b: Value) -> object:
    """& | ^ << >> >>> on integers only."""
    if type(a) is int and type(b) is int:
        if op == "&":
            return a & b
        if op == "|":
            return a | b
        if op == "^":
            return a ^ b
        n = b & 63
        if op == "<<":
            return wrap64(a << n)
        if op == ">>":
            return a >> n
        return wrap64((a & _U64M) >> n)
    if a is ERROR or b is ERROR:
        return ERROR
    if a is UNDEFINED or b is UNDEFINED:
        return UNDEFINED
    return ERROR


def unary(op: str, v: Value) -> object:
    """Unary - + ! ~."""
    t = type(v)
    if op == "!":
        if t is bool:
            return not v
        if t is int or t is float:
            return v == 0
    elif op == "-":
        if t is int:
            return wrap64(-v)
        if t is float:
            return -v
        if t is RelTime:
            return RelTime(-v.seconds)
    elif op == "+":
        if t is int or t is float or t is RelTime:
            return v
    elif op == "~" and t is int:
        return ~v
    if v is UNDEFINED:
        return UNDEFINED
    return ERROR


BINARY_IMPL: dict[str, Callable[[object, object], object]] = {}
for _op in ("+", "-", "*", "/", "%"):
    BINARY_IMPL[_op] = (lambda o: lambda a, b: arith(o, a, b))(_op)
for _op in ("==", "!=", "<", "<=", ">", ">="):
    BINARY_IMPL[_op] = (lambda o: lambda a, b: compare(o, a, b))(_op)
for _op in ("&", "|", "^", "<<", ">>", ">>>"):
    BINARY_IMPL[_op] = (lambda o: lambda a, b: bitwise(o, a, b))(_op)
BINARY_IMPL["=?="] = identical
BINARY_IMPL["=!="] = lambda a, b: _negate(identical(a, b))


def _negate(v: Value) -> object:
    return v if v is ERROR else not v

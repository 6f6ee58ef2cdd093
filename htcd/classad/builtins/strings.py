"""Strings: strcat(), substr(), size(), case, strcmp(), splitUserName()/splitSlotName()."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import ops
from ..registry import STRICT, Strict, strict
from ..values import ERROR, UNDEFINED, Value, from_utf8_bytes, utf8_bytes
from .convert import is_ad, to_string

# ---------------------------------------------------------------- strings

@strict("strcat")
def _strcat(a: list[Value]) -> object:
    parts = []
    for v in a:
        s = to_string(v)
        if s is ERROR or s is UNDEFINED:
            return s
        parts.append(s)
    return "".join(parts)


@strict("substr")
def _substr(a: list[Value]) -> object:
    if len(a) not in (2, 3):
        return ERROR
    s = a[0]
    if any(v is UNDEFINED for v in a):  # before ERROR: substr(undefined, error) is UNDEFINED in HTCondor
        return UNDEFINED
    if any(v is ERROR for v in a):
        return ERROR
    if type(s) is not str or any(type(v) is not int for v in a[1:]):
        return ERROR
    raw = None if s.isascii() else utf8_bytes(s)  # offsets count bytes, as in HTCondor
    if raw is not None:
        return from_utf8_bytes(_cut(raw, a))
    return _cut(s, a)


def _cut(s: Any, a: list[Value]) -> Any:
    """substr's slice of ``s`` (a str or bytes) with HTCondor's offset and length rules."""
    n = len(s)
    off = a[1]
    if off < 0:
        off = max(n + off, 0)
    if off > n:
        return s[:0]
    if len(a) == 3:
        ln = a[2]
        end = off + ln if ln >= 0 else n + ln
        end = min(end, n)
        if end <= off:
            return s[:0]
        return s[off:end]
    return s[off:]


@strict("size")
def _size(a: list[Value]) -> object:
    if len(a) != 1:
        return ERROR
    v = a[0]
    t = type(v)
    if t is str:
        return len(v) if v.isascii() else len(utf8_bytes(v))  # bytes, as HTCondor counts
    if t is list:
        return len(v)
    if is_ad(v):
        return len(v._attrs)
    if v is UNDEFINED:
        return UNDEFINED
    return ERROR


def _case(conv: Callable[[str], str]) -> Strict:
    def fn(a: list[Value]) -> object:
        if len(a) != 1:
            return ERROR
        s = to_string(a[0])
        if type(s) is not str:
            return s
        return conv(s)
    return fn


STRICT["toupper"] = _case(lambda s: s.upper() if s.isascii() else "".join(
    ch.upper() if ch.isascii() else ch for ch in s))
STRICT["tolower"] = _case(lambda s: ops.ascii_lower(s))


def _strcmp_impl(fold: bool) -> Strict:
    def fn(a: list[Value]) -> object:
        if len(a) != 2:
            return ERROR
        x = to_string(a[0])
        y = to_string(a[1])
        if x is UNDEFINED or y is UNDEFINED:  # before an error in the other (HTCondor's order)
            return UNDEFINED
        if x is ERROR or y is ERROR:
            return ERROR
        if type(x) is not str or type(y) is not str:
            return ERROR
        if fold:
            x = ops.ascii_lower(x)
            y = ops.ascii_lower(y)
        bx = x.encode("utf-8", "surrogateescape")
        by = y.encode("utf-8", "surrogateescape")
        return (bx > by) - (bx < by)
    return fn


STRICT["strcmp"] = _strcmp_impl(False)
STRICT["stricmp"] = _strcmp_impl(True)


# ---------------------------------------------------------------- names

def _split_at(user_first: bool) -> Strict:
    def fn(a: list[Value]) -> object:
        if len(a) != 1:
            return ERROR
        s = a[0]
        if type(s) is not str:
            return ERROR
        head, at, tail = s.partition("@")
        if not at:
            return [s, ""] if user_first else ["", s]
        return [head, tail]
    return fn


STRICT["splitusername"] = _split_at(True)
STRICT["splitslotname"] = _split_at(False)

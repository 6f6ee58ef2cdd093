"""Version strings: versioncmp(), versionGT() and friends, version_in_range()."""

from __future__ import annotations

from collections.abc import Callable

from ..registry import STRICT, strict
from ..values import ERROR, UNDEFINED, Value
from .convert import to_string

# ---------------------------------------------------------------- versions

def _isdigit(ch: int) -> bool:
    return 48 <= ch <= 57


def _char(ch: int) -> int:
    """A byte as a C char (signed on the platforms HTCondor builds for)."""
    return ch - 256 if ch > 127 else ch


def versioncmp(left: str, right: str) -> int:
    """HTCondor's natural order of two strings: equal up to the first difference; there, if that
    difference sits in a run of digits on both sides, a run with more leading zeroes is smaller
    (zeroes as a fraction, the result the difference in zero counts), then a longer run of digits
    is larger (the result the difference in lengths); otherwise the two differing characters
    decide (their difference, as C chars)."""
    a = left.encode("utf-8", "surrogateescape") + b"\0"
    b = right.encode("utf-8", "surrogateescape") + b"\0"
    i = 0
    while a[i] and a[i] == b[i]:
        i += 1
    if a[i] == b[i]:
        return 0
    diff = _char(a[i]) - _char(b[i])
    n = i  # where the run of digits holding the difference begins (the same in both)
    while n > 0 and _isdigit(a[n - 1]):
        n -= 1
    if n == i and (not _isdigit(a[i]) or not _isdigit(b[i])):
        return diff
    z1 = n
    while a[z1] == 48:
        z1 += 1
    z2 = n
    while b[z2] == 48:
        z2 += 1
    if z1 > n and not _isdigit(a[z1]):
        z1 -= 1
    if z2 > n and not _isdigit(b[z2]):
        z2 -= 1
    if z1 != z2:
        return z2 - z1
    if z1 > n:
        return diff
    e1 = z1
    while _isdigit(a[e1]):
        e1 += 1
    e2 = z2
    while _isdigit(b[e2]):
        e2 += 1
    return e1 - e2 if e1 != e2 else diff


def _version_args(a: list[Value], n: int) -> object:
    """Arguments as strings (other values as string() gives them), or the UNDEFINED/ERROR result."""
    if len(a) != n:
        return ERROR
    if any(v is UNDEFINED for v in a):
        return UNDEFINED
    if any(v is ERROR for v in a):
        return ERROR
    return [to_string(v) for v in a]


@strict("versioncmp")
def _versioncmp(a: list[Value]) -> object:
    s = _version_args(a, 2)
    return s if type(s) is not list else versioncmp(s[0], s[1])


for _n, _t in {"versionGT": lambda r: r > 0, "versionGE": lambda r: r >= 0, "versionLT": lambda r: r < 0,
               "versionLE": lambda r: r <= 0, "versionEQ": lambda r: r == 0}.items():
    def _version_test(a: list[Value], test: Callable[[int], bool] = _t) -> object:
        s = _version_args(a, 2)
        return s if type(s) is not list else test(versioncmp(s[0], s[1]))
    STRICT[_n.lower()] = _version_test


@strict("version_in_range")
def _version_in_range(a: list[Value]) -> object:
    if len(a) != 3 or a[0] is UNDEFINED or a[0] is ERROR:
        return ERROR
    s = _version_args(a, 3)
    if type(s) is not list:
        return s
    v, lo, hi = s
    return versioncmp(lo, v) <= 0 and versioncmp(v, hi) <= 0

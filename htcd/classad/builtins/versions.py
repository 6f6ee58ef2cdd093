"""Version strings: versioncmp(), versionGT() and friends, version_in_range()."""

from __future__ import annotations

from collections.abc import Callable

from ..registry import STRICT, strict
from ..values import ERROR, UNDEFINED, Value
from .convert import to_string

# ---------------------------------------------------------------- versions

_S_N, _S_I, _S_F, _S_Z = 0, 3, 6, 9
_NEXT_STATE = (_S_N, _S_I, _S_Z, _S_N, _S_I, _S_I, _S_N, _S_F, _S_F, _S_N, _S_F, _S_Z)
_CMP, _LEN = 2, 3
# rows: state of the left string; columns: (left, right) character classes x/x x/d x/0 d/x d/d d/0 0/x 0/d 0/0
_RESULT = (
    _CMP, _CMP, _CMP, _CMP, _LEN, _CMP, _CMP, _CMP, _CMP,
    _CMP, _LEN, _LEN, _LEN, _LEN, _LEN, _LEN, _LEN, _LEN,
    _CMP, _CMP, _CMP, _CMP, _CMP, _CMP, _CMP, _CMP, _CMP,
    _CMP, +1, +1, -1, _CMP, _CMP, -1, _CMP, _CMP,
)


def _digit_class(ch: int) -> int:
    return (ch == 48) + (48 <= ch <= 57)


def versioncmp(left: str, right: str) -> int:
    """Version order of two strings (strverscmp's state machine): digit runs compare as numbers,
    leading zeroes as fractions.  Where a number decides, the result is the difference in digit
    counts (or of the first differing digits), as HTCondor's library gives it."""
    a = left.encode("utf-8", "surrogateescape") + b"\0"
    b = right.encode("utf-8", "surrogateescape") + b"\0"
    i = 0
    c1, c2 = a[0], b[0]
    state = _S_N + _digit_class(c1)
    while c1 == c2:
        if c1 == 0:
            return 0
        state = _NEXT_STATE[state]
        i += 1
        c1, c2 = a[i], b[i]
        state += _digit_class(c1)
    kind = _RESULT[state * 3 + _digit_class(c2)]
    if kind == _CMP:
        return c1 - c2
    if kind == _LEN:
        n1 = len(a) - i - len(a[i:].lstrip(b"0123456789"))
        n2 = len(b) - i - len(b[i:].lstrip(b"0123456789"))
        return n1 - n2 if n1 != n2 else c1 - c2
    return kind


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

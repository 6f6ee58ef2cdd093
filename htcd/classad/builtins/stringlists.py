"""String lists ("a, b, c"): splitting, stringListMember() and the other stringList*(), split(),
join()."""

from __future__ import annotations

import re

from .. import ops
from ..registry import STRICT, Strict, strict
from ..values import ERROR, UNDEFINED, Value
from .convert import STRTOD, string_args, strtod, to_string


def split_list(s: str, delims: str = " ,") -> list[str]:
    """HTCondor string-list splitting: any delimiter character separates; empty items dropped."""
    if delims == " ,":
        return [x for x in re.split(r"[ ,\t\r\n]+", s) if x]
    out: list[str] = []
    cur: list[str] = []
    for ch in s:
        if ch in delims:
            if cur:
                out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if cur:
        out.append("".join(cur).strip())
    return [x for x in out if x]


SPLIT_SEPARATORS = ", \t"
"""split()'s default separators: comma, space and tab (not newline), as in HTCondor."""

_C_SPACE = frozenset(" \t\n\v\f\r")


def split_tokens(s: str, delims: str = SPLIT_SEPARATORS) -> list[str]:
    """split(), as HTCondor's: the text between separators, empty pieces dropped, except that a
    non-space separator met again right after the last non-space separator (with only
    separators between) yields an empty item: ``"a,,b"`` gives three items, ``"a, b"`` two.
    The last non-space separator is remembered across items, so ``"a, b,c ,d"`` has an empty
    item before ``d`` while ``"a ,b"`` has none; that is HTCondor's result and htcd keeps it."""
    out: list[str] = []
    last = 0
    prev = ""  # the last non-space separator seen
    for ix, ch in enumerate(s):
        if ch not in delims:
            continue
        if ix > last:
            out.append(s[last:ix])
        elif prev == ch and ch not in _C_SPACE:
            out.append("")
        if ch not in _C_SPACE:
            prev = ch
        last = ix + 1
    if len(s) > last:
        out.append(s[last:])
    return out


def _sl_member(fold: bool) -> Strict:
    """As HTCondor's: a value that is neither a string nor UNDEFINED is an ERROR even beside an
    UNDEFINED one; UNDEFINED as the item or the list is simply not a member, unless both are."""
    def fn(a: list[Value]) -> object:
        if len(a) not in (2, 3) or any(v is ERROR or (type(v) is not str and v is not UNDEFINED) for v in a):
            return ERROR
        if a[0] is UNDEFINED and a[1] is UNDEFINED:
            return UNDEFINED
        if a[0] is UNDEFINED or a[1] is UNDEFINED:
            return False
        delims = a[2] if len(a) == 3 and a[2] is not UNDEFINED else " ,"  # UNDEFINED: the default
        items = split_list(a[1], delims)
        x = a[0]
        if fold:
            lx = ops.ascii_lower(x)
            return any(ops.ascii_lower(i) == lx for i in items)
        return x in items
    return fn


STRICT["stringlistmember"] = _sl_member(False)
STRICT["stringlistimember"] = _sl_member(True)


@strict("stringListSize")
def _sl_size(a: list[Value]) -> object:
    bad = string_args(a, 1)
    if bad is not None:
        return bad
    return len(split_list(a[0], a[1] if len(a) == 2 else " ,"))


@strict("split")
def _split(a: list[Value]) -> object:
    bad = string_args(a, 1)
    if bad is not None:
        return bad
    return split_tokens(a[0], a[1] if len(a) == 2 else SPLIT_SEPARATORS)


@strict("join")
def _join(a: list[Value]) -> object:
    if not a:
        return ""
    if len(a) == 1:
        items = a[0]
        if items is UNDEFINED or items is ERROR:
            return items
        if type(items) is not list:
            return ""  # a lone separator joins nothing
        sep: object = ""
    else:
        sep = a[0]
        items = a[1] if len(a) == 2 and type(a[1]) is list else a[1:]
    if sep is ERROR:
        return ERROR
    if sep is UNDEFINED:
        sep = ""
    sep = to_string(sep)
    if type(sep) is not str:
        return ERROR
    if items and all(v is UNDEFINED for v in items):
        return UNDEFINED  # nothing but undefined items
    out = ""
    for v in items:
        if v is UNDEFINED:
            continue
        s = to_string(v)
        if type(s) is not str:
            return ERROR
        # HTCondor adds the separator only after a non-empty result: leading "" items vanish
        out = out + sep + s if out else s
    return out


# ---------------------------------------------------------------- string lists

_SL_INT = re.compile(r"[+-]?\d+\Z")


def _sl_numbers(a: list[Value]) -> object:
    """The items of a string list as numbers, or ERROR/UNDEFINED."""
    bad = string_args(a, 1)
    if bad is not None:
        return bad
    out: list[int | float] = []
    for item in split_list(a[0], a[1] if len(a) == 2 else " ,"):
        if _SL_INT.match(item):
            out.append(int(item))
            continue
        m = STRTOD.match(item)
        x = strtod(item)
        if m is None or x is None or m.end() != len(item):
            return ERROR
        out.append(x)
    return out


def _sl_total(average: bool) -> Strict:
    """stringListSum() (``average`` False) or stringListAvg(): integers while every item is one."""
    def fn(a: list[Value]) -> object:
        nums = _sl_numbers(a)
        if type(nums) is not list:
            return nums
        if not nums:
            return 0.0
        n = len(nums) if average else 1
        if any(type(x) is float for x in nums):
            return float(sum(nums)) / n
        return ops.arith("/" if average else "+", sum(nums), n if average else 0)
    return fn


STRICT["stringlistsum"] = _sl_total(False)
STRICT["stringlistavg"] = _sl_total(True)


def _sl_extreme(pick_max: bool) -> Strict:
    def fn(a: list[Value]) -> object:
        nums = _sl_numbers(a)
        if type(nums) is not list:
            return nums
        if not nums:
            return UNDEFINED
        best = max(nums) if pick_max else min(nums)
        return float(best) if any(type(x) is float for x in nums) else best
    return fn


STRICT["stringlistmax"] = _sl_extreme(True)
STRICT["stringlistmin"] = _sl_extreme(False)


@strict("stringListsIntersect")
def _sl_intersect(a: list[Value]) -> object:
    bad = string_args(a, 2, UNDEFINED)
    if bad is not None:
        return bad
    d = a[2] if len(a) == 3 else " ,"
    left = set(split_list(a[0], d))
    return any(x in left for x in split_list(a[1], d))


# ---------------------------------------------------------------- string-list sets

def _sl_subset(fold: bool) -> Strict:
    def fn(a: list[Value]) -> object:
        if len(a) not in (2, 3):
            return ERROR
        if any(v is ERROR or (v is not UNDEFINED and type(v) is not str) for v in a):
            return ERROR
        sub, sup = a[0], a[1]
        if sub is UNDEFINED:
            return UNDEFINED if sup is UNDEFINED else True
        if sub == "":  # the empty string is a subset of anything
            return True
        delims = a[2] if len(a) == 3 and a[2] is not UNDEFINED else " ,"
        items = split_list(sub, delims)
        if not items:  # text of separators only: HTCondor finds no item to match, so false
            return False
        if sup is UNDEFINED:
            return False
        pool = split_list(sup, delims)
        if fold:
            items, pool = [ops.ascii_lower(x) for x in items], [ops.ascii_lower(x) for x in pool]
        return set(items) <= set(pool)
    return fn


STRICT["stringlistsubsetmatch"] = _sl_subset(False)
STRICT["stringlistisubsetmatch"] = _sl_subset(True)

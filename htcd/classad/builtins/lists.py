"""Lists of values: member(), identicalMember(), anyCompare()/allCompare()."""

from __future__ import annotations

from .. import ops
from ..registry import STRICT, Strict, strict
from ..values import ERROR, UNDEFINED, Value
from .convert import is_ad


@strict("member")
def _member(a: list[Value]) -> object:
    if len(a) != 2:
        return ERROR
    x, lst = a
    if x is UNDEFINED or lst is UNDEFINED:  # before any ERROR, in HTCondor's order
        return UNDEFINED
    if type(lst) is not list or type(x) is list or is_ad(x) or x is ERROR:
        return ERROR
    return any(ops.compare("==", x, v) is True for v in lst)


# ---------------------------------------------------------------- list comparisons

@strict("identicalMember")
def _identical_member(a: list[Value]) -> object:
    if len(a) != 2:
        return ERROR
    x, lst = a
    if lst is UNDEFINED:
        return UNDEFINED
    if type(lst) is not list or type(x) is list or is_ad(x):
        return ERROR
    return any(ops.identical(x, v) is True for v in lst)


_CMP_NAMES = {"<": "<", "<=": "<=", "==": "==", "!=": "!=", ">=": ">=", ">": ">", "is": "=?=",
              "isnt": "=!="}


def _list_compare(want_all: bool) -> Strict:
    def fn(a: list[Value]) -> object:
        if len(a) != 3:
            return ERROR
        op, lst, x = a
        if op is UNDEFINED:  # before the other arguments' types, as in HTCondor
            return UNDEFINED
        if type(op) is not str:
            return ERROR
        real_op = _CMP_NAMES.get(op.lower())
        if real_op is None:
            return ERROR
        if lst is UNDEFINED:
            return UNDEFINED
        if type(lst) is not list:
            return ERROR
        for v in lst:
            if real_op in ("=?=", "=!="):
                r = ops.identical(v, x)
                if real_op == "=!=":
                    r = not r
            else:
                r = ops.compare(real_op, v, x)
                if r is ERROR:
                    return ERROR
            if want_all and r is not True:
                return False
            if not want_all and r is True:
                return True
        return want_all
    return fn


STRICT["anycompare"] = _list_compare(False)
STRICT["allcompare"] = _list_compare(True)

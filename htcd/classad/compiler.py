"""The closure compiler: builds ``f(scope, ctx)`` closures from the closures of subtrees.

Each tree compiles once, on first evaluation; the negotiator evaluates the same Requirements
against thousands of ads, so the builders here specialise the common shapes (comparison with a
constant, integer arithmetic, ``MY.x``/``TARGET.x``) to keep the per-evaluation cost low.  The
builders know nothing of tree nodes: nodes hand them compiled subtrees and constants."""

from __future__ import annotations

from functools import partial
from typing import Any

from . import ops
from .runtime import NOT_CONST, AdTemplate, Ctx, Fn, eval_entry, lookup, lookup_absolute, select, side
from .values import ERROR, INT_MAX, INT_MIN, UNDEFINED, remember_list_source


def compile_const(v: object) -> Fn:
    return lambda s, c: v


def compile_lookup(lname: str) -> Fn:
    """A bare attribute name."""
    _lookup = lookup
    return lambda s, c: _lookup(s, lname, c)


def compile_scoped_ref(lname: str, target: bool) -> Fn:
    """``TARGET.name`` (``target``) or ``MY.name``: a direct lookup in that ad.  MY is the ad
    the expression is evaluated in (a nested ad's own scope inside a nested ad); a name it lacks
    is looked for in the ads enclosing it, then among the special names, as ``select`` does."""
    _eval_entry = eval_entry
    _select = select
    if target:
        def target_ref(s: Any, c: Ctx) -> object:
            t = c.target
            if t is None:
                return UNDEFINED
            e = t._attrs.get(lname)
            if e is None:
                return _select(t, lname, c.other())
            v = e.const
            if v is not NOT_CONST:
                return v
            return _eval_entry(t, e, c.other())
        return target_ref

    def my_ref(s: Any, c: Ctx) -> object:
        if s is None:
            return UNDEFINED
        e = s._attrs.get(lname)
        if e is None:
            return _select(s, lname, c)
        v = e.const
        if v is not NOT_CONST:
            return v
        return _eval_entry(s, e, c)
    return my_ref


def compile_absolute(lname: str) -> Fn:
    """``.name``: the name in the outermost ad of the scope."""
    _lookup_absolute = lookup_absolute
    return lambda s, c: _lookup_absolute(s, lname, c)


def compile_select(bf: Fn, lname: str) -> Fn:
    """``base.name`` for any other base."""
    _select = select
    return lambda s, c: _select(bf(s, c), lname, c)


def compile_index(bf: Fn, xf: Fn) -> Fn:
    """``base[index]``: a list element, or an ad's attribute by name."""
    def index(s: Any, c: Ctx) -> object:
        v: Any = bf(s, c)
        i = xf(s, c)
        if v is ERROR or i is ERROR:
            return ERROR
        if v is UNDEFINED or i is UNDEFINED:
            return UNDEFINED
        if type(v) is list:
            if type(i) is int and 0 <= i < len(v):
                return v[i]
            return ERROR
        attrs = getattr(v, "_attrs", None)
        if attrs is not None and type(i) is str:
            e = attrs.get(i.lower())
            return UNDEFINED if e is None else eval_entry(v, e, side(v, c))
        return ERROR
    return index


def compile_unary(op: str, f: Fn) -> Fn:
    _unary = ops.unary
    if op == "!":
        def not_(s: Any, c: Ctx) -> object:
            v = f(s, c)
            if v is True:
                return False
            if v is False:
                return True
            return _unary("!", v)
        return not_
    return lambda s, c: _unary(op, f(s, c))


_CMP_OPS = frozenset({"==", "!=", "<", "<=", ">", ">="})


def compile_binary(op: str, fns: list[Fn], rconst: object) -> Fn:
    """A left-leaning chain of one binary operator over ``fns``; ``rconst`` is the right operand's
    constant value (or the not-a-constant marker) when there are two operands."""
    if op == "&&" or op == "||":
        return _compile_logic(fns, op == "||")
    if len(fns) > 2:
        impl = ops.BINARY_IMPL[op]
        first, rest = fns[0], fns[1:]

        def chain(s: Any, c: Ctx) -> object:
            v = first(s, c)
            for f in rest:
                v = impl(v, f(s, c))
            return v
        return chain
    lf, rf = fns
    if op in _CMP_OPS:
        return _compile_cmp(op, lf, rf, rconst)
    if op in ("+", "-", "*"):
        return _compile_arith(op, lf, rf)
    impl = ops.BINARY_IMPL[op]
    return lambda s, c: impl(lf(s, c), rf(s, c))


def _compile_logic(fns: list[Fn], stop: bool) -> Fn:
    """A chain of ``&&`` (``stop`` False) or ``||`` (``stop`` True), short-circuiting on ``stop``."""
    _logic = ops.logic
    _b3 = ops.to_bool3
    go = not stop
    if len(fns) == 2:
        lf, rf = fns

        def logic2(s: Any, c: Ctx) -> object:
            v = lf(s, c)
            if v is stop:
                return stop
            if v is go:
                r = rf(s, c)
                if r is True or r is False:
                    return r
                return _b3(r)
            return _logic(v, lambda: rf(s, c), stop)
        return logic2

    first, rest = fns[0], fns[1:]

    def logic_n(s: Any, c: Ctx) -> object:
        v = first(s, c)
        for f in rest:
            if v is stop:
                return stop
            v = _b3(f(s, c)) if v is go else _logic(v, partial(f, s, c), stop)
        return _b3(v) if v is not False and v is not True else v
    return logic_n


def _compile_cmp(op: str, lf: Fn, rf: Fn, rconst: object) -> Fn:
    _compare = ops.compare
    tk = type(rconst)
    if tk is int or tk is float:
        k: Any = rconst
        if op == ">=":
            def ge_k(s: Any, c: Ctx) -> object:
                v: Any = lf(s, c)
                tv = type(v)
                if tv is int or tv is float:
                    return v >= k
                return _compare(">=", v, k)
            return ge_k
        if op == ">":
            def gt_k(s: Any, c: Ctx) -> object:
                v: Any = lf(s, c)
                tv = type(v)
                if tv is int or tv is float:
                    return v > k
                return _compare(">", v, k)
            return gt_k
        if op == "<=":
            def le_k(s: Any, c: Ctx) -> object:
                v: Any = lf(s, c)
                tv = type(v)
                if tv is int or tv is float:
                    return v <= k
                return _compare("<=", v, k)
            return le_k
        if op == "<":
            def lt_k(s: Any, c: Ctx) -> object:
                v: Any = lf(s, c)
                tv = type(v)
                if tv is int or tv is float:
                    return v < k
                return _compare("<", v, k)
            return lt_k
        if op == "==":
            def eq_k(s: Any, c: Ctx) -> object:
                v: Any = lf(s, c)
                tv = type(v)
                if tv is int or tv is float:
                    return v == k
                return _compare("==", v, k)
            return eq_k
    if tk is str and op == "==":
        k = rconst
        lk = ops.ascii_lower(k)
        _lower = ops.ascii_lower

        def eq_s(s: Any, c: Ctx) -> object:
            v = lf(s, c)
            if type(v) is str:
                return _lower(v) == lk
            return _compare("==", v, rconst)
        return eq_s

    def cmp(s: Any, c: Ctx) -> object:
        a = lf(s, c)
        b = rf(s, c)
        return _compare(op, a, b)
    return cmp


def _compile_arith(op: str, lf: Fn, rf: Fn) -> Fn:
    _arith = ops.arith
    lo, hi = INT_MIN, INT_MAX
    if op == "+":
        def add(s: Any, c: Ctx) -> object:
            a = lf(s, c)
            b = rf(s, c)
            if type(a) is int and type(b) is int:
                r = a + b
                if lo <= r <= hi:
                    return r
            return _arith("+", a, b)
        return add
    if op == "*":
        def mul(s: Any, c: Ctx) -> object:
            a = lf(s, c)
            b = rf(s, c)
            if type(a) is int and type(b) is int:
                r = a * b
                if lo <= r <= hi:
                    return r
            return _arith("*", a, b)
        return mul

    def sub(s: Any, c: Ctx) -> object:
        a = lf(s, c)
        b = rf(s, c)
        if type(a) is int and type(b) is int:
            r = a - b
            if lo <= r <= hi:
                return r
        return _arith("-", a, b)
    return sub




def compile_cond(cf: Fn, tf: Fn, of: Fn) -> Fn:
    """``c ? a : b``."""
    _b3 = ops.to_bool3

    def cond(s: Any, c: Ctx) -> object:
        v = cf(s, c)
        if v is not True and v is not False:
            v = _b3(v)
            if v is UNDEFINED or v is ERROR:
                return v
        return tf(s, c) if v else of(s, c)
    return cond


def compile_elvis(lf: Fn, rf: Fn) -> Fn:
    """``a ?: b``: a unless it is UNDEFINED."""
    def elvis(s: Any, c: Ctx) -> object:
        v = lf(s, c)
        return rf(s, c) if v is UNDEFINED else v
    return elvis


def compile_list(consts: list[object], fns: list[Fn], items: Any = None, as_written: bool = False) -> Fn:
    """``{ a, b }``: a fresh list per evaluation (lists are values, callers may keep them).  With
    ``items`` (the element trees), each list is noted to print as written, unless ``as_written``
    says its values print the same anyway."""
    _remember = remember_list_source
    if all(v is not NOT_CONST for v in consts) and not any(type(v) is list for v in consts):
        if items is None or as_written:
            return lambda s, c: list(consts)
        return lambda s, c: _remember(list(consts), items)
    if items is None:
        return lambda s, c: [f(s, c) for f in fns]
    return lambda s, c: _remember([f(s, c) for f in fns], items)


def compile_nested_ad(tmpl: AdTemplate) -> Fn:
    """A nested ad literal: a view of it enclosed by the scope it is evaluated in."""
    return lambda s, c: tmpl._view(s)

"""Functions over expressions rather than values: ifThenElse(), eval(), debug(), unparse(),
unresolved(), evalInEachContext(), countMatches()."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import ops
from ..expr import parse_expr
from ..nodes import AttrRef, Expr, Select, unparse_name
from ..parser import ClassAdSyntaxError
from ..registry import lazy, strict, tree_compiler
from ..runtime import Ctx, Fn
from ..values import ERROR, UNDEFINED, Value
from .convert import is_ad, to_string
from .regex import compile_regex, subject_ok

# ---------------------------------------------------------------- lazy

@lazy("ifThenElse")
def _if_then_else(fns: list[Fn], s: Any, c: Ctx) -> object:
    if len(fns) != 3:
        return ERROR
    v = ops.to_bool3(fns[0](s, c))
    if v is True:
        return fns[1](s, c)
    if v is False:
        return fns[2](s, c)
    return v


@lazy("eval")
def _eval(fns: list[Fn], s: Any, c: Ctx) -> object:
    if len(fns) != 1:
        return ERROR
    v: Value = fns[0](s, c)
    t = type(v)
    if t is int or t is float or t is bool:
        return v
    if t is not str:  # a list, an ad or a time: its text, parsed again, as HTCondor does
        v = to_string(v)
        if type(v) is not str:
            return ERROR
    try:
        tree = parse_expr(v)
    except ClassAdSyntaxError:
        return ERROR
    return tree.compiled()(s, c)


@tree_compiler("unparse")
def _compile_unparse(fns: list[Fn], args: Sequence[Expr]) -> Fn:
    if len(args) != 1:
        return lambda s, c: ERROR
    arg = args[0]
    if type(arg) is Select:
        return lambda s, c: ""
    if type(arg) is not AttrRef:
        return lambda s, c: ERROR
    k = arg.lname

    def fn(s: Any, c: Any) -> object:
        ad = s
        while ad is not None:
            e = ad._attrs.get(k)
            if e is not None:
                return str(e.tree())
            ad = ad._parent
        return ""
    return fn


@strict("debug")
def _debug(a: list[Value]) -> object:
    """The value itself: HTCondor also logs the evaluation, which a pure library has nowhere to do."""
    return a[0] if len(a) == 1 else ERROR


# ---------------------------------------------------------------- evaluating in other ads

def _compile_in_contexts(count: bool, fns: list[Fn], args: Sequence[Expr]) -> Fn:
    """``evalInEachContext(expr, ads)`` / ``countMatches(expr, ads)``: ``expr`` evaluated with
    each ad of the list as its scope (a list of values / how many are true).  As in HTCondor, a
    bare attribute name found in this ad or TARGET stands for its expression, which is what then
    runs in each ad."""
    if len(fns) != 2:
        return lambda s, c: ERROR
    expr_fn, list_fn = fns
    a0 = args[0]
    name = a0.lname if type(a0) is AttrRef else None
    scoped = None  # "my" or "target" for MY.name / TARGET.name, which stand for their expression too
    if type(a0) is Select and type(a0.base) is AttrRef and a0.base.lname in ("my", "target"):
        name, scoped = a0.lname, a0.base.lname

    def fn(s: Any, c: Any) -> object:
        lst = list_fn(s, c)
        if lst is UNDEFINED:
            return 0 if count else UNDEFINED
        if type(lst) is not list:
            return ERROR
        f = expr_fn
        if name is not None:
            e = None
            scope = c.target if scoped == "target" else s
            while scope is not None and e is None:
                e = scope._attrs.get(name)
                scope = scope._parent
            if e is None and c.target is not None and scoped is None:
                e = c.target._attrs.get(name)
            if e is not None:
                f = e.tree().compiled()
        if count:
            return sum(1 for ad in lst if is_ad(ad) and ops.to_bool3(f(ad, c)) is True)
        return [f(ad, c) if is_ad(ad) else (UNDEFINED if ad is UNDEFINED else ERROR) for ad in lst]
    return fn



@tree_compiler("evalInEachContext")
def _compile_eval_in_each(fns: list[Fn], args: Sequence[Expr]) -> Fn:
    return _compile_in_contexts(False, fns, args)


@tree_compiler("countMatches")
def _compile_count_matches(fns: list[Fn], args: Sequence[Expr]) -> Fn:
    return _compile_in_contexts(True, fns, args)


# ---------------------------------------------------------------- unresolved references

def _attr_entry(arg: Any, s: Any) -> tuple[Any, Any] | None:
    """The stored entry an ``attr`` or ``MY.attr``/``ad.attr`` argument names, looked up from
    ``s``, with the ad holding it."""
    names: list[str] = []
    while type(arg) is Select:
        names.append(arg.lname)
        arg = arg.base
    if type(arg) is not AttrRef:
        return None
    names.append(arg.lname)
    names.reverse()
    if names[0] == "my" and len(names) > 1:
        names = names[1:]
    holder = s
    e = None
    while holder is not None:
        e = holder._attrs.get(names[0])
        if e is not None:
            break
        holder = holder._parent
    for name in names[1:]:
        if e is None:
            return None
        holder = getattr(e.tree(), "ad", None)  # a nested ad literal
        if holder is None:
            return None
        e = holder._attrs.get(name)
    return None if e is None else (e, holder)


def _unresolved_names(tree: Any, ad: Any, target: Any) -> list[str]:
    """Names an expression reads that ``ad`` (or the ads around it) does not define: bare names,
    ``MY.x`` and ``TARGET.x`` (printed without the scope), and ``a.b`` chains from unknown ``a``."""
    def known(name: str) -> bool:
        scope = ad
        while scope is not None:
            if name in scope._attrs:
                return True
            scope = scope._parent
        return target is not None and name in target._attrs

    found: dict[str, str] = {}
    stack = [tree]
    while stack:
        n = stack.pop()
        if type(n) is AttrRef:
            if n.lname not in ("my", "target") and not known(n.lname):
                found.setdefault(n.lname, n.name)
            continue
        if type(n) is Select:
            path: list[Select] = []
            base: Expr = n
            while type(base) is Select:
                path.append(base)
                base = base.base
            if type(base) is not AttrRef:
                stack.append(base)
                continue
            names = [unparse_name(base.name)] + [unparse_name(x.name) for x in reversed(path)]
            root = base.lname
            if root == "target":
                if target is not None and path[-1].lname in target._attrs:
                    continue
                text = ".".join(names[1:])
            elif root == "my":
                if known(path[-1].lname):
                    continue
                text = ".".join(names[1:])
            elif known(root):
                if _attr_entry(n, ad) is not None:
                    continue
                text = names[-1]  # a known ad without this attribute
            else:
                text = ".".join(names)
            found.setdefault(text.lower(), text)
            continue
        stack.extend(reversed(n._kids()))  # left to right: the first spelling of a name is kept
    return sorted(found.values(), key=str.lower)


@tree_compiler("unresolved")
def _compile_unresolved(fns: list[Fn], args: Sequence[Expr]) -> Fn:
    """``unresolved(attr)``: the names ``attr``'s expression reads that this ad lacks, joined
    with commas; ``unresolved(attr, pattern)``: whether any of them matches the pattern."""
    if len(args) not in (1, 2):
        return lambda s, c: ERROR
    arg = args[0]

    def fn(s: Any, c: Any) -> object:
        found = _attr_entry(arg, s) if s is not None else None
        if found is None:
            return UNDEFINED if type(arg) in (AttrRef, Select) else ERROR
        names = _unresolved_names(found[0].tree(), found[1], c.target)
        if len(fns) == 1:
            return ",".join(names)
        pat = fns[1](s, c)
        if type(pat) is not str:
            return ERROR
        r = compile_regex(pat)
        if r is None or not all(subject_ok(r, x) for x in names):
            return ERROR
        return any(r.search(x) is not None for x in names)
    return fn

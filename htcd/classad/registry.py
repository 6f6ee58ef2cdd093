"""The table of built-in functions, and compiling a call to one.

Function families (``htcd.classad.builtins``) register into this table when imported, so the
tree nodes can compile calls without importing the functions (which themselves parse and walk
trees).  Names are case-insensitive; an unknown name compiles to a closure that yields ERROR,
as HTCondor does at evaluation time."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .runtime import Fn
from .values import ERROR

Strict = Callable[[list[Any]], object]
"""A built-in that gets its evaluated arguments."""
Lazy = Callable[[list[Fn], Any, Any], object]
"""A built-in that gets its compiled arguments with the scope and context (ifThenElse-style)."""
TreeCompiler = Callable[[list[Fn], Sequence[Any]], Fn]
"""A built-in compiled from its argument trees (for functions that look at names, not values); the
trees are ``nodes.Expr``, which sits above this module."""

STRICT: dict[str, Strict] = {}
LAZY: dict[str, Lazy] = {}
TREE: dict[str, TreeCompiler] = {}


def strict(*names: str) -> Callable[[Strict], Strict]:
    """Register the decorated function under ``names`` as a strict built-in."""
    def deco(fn: Strict) -> Strict:
        for n in names:
            STRICT[n.lower()] = fn
        return fn
    return deco


def lazy(name: str) -> Callable[[Lazy], Lazy]:
    """Register the decorated function as a lazy built-in."""
    def deco(fn: Lazy) -> Lazy:
        LAZY[name.lower()] = fn
        return fn
    return deco


def tree_compiler(*names: str) -> Callable[[TreeCompiler], TreeCompiler]:
    """Register the decorated function as compiling calls of ``names`` from argument trees."""
    def deco(fn: TreeCompiler) -> TreeCompiler:
        for n in names:
            TREE[n.lower()] = fn
        return fn
    return deco


def compile_call(name: str, fns: list[Fn], args: Sequence[Any] = ()) -> Fn:
    """The closure for a call of ``name`` with compiled arguments ``fns`` (trees ``args``)."""
    key = name.lower()
    tc = TREE.get(key)
    if tc is not None:
        return tc(fns, args)
    lz = LAZY.get(key)
    if lz is not None:
        return lambda s, c: lz(fns, s, c)
    impl = STRICT.get(key)
    if impl is None:
        return lambda s, c: ERROR
    if len(fns) == 1:
        f0 = fns[0]
        return lambda s, c: impl([f0(s, c)])
    return lambda s, c: impl([f(s, c) for f in fns])



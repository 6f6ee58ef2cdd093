"""What compiled expressions call while they run: the evaluation context and attribute lookup.

Compiled closures have the shape ``f(scope, ctx)``; the helpers here follow names through
scopes and guard against reference cycles and runaway chains of references."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from .values import ERROR, UNDEFINED

MAX_HOPS = 128  # attribute references followed within one evaluation

Fn = Callable[[Any, Any], object]
"""A compiled expression: ``fn(scope, ctx)`` gives the value."""

NOT_CONST = object()
"""The "not a constant" marker: a stored attribute or tree whose value needs evaluating."""


class Stored(Protocol):
    """One stored attribute as evaluation sees it (``ad._Entry``, which sits above this module)."""

    const: object  # the value when it is a constant, else NOT_CONST
    fn: Any  # the compiled closure, None until compiled

    def compile(self) -> Fn: ...


class Scope(Protocol):
    """An ad as evaluation sees it (``ad.ClassAd``): attributes by lower-case name, and the ad
    enclosing it (a nested ad's scope)."""

    @property
    def _attrs(self) -> Mapping[str, Stored]: ...

    @property
    def _parent(self) -> Scope | None: ...


class AdTemplate(Protocol):
    """A nested ad literal: evaluates to a view of itself enclosed by the scope at hand."""

    def _view(self, parent: Any) -> Scope: ...


class Ctx:
    """Who MY and TARGET are during one evaluation, and which attributes are mid-evaluation."""

    __slots__ = ("_swap", "busy", "my", "target")

    def __init__(self, my: Scope | None, target: Scope | None, busy: set[int] | None = None) -> None:
        self.my = my
        self.target = target
        self.busy = set() if busy is None else busy
        self._swap: Ctx | None = None

    def other(self) -> Ctx:
        """The context seen from the target's side (MY and TARGET exchanged)."""
        o = self._swap
        if o is None:
            o = Ctx(self.target, self.my, self.busy)
            o._swap = self
            self._swap = o
        return o


def eval_entry(ad: Scope, e: Stored, c: Ctx) -> object:
    """Evaluate one stored attribute in its own ad; a reference cycle gives UNDEFINED."""
    v = e.const
    if v is not NOT_CONST:
        return v
    fn = e.fn
    if fn is None:
        fn = e.compile()
        v = e.const
        if v is not NOT_CONST:
            return v
    k = id(e)
    busy = c.busy
    if k in busy:
        return UNDEFINED
    if len(busy) >= MAX_HOPS:
        return ERROR
    busy.add(k)
    try:
        return fn(ad, c)
    finally:
        busy.discard(k)


def lookup(scope: Scope | None, lname: str, c: Ctx) -> object:
    """Bare name: the current ad, its enclosing ads, then TARGET."""
    ad = scope
    while ad is not None:
        e = ad._attrs.get(lname)
        if e is not None:
            return eval_entry(ad, e, c)
        ad = ad._parent
    t = c.target
    if t is not None and t is not scope:
        e = t._attrs.get(lname)
        if e is not None:
            return eval_entry(t, e, c.other())
    return UNDEFINED


def select(v: object, lname: str, c: Ctx) -> object:
    """``v.name``: attribute of an ad, else of the ads enclosing it (as HTCondor looks names up
    in scope: ``[a = 7].b`` finds ``b`` in the ad the literal sits in); over a list, the
    attribute of each element."""
    attrs = getattr(v, "_attrs", None)
    if attrs is not None:
        ad: Any = v  # a ClassAd: only ads have _attrs
        while True:
            e = attrs.get(lname)
            if e is not None:
                return eval_entry(ad, e, c)
            ad = ad._parent
            if ad is None:
                return UNDEFINED
            attrs = ad._attrs
    if type(v) is list:
        return [select(x, lname, c) for x in v]
    if v is UNDEFINED:
        return UNDEFINED
    return ERROR

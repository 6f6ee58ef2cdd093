"""What compiled expressions call while they run: the evaluation context and attribute lookup.

Compiled closures have the shape ``f(scope, ctx)``; the helpers here follow names through
scopes and guard against reference cycles and runaway chains of references."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .values import ERROR, UNDEFINED

if TYPE_CHECKING:
    from .ad import ClassAd, _Entry

MAX_HOPS = 128  # attribute references followed within one evaluation

Fn = Callable[[Any, Any], object]
"""A compiled expression: ``fn(scope, ctx)`` gives the value."""

_NC = object()
"""The "not a constant" marker: a stored attribute or tree whose value needs evaluating."""


class Ctx:
    """Who MY and TARGET are during one evaluation, and which attributes are mid-evaluation."""

    __slots__ = ("my", "target", "busy", "_swap")

    def __init__(self, my: ClassAd | None, target: ClassAd | None, busy: set[int] | None = None) -> None:
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


def eval_entry(ad: ClassAd, e: _Entry, c: Ctx) -> object:
    """Evaluate one stored attribute in its own ad; a reference cycle gives UNDEFINED."""
    v = e.const
    if v is not _NC:
        return v
    fn = e.fn
    if fn is None:
        fn = e.compile()
        v = e.const
        if v is not _NC:
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


def lookup(scope: ClassAd | None, lname: str, c: Ctx) -> object:
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

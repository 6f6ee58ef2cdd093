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


SPECIAL = frozenset({"my", "self", "parent", "toplevel", "root", "currenttime"})
"""Names HTCondor resolves in the ad where a lookup starts, when the ad has no such attribute:
``MY``/``SELF`` the ad itself, ``PARENT`` the ad enclosing it, ``ROOT``/``TOPLEVEL`` the outermost
ad, ``CurrentTime`` the time now."""
PAIR = frozenset({"target", "other", "ad"})
"""Names HTCondor's match context gives a top-level ad: ``TARGET``/``OTHER`` the other ad of the
evaluation, ``AD`` the ad itself; found only after the ad and its enclosing ads lack them."""


def top_of(ad: Scope) -> Scope:
    """The outermost ad enclosing ``ad`` (``ad`` itself at top level)."""
    while True:
        up = ad._parent
        if up is None:
            return ad
        ad = up


def special(ad: Scope, lname: str, c: Ctx) -> object:
    """A SPECIAL name's value where a lookup started at ``ad``."""
    if lname == "my" or lname == "self":
        return ad
    if lname == "parent":
        up = ad._parent
        return UNDEFINED if up is None else up
    if lname == "currenttime":
        import time

        return int(time.time())
    top = top_of(ad)
    if top is c.my and c.target is not None:
        return UNDEFINED  # HTCondor's root is then its match context, which htcd does not build
    return top


def pair(top: Scope, lname: str, c: Ctx) -> object:
    """A PAIR name's value from the top-level ad ``top`` of one side of the evaluation."""
    if top is c.my:
        other = c.target
    elif top is c.target:
        other = c.my
    else:
        return UNDEFINED
    if lname == "ad":
        return top
    return UNDEFINED if other is None else other


def side(ad: Scope, c: Ctx) -> Ctx:
    """The context for evaluating inside ``ad``: swapped when ``ad`` belongs to TARGET, so its
    own MY and TARGET refer to the right ads (``other.x``, ``TARGET.y.z``)."""
    t = c.target
    if t is None or t is c.my:
        return c
    return c.other() if top_of(ad) is t else c


def lookup(scope: Scope | None, lname: str, c: Ctx) -> object:
    """Bare name: the current ad, its enclosing ads, the special names, then TARGET."""
    ad = scope
    top = None
    while ad is not None:
        e = ad._attrs.get(lname)
        if e is not None:
            return eval_entry(ad, e, c)
        if ad is scope and lname in SPECIAL:
            return special(ad, lname, c)
        top = ad
        ad = ad._parent
    if lname in PAIR and top is not None:
        v = pair(top, lname, c)
        if v is not UNDEFINED:
            return v
    t = c.target
    if t is not None and t is not scope:
        e = t._attrs.get(lname)
        if e is not None:
            return eval_entry(t, e, c.other())
    return UNDEFINED


def lookup_absolute(scope: Scope | None, lname: str, c: Ctx) -> object:
    """``.name``: the name in the outermost ad enclosing the scope, without falling back to
    TARGET.  With a TARGET, HTCondor's outermost scope is its match context, which holds none of
    either ad's attributes, so ``.name`` is UNDEFINED there, as in HTCondor's matchmaking."""
    if scope is None or c.target is not None:
        return UNDEFINED
    return select(top_of(scope), lname, c)


def select(v: object, lname: str, c: Ctx) -> object:
    """``v.name``: attribute of an ad, else of the ads enclosing it (as HTCondor looks names up
    in scope: ``[a = 7].b`` finds ``b`` in the ad the literal sits in), else a special name;
    over a list, the attribute of each element."""
    attrs = getattr(v, "_attrs", None)
    if attrs is not None:
        ad: Any = v  # a ClassAd: only ads have _attrs
        c = side(ad, c)
        while True:
            e = attrs.get(lname)
            if e is not None:
                return eval_entry(ad, e, c)
            if lname in SPECIAL and ad is v:
                found: Any = ad  # (``ad is v`` narrows ad to v's type for a type checker)
                return special(found, lname, c)
            up = ad._parent
            if up is None:
                return pair(ad, lname, c) if lname in PAIR else UNDEFINED
            ad = up
            attrs = ad._attrs
    if type(v) is list:
        return [select(x, lname, c) for x in v]
    if v is UNDEFINED:
        return UNDEFINED
    return ERROR

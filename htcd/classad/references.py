"""Which attributes an expression reads, split into its own ad's (bare, MY., SELF. or absolute
``.name``) and the other ad's (TARGET. or OTHER.), cached by expression text: the schedd's autoclusters, the negotiator's slot groups and the
tools' projections all ask."""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from .expr import ClassAdSyntaxError, Expr, parse_expr
from .nodes import AbsRef, AttrRef, Select

_MINE = frozenset({"my", "self"})
_OTHER = frozenset({"target", "other"})


def _children(e: Any) -> Iterator[Any]:
    for cls in type(e).__mro__:
        for slot in getattr(cls, "__slots__", ()):
            v = getattr(e, slot, None)
            if isinstance(v, Expr):
                yield v
            elif isinstance(v, (list, tuple)):
                yield from (x for x in v if isinstance(x, Expr))


def references(e: Expr) -> tuple[frozenset[str], frozenset[str]]:
    """(bare or MY. names, TARGET. names) ``e`` reads, lower-cased."""
    mine: set[str] = set()
    target: set[str] = set()
    todo = [e]
    while todo:
        x = todo.pop()
        if type(x) is AttrRef or type(x) is AbsRef:
            mine.add(x.lname)
            continue
        if type(x) is Select and type(x.base) is AttrRef and (x.base.lname in _MINE or x.base.lname in _OTHER):
            (mine if x.base.lname in _MINE else target).add(x.lname)
            continue
        todo.extend(_children(x))
    mine -= _MINE | _OTHER
    return frozenset(mine), frozenset(target)


@lru_cache(maxsize=65536)
def text_references(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """``references`` of an expression text; unparsable text reads nothing."""
    try:
        return references(parse_expr(text))
    except ClassAdSyntaxError:
        return frozenset(), frozenset()

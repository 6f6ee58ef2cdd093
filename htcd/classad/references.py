"""Which attributes an expression reads, split into its own ad's (bare or MY.) and the other ad's
(TARGET.), cached by expression text: the schedd's autoclusters, the negotiator's slot groups and the
tools' projections all ask."""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from .expr import ClassAdSyntaxError, Expr, parse_expr
from .nodes import AttrRef, Select


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
        if type(x) is AttrRef:
            mine.add(x.lname)
            continue
        if type(x) is Select and type(x.base) is AttrRef and x.base.lname in ("my", "target"):
            (mine if x.base.lname == "my" else target).add(x.lname)
            continue
        todo.extend(_children(x))
    mine.discard("my")
    mine.discard("target")
    return frozenset(mine), frozenset(target)


@lru_cache(maxsize=65536)
def text_references(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """``references`` of an expression text; unparsable text reads nothing."""
    try:
        return references(parse_expr(text))
    except ClassAdSyntaxError:
        return frozenset(), frozenset()

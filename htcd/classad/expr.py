"""ClassAd expressions: parsing with a cache of trees, unparsing, and the tree API in one place.

The pieces live in their own modules (``lexer``, ``parser``, ``nodes``, ``compiler``,
``runtime``); this module is the entry point the rest of htcd imports from."""

from __future__ import annotations

from .lexer import Tok
from .nodes import (
    KEYWORDS,
    AbsRef,
    AdExpr,
    AttrRef,
    Binary,
    Call,
    Cond,
    Elvis,
    Expr,
    Index,
    ListExpr,
    Literal,
    Paren,
    RelTimeLiteral,
    Select,
    Unary,
    literal,
    node_height,
    tree_height,
    unparse_name,
)
from .parser import MAX_HEIGHT, MAX_NESTING, ClassAdSyntaxError, Parser
from .runtime import MAX_HOPS, NOT_CONST, Ctx, Fn, eval_entry, lookup, select
from .values import format_real, unparse_value

_CACHE: dict[tuple[str, bool], Expr] = {}
CACHE_SIZE = 4096  # distinct texts whose trees are kept (least recently used dropped first); 0: none


def parse_expr(text: str, old: bool = False) -> Expr:
    """Parse one expression; the whole text must be consumed.  ``old`` reads strings as the old
    long format writes them (only \\" is an escape).

    Trees are immutable, so identical text (schedds and collectors see the same Requirements in
    thousands of ads) is parsed once: a bounded LRU dict maps text to its tree.  Texts holding a
    nested ad (``[``) are not cached, since a nested ad is a mutable ClassAd."""
    if CACHE_SIZE <= 0:
        p = Parser(text, old)
        e = p.parse_expr()
        p.expect_end()
        return e
    key = (text, old)
    cache = _CACHE
    hit = cache.pop(key, None)
    if hit is not None:
        cache[key] = hit
        return hit
    p = Parser(text, old)
    e = p.parse_expr()
    p.expect_end()
    if "[" not in text:
        if len(cache) >= CACHE_SIZE:  # drop the least recently used half (one rebuild, not one per miss)
            keep = list(cache.items())[CACHE_SIZE // 2:]
            cache.clear()
            cache.update(keep)
        cache[key] = e
    return e


def unparse(x: object) -> str:
    """Unparse an expression or a value."""
    if isinstance(x, Expr):
        return str(x)
    return unparse_value(x)


__all__ = [
    "KEYWORDS",
    "MAX_HEIGHT",
    "MAX_HOPS",
    "MAX_NESTING",
    "NOT_CONST",
    "AbsRef",
    "AdExpr",
    "AttrRef",
    "Binary",
    "Call",
    "ClassAdSyntaxError",
    "Cond",
    "Ctx",
    "Elvis",
    "Expr",
    "Fn",
    "Index",
    "ListExpr",
    "Literal",
    "Paren",
    "Parser",
    "RelTimeLiteral",
    "Select",
    "Tok",
    "Unary",
    "eval_entry",
    "format_real",
    "literal",
    "lookup",
    "node_height",
    "parse_expr",
    "select",
    "tree_height",
    "unparse",
    "unparse_name",
]

"""Per-attribute value indexes, so that ``State == "Unclaimed"`` or ``HostGroup == 42`` looks at
the ~100 ads that can match instead of evaluating the constraint against every ad.

An index maps the *normalized value* of an attribute's literal text to the entries holding it:
strings lower-cased (ClassAd ``==`` ignores case), numbers and booleans as floats (``42`` and
``42.0`` compare equal).  Entries whose text is an expression go in ``other``: they are always
candidates.  Entries without the attribute are in no bucket, since ``Attr == literal`` is
UNDEFINED for them.  Candidates are always evaluated against the whole constraint afterwards,
so a bucket may be a superset of the true matches, never a subset.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from typing import Any, Generic, TypeVar

from htcd.classad import UNDEFINED, parse_expr
from htcd.errors import UserError

#: What an index holds: the store's entries (any hashable object to this module).
Entry = TypeVar("Entry", bound=Hashable)

OTHER = object()  # the text is an expression: always a candidate
NONE = object()  # the text can never equal a literal (UNDEFINED, ERROR, a list...)
_INT = re.compile(r"-?\d+\Z")
_REAL = re.compile(r"-?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?\Z")
_NORM_CACHE: dict[str, Any] = {}
_EMPTY: set[Any] = set()
NORM_CACHE_SIZE = 100_000


def normalize(value: object) -> Any:
    """The bucket of a literal value (NONE if no ``==`` with a literal can be true)."""
    t = type(value)
    if t is str:
        return value.lower()  # type: ignore[attr-defined]  # t is str; mypy narrows no alias of type()
    if t is bool or t is int or t is float:
        return float(value)  # type: ignore[arg-type]  # t is a number type, as above
    return NONE


def norm_of_text(text: str | None) -> Any:
    """The bucket of an attribute's wire text: NONE if absent, OTHER if it is not a literal."""
    if text is None:
        return NONE
    found = _NORM_CACHE.get(text)
    if found is not None:
        return found
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"' and "\\" not in text and '"' not in text[1:-1]:
        norm: Any = text[1:-1].lower()
    elif _INT.match(text):
        norm = float(int(text))
    elif _REAL.match(text):
        norm = float(text)
    else:
        low = text.strip().lower()
        if low in ("true", "false"):
            norm = 1.0 if low == "true" else 0.0
        else:
            try:
                tree = parse_expr(text)
            except UserError:
                tree = None
            value = tree.const_value() if tree is not None and tree.is_literal() else OTHER
            norm = OTHER if value is OTHER else (NONE if value is UNDEFINED else normalize(value))
    if len(_NORM_CACHE) >= NORM_CACHE_SIZE:
        _NORM_CACHE.clear()
    _NORM_CACHE[text] = norm
    return norm


class Index(Generic[Entry]):
    """Entries of one ad table by the normalized value of one attribute."""

    __slots__ = ("attr", "buckets", "hits", "other", "ready")

    def __init__(self, attr: str) -> None:
        self.attr = attr  # lower-case name
        self.buckets: dict[Any, set[Entry]] = {}
        self.other: set[Entry] = set()
        self.ready = False  # False while it is being built; queries then do without it
        self.hits = 0

    def add(self, entry: Entry, text: str | None) -> None:
        norm = norm_of_text(text)
        if norm is NONE:
            return
        if norm is OTHER:
            self.other.add(entry)
            return
        bucket = self.buckets.get(norm)
        if bucket is None:
            bucket = self.buckets[norm] = set()
        bucket.add(entry)

    def discard(self, entry: Entry, text: str | None) -> None:
        norm = norm_of_text(text)
        if norm is NONE:
            return
        if norm is OTHER:
            self.other.discard(entry)
            return
        bucket = self.buckets.get(norm)
        if bucket is not None:
            bucket.discard(entry)
            if not bucket:
                del self.buckets[norm]

    def move(self, entry: Entry, old: str | None, new: str | None) -> None:
        if old is new or old == new:
            return
        self.discard(entry, old)
        self.add(entry, new)

    def lookup(self, norm: Any) -> tuple[set[Entry], set[Entry]]:
        """The entries that may hold ``norm``: its bucket and every non-literal one."""
        self.hits += 1
        return self.buckets.get(norm) or _EMPTY, self.other

    def count(self, norm: Any) -> int:
        bucket = self.buckets.get(norm)
        return len(bucket) if bucket else 0

"""Queries over the store: which ads a constraint selects, without a ClassAd per stored ad.

A constraint is planned once (plans are cached by text): its top-level ``&&`` conjuncts of the
form ``Attr == literal`` (or ``=?=``) are looked up in the per-attribute indexes (built on first
use, maintained on every update), and only the candidates they give are evaluated.  An ad is
evaluated as a small ClassAd holding just the attributes the constraint reads, following
references from attribute to attribute; a constraint that names attributes at run time
(``eval()``, ``unresolved()``, a bare ``MY``) gets the whole ad.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple, cast

from htcd.classad import ClassAd, Expr, is_true, parse_expr
from htcd.classad.analyze import conjuncts
from htcd.classad.expr import AttrRef, Binary, Call, Literal, Select
from htcd.collector.index import NONE, OTHER, norm_of_text, normalize
from htcd.collector.store import EXTRA_NAMES, AdStore, Entry, Table

SCOPES = frozenset({"my", "target", "parent"})
DYNAMIC_FUNCTIONS = frozenset({"eval", "unresolved"})
YIELD_EVERY = 250  # entries looked at between two chances for the caller to yield
_REFS: dict[str, frozenset[str] | None] = {}
_PLANS: dict[str, Plan] = {}
CACHE_SIZE = 50_000


def refs_of(expr: Expr) -> frozenset[str] | None:
    """The lower-case attribute names ``expr`` reads, or None if it can read names not written
    in it."""
    out: set[str] = set()
    stack: list[Expr] = [expr]
    while stack:
        node = stack.pop()
        t = type(node)
        if t is AttrRef:
            low = cast(AttrRef, node).lname
            if low in SCOPES:
                if low != "target":
                    return None  # the whole ad as a value
                continue
            out.add(low)
            continue
        if t is Select:
            sel = cast(Select, node)
            base = sel.base
            if type(base) is AttrRef and base.lname in SCOPES:
                out.add(sel.lname)
                continue
            stack.append(base)
            continue
        if t is Call and cast(Call, node).name.lower() in DYNAMIC_FUNCTIONS:
            return None
        stack.extend(node._kids())
    return frozenset(out)


def text_refs(text: str) -> frozenset[str] | None:
    """``refs_of`` an attribute's wire text (cached; literals read nothing)."""
    try:
        return _REFS[text]
    except KeyError:
        pass  # not seen yet (a miss is rare: the texts of a pool repeat)
    norm = norm_of_text(text)
    if norm is not OTHER and norm is not NONE:
        refs: frozenset[str] | None = frozenset()
    else:
        try:
            refs = refs_of(parse_expr(text))
        except Exception:
            refs = frozenset()  # evaluates to ERROR whatever the ad holds
    if len(_REFS) >= CACHE_SIZE:
        _REFS.clear()
    _REFS[text] = refs
    return refs


def _eq_conjunct(e: Expr) -> tuple[str, Any] | None:
    """(attribute, bucket) if ``e`` is ``Attr == literal`` / ``literal == Attr`` (or =?=)."""
    if type(e) is not Binary or e.op not in ("==", "=?=", "is"):
        return None
    items = e._chain()
    if len(items) != 2:
        return None
    for ref, lit in (items, items[::-1]):
        name = None
        if ((type(ref) is AttrRef and ref.lname not in SCOPES)
                or (type(ref) is Select and type(ref.base) is AttrRef and ref.base.lname == "my")):
            name = ref.lname
        if name is not None and isinstance(lit, Literal):
            norm = normalize(lit.value)
            if norm is not NONE:
                return name, norm
    return None


@dataclass
class Plan:
    """A parsed constraint and what is known about it before looking at any ad."""

    text: str
    expr: Expr | None
    refs: frozenset[str] | None = None  # None: evaluate against the whole ad
    eq: list[tuple[str, Any]] = field(default_factory=list)
    # The attribute when the whole constraint is ``Attr == literal`` whose bucket holds exactly
    # the ads it is true for (a string, or a number no boolean normalizes to): those are not
    # evaluated again, which was three quarters of a ~100-ad query's time.
    exact: str | None = None

    def matches(self, store: AdStore, e: Entry) -> bool:
        if self.expr is None:
            return True
        return is_true(self.expr.eval(self.ad_for(store, e)))

    def ad_for(self, store: AdStore, e: Entry) -> ClassAd:
        """The ad to evaluate against: only what the constraint reads, when that is known."""
        if self.refs is None:
            return ClassAd.from_wire(store.wire(e))
        layout, values = e.layout, e.values
        index, names = layout.index, layout.names
        wire: dict[str, str] = {}
        todo = list(self.refs)
        seen: set[str] = set()
        extras: dict[str, str] | None = None
        while todo:
            low = todo.pop()
            if low in seen:
                continue
            seen.add(low)
            i = index.get(low)
            if i is None:
                if low in EXTRA_NAMES:
                    extras = store.extras(e) if extras is None else extras
                    for k, v in extras.items():
                        if k.lower() == low:
                            wire[k] = v
                continue
            text = values[i]
            wire[names[i]] = text
            more = text_refs(text)
            if more is None:
                return ClassAd.from_wire(store.wire(e))
            todo.extend(more)
        return ClassAd.from_wire(wire)


def plan(text: str | None) -> Plan:
    """The plan of a constraint text (cached); UserError if it does not parse."""
    if not text or not text.strip():
        return Plan("", None)
    found = _PLANS.get(text)
    if found is not None:
        return found
    expr = parse_expr(text)
    p = Plan(text, expr, refs_of(expr))
    for c in conjuncts(expr):
        eq = _eq_conjunct(c)
        if eq is not None:
            p.eq.append(eq)
    if len(p.eq) == 1 and type(expr) is Binary and expr.op == "==" and _eq_conjunct(expr) is not None:
        norm = p.eq[0][1]
        if p.eq[0][0] in EXTRA_NAMES:
            pass  # the collector adds it when serving the ad: not what the index holds
        elif type(norm) is str or (type(norm) is float and norm not in (0.0, 1.0) and abs(norm) < 2.0 ** 53):
            p.exact = p.eq[0][0]
    if len(_PLANS) >= 4096:
        _PLANS.clear()
    _PLANS[text] = p
    return p


SMALL = 4096  # candidates few enough to copy into a list; more are used as a filter on a walk


class Few(NamedTuple):
    """Candidates few enough to copy: ``sure`` match without evaluation (``Plan.exact``)."""

    sure: list[Entry]
    maybe: list[Entry]


def _candidates(table: Table, p: Plan) -> tuple[Few | tuple[set[Entry], set[Entry]] | None, bool]:
    """What the ready indexes give for ``p``: few candidates, or the (bucket, other) sets of many
    to filter a walk of the table with, or None (every ad is a candidate); and whether the
    bucket's entries match without evaluation.  Indexes the plan could use but that do not
    exist yet are created, to be built in the background."""
    best: tuple[set[Entry], set[Entry]] | None = None
    exact = False
    for attr, norm in p.eq:
        idx = table.want_index(attr)
        if idx is None or not idx.ready:
            continue
        found = idx.lookup(norm)
        if best is None or len(found[0]) + len(found[1]) < len(best[0]) + len(best[1]):
            best, exact = found, attr == p.exact
    if best is None:
        return None, False
    if len(best[0]) + len(best[1]) <= SMALL:
        if exact:
            return Few(list(best[0]), list(best[1])), True
        return Few([], [*best[0], *best[1]]), False
    return best, exact


def want_indexes(store: AdStore, ad_type: str, p: Plan) -> bool:
    """Create the indexes ``p`` could use (empty, to be built); True if any is not built yet."""
    pending = False
    for table in store.tables_for(ad_type):
        for attr, _ in p.eq:
            idx = table.want_index(attr)
            pending = pending or (idx is not None and not idx.ready)
    return pending


def select(store: AdStore, ad_type: str, p: Plan, now: float | None = None) -> Iterator[Entry | None]:
    """The live, unexpired entries of ``ad_type`` ("Any": every type) that ``p`` selects; a
    None every YIELD_EVERY entries looked at, where a caller on an event loop may yield."""
    now = time.time() if now is None else now
    for table in store.tables_for(ad_type):
        found, exact = _candidates(table, p)
        if isinstance(found, Few):
            n = 0
            for e in found.sure:
                n += 1
                if n % YIELD_EVERY == 0:
                    yield None
                if e.live and e.expires > now:
                    yield e
            for e in found.maybe:
                n += 1
                if n % YIELD_EVERY == 0:
                    yield None
                if e.live and e.expires > now and p.matches(store, e):
                    yield e
            continue
        bucket: set[Entry] | None = None
        other: set[Entry] = set()
        if found is not None:
            bucket, other = found
        for walked in table.walk(every=YIELD_EVERY):
            if walked is None:
                yield None
            elif exact and bucket is not None and walked in bucket:
                if walked.expires > now:
                    yield walked
            elif ((bucket is None or walked in bucket or walked in other) and walked.expires > now
                  and p.matches(store, walked)):
                yield walked

"""The ClassAd container, its text forms (new, old long format, JSON, wire) and matching."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

from .expr import (
    NOT_CONST,
    AdExpr,
    ClassAdSyntaxError,
    Ctx,
    Expr,
    ListExpr,
    Literal,
    Parser,
    eval_entry,
    literal,
    parse_expr,
    unparse_name,
)
from .nodes import NestedAd, set_ad_class
from .ops import to_bool3
from .values import ERROR, UNDEFINED, Value, is_true, unparse_value

_PLAIN_REAL = re.compile(r"-?[0-9]+\.[0-9]+")


class _Entry:
    """One attribute: original name, tree (parsed lazily from wire text), cached text and closure."""

    __slots__ = ("const", "expr", "fn", "name", "text")

    def __init__(self, name: str, expr: Expr | None, text: str | None) -> None:
        self.name = name
        self.expr = expr
        self.text = text
        self.fn: Any = None
        self.const: object = NOT_CONST

    def tree(self) -> Expr:
        e = self.expr
        if e is None:
            assert self.text is not None  # an entry holds its tree, its text or both
            e = self.expr = parse_expr(self.text)
        return e

    def compile(self) -> Any:
        """Build the closure; literal attributes become constants so lookups skip the call."""
        try:
            e = self.tree()
        except ClassAdSyntaxError:
            self.const = ERROR
            self.fn = lambda s, c: ERROR
            return self.fn
        v = e.const_value()
        if v is not NOT_CONST and type(v) is not list:
            self.const = v
        self.fn = e.compiled()
        return self.fn


class ClassAd(MutableMapping[str, Expr]):
    """An ordered, case-insensitive mapping of attribute names to expressions."""

    __slots__ = ("_attrs", "_parent")

    def __init__(self, init: Mapping[str, Any] | str | None = None) -> None:
        self._attrs: dict[str, _Entry] = {}
        self._parent: ClassAd | None = None
        if isinstance(init, str):
            self._attrs = parse_ad(init)._attrs
        elif init is not None:
            for k, v in init.items():
                self[k] = v

    # -- internal
    def _set(self, name: str, expr: Expr | None, text: str | None) -> None:
        k = name.lower()
        old = self._attrs.get(k)
        self._attrs[k] = _Entry(old.name if old is not None else name, expr, text)

    def _view(self, parent: ClassAd | None) -> ClassAd:
        """A ClassAd sharing this one's attributes but enclosed by ``parent`` (nested ad scoping)."""
        v = ClassAd.__new__(ClassAd)
        v._attrs = self._attrs
        v._parent = parent
        return v

    # -- mapping protocol
    def __getitem__(self, name: str) -> Expr:
        return self._attrs[name.lower()].tree()

    def __setitem__(self, name: str, value: Any) -> None:
        if not isinstance(name, str) or not name:
            raise KeyError(f"bad attribute name {name!r}")
        self._set(name, literal(value), None)

    def __delitem__(self, name: str) -> None:
        del self._attrs[name.lower()]

    def __iter__(self) -> Iterator[str]:
        return (e.name for e in list(self._attrs.values()))

    def __len__(self) -> int:
        return len(self._attrs)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._attrs

    def __repr__(self) -> str:
        return f"ClassAd({self.to_new()!r})"

    def __str__(self) -> str:
        return self.to_new()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ClassAd):
            return NotImplemented
        if self._attrs.keys() != other._attrs.keys():
            return False
        return all(self.expr_text(e.name) == other.expr_text(e.name) for e in self._attrs.values())

    __hash__ = None  # type: ignore[assignment]  # mutable, so unhashable; typeshed wants a method

    # -- API
    def set_expr(self, name: str, text: str) -> None:
        """Parse ``text`` and store it; the text is kept for to_wire."""
        self._set(name, parse_expr(text), text)

    def lookup(self, name: str) -> Expr | None:
        e = self._attrs.get(name.lower())
        return None if e is None else e.tree()

    def name_of(self, name: str) -> str | None:
        """The attribute's name as first written (for printing), or None if absent."""
        e = self._attrs.get(name.lower())
        return None if e is None else e.name

    def expr_text(self, name: str) -> str:
        """The unparsed expression of one attribute (wire text if the ad kept it)."""
        e = self._attrs[name.lower()]
        if e.text is None:
            e.text = str(e.expr)
        return e.text

    def plain_value(self, name: str, default: Any = None) -> Any:
        """An attribute's value, read straight from its wire text when that is a plain string or
        number (most of what tools print; nothing is parsed or left cached), else evaluated;
        ``default`` when absent, undefined or an error."""
        try:
            text = self.expr_text(name)
        except KeyError:
            return default
        n = len(text)
        if n >= 2 and text[0] == '"' and text[-1] == '"' and "\\" not in text and text.count('"') == 2:
            return text[1:-1]
        if n < 19 and text.isascii() and text.isdigit() and (n == 1 or text[0] != "0"):
            return int(text)
        if n < 19 and "." in text and _PLAIN_REAL.fullmatch(text):
            return float(text)
        v = self.eval(name)
        return default if v is UNDEFINED or v is ERROR else v

    def eval(self, name: str, target: ClassAd | None = None) -> object:
        """Evaluate attribute ``name`` with this ad as MY; UNDEFINED if absent."""
        e = self._attrs.get(name.lower())
        if e is None:
            return UNDEFINED
        try:
            return eval_entry(self, e, Ctx(self, target))
        except RecursionError:
            return ERROR

    def eval_expr(self, expr: Expr | str, target: ClassAd | None = None) -> object:
        """Evaluate an expression (or its text) with this ad as MY."""
        if isinstance(expr, str):
            expr = parse_expr(expr)
        return expr.eval(self, target)

    def get_value(self, name: str, default: Any = None, target: ClassAd | None = None) -> Any:
        """The evaluated value, or ``default`` when it is UNDEFINED or ERROR."""
        v = self.eval(name, target)
        if v is UNDEFINED or v is ERROR:
            return default
        return v

    def copy(self) -> ClassAd:
        """A shallow copy (expressions are immutable, so they are shared)."""
        c = ClassAd.__new__(ClassAd)
        c._parent = None
        c._attrs = {}
        for k, e in self._attrs.items():
            n = _Entry(e.name, e.expr, e.text)
            n.fn = e.fn
            n.const = e.const
            c._attrs[k] = n
        return c

    def update(self, other: Any = (), /, **kw: Any) -> None:
        """Copy attributes from another ad (sharing trees and wire text) or a mapping."""
        if isinstance(other, ClassAd):
            for e in other._attrs.values():
                self._set(e.name, e.expr, e.text)
        else:
            items = other.items() if hasattr(other, "items") else other
            for k, v in items:
                self[k] = v
        for k, v in kw.items():
            self[k] = v

    # -- text forms
    def _unparse(self, old: bool = False) -> str:
        if not self._attrs:
            return "[  ]"
        parts = []
        for e in self._attrs.values():
            parts.append(f"{unparse_name(e.name)} = {self._entry_text(e, old)}")
        return "[ " + "; ".join(parts) + " ]"

    def _entry_text(self, e: _Entry, old: bool) -> str:
        return e.tree().unparse(old)

    def to_new(self) -> str:
        """New-syntax text ``[ a = 1; b = "x" ]``."""
        return self._unparse(False)

    def to_old(self) -> str:
        """Old long format, one ``Name = expr`` per line as condor_q -l prints (with a final newline)."""
        return "".join(f"{unparse_name(e.name)} = {e.tree().unparse(True)}\n" for e in self._attrs.values())

    def to_wire(self) -> dict[str, str]:
        """Attribute name -> expression text; text an ad was built from is reused verbatim."""
        out: dict[str, str] = {}
        for e in self._attrs.values():
            t = e.text
            if t is None:
                t = e.text = str(e.expr)
            out[e.name] = t
        return out

    @classmethod
    def from_wire(cls, d: Mapping[str, str]) -> ClassAd:
        """Build from name -> expression text.  Texts parse on first use: a malformed one raises
        ClassAdSyntaxError from ``ad[name]`` and evaluates to ERROR."""
        ad = cls.__new__(cls)
        ad._parent = None
        attrs: dict[str, _Entry] = {}
        for name, text in d.items():
            k = name.lower()
            old = attrs.get(k)
            attrs[k] = _Entry(old.name if old is not None else name, None, text)
        ad._attrs = attrs
        return ad

    def to_json(self) -> dict[str, Any]:
        """HTCondor's JSON form: literals as JSON values, other expressions as "/Expr(...)/" strings."""
        return {e.name: _json_value(e.tree()) for e in self._attrs.values()}

set_ad_class(ClassAd)


def _json_value(x: Expr) -> Any:
    if isinstance(x, Literal):
        v = x.value
        if v is UNDEFINED:
            return None
        if type(v) in (bool, int, str) or (type(v) is float and v - v == 0.0):
            return v
    elif isinstance(x, ListExpr):
        return [_json_value(i) for i in x.items]
    elif isinstance(x, AdExpr):
        return _classad(x.ad).to_json()
    return "/Expr(" + str(x) + ")/"


# ---------------------------------------------------------------- parsing ads

def parse_ad(text: str) -> ClassAd:
    """Parse one new-syntax ad ``[ a = 1; b = "x" ]``."""
    p = Parser(text)
    ad = p.parse_ad_body()
    p.expect_end()
    return _classad(ad)


def _classad(ad: NestedAd) -> ClassAd:
    """A nested ad from the parser or a tree, as the ClassAd it is (nodes build them through the
    class registered below, typed only by what nodes need of it)."""
    assert isinstance(ad, ClassAd)
    return ad


def _old_lines(text: str) -> Iterator[tuple[int, str | None]]:
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            yield n, None
        elif not line.startswith("#"):
            yield n, line


def _old_attr(ad: ClassAd, n: int, line: str) -> None:
    eq = line.find("=")
    name = line[:eq].strip() if eq > 0 else ""
    if eq <= 0 or not name or (not name.replace("_", "a").isalnum() and not name.startswith("'")):
        raise ClassAdSyntaxError("expected 'Name = expression'", line=n, column=1)
    if name[0].isdigit():
        raise ClassAdSyntaxError(f"bad attribute name {name!r}", line=n, column=1)
    body = line[eq + 1:].strip()
    try:
        expr = parse_expr(body, old=True)
    except ClassAdSyntaxError as err:
        col = (err.column or 1) + (len(line[:eq + 1]) + len(line[eq + 1:]) - len(line[eq + 1:].lstrip()))
        raise ClassAdSyntaxError(err.message, line=n, column=col) from None
    if name.startswith("'"):
        name = Parser(name).next().value
    ad._set(name, expr, None)


def parse_old_ad(text: str) -> ClassAd:
    """Parse the old long format: ``Name = expr`` per line; blank lines and ``#`` comments ignored."""
    ad = ClassAd()
    for n, line in _old_lines(text):
        if line is not None:
            _old_attr(ad, n, line)
    return ad


def parse_old_ads(text: str) -> list[ClassAd]:
    """Several old-format ads separated by blank lines."""
    ads: list[ClassAd] = []
    cur: ClassAd | None = None
    for n, line in _old_lines(text):
        if line is None:
            if cur is not None:
                ads.append(cur)
                cur = None
            continue
        if cur is None:
            cur = ClassAd()
        _old_attr(cur, n, line)
    if cur is not None:
        ads.append(cur)
    return ads


def parse_json_ad(data: str | Mapping[str, Any]) -> ClassAd:
    """Parse HTCondor's JSON ad form (text or an already-decoded object)."""
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as err:
            raise ClassAdSyntaxError(f"bad JSON: {err.msg}", line=err.lineno, column=err.colno) from None
        except ValueError as err:  # not a decoding error: an integer too long to convert
            raise ClassAdSyntaxError(f"bad JSON: {err}") from None
    if not isinstance(data, Mapping):
        raise ClassAdSyntaxError("expected a JSON object for a ClassAd")
    ad = ClassAd()
    for k, v in data.items():
        ad._set(k, _from_json(v), None)
    return ad


def _from_json(v: Any) -> Expr:
    if v is None:
        return Literal(UNDEFINED)
    if isinstance(v, str):
        if v.startswith("/Expr(") and v.endswith(")/"):
            return parse_expr(v[6:-2])
        return Literal(v)
    if isinstance(v, (bool, int, float)):
        return literal(v)
    if isinstance(v, list):
        return ListExpr([_from_json(x) for x in v])
    if isinstance(v, Mapping):
        return AdExpr(parse_json_ad(v))
    raise ClassAdSyntaxError(f"unsupported JSON value {v!r}")


# ---------------------------------------------------------------- matching

def matches(a: ClassAd, b: ClassAd) -> bool:
    """a.Requirements is true (or a nonzero number) with MY=a, TARGET=b.  Missing counts as false,
    as in HTCondor (classad2's ``b.matches(a)``)."""
    e = a._attrs.get("requirements")
    if e is None:
        return False
    try:
        v = eval_entry(a, e, Ctx(a, b))
    except RecursionError:
        return False
    return v is True or is_true(v)


def symmetric_match(a: ClassAd, b: ClassAd) -> bool:
    """Both ads' Requirements hold against each other."""
    return matches(a, b) and matches(b, a)


def rank(a: ClassAd, b: ClassAd) -> float:
    """a.Rank against b as a float; 0.0 when it is not a number (booleans count as 1.0/0.0)."""
    e = a._attrs.get("rank")
    if e is None:
        return 0.0
    try:
        v: Value = eval_entry(a, e, Ctx(a, b))
    except RecursionError:
        return 0.0
    t = type(v)
    if t is int or t is float or t is bool:
        f = float(v)
        return f if f == f else 0.0
    return 0.0


__all__ = [
    "ClassAd",
    "matches",
    "parse_ad",
    "parse_json_ad",
    "parse_old_ad",
    "parse_old_ads",
    "rank",
    "symmetric_match",
    "to_bool3",
    "unparse_value",
]

"""ClassAds as classad2 hands them to scripts: ``ad["Attr"]`` is a Python value (int, float,
str, bool, list, a nested :class:`ClassAd`, :data:`Value.Undefined`/:data:`Value.Error`) when the
attribute is a literal, and an :class:`ExprTree` when it is an expression to evaluate.

The ads are :class:`htcd.classad.ClassAd` underneath (same parser, evaluator and printing), so
ads from the schedd stay lazy: an attribute is parsed only when a script reads it."""

from __future__ import annotations

import enum
import json
from collections.abc import Iterator, Mapping
from typing import Any

from htcd.classad import ERROR, UNDEFINED, ClassAdSyntaxError, Expr, parse_expr
from htcd.classad import ClassAd as _BaseAd
from htcd.classad import parse_old_ads as _parse_old_ads
from htcd.classad.values import quote_string

from .errors import ClassAdException, HTCondorException

__all__ = ["ClassAd", "ClassAdException", "ExprTree", "ParserType", "Value", "parseAds", "parseNext",
           "parseOne", "quote", "unquote"]


class Value(enum.IntEnum):
    """The two special values (classad2's numbers)."""

    Error = 1
    Undefined = 2


class ParserType(enum.IntEnum):
    Old = 1
    New = 2
    JSON = 3


def _from_htcd(v: object) -> Any:
    """An evaluated htcd value as classad2 gives it."""
    if v is UNDEFINED:
        return Value.Undefined
    if v is ERROR:
        return Value.Error
    if isinstance(v, list):
        return [_from_htcd(x) for x in v]
    if isinstance(v, _BaseAd) and not isinstance(v, ClassAd):
        out = ClassAd()
        out.update(v)
        return out
    return v


def _to_htcd(value: Any) -> Any:
    """A Python value (or ExprTree) as htcd's ClassAd stores it."""
    if isinstance(value, ExprTree):
        return value._expr
    if value is Value.Undefined or value is None:
        return UNDEFINED
    if value is Value.Error:
        return ERROR
    if isinstance(value, enum.IntEnum) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, dict) and not isinstance(value, _BaseAd):
        return ClassAd(value)
    if isinstance(value, (list, tuple)):
        return [_to_htcd(x) for x in value]
    return value


class ExprTree:
    """A ClassAd expression (classad2's ``ExprTree``): ``str()`` gives its text, ``eval()`` its value."""

    __slots__ = ("_expr",)

    def __init__(self, expr: str | ExprTree | Expr | None = None) -> None:
        if expr is None:
            expr = "undefined"
        if isinstance(expr, ExprTree):
            self._expr: Expr = expr._expr
        elif isinstance(expr, Expr):
            self._expr = expr
        else:
            try:
                self._expr = parse_expr(str(expr))
            except ClassAdSyntaxError as exc:
                raise ClassAdException(f"failed to parse expression {expr!r}: {exc}") from None

    def eval(self, scope: ClassAd | None = None, target: ClassAd | None = None) -> Any:
        return _from_htcd(self._expr.eval(scope, target))

    def simplify(self, scope: ClassAd | None = None, target: ClassAd | None = None) -> ExprTree:
        """The value as a literal expression (htcd does not partially evaluate: see docs/api.md)."""
        return ExprTree(Expr.literal(_to_htcd(self.eval(scope, target))))

    def __str__(self) -> str:
        return str(self._expr)

    def __repr__(self) -> str:
        return str(self._expr)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExprTree) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))

    def __bool__(self) -> bool:
        v = self.eval()
        if isinstance(v, bool):
            return v
        raise ClassAdException(f"the expression {self} does not evaluate to a boolean")


def _python(expr: Expr, ad: _BaseAd) -> Any:
    """classad2's rule: a literal (a list or nested ad of literals included) as its value, any
    other expression as an ExprTree."""
    from htcd.classad.nodes import AdExpr, ListExpr

    if expr.is_literal():
        return _from_htcd(expr.const_value())
    if isinstance(expr, ListExpr):
        return [_python(x, ad) for x in expr.items]
    if isinstance(expr, AdExpr):
        return _from_htcd(expr.eval(ad))
    return ExprTree(expr)


class ClassAd(_BaseAd):
    """A ClassAd (classad2's ``ClassAd``): a case-insensitive mapping of attribute names to
    Python values or ExprTrees; built from new-syntax text, a dict, or nothing.

    An ad from the schedd or collector keeps the wire form (name -> expression text) as it came
    and builds its attribute table only when something needs it (a query of 100,000 jobs makes
    100,000 ads): reading a plain number, string or boolean by its exact name needs none."""

    __slots__ = ("_wire",)
    _wire: Mapping[str, str]

    def __getattr__(self, name: str) -> Any:
        if name != "_attrs":
            raise AttributeError(name)
        wire = object.__getattribute__(self, "_wire")  # AttributeError when not from the wire
        built = _BaseAd.from_wire(wire)._attrs
        self._attrs = built
        del self._wire
        return built

    def __init__(self, input: str | Mapping[str, Any] | None = None) -> None:
        if isinstance(input, str):
            try:
                super().__init__(input)
            except ClassAdSyntaxError as exc:
                raise ClassAdException(f"failed to parse ClassAd: {exc}") from None
            return
        super().__init__(None)
        for k, v in (input or {}).items():
            self[k] = v

    def __getitem__(self, key: str) -> Any:  # classad2 gives values, not trees
        try:
            text = self._wire[key]
        except (AttributeError, KeyError):
            pass
        else:
            value = _plain(text)
            if value is not None:
                return value
        try:
            expr = super().__getitem__(key)
        except ClassAdSyntaxError as exc:
            raise ClassAdException(f"attribute {key}: {exc}") from None
        return _python(expr, self)

    def __setitem__(self, key: str, value: Any) -> None:
        super().__setitem__(key, _to_htcd(value))

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def values(self) -> Iterator[Any]:  # type: ignore[override]  # values, as classad2
        return (self[k] for k in list(self))

    def items(self) -> Iterator[tuple[str, Any]]:  # type: ignore[override]
        return ((k, self[k]) for k in list(self))

    def eval(self, attr: str, target: _BaseAd | None = None) -> Any:
        """The attribute's value with this ad as MY (KeyError when it is absent, as classad2)."""
        if attr not in self:
            raise KeyError(attr)
        return _from_htcd(super().eval(attr, target))

    def lookup(self, attr: str) -> ExprTree:  # type: ignore[override]  # an ExprTree, as classad2
        expr = super().lookup(attr)
        if expr is None:
            raise KeyError(attr)
        return ExprTree(expr)

    def matches(self, ad: _BaseAd) -> bool:
        from htcd.classad import matches

        return matches(self, ad)

    def symmetricMatch(self, ad: _BaseAd) -> bool:
        from htcd.classad import symmetric_match

        return symmetric_match(self, ad)

    def printOld(self) -> str:
        return self.to_old()

    formatOld = printOld

    def printJson(self) -> str:
        return json.dumps(self.to_json(), indent=4)

    formatJson = printJson

    def __repr__(self) -> str:
        return self.to_new()

    def __str__(self) -> str:
        """classad2's long form: one attribute a line, indented; nested lists and ads stay on
        their attribute's line."""
        lines = [f"        {name} = {self.expr_text(name)}" for name in self]
        return "\n    [\n" + "; \n".join(lines) + ("\n" if lines else "") + "    ]"


def from_wire(wire: Mapping[str, str]) -> ClassAd:
    """An ad from the wire form (name -> expression text), parsed lazily."""
    ad = ClassAd.__new__(ClassAd)
    ad._wire = wire
    ad._parent = None
    return ad


def _plain(text: str) -> int | str | bool | None:
    """The value of expression text that is a plain integer, string or boolean (None otherwise)."""
    n = len(text)
    if 0 < n < 19 and text.isdigit() and text.isascii() and (n == 1 or text[0] != "0"):
        return int(text)
    if n >= 2 and text[0] == '"' and text[-1] == '"' and "\\" not in text and text.count('"') == 2:
        return text[1:-1]
    low = text.lower()
    if low == "true":
        return True
    if low == "false":
        return False
    return None


def quote(input: str) -> str:
    """``input`` as a ClassAd string literal, quotes and escapes included."""
    return quote_string(input)


def unquote(input: str) -> str:
    """The string a ClassAd string literal stands for."""
    value = ExprTree(input).eval()
    if not isinstance(value, str):
        raise ClassAdException(f"{input!r} is not a ClassAd string literal")
    return value


def _wrap(ad: _BaseAd) -> ClassAd:
    out = ClassAd.__new__(ClassAd)
    out._attrs = ad._attrs
    out._parent = None
    return out


def parseAds(input: str, parser: ParserType = ParserType.Old) -> Iterator[ClassAd]:
    """Every ad of ``input``: old long format (ads separated by blank lines), new-syntax ``[...]``
    ads one after another, or a JSON list of objects."""
    from htcd.classad import parse_ad, parse_json_ad

    try:
        if parser == ParserType.Old:
            return iter([_wrap(a) for a in _parse_old_ads(input)])
        if parser == ParserType.JSON:
            data = json.loads(input)
            return iter([_wrap(parse_json_ad(d)) for d in (data if isinstance(data, list) else [data])])
        return iter([_wrap(parse_ad(t)) for t in _new_ad_texts(input)])
    except (ClassAdSyntaxError, ValueError) as exc:
        raise ClassAdException(f"failed to parse ClassAds: {exc}") from None


def _new_ad_texts(text: str) -> list[str]:
    """The top-level ``[...]`` texts of new-syntax input (brackets inside strings skipped)."""
    out, depth, start, quoted, escaped = [], 0, 0, False, False
    for i, ch in enumerate(text):
        if quoted:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                quoted = False
        elif ch == '"':
            quoted = True
        elif ch == "[":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth == 0:
                out.append(text[start:i + 1])
    return out


def parseNext(input: str, parser: ParserType = ParserType.Old) -> ClassAd:
    for ad in parseAds(input, parser):
        return ad
    raise StopIteration


def parseOne(input: str, parser: ParserType = ParserType.Old) -> ClassAd:
    """Every ad of ``input`` merged into one (later attributes win), as classad2."""
    out = ClassAd()
    for ad in parseAds(input, parser):
        out.update(ad)
    return out


def constraint_text(constraint: str | ExprTree | None) -> str | None:
    """A constraint's text for the daemons; None for none at all ("true" or empty).  Text
    that is no ClassAd expression is refused here, with the reason."""
    if constraint is None:
        return None
    text = str(constraint).strip()
    if not text or text.lower() == "true":
        return None
    try:
        parse_expr(text)
    except ClassAdSyntaxError as exc:
        raise HTCondorException(f"bad constraint {text!r}: {exc}") from None
    return text

"""ClassAds in HTCondor's XML form (what ``condor_q -xml``, ``condor_history -xml`` and
``condor_status -xml`` print), for scripts that parse that form.

HTCondor's manual does not describe the form; its elements are those HTCondor's tools print and
third-party readers parse: ``<c>`` an ad, ``<a n="Name">`` an attribute, ``<s>`` ``<i>`` ``<r>``
``<b v="t|f"/>`` ``<un/>`` ``<er/>`` ``<at>`` ``<rt>`` literals, ``<l>`` a list, ``<e>`` any
other expression as its ClassAd text.  As in HTCondor, the text of a string is the string as a
ClassAd literal prints it without its quotes (C escapes such as ``\\n``, bytes outside printable
ASCII as octal), so that no character XML 1.0 forbids reaches the document; ``&``, ``<`` and ``>``
become entities there and in expressions, and the attribute name is escaped for its quotes too.
"""

from __future__ import annotations

from collections.abc import Iterable

from .ad import ClassAd
from .expr import AdExpr, ClassAdSyntaxError, Expr, ListExpr, Literal
from .nodes import RelTimeLiteral
from .values import ERROR, UNDEFINED, AbsTime, RelTime, quote_string

HEADER = '<?xml version="1.0"?>\n<!DOCTYPE classads SYSTEM "classads.dtd">\n<classads>\n'
FOOTER = "</classads>\n"
INDENT = 4


def escape_text(text: str) -> str:
    """Element text: the three characters XML gives a meaning to there."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def escape_attr(text: str) -> str:
    """An XML attribute value in double quotes (the ``n`` of ``<a>``)."""
    return escape_text(text).replace('"', "&quot;")


def string_text(s: str) -> str:
    """A string's text inside ``<s>``: ClassAd escapes without the quotes, which stay bare (a
    delimiter no ClassAd string holds keeps ``"`` and ``'`` unescaped, as HTCondor prints them)."""
    return escape_text(quote_string(s, "\0")[1:-1])


def real_text(x: float) -> str:
    """Reals as ``%.15E``; zero, NaN and the infinities spelled out as HTCondor's XML has them
    (both zeroes print ``0.0`` there: its test for zero comes first)."""
    if x == 0.0:
        return "0.0"
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "INF" if x > 0 else "-INF"
    return f"{x:.15E}"


def value_xml(v: object, indent: int = 0) -> str:
    """One evaluated value (what a literal holds, or a list's or ad's member values)."""
    t = type(v)
    if t is bool:
        return '<b v="t"/>' if v else '<b v="f"/>'
    if t is int:
        return f"<i>{v}</i>"
    if t is float:
        assert isinstance(v, float)
        return f"<r>{real_text(v)}</r>"
    if t is str:
        assert isinstance(v, str)
        return f"<s>{string_text(v)}</s>"
    if v is UNDEFINED:
        return "<un/>"
    if v is ERROR:
        return "<er/>"
    if t is AbsTime:
        assert isinstance(v, AbsTime)
        return f"<at>{escape_text(v.text())}</at>"
    if t is RelTime:
        assert isinstance(v, RelTime)
        return f"<rt>{escape_text(v.text(fraction=True))}</rt>"
    if t is list:
        assert isinstance(v, list)
        return "<l>" + "".join(value_xml(x, indent) for x in v) + "</l>"
    if isinstance(v, ClassAd):
        return ad_xml(v, indent)
    raise TypeError(f"not a ClassAd value: {v!r}")


def expr_xml(x: Expr, indent: int = 0) -> str:
    """One attribute's expression: literals, lists and nested ads by their elements, anything
    else as ``<e>`` with its ClassAd text."""
    if type(x) is RelTimeLiteral:  # HTCondor's parser makes relTime("...") a real: so is its XML
        return f"<r>{real_text(float(x.value))}</r>"
    if isinstance(x, Literal):
        return value_xml(x.value, indent)
    if isinstance(x, ListExpr):
        return "<l>" + "".join(expr_xml(i, indent) for i in x.items) + "</l>"
    if isinstance(x, AdExpr):
        assert isinstance(x.ad, ClassAd)
        return ad_xml(x.ad, indent)
    return f"<e>{escape_text(str(x))}</e>"


def ad_xml(ad: ClassAd, indent: int = 0, attrs: Iterable[str] | None = None) -> str:
    """One ad as ``<c>``, an attribute a line indented as HTCondor's tools print it (``attrs``: only
    these, in this order).  A text that no longer parses (a malformed wire value) is ``<er/>``: the
    value it evaluates to."""
    pad = " " * (indent + INDENT)
    lines = ["<c>\n"]
    for name in ad if attrs is None else attrs:
        try:
            body = expr_xml(ad[name], indent + INDENT)
        except KeyError:
            continue
        except ClassAdSyntaxError:
            body = "<er/>"
        lines.append(f'{pad}<a n="{escape_attr(name)}">{body}</a>\n')
    lines.append(" " * indent + "</c>")
    return "".join(lines)


def document(ads: Iterable[ClassAd]) -> str:
    """A whole document: header, each ad on its own lines, footer (as condor_q -xml prints it)."""
    return HEADER + "".join(ad_xml(a) + "\n" for a in ads) + FOOTER

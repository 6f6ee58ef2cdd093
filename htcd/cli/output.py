"""Output shared by the tools: ``-l`` (long), ``-af`` (autoformat), ``-json``, ``-xml``, column tables,
HTCondor's time formats and natural sort order."""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from htcd.classad import ClassAd, parse_expr, unparse
from htcd.classad import xml as classad_xml
from htcd.classad.expr import AttrRef


def long_form(ads: Iterable[ClassAd], sort: bool = False, attrs: Sequence[str] | None = None) -> str:
    """Each ad in the old long format, then a blank line.  ``sort`` orders the attributes by name
    (case-insensitively, as condor_status -l does); ``attrs`` keeps only those (``-attributes``)."""
    if not sort and attrs is None:
        return "".join(ad.to_old() + "\n\n" for ad in ads)
    wanted = {a.lower() for a in attrs} if attrs is not None else None
    out = []
    for ad in ads:
        names = [n for n in ad if wanted is None or n.lower() in wanted]
        if sort:
            names.sort(key=str.lower)
        sub = ClassAd()
        for n in names:
            sub[n] = ad[n]
        out.append(sub.to_old() + "\n")
    return "".join(out)


def json_form(ads: Iterable[ClassAd]) -> str:
    return json.dumps([ad.to_json() for ad in ads], indent=2)


def xml_form(ads: Iterable[ClassAd], sort: bool = False, attrs: Sequence[str] | None = None,
             blank: bool = False) -> str:
    """One XML document of the ads, as condor_q and condor_status print it (header and footer even
    when there is no ad); ``sort`` and ``attrs`` as for :func:`long_form`; ``blank``: a blank line
    after each ad (condor_status prints one, condor_q none)."""
    end = "\n\n" if blank else "\n"
    return classad_xml.HEADER + "".join(classad_xml.ad_xml(ad, attrs=_names(ad, sort, attrs)) + end
                                        for ad in ads) + classad_xml.FOOTER


def _names(ad: ClassAd, sort: bool, attrs: Sequence[str] | None) -> list[str] | None:
    if not sort and attrs is None:
        return None
    wanted = {a.lower() for a in attrs} if attrs is not None else None
    names = [n for n in ad if wanted is None or n.lower() in wanted]
    if sort:
        names.sort(key=str.lower)
    return names


def value_text(ad: ClassAd, attr: str) -> str:
    """An attribute's value as ``-af`` prints it: strings bare, undefined as 'undefined'."""
    v = ad.eval_expr(attr)
    if isinstance(v, str):
        return v
    return unparse(v)


def literal_text(text: str) -> str | None:
    """The ``-af`` text of a wire expression that is a plain string, a decimal integer or a boolean,
    without parsing it; None for anything else (which must be evaluated)."""
    n = len(text)
    if n >= 2 and text[0] == '"' and text[-1] == '"' and "\\" not in text and text.count('"') == 2:
        return text[1:-1]
    if n < 19 and text.isascii() and text.isdigit() and (n == 1 or text[0] != "0"):
        return text
    if text == "true" or text == "false":
        return text
    return None


def plain_value(ad: ClassAd, name: str, default: Any = None) -> Any:
    """An attribute's value without parsing plain texts (see ``ClassAd.plain_value``)."""
    return ad.plain_value(name, default)


def _show(v: object) -> str:
    return v if isinstance(v, str) else unparse(v)


def value_getter(attr: str, quoted: bool = False) -> Callable[[ClassAd], str]:
    """A function giving ``attr``'s ``-af`` text for an ad (``quoted``: as a ClassAd value, strings
    in quotes, ``-af:V``).  The argument is parsed once; a plain attribute name reads literal values
    without parsing them (the fast path for big listings)."""
    expr = parse_expr(attr)
    if quoted:
        return lambda ad: unparse(expr.eval(ad))
    if type(expr) is AttrRef:
        name = expr.name

        def attribute(ad: ClassAd) -> str:
            try:
                text = ad.expr_text(name)
            except KeyError:
                return "undefined"
            lit = literal_text(text)
            return lit if lit is not None else _show(ad.eval(name))

        return attribute
    return lambda ad: _show(expr.eval(ad))


def autoformat(ads: Iterable[ClassAd], attrs: list[str], opts: str = "") -> str:
    """``-af`` and ``-af:OPTS`` as HTCondor's tools take them: ``j`` job id first, ``l`` label each
    value ``Attr = value``, ``n`` newline after each value, ``r`` raw expressions (unevaluated),
    ``V`` values as ClassAd literals (strings quoted), ``t`` tab between values, ``,`` comma between
    values, ``h`` a header line of attribute names."""
    sep = "\n" if "n" in opts else "\t" if "t" in opts else "," if "," in opts else " "
    raw, label, jobid = "r" in opts, "l" in opts, "j" in opts
    end = "\n\n" if "n" in opts else "\n"
    names = (["ID"] if jobid else []) + list(attrs)
    out = [sep.join(names) + "\n"] if "h" in opts else []
    getters = [value_getter(a, quoted="V" in opts) for a in attrs]
    if len(attrs) == 1 and not (raw or label or jobid):  # the common big case: one value per line
        get = getters[0]
        out.extend(get(ad) + end for ad in ads)
        return "".join(out)
    for ad in ads:
        row = []
        if jobid:
            row.append(f"ID = {_job_id(ad)}" if label else _job_id(ad))
        for a, get in zip(attrs, getters, strict=True):
            text = ad.expr_text(a) if raw and a in ad else get(ad)
            row.append(f"{a} = {text}" if label else text)
        out.append(sep.join(row) + end)
    return "".join(out)


def _job_id(ad: ClassAd) -> str:
    return f"{ad.get_value('ClusterId', '?')}.{ad.get_value('ProcId', '?')}"


_CONV = re.compile(r"%(?P<spec>[-+ #0]*\d*(?:\.\d+)?)(?P<kind>[disfgeExXocvV%])")
_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", "r": "\r", '"': '"'}


def format_one(ad: ClassAd, fmt: str, attr: str) -> str:
    """One ``-format FMT ATTR`` item: a printf-style FMT with one conversion for the value
    (``%d %i %f %g %e %x %o %c`` numbers, ``%s``/``%v`` the value as ``-af`` prints it, ``%V`` as
    an expression); backslash escapes ``\\n \\t`` work as in HTCondor.  An undefined value
    prints as ``undefined`` for ``%s``/``%v``/``%V`` and leaves a numeric item out, as HTCondor does."""
    fmt = re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), "\\" + m.group(1)), fmt)
    value = ad.eval_expr(attr)

    def conv(m: re.Match[str]) -> str:
        spec, kind = m.group("spec"), m.group("kind")
        if kind == "%":
            return "%"
        if kind in "sv":
            return ("%" + spec + "s") % (value if isinstance(value, str) else unparse(value))
        if kind == "V":
            return ("%" + spec + "s") % unparse(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _Skip
        if kind in "dixXoc":
            return ("%" + spec + kind) % int(value)
        return ("%" + spec + kind) % float(value)

    try:
        return _CONV.sub(conv, fmt)
    except _Skip:
        return ""


class _Skip(Exception):
    """A numeric conversion of a value that is not a number: the item prints nothing."""


def formatted(ads: Iterable[ClassAd], pairs: list[list[str]]) -> str:
    """``-format FMT ATTR`` (repeatable): each ad prints its items one after another, no newline
    unless a FMT has one, as in HTCondor."""
    return "".join("".join(format_one(ad, f, a) for f, a in pairs) for ad in ads)


def add_output_arguments(p: argparse.ArgumentParser, what: str) -> None:
    """The output flags every query tool takes: ``-l``, ``-af`` (and ``-af:OPTS``), ``-format``, ``-json``,
    ``-xml``."""
    p.add_argument("-l", "-long", dest="long", action="store_true", help=f"whole {what}")
    p.add_argument("-af", "-autoformat", dest="af", nargs="+", metavar="ATTR", help="print these attributes")
    p.add_argument("-af-options", dest="af_options", default="", help=argparse.SUPPRESS)
    p.add_argument("-format", dest="format", nargs=2, action="append", metavar=("FMT", "ATTR"),
                   help="print ATTR with the printf-style FMT (repeatable)")
    forms = p.add_mutually_exclusive_group()  # HTCondor: "Cannot print as both XML and JSON"
    forms.add_argument("-json", action="store_true", help=f"{what} as JSON")
    forms.add_argument("-xml", action="store_true", help=f"{what} as XML (HTCondor's ClassAd XML form)")


def split_af_option(argv: list[str]) -> list[str]:
    """``-af:jlh ATTR...`` is one word on the command line; argparse wants ``-af`` plus the
    options apart, so the word becomes ``-af`` and ``-af-options jlh``."""
    out: list[str] = []
    for a in argv:
        m = re.fullmatch(r"-(af|autoformat):([a-zA-Z,]*)", a)
        if m:
            out += ["-af-options", m.group(2) or "-", "-af"]
        else:
            out.append(a)
    return out


def duration(seconds: float) -> str:
    """HTCondor's ``D+HH:MM:SS``."""
    s = max(0, int(seconds))
    return f"{s // 86400}+{s % 86400 // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


def short_date(ts: float) -> str:
    return time.strftime("%m/%d %H:%M", time.localtime(ts))


_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple[Any, ...]:
    """Sort key comparing runs of digits as numbers (``slot2`` before ``slot10``), as HTCondor's
    tools order names."""
    parts: list[Any] = _DIGITS.split(text)
    for i in range(1, len(parts), 2):
        parts[i] = int(parts[i])
    return tuple(parts)


@dataclass(frozen=True)
class Column:
    """One column of a table: ``width`` is the least width (the column grows to its widest cell);
    headings are left-aligned, cells right-aligned when ``right``; ``gap`` is False for a column
    printed with no space before it (its heading carries its own spacing)."""

    head: str
    width: int
    right: bool = False
    gap: bool = True


class Left(str):
    """A cell printed left-aligned even in a right-aligned column (HTCondor prints a column's
    stand-in text for an undefined value, such as ``*``, that way)."""

    __slots__ = ()


def render_table(columns: Sequence[Column], rows: Sequence[Sequence[str]]) -> list[str]:
    """The heading line and one line per row, columns as wide as their widest cell; trailing
    blanks are trimmed."""
    widths = [max(c.width, len(c.head)) for c in columns]
    for row in rows:
        for i, cell in enumerate(row):
            if len(cell) > widths[i]:
                widths[i] = len(cell)

    def line(cells: Sequence[str], heading: bool) -> str:
        parts = []
        for i, (c, cell) in enumerate(zip(columns, cells, strict=True)):
            if i and c.gap:
                parts.append(" ")
            w = widths[i]
            right = c.right and not heading and type(cell) is not Left
            parts.append(cell.rjust(w) if right else cell.ljust(w))
        return "".join(parts).rstrip()

    return [line([c.head for c in columns], True), *(line(r, False) for r in rows)]

"""Output shared by the tools: ``-l`` (long), ``-af`` (autoformat), ``-json``, HTCondor's time formats."""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Iterable

from htcd.classad import ClassAd, unparse


def long_form(ads: Iterable[ClassAd]) -> str:
    return "".join(ad.to_old() + "\n\n" for ad in ads)


def json_form(ads: Iterable[ClassAd]) -> str:
    return json.dumps([ad.to_json() for ad in ads], indent=2)


def value_text(ad: ClassAd, attr: str) -> str:
    """An attribute's value as ``-af`` prints it: strings bare, undefined as 'undefined'."""
    v = ad.eval_expr(attr)
    if isinstance(v, str):
        return v
    return unparse(v)


def autoformat(ads: Iterable[ClassAd], attrs: list[str], opts: str = "") -> str:
    """``-af`` and ``-af:OPTS`` as HTCondor's tools take them: ``j`` job id first, ``l`` label each
    value ``Attr = value``, ``n`` newline after each value, ``r`` raw expressions (unevaluated),
    ``t`` tab between values, ``,`` comma between values, ``h`` a header line of attribute names."""
    sep = "\n" if "n" in opts else "\t" if "t" in opts else "," if "," in opts else " "
    raw, label, jobid = "r" in opts, "l" in opts, "j" in opts
    names = (["ID"] if jobid else []) + list(attrs)
    out = [sep.join(names) + "\n"] if "h" in opts else []
    for ad in ads:
        row = []
        if jobid:
            row.append(f"ID = {_job_id(ad)}" if label else _job_id(ad))
        for a in attrs:
            text = ad.expr_text(a) if raw and a in ad else value_text(ad, a)
            row.append(f"{a} = {text}" if label else text)
        out.append(sep.join(row) + ("\n\n" if "n" in opts else "\n"))
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
    """The output flags every query tool takes: ``-l``, ``-af`` (and ``-af:OPTS``), ``-format``, ``-json``."""
    p.add_argument("-l", "-long", dest="long", action="store_true", help=f"whole {what}")
    p.add_argument("-af", "-autoformat", dest="af", nargs="+", metavar="ATTR", help="print these attributes")
    p.add_argument("-af-options", dest="af_options", default="", help=argparse.SUPPRESS)
    p.add_argument("-format", dest="format", nargs=2, action="append", metavar=("FMT", "ATTR"),
                   help="print ATTR with the printf-style FMT (repeatable)")
    p.add_argument("-json", action="store_true", help=f"{what} as JSON")


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

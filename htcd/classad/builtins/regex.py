"""Regular expressions, guarded against runaway backtracking: regexp(), regexps(), replace(),
replaceAll(), regexpMember(), stringList_regexpMember()."""

from __future__ import annotations

import re
from typing import Any

from ..registry import STRICT, strict
from ..values import ERROR, UNDEFINED, Value
from .convert import string_args
from .stringlists import split_list

_REFLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}
_RECACHE: dict[tuple[str, int], re.Pattern[str] | None] = {}


REGEX_MAX_PATTERN = 4096  # characters
REGEX_STEP_BUDGET = 1e9  # rough backtracking steps allowed: n ** (unbounded repeats) <= this
_SUBJECT_CAP: dict[int, int] = {}  # id(compiled pattern) -> longest subject it may scan


def _repeat_shape(parsed: Any) -> tuple[int, bool]:
    """(number of unbounded repeats, whether one is nested inside another) of a parsed regex."""
    import re._parser as sre

    count = 0
    nested = False

    def walk(items: Any, in_rep: bool, in_unb: bool) -> None:
        # in_rep: inside a repeat of more than one; in_unb: inside an unbounded repeat
        nonlocal count, nested
        for op, av in items:
            if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", None)):
                _lo, hi, sub = av
                unbounded = hi == sre.MAXREPEAT or hi > 1000
                if unbounded:
                    count += 1
                if hi > 1 and (in_unb or (unbounded and in_rep)):
                    nested = True
                walk(sub, in_rep or hi > 1, in_unb or unbounded)
            elif op is sre.BRANCH:
                for alt in av[1]:
                    walk(alt, in_rep, in_unb)
            elif op is sre.SUBPATTERN:
                walk(av[-1], in_rep, in_unb)
            elif op in (sre.ASSERT, sre.ASSERT_NOT):
                walk(av[1], in_rep, in_unb)
            elif op is getattr(sre, "ATOMIC_GROUP", None):
                walk(av, in_rep, in_unb)

    walk(parsed, False, False)
    return count, nested


def _subject_cap(pat: str, flags: int) -> int | None:
    """The longest subject this pattern may scan without risking a runaway backtracking search;
    None when the pattern nests unbounded repeats (``(a+)+``: exponential, always refused)."""
    try:
        import re._parser as sre

        count, nested = _repeat_shape(sre.parse(pat, flags))
    except Exception:
        return REGEX_MAX_INPUT
    if nested:
        return None
    if count <= 1:
        return REGEX_MAX_INPUT
    return max(64, int(REGEX_STEP_BUDGET ** (1.0 / count)))


def compile_regex(pat: str, opts: str = "") -> re.Pattern[str] | None:
    """Compile (and cache) a regex with HTCondor's option letters; None when invalid or refused
    as unsafe (see docs/classad.md, Regular expressions)."""
    flags = 0
    for ch in opts.lower():
        flags |= _REFLAGS.get(ch, 0)
    key = (pat, flags)
    try:
        return _RECACHE[key]
    except KeyError:
        pass
    try:
        r = re.compile(pat, flags) if len(pat) <= REGEX_MAX_PATTERN else None
    except (re.error, OverflowError, RecursionError):
        r = None
    if r is not None:
        cap = _subject_cap(pat, flags)
        if cap is None:
            r = None
        else:
            _SUBJECT_CAP[id(r)] = cap
    if len(_RECACHE) > 4096:
        _RECACHE.clear()
        _SUBJECT_CAP.clear()
    _RECACHE[key] = r
    return r


@strict("regexp")
def _regexp(a: list[Value]) -> object:
    bad = string_args(a, 2, UNDEFINED)
    if bad is not None:
        return bad
    r = compile_regex(a[0], a[2] if len(a) == 3 else "")
    if r is None:
        return ERROR
    if not subject_ok(r, a[1]):
        return ERROR
    return r.search(a[1]) is not None


@strict("stringList_regexpMember")
def _sl_regexp_member(a: list[Value]) -> object:
    if len(a) not in (2, 3, 4):
        return ERROR
    if any(type(v) is not str for v in a):
        return ERROR
    r = compile_regex(a[0], a[3] if len(a) == 4 else "")
    if r is None:
        return ERROR
    items = split_list(a[1], a[2] if len(a) >= 3 else " ,")
    if not items:
        return UNDEFINED
    if not all(subject_ok(r, x) for x in items):
        return ERROR
    return any(r.search(x) is not None for x in items)


# ---------------------------------------------------------------- regex substitution

REGEX_MAX_INPUT = 1 << 20  # characters of subject text a regex function will look at
_GROUP_REF = re.compile(r"\\(\d)")


class RegexRefused(Exception):
    """The subject is too long for this pattern to be searched safely."""


def subject_ok(r: re.Pattern[str], s: str) -> bool:
    return len(s) <= _SUBJECT_CAP.get(id(r), REGEX_MAX_INPUT)


def _expand(m: re.Match[str], subst: str) -> str | None:
    """HTCondor's substitution text: ``\\0``..``\\9`` are groups; None for a missing group."""
    out: list[str] = []
    pos = 0
    for g in _GROUP_REF.finditer(subst):
        out.append(subst[pos:g.start()])
        k = int(g.group(1))
        if k > (m.re.groups or 0):
            return None
        out.append(m.group(k) or "")
        pos = g.end()
    out.append(subst[pos:])
    return "".join(out)


def _substitute(a: list[Value], mode: str) -> object:
    """regexps / replace / replaceall.  ``mode``: "only" gives just the substitution(s), "full"
    gives the whole subject with the substitution(s) in place."""
    bad = string_args(a, 3, UNDEFINED)
    if bad is not None:
        return bad
    pat, subj, subst = a[0], a[1], a[2]
    opts = a[3].lower() if len(a) == 4 else ""
    every = "g" in opts or mode == "all"
    full = "f" in opts or mode in ("full", "all")
    r = compile_regex(pat, opts)
    if r is None:
        return ERROR
    if not subject_ok(r, subj):
        return ERROR
    out: list[str] = []
    pos = 0
    found = False
    for m in r.finditer(subj):
        if every and m.end() == m.start():
            return ERROR
        rep = _expand(m, subst)
        if rep is None:
            return ERROR
        found = True
        if full:
            out.append(subj[pos:m.start()])
        out.append(rep)
        pos = m.end()
        if not every:
            break
    if not found:
        return subj if full else ""
    if full:
        out.append(subj[pos:])
    return "".join(out)


STRICT["regexps"] = lambda a: _substitute(a, "only")
STRICT["replace"] = lambda a: _substitute(a, "full")
STRICT["replaceall"] = lambda a: _substitute(a, "all")


@strict("regexpMember")
def _regexp_member(a: list[Value]) -> object:
    """Any string of a list matching a pattern; UNDEFINED items make a miss UNDEFINED, and a
    non-string item before a match makes it ERROR.  A pattern that does not compile matches nothing."""
    if len(a) not in (2, 3):
        return ERROR
    if any(v is ERROR for v in a):
        return ERROR
    if any(v is UNDEFINED for v in a):
        return UNDEFINED
    pat, lst = a[0], a[1]
    opts = a[2] if len(a) == 3 else ""
    if type(pat) is not str or type(opts) is not str or type(lst) is not list:
        return ERROR
    r = compile_regex(pat, opts)
    saw_undefined = False
    for v in lst:
        if v is UNDEFINED:
            saw_undefined = True
        elif type(v) is not str:
            return ERROR
        elif r is not None:
            if not subject_ok(r, v):
                return ERROR
            if r.search(v) is not None:
                return True
    return UNDEFINED if saw_undefined else False

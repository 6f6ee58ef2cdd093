"""Built-in ClassAd functions.

Each built-in is either strict (gets evaluated argument values) or lazy (gets the argument
closures, for ifThenElse-style short circuit).  Names are case-insensitive; an unknown name
compiles to a closure that yields ERROR, as HTCondor does at evaluation time.
"""

from __future__ import annotations

import math
import re
import time as _time
from collections.abc import Callable
from typing import Any

from . import ops
from .values import ERROR, INT_MIN, UNDEFINED, format_real, unparse_value

Strict = Callable[[list[object]], object]
_STRICT: dict[str, Strict] = {}
_LAZY: dict[str, Callable[[list[Any], Any, Any], object]] = {}


def _strict(*names: str) -> Callable[[Strict], Strict]:
    def deco(fn: Strict) -> Strict:
        for n in names:
            _STRICT[n.lower()] = fn
        return fn
    return deco


def compile_call(name: str, fns: list[Any]) -> Any:
    """The closure for a call of ``name`` with compiled arguments ``fns``."""
    key = name.lower()
    lazy = _LAZY.get(key)
    if lazy is not None:
        return lambda s, c: lazy(fns, s, c)
    impl = _STRICT.get(key)
    if impl is None:
        return lambda s, c: ERROR
    if len(fns) == 1:
        f0 = fns[0]
        return lambda s, c: impl([f0(s, c)])
    return lambda s, c: impl([f(s, c) for f in fns])


def _is_ad(v: object) -> bool:
    return hasattr(v, "_attrs")


# ---------------------------------------------------------------- type predicates

def _pred(test: Callable[[object], bool]) -> Strict:
    def fn(a: list[object]) -> object:
        if len(a) != 1:
            return ERROR
        return test(a[0])
    return fn


for _n, _t in {
    "isUndefined": lambda v: v is UNDEFINED,
    "isError": lambda v: v is ERROR,
    "isString": lambda v: type(v) is str,
    "isInteger": lambda v: type(v) is int,
    "isReal": lambda v: type(v) is float,
    "isBoolean": lambda v: type(v) is bool,
    "isList": lambda v: type(v) is list,
    "isClassAd": _is_ad,
}.items():
    _STRICT[_n.lower()] = _pred(_t)


# ---------------------------------------------------------------- conversions

_STRTOD = re.compile(
    r"\s*([+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?"
    r"|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan))",
    re.IGNORECASE,
)


def strtod(s: str) -> float | None:
    """C strtod on a prefix of ``s``; None when nothing converts."""
    m = _STRTOD.match(s)
    if m is None:
        return None
    t = m.group(1)
    body = t.lstrip("+-")
    if body[:2].lower() == "0x":
        sign = -1.0 if t.startswith("-") else 1.0
        h = body[2:]
        if "p" not in h.lower():
            h += "p0"
        return sign * float.fromhex("0x" + h)
    return float(t)


def real_to_int(x: float) -> int:
    """C's double->int64 cast as HTCondor sees it: out of range or NaN gives INT64_MIN."""
    if x != x or not -9.223372036854775808e18 <= x < 9.223372036854775808e18:
        return INT_MIN
    return int(x)


def to_string(v: object) -> object:
    """string(): values to their text; strings unchanged."""
    t = type(v)
    if t is str:
        return v
    if v is UNDEFINED or v is ERROR:
        return v
    if t is float:
        return format_real(v)  # type: ignore[arg-type]
    return unparse_value(v)


@_strict("int")
def _int(a: list[object]) -> object:
    if len(a) != 1:
        return ERROR
    v = a[0]
    t = type(v)
    if t is int:
        return v
    if t is bool:
        return int(v)  # type: ignore[arg-type]
    if t is float:
        return real_to_int(v)  # type: ignore[arg-type]
    if t is str:
        x = strtod(v)  # type: ignore[arg-type]
        return ERROR if x is None else real_to_int(x)
    if v is UNDEFINED:
        return UNDEFINED
    return ERROR


@_strict("real")
def _real(a: list[object]) -> object:
    if len(a) != 1:
        return ERROR
    v = a[0]
    t = type(v)
    if t is float:
        return v
    if t is int or t is bool:
        return float(v)  # type: ignore[arg-type]
    if t is str:
        x = strtod(v)  # type: ignore[arg-type]
        return ERROR if x is None else x
    if v is UNDEFINED:
        return UNDEFINED
    return ERROR


@_strict("string")
def _string(a: list[object]) -> object:
    if len(a) != 1:
        return ERROR
    return to_string(a[0])


@_strict("bool")
def _bool(a: list[object]) -> object:
    if len(a) != 1:
        return ERROR
    v = a[0]
    t = type(v)
    if t is bool:
        return v
    if t is int or t is float:
        return v != 0
    if t is str:
        low = v.lower()  # type: ignore[attr-defined]
        if low == "true":
            return True
        if low == "false":
            return False
        return UNDEFINED
    if v is UNDEFINED:
        return UNDEFINED
    return ERROR


def _rounding(op: Callable[[float], float]) -> Strict:
    def fn(a: list[object]) -> object:
        if len(a) != 1:
            return ERROR
        v = a[0]
        t = type(v)
        if t is int:
            return v
        if t is bool:
            return int(v)  # type: ignore[arg-type]
        if t is str:
            x = strtod(v)  # type: ignore[arg-type]
            if x is None:
                return ERROR
            v = x
        elif t is not float:
            return ERROR
        r = op(v)  # type: ignore[arg-type]
        return real_to_int(r)
    return fn


_STRICT["floor"] = _rounding(math.floor)
_STRICT["ceiling"] = _rounding(math.ceil)
_STRICT["round"] = _rounding(lambda x: x if x != x or x in (math.inf, -math.inf) else float(round(x)))


@_strict("pow")
def _pow(a: list[object]) -> object:
    if len(a) != 2:
        return ERROR
    b, e = a
    if type(b) is bool:
        b = int(b)
    if type(e) is bool:
        e = int(e)
    tb, te = type(b), type(e)
    if tb not in (int, float) or te not in (int, float):
        return ERROR
    if tb is int and te is int and e >= 0:  # type: ignore[operator]
        r = b ** e  # type: ignore[operator]
        return r if -(1 << 63) <= r < (1 << 63) else INT_MIN
    try:
        return math.pow(float(b), float(e))  # type: ignore[arg-type]
    except OverflowError:
        return math.inf
    except ValueError:
        if b == 0:
            return math.inf
        return math.nan


def _minmax(pick: Callable[[float, float], bool]) -> Strict:
    def fn(a: list[object]) -> object:
        if len(a) != 1:
            return ERROR
        lst = a[0]
        if lst is UNDEFINED:
            return UNDEFINED
        if type(lst) is not list:
            return ERROR
        best: object = UNDEFINED
        for v in lst:
            t = type(v)
            if v is UNDEFINED:
                continue
            if t not in (int, float):
                return ERROR
            if best is UNDEFINED or pick(v, best):  # type: ignore[arg-type]
                best = v
        if best is not UNDEFINED and any(type(x) is float for x in lst):
            best = float(best)  # type: ignore[arg-type]
        return best
    return fn


_STRICT["min"] = _minmax(lambda x, y: x < y)
_STRICT["max"] = _minmax(lambda x, y: x > y)


# ---------------------------------------------------------------- strings

@_strict("strcat")
def _strcat(a: list[object]) -> object:
    parts = []
    for v in a:
        s = to_string(v)
        if s is ERROR or s is UNDEFINED:
            return s
        parts.append(s)
    return "".join(parts)  # type: ignore[arg-type]


@_strict("substr")
def _substr(a: list[object]) -> object:
    if len(a) not in (2, 3):
        return ERROR
    s = a[0]
    if any(v is ERROR for v in a):
        return ERROR
    if any(v is UNDEFINED for v in a):
        return UNDEFINED
    if type(s) is not str or any(type(v) is not int for v in a[1:]):
        return ERROR
    n = len(s)  # type: ignore[arg-type]
    off = a[1]
    if off < 0:  # type: ignore[operator]
        off = max(n + off, 0)  # type: ignore[operator]
    if off > n:  # type: ignore[operator]
        return ""
    if len(a) == 3:
        ln = a[2]
        end = off + ln if ln >= 0 else n + ln  # type: ignore[operator]
        end = min(end, n)
        if end <= off:  # type: ignore[operator]
            return ""
        return s[off:end]  # type: ignore[index]
    return s[off:]  # type: ignore[index]


@_strict("size")
def _size(a: list[object]) -> object:
    if len(a) != 1:
        return ERROR
    v = a[0]
    t = type(v)
    if t is str or t is list:
        return len(v)  # type: ignore[arg-type]
    if _is_ad(v):
        return len(v._attrs)  # type: ignore[attr-defined]
    if v is UNDEFINED:
        return UNDEFINED
    return ERROR


def _case(conv: Callable[[str], str]) -> Strict:
    def fn(a: list[object]) -> object:
        if len(a) != 1:
            return ERROR
        s = to_string(a[0])
        if type(s) is not str:
            return s
        return conv(s)  # type: ignore[arg-type]
    return fn


_STRICT["toupper"] = _case(lambda s: s.upper() if s.isascii() else "".join(
    ch.upper() if ch.isascii() else ch for ch in s))
_STRICT["tolower"] = _case(lambda s: ops.ascii_lower(s))


def _strcmp_impl(fold: bool) -> Strict:
    def fn(a: list[object]) -> object:
        if len(a) != 2:
            return ERROR
        x = to_string(a[0])
        y = to_string(a[1])
        for v in (x, y):
            if v is ERROR:
                return ERROR
        for v in (x, y):
            if v is UNDEFINED:
                return UNDEFINED
        if type(x) is not str or type(y) is not str:
            return ERROR
        if fold:
            x = ops.ascii_lower(x)  # type: ignore[arg-type]
            y = ops.ascii_lower(y)  # type: ignore[arg-type]
        bx = x.encode("utf-8", "surrogateescape")  # type: ignore[union-attr]
        by = y.encode("utf-8", "surrogateescape")  # type: ignore[union-attr]
        return (bx > by) - (bx < by)
    return fn


_STRICT["strcmp"] = _strcmp_impl(False)
_STRICT["stricmp"] = _strcmp_impl(True)


@_strict("member")
def _member(a: list[object]) -> object:
    if len(a) != 2:
        return ERROR
    x, lst = a
    if x is ERROR or lst is ERROR:
        return ERROR
    if x is UNDEFINED or lst is UNDEFINED:
        return UNDEFINED
    if type(lst) is not list or type(x) is list or _is_ad(x):
        return ERROR
    for v in lst:
        if ops.compare("==", x, v) is True:
            return True
    return False


_REFLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}
_RECACHE: dict[tuple[str, int], re.Pattern[str] | None] = {}


def compile_regex(pat: str, opts: str = "") -> re.Pattern[str] | None:
    """Compile (and cache) a regex with HTCondor's option letters; None when invalid."""
    flags = 0
    for ch in opts.lower():
        flags |= _REFLAGS.get(ch, 0)
    key = (pat, flags)
    r = _RECACHE.get(key, False)
    if r is False:
        try:
            r = re.compile(pat, flags)
        except (re.error, OverflowError, RecursionError):
            r = None
        if len(_RECACHE) > 4096:
            _RECACHE.clear()
        _RECACHE[key] = r
    return r  # type: ignore[return-value]


@_strict("regexp")
def _regexp(a: list[object]) -> object:
    if len(a) not in (2, 3):
        return ERROR
    if any(v is ERROR for v in a):
        return ERROR
    if any(v is UNDEFINED for v in a):
        return UNDEFINED
    if any(type(v) is not str for v in a):
        return ERROR
    r = compile_regex(a[0], a[2] if len(a) == 3 else "")  # type: ignore[arg-type]
    if r is None:
        return ERROR
    return r.search(a[1]) is not None  # type: ignore[arg-type]


def split_list(s: str, delims: str = " ,") -> list[str]:
    """HTCondor string-list splitting: any delimiter character separates; empty items dropped."""
    if delims == " ,":
        return [x for x in re.split(r"[ ,\t\r\n]+", s) if x]
    out: list[str] = []
    cur: list[str] = []
    for ch in s:
        if ch in delims:
            if cur:
                out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if cur:
        out.append("".join(cur).strip())
    return [x for x in out if x]


def _strlist_args(a: list[object], nmin: int, undef: object = ERROR) -> object:
    if len(a) not in (nmin, nmin + 1):
        return ERROR
    if any(v is ERROR for v in a):
        return ERROR
    if any(v is UNDEFINED for v in a):
        return undef
    if any(type(v) is not str for v in a):
        return ERROR
    return None


def split_tokens(s: str, delims: str = " ,") -> list[str]:
    """split(): items between delimiters; an empty item survives only between two non-space
    delimiters, and whitespace is trimmed only when it is itself a delimiter."""
    out: list[str] = []
    cur: list[str] = []
    prev_ws = True  # start of string behaves like a whitespace delimiter
    for ch in s:
        if ch in delims:
            if cur:
                out.append("".join(cur))
            elif not prev_ws and not ch.isspace():
                out.append("")
            cur = []
            prev_ws = ch.isspace() or (not out and not cur)
        else:
            cur.append(ch)
            prev_ws = False
    if cur:
        out.append("".join(cur))
    return out


def _sl_member(fold: bool) -> Strict:
    def fn(a: list[object]) -> object:
        bad = _strlist_args(a, 2, False)
        if bad is not None:
            return bad
        items = split_list(a[1], a[2] if len(a) == 3 else " ,")  # type: ignore[arg-type]
        x = a[0]
        if fold:
            lx = ops.ascii_lower(x)  # type: ignore[arg-type]
            return any(ops.ascii_lower(i) == lx for i in items)
        return x in items
    return fn


_STRICT["stringlistmember"] = _sl_member(False)
_STRICT["stringlistimember"] = _sl_member(True)


@_strict("stringListSize")
def _sl_size(a: list[object]) -> object:
    bad = _strlist_args(a, 1)
    if bad is not None:
        return bad
    return len(split_list(a[0], a[1] if len(a) == 2 else " ,"))  # type: ignore[arg-type]


@_strict("split")
def _split(a: list[object]) -> object:
    bad = _strlist_args(a, 1)
    if bad is not None:
        return bad
    return split_tokens(a[0], a[1] if len(a) == 2 else " ,")  # type: ignore[list-item, arg-type]


@_strict("join")
def _join(a: list[object]) -> object:
    if not a:
        return ERROR
    if len(a) == 1:
        sep: object = ""
        items = a[0]
    elif len(a) == 2 and type(a[1]) is list:
        sep, items = a
    else:
        sep, items = a[0], a[1:]
    if sep is ERROR or items is ERROR:
        return ERROR
    if sep is UNDEFINED or items is UNDEFINED:
        return UNDEFINED
    if type(items) is not list:
        return ERROR
    sep = to_string(sep)
    if type(sep) is not str:
        return ERROR
    parts = []
    for v in items:
        if v is UNDEFINED:
            continue
        s = to_string(v)
        if type(s) is not str:
            return ERROR
        parts.append(s)
    return sep.join(parts)  # type: ignore[arg-type]


@_strict("time")
def _now(a: list[object]) -> object:
    if a:
        return ERROR
    return int(_time.time())


# ---------------------------------------------------------------- lazy

def _if_then_else(fns: list[Any], s: Any, c: Any) -> object:
    if len(fns) != 3:
        return ERROR
    v = ops.to_bool3(fns[0](s, c))
    if v is True:
        return fns[1](s, c)
    if v is False:
        return fns[2](s, c)
    return v


_LAZY["ifthenelse"] = _if_then_else


def known_functions() -> list[str]:
    """Lower-case names of every built-in."""
    return sorted(set(_STRICT) | set(_LAZY))

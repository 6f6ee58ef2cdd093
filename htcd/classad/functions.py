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
from .values import ERROR, INT_MIN, UNDEFINED, AbsTime, RelTime, format_real, unparse_value

Strict = Callable[[list[object]], object]
_STRICT: dict[str, Strict] = {}
_LAZY: dict[str, Callable[[list[Any], Any, Any], object]] = {}


def _strict(*names: str) -> Callable[[Strict], Strict]:
    def deco(fn: Strict) -> Strict:
        for n in names:
            _STRICT[n.lower()] = fn
        return fn
    return deco


def compile_call(name: str, fns: list[Any], args: list[Any] | None = None) -> Any:
    """The closure for a call of ``name`` with compiled arguments ``fns`` (trees ``args``)."""
    key = name.lower()
    if key == "unparse":
        return _compile_unparse(args or [])
    if key == "unresolved":
        return _compile_unresolved(fns, args or [])
    if key == "evalineachcontext" or key == "countmatches":
        return _compile_in_contexts(key == "countmatches", fns, args or [])
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
    if t is AbsTime or t is RelTime:
        return v.text()  # type: ignore[union-attr]
    return unparse_value(v)


def _convert(a: list[object], cast: Callable[[Any], object], keep: type) -> object:
    """int()/real(): numbers, string prefixes (C strtod) and times through ``cast``."""
    if len(a) != 1:
        return ERROR
    v = a[0]
    t = type(v)
    if t is keep:
        return v
    if t is int or t is float or t is bool:
        return cast(v)
    if t is str:
        x = strtod(v)  # type: ignore[arg-type]
        return ERROR if x is None else cast(x)
    if t is AbsTime:
        return cast(v.epoch)  # type: ignore[union-attr]
    if t is RelTime:
        return cast(v.seconds)  # type: ignore[union-attr]
    return UNDEFINED if v is UNDEFINED else ERROR


_STRICT["int"] = lambda a: _convert(a, real_to_int, int)
_STRICT["real"] = lambda a: _convert(a, float, float)


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
        if b in (0, 1):
            return b if e else 1
        if b == -1:
            return -1 if e & 1 else 1  # type: ignore[operator]
        if e > 63:  # |b| >= 2: out of 64 bits; never build a huge integer
            return INT_MIN
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
    if any(v is UNDEFINED for v in a):  # before ERROR: substr(undefined, error) is UNDEFINED in HTCondor
        return UNDEFINED
    if any(v is ERROR for v in a):
        return ERROR
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


REGEX_MAX_PATTERN = 4096  # characters
REGEX_STEP_BUDGET = 1e9  # rough backtracking steps allowed: n ** (unbounded repeats) <= this
_SUBJECT_CAP: dict[int, int] = {}  # id(compiled pattern) -> longest subject it may scan


def _repeat_shape(parsed: Any) -> tuple[int, bool]:
    """(number of unbounded repeats, whether one is nested inside another) of a parsed regex."""
    import re._parser as sre  # type: ignore[import-not-found]

    count = 0
    nested = False

    def walk(items: Any, in_rep: bool, in_unb: bool) -> None:
        # in_rep: inside a repeat of more than one; in_unb: inside an unbounded repeat
        nonlocal count, nested
        for op, av in items:
            if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", None)):
                lo, hi, sub = av
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
        import re._parser as sre  # type: ignore[import-not-found]

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
    r = _RECACHE.get(key, False)
    if r is False:
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
    if not subject_ok(r, a[1]):  # type: ignore[arg-type]
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
    """As HTCondor's: a value that is neither a string nor UNDEFINED is an ERROR even beside an
    UNDEFINED one; UNDEFINED as the item or the list is simply not a member, unless both are."""
    def fn(a: list[object]) -> object:
        if len(a) not in (2, 3) or any(v is ERROR or (type(v) is not str and v is not UNDEFINED) for v in a):
            return ERROR
        if a[0] is UNDEFINED and a[1] is UNDEFINED:
            return UNDEFINED
        if a[0] is UNDEFINED or a[1] is UNDEFINED:
            return False
        delims = a[2] if len(a) == 3 and a[2] is not UNDEFINED else " ,"  # UNDEFINED: the default
        items = split_list(a[1], delims)  # type: ignore[arg-type]
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
        return ""
    if len(a) == 1:
        items = a[0]
        if items is UNDEFINED or items is ERROR:
            return items
        if type(items) is not list:
            return ""  # a lone separator joins nothing
        sep: object = ""
    else:
        sep = a[0]
        items = a[1] if len(a) == 2 and type(a[1]) is list else a[1:]
    if sep is ERROR:
        return ERROR
    if sep is UNDEFINED:
        sep = ""
    sep = to_string(sep)
    if type(sep) is not str:
        return ERROR
    if items and all(v is UNDEFINED for v in items):  # type: ignore[union-attr]
        return UNDEFINED  # nothing but undefined items
    out = ""
    for v in items:  # type: ignore[union-attr]
        if v is UNDEFINED:
            continue
        s = to_string(v)
        if type(s) is not str:
            return ERROR
        # HTCondor adds the separator only after a non-empty result: leading "" items vanish
        out = out + sep + s if out else s  # type: ignore[operator]
    return out


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
    return sorted(set(_STRICT) | set(_LAZY) | {"unparse", "unresolved", "evalineachcontext", "countmatches"})


# ---------------------------------------------------------------- lists of numbers

def _numeric(v: object) -> object:
    """A list element as a number for sum/avg (booleans count as 0/1); None when not numeric."""
    t = type(v)
    if t is int or t is float:
        return v
    if t is bool:
        return int(v)  # type: ignore[arg-type]
    return None


def _sum_items(lst: list[object]) -> tuple[object, int]:
    """(sum, count) of the defined elements, or (ERROR, 0)."""
    total: int | float = 0
    real = False
    n = 0
    for v in lst:
        if v is UNDEFINED:
            continue
        x = _numeric(v)
        if x is None:
            return ERROR, 0
        if type(x) is float:
            real = True
        total += x  # type: ignore[operator]
        n += 1
    if real:
        return float(total), n
    return ops.arith("+", total, 0) if total == total else total, n


@_strict("sum")
def _sum(a: list[object]) -> object:
    if len(a) != 1:
        return ERROR
    if a[0] is UNDEFINED:
        return UNDEFINED
    if type(a[0]) is not list:
        return ERROR
    return _sum_items(a[0])[0]  # type: ignore[arg-type]


@_strict("avg")
def _avg(a: list[object]) -> object:
    if len(a) != 1:
        return ERROR
    if a[0] is UNDEFINED:
        return UNDEFINED
    if type(a[0]) is not list:
        return ERROR
    total, n = _sum_items(a[0])  # type: ignore[arg-type]
    if total is ERROR:
        return ERROR
    if n == 0:
        return 0
    return float(total) / n  # type: ignore[arg-type]


def _quantize_one(x: int | float, q: int | float) -> object:
    if q == 0:
        return x
    if type(x) is int and type(q) is int:
        n = x + q - 1
        d = abs(n) // abs(q)
        if (n < 0) != (q < 0):
            d = -d
        return ops.arith("*", d, q)
    r = math.ceil(float(x) / float(q)) * float(q)
    return float(r)


@_strict("quantize")
def _quantize(a: list[object]) -> object:
    if len(a) != 2:
        return ERROR
    x, q = _numeric(a[0]) if type(a[0]) is not bool else None, a[1]
    if x is None:
        return ERROR
    if type(q) is list:
        nums = []
        for v in q:
            n = _numeric(v) if type(v) is not bool else None
            if n is None:
                return ERROR
            nums.append(n)
        if not nums:
            return x
        for n in nums:
            if n >= x:  # type: ignore[operator]
                return n
        return _quantize_one(x, nums[-1])  # type: ignore[arg-type]
    q = _numeric(q) if type(q) is not bool else None
    if q is None:
        return ERROR
    return _quantize_one(x, q)  # type: ignore[arg-type]


# ---------------------------------------------------------------- string lists

_SL_INT = re.compile(r"[+-]?\d+\Z")


def _sl_numbers(a: list[object]) -> object:
    """The items of a string list as numbers, or ERROR/UNDEFINED."""
    bad = _strlist_args(a, 1)
    if bad is not None:
        return bad
    out: list[int | float] = []
    for item in split_list(a[0], a[1] if len(a) == 2 else " ,"):  # type: ignore[arg-type]
        if _SL_INT.match(item):
            out.append(int(item))
            continue
        m = _STRTOD.match(item)
        x = strtod(item)
        if m is None or x is None or m.end() != len(item):
            return ERROR
        out.append(x)
    return out


@_strict("stringListSum")
def _sl_sum(a: list[object]) -> object:
    nums = _sl_numbers(a)
    if type(nums) is not list:
        return nums
    if not nums:
        return 0.0
    if any(type(x) is float for x in nums):
        return float(sum(nums))
    return ops.arith("+", sum(nums), 0)


@_strict("stringListAvg")
def _sl_avg(a: list[object]) -> object:
    nums = _sl_numbers(a)
    if type(nums) is not list:
        return nums
    if not nums:
        return 0.0
    if any(type(x) is float for x in nums):
        return float(sum(nums)) / len(nums)
    return ops.arith("/", sum(nums), len(nums))


def _sl_extreme(pick_max: bool) -> Strict:
    def fn(a: list[object]) -> object:
        nums = _sl_numbers(a)
        if type(nums) is not list:
            return nums
        if not nums:
            return UNDEFINED
        best = max(nums) if pick_max else min(nums)
        return float(best) if any(type(x) is float for x in nums) else best
    return fn


_STRICT["stringlistmax"] = _sl_extreme(True)
_STRICT["stringlistmin"] = _sl_extreme(False)


@_strict("stringListsIntersect")
def _sl_intersect(a: list[object]) -> object:
    bad = _strlist_args(a, 2, UNDEFINED)
    if bad is not None:
        return bad
    d = a[2] if len(a) == 3 else " ,"
    left = set(split_list(a[0], d))  # type: ignore[arg-type]
    return any(x in left for x in split_list(a[1], d))  # type: ignore[arg-type]


@_strict("stringList_regexpMember")
def _sl_regexp_member(a: list[object]) -> object:
    if len(a) not in (2, 3, 4):
        return ERROR
    if any(type(v) is not str for v in a):
        return ERROR
    r = compile_regex(a[0], a[3] if len(a) == 4 else "")  # type: ignore[arg-type]
    if r is None:
        return ERROR
    items = split_list(a[1], a[2] if len(a) >= 3 else " ,")  # type: ignore[arg-type]
    if not items:
        return UNDEFINED
    if not all(subject_ok(r, x) for x in items):
        return ERROR
    return any(r.search(x) is not None for x in items)


# ---------------------------------------------------------------- list comparisons

@_strict("identicalMember")
def _identical_member(a: list[object]) -> object:
    if len(a) != 2:
        return ERROR
    x, lst = a
    if lst is UNDEFINED:
        return UNDEFINED
    if type(lst) is not list:
        return ERROR
    return any(ops.identical(x, v) is True for v in lst)


_CMP_NAMES = {"<": "<", "<=": "<=", "==": "==", "!=": "!=", ">=": ">=", ">": ">", "is": "=?=",
              "isnt": "=!="}


def _list_compare(want_all: bool) -> Strict:
    def fn(a: list[object]) -> object:
        if len(a) != 3:
            return ERROR
        op, lst, x = a
        if op is UNDEFINED:  # before the other arguments' types, as in HTCondor
            return UNDEFINED
        if type(op) is not str:
            return ERROR
        real_op = _CMP_NAMES.get(op.lower())
        if real_op is None:
            return ERROR
        if lst is UNDEFINED:
            return UNDEFINED
        if type(lst) is not list:
            return ERROR
        for v in lst:
            if real_op in ("=?=", "=!="):
                r = ops.identical(v, x)
                if real_op == "=!=":
                    r = not r
            else:
                r = ops.compare(real_op, v, x)
                if r is ERROR:
                    return ERROR
            if want_all and r is not True:
                return False
            if not want_all and r is True:
                return True
        return want_all
    return fn


_STRICT["anycompare"] = _list_compare(False)
_STRICT["allcompare"] = _list_compare(True)


# ---------------------------------------------------------------- regex substitution

REGEX_MAX_INPUT = 1 << 20  # characters of subject text a regex function will look at
_GROUP_REF = re.compile(r"\\(\d)")


class RegexRefused(Exception):
    """The subject is too long for this pattern to be searched safely."""


def subject_ok(r: re.Pattern[str], s: str) -> bool:
    return len(s) <= _SUBJECT_CAP.get(id(r), REGEX_MAX_INPUT)


def safe_search(r: re.Pattern[str], s: str) -> re.Match[str] | None:
    """``r.search(s)``; RegexRefused when ``s`` is longer than the pattern's safe limit."""
    if not subject_ok(r, s):
        raise RegexRefused
    return r.search(s)


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


def _substitute(a: list[object], mode: str) -> object:
    """regexps / replace / replaceall.  ``mode``: "only" gives just the substitution(s), "full"
    gives the whole subject with the substitution(s) in place."""
    if len(a) not in (3, 4):
        return ERROR
    if any(v is ERROR for v in a):
        return ERROR
    if any(v is UNDEFINED for v in a):
        return UNDEFINED
    if any(type(v) is not str for v in a):
        return ERROR
    pat, subj, subst = a[0], a[1], a[2]
    opts = a[3].lower() if len(a) == 4 else ""  # type: ignore[union-attr]
    every = "g" in opts or mode == "all"
    full = "f" in opts or mode in ("full", "all")
    r = compile_regex(pat, opts)  # type: ignore[arg-type]
    if r is None:
        return ERROR
    if not subject_ok(r, subj):  # type: ignore[arg-type]
        return ERROR
    out: list[str] = []
    pos = 0
    found = False
    for m in r.finditer(subj):  # type: ignore[arg-type]
        if every and m.end() == m.start():
            return ERROR
        rep = _expand(m, subst)  # type: ignore[arg-type]
        if rep is None:
            return ERROR
        found = True
        if full:
            out.append(subj[pos:m.start()])  # type: ignore[index]
        out.append(rep)
        pos = m.end()
        if not every:
            break
    if not found:
        return subj if full else ""
    if full:
        out.append(subj[pos:])  # type: ignore[index]
    return "".join(out)


_STRICT["regexps"] = lambda a: _substitute(a, "only")
_STRICT["replace"] = lambda a: _substitute(a, "full")
_STRICT["replaceall"] = lambda a: _substitute(a, "all")


# ---------------------------------------------------------------- names

def _split_at(user_first: bool) -> Strict:
    def fn(a: list[object]) -> object:
        if len(a) != 1:
            return ERROR
        s = a[0]
        if type(s) is not str:
            return ERROR
        head, at, tail = s.partition("@")
        if not at:
            return [s, ""] if user_first else ["", s]
        return [head, tail]
    return fn


_STRICT["splitusername"] = _split_at(True)
_STRICT["splitslotname"] = _split_at(False)


# ---------------------------------------------------------------- eval, unparse, interval

def _eval(fns: list[Any], s: Any, c: Any) -> object:
    if len(fns) != 1:
        return ERROR
    v = fns[0](s, c)
    t = type(v)
    if t is int or t is float or t is bool:
        return v
    if t is not str:
        return ERROR
    from .expr import ClassAdSyntaxError, parse_expr

    try:
        tree = parse_expr(v)  # type: ignore[arg-type]
    except ClassAdSyntaxError:
        return ERROR
    return tree.compiled()(s, c)


_LAZY["eval"] = _eval


def _compile_unparse(args: list[Any]) -> Any:
    from .expr import AttrRef, Select

    if len(args) != 1:
        return lambda s, c: ERROR
    arg = args[0]
    if type(arg) is Select:
        return lambda s, c: ""
    if type(arg) is not AttrRef:
        return lambda s, c: ERROR
    k = arg.lname

    def fn(s: Any, c: Any) -> object:
        ad = s
        while ad is not None:
            e = ad._attrs.get(k)
            if e is not None:
                return str(e.tree())
            ad = ad._parent
        return ""
    return fn


@_strict("interval")
def _interval(a: list[object]) -> object:
    if len(a) != 1:
        return ERROR
    v = a[0]
    t = type(v)
    if t is bool:
        v = int(v)  # type: ignore[arg-type]
    elif t is float:
        v = real_to_int(v)  # type: ignore[arg-type]
    elif t is not int:
        return ERROR
    n: int = v  # type: ignore[assignment]
    sign = "-" if n < 0 else ""
    n = abs(n)
    days, rest = divmod(n, 86400)
    hours, rest = divmod(rest, 3600)
    mins, secs = divmod(rest, 60)
    if days:
        return f"{sign}{days}+{hours:02d}:{mins:02d}:{secs:02d}"
    if hours:
        return f"{sign}{hours}:{mins:02d}:{secs:02d}"
    if mins:
        return f"{sign}{mins}:{secs:02d}"
    return f"{sign}{secs}"


# ---------------------------------------------------------------- times

_ISO = re.compile(
    r"\s*(\d{4})-?(\d{2})-?(\d{2})(?:[T ](\d{2}):?(\d{2})(?::?(\d{2}))?)?\s*"
    r"(Z|[+-]\d{2}(?::?\d{2})?)?\s*\Z", re.IGNORECASE)


def parse_abstime(text: str) -> AbsTime | None:
    """ISO 8601 date and time (``2026-01-01T00:00:00+01:00``, ``20260101T000000Z``, a date alone);
    without a zone the time is UTC."""
    import calendar

    m = _ISO.match(text)
    if m is None:
        return None
    y, mo, d, h, mi, sec, zone = m.groups()
    try:
        import datetime as _dt

        _dt.date(int(y), int(mo), int(d))
    except ValueError:
        return None
    hh, mm, ss = int(h or 0), int(mi or 0), int(sec or 0)
    if hh > 23 or mm > 59 or ss > 60:
        return None
    off = 0
    if zone and zone.upper() != "Z":
        digits = zone[1:].replace(":", "")
        off = int(digits[:2]) * 3600 + int(digits[2:4] or 0) * 60
        if zone[0] == "-":
            off = -off
    epoch = calendar.timegm((int(y), int(mo), int(d), hh, mm, ss, 0, 0, 0)) - off
    return AbsTime(epoch, off)


_REL_CLOCK = re.compile(r"\s*(-)?\s*(?:(\d+)\+)?(?:(\d+):)??(?:(\d+):)?(\d+(?:\.\d*)?)\s*\Z")
_REL_UNITS = re.compile(r"\s*(-)?\s*((?:\d+(?:\.\d*)?\s*[dhms]\s*)+)\Z", re.IGNORECASE)
_UNIT = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def parse_reltime(text: str) -> float | None:
    """``[-][D+][HH:][MM:]SS`` or ``1d 2h 3m 4s`` to seconds; None when malformed."""
    m = _REL_CLOCK.match(text)
    if m is not None:
        neg, d, h, mi, s = m.groups()
        total = int(d or 0) * 86400 + int(h or 0) * 3600 + int(mi or 0) * 60 + float(s)
        return -total if neg else total
    m = _REL_UNITS.match(text)
    if m is not None:
        total = 0.0
        for num, unit in re.findall(r"(\d+(?:\.\d*)?)\s*([dhms])", m.group(2), re.IGNORECASE):
            total += float(num) * _UNIT[unit.lower()]
        return -total if m.group(1) else total
    return None


@_strict("absTime")
def _abstime(a: list[object]) -> object:
    if len(a) > 2:
        return ERROR
    if any(v is UNDEFINED for v in a):
        return UNDEFINED
    if not a:
        return AbsTime(int(_time.time()), 0)
    v = a[0]
    t = type(v)
    if t is str:
        if len(a) != 1:
            return ERROR
        r = parse_abstime(v)  # type: ignore[arg-type]
        return ERROR if r is None else r
    if t is AbsTime and len(a) == 1:
        return v
    if t is not int and t is not float:
        return ERROR
    off = 0
    if len(a) == 2:
        if type(a[1]) is not int:
            return ERROR
        off = a[1]  # type: ignore[assignment]
    return AbsTime(real_to_int(v) if t is float else v, off)  # type: ignore[arg-type]


@_strict("relTime")
def _reltime(a: list[object]) -> object:
    if len(a) != 1:
        return ERROR
    v = a[0]
    t = type(v)
    if v is UNDEFINED:
        return UNDEFINED
    if t is str:
        # classad2 gives the number of seconds (a real) for a string argument
        r = parse_reltime(v)  # type: ignore[arg-type]
        return ERROR if r is None else float(r)
    if t is RelTime:
        return v
    if t is int:
        return RelTime(v)  # type: ignore[arg-type]
    if t is float:
        return RelTime(real_to_int(v))  # type: ignore[arg-type]
    return ERROR


def _strftime(fmt: str, epoch: int, offset: int) -> str:
    """C strftime on the broken-down time at ``offset`` seconds east of UTC; %s is the epoch."""
    tm = _time.gmtime(epoch + offset)
    out: list[str] = []
    i = 0
    n = len(fmt)
    while i < n:
        ch = fmt[i]
        if ch != "%" or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        d = fmt[i + 1]
        if d == "s":
            out.append(str(epoch))
        elif d == "%":
            out.append("%")
        elif d == "c":
            out.append(_time.strftime("%a %b %e %H:%M:%S %Y", tm))
        elif d in "zZ":
            sign = "-" if offset < 0 else "+"
            o = abs(offset)
            out.append(f"{sign}{o // 3600:02d}{o % 3600 // 60:02d}" if d == "z" else ("UTC" if not offset else ""))
        else:
            try:
                out.append(_time.strftime("%" + d, tm))
            except ValueError:
                out.append("%" + d)
        i += 2
    return "".join(out)


@_strict("formatTime")
def _format_time(a: list[object]) -> object:
    if len(a) > 2:
        return ERROR
    if not a:
        t: object = int(_time.time())
    else:
        t = a[0]
    fmt = "%c"
    if len(a) == 2:
        if type(a[1]) is not str:
            return ERROR
        fmt = a[1]  # type: ignore[assignment]
    if type(t) is AbsTime:
        return _strftime(fmt, real_to_int(t.epoch), t.offset)  # type: ignore[union-attr]
    if type(t) is int:
        return _strftime(fmt, t, 0)  # type: ignore[arg-type]
    return ERROR


# ---------------------------------------------------------------- types of times

_STRICT["isabstime"] = _pred(lambda v: type(v) is AbsTime)
_STRICT["isreltime"] = _pred(lambda v: type(v) is RelTime)


@_strict("debug")
def _debug(a: list[object]) -> object:
    """The value itself: HTCondor also logs the evaluation, which a pure library has nowhere to do."""
    return a[0] if len(a) == 1 else ERROR


@_strict("random")
def _random(a: list[object]) -> object:
    """A value in [0, x): an integer for an integer x, else a real; no argument means x = 1.0."""
    if len(a) > 1:
        return ERROR
    x = a[0] if a else 1.0
    t = type(x)
    if t is int and x > 0:  # type: ignore[operator]
        return _rng.randrange(x)  # type: ignore[arg-type]
    if t is float and x > 0:  # type: ignore[operator]
        return _rng.random() * x  # type: ignore[operator]
    return ERROR


_rng = __import__("random").Random()


# ---------------------------------------------------------------- versions

_S_N, _S_I, _S_F, _S_Z = 0, 3, 6, 9
_NEXT_STATE = (_S_N, _S_I, _S_Z, _S_N, _S_I, _S_I, _S_N, _S_F, _S_F, _S_N, _S_F, _S_Z)
_CMP, _LEN = 2, 3
# rows: state of the left string; columns: (left, right) character classes x/x x/d x/0 d/x d/d d/0 0/x 0/d 0/0
_RESULT = (
    _CMP, _CMP, _CMP, _CMP, _LEN, _CMP, _CMP, _CMP, _CMP,
    _CMP, _LEN, _LEN, _LEN, _LEN, _LEN, _LEN, _LEN, _LEN,
    _CMP, _CMP, _CMP, _CMP, _CMP, _CMP, _CMP, _CMP, _CMP,
    _CMP, +1, +1, -1, _CMP, _CMP, -1, _CMP, _CMP,
)


def _digit_class(ch: int) -> int:
    return (ch == 48) + (48 <= ch <= 57)


def versioncmp(left: str, right: str) -> int:
    """Version order of two strings (strverscmp's state machine): digit runs compare as numbers,
    leading zeroes as fractions.  Where a number decides, the result is the difference in digit
    counts (or of the first differing digits), as HTCondor's library gives it."""
    a = left.encode("utf-8", "surrogateescape") + b"\0"
    b = right.encode("utf-8", "surrogateescape") + b"\0"
    i = 0
    c1, c2 = a[0], b[0]
    state = _S_N + _digit_class(c1)
    while c1 == c2:
        if c1 == 0:
            return 0
        state = _NEXT_STATE[state]
        i += 1
        c1, c2 = a[i], b[i]
        state += _digit_class(c1)
    kind = _RESULT[state * 3 + _digit_class(c2)]
    if kind == _CMP:
        return c1 - c2
    if kind == _LEN:
        n1 = len(a) - i - len(a[i:].lstrip(b"0123456789"))
        n2 = len(b) - i - len(b[i:].lstrip(b"0123456789"))
        return n1 - n2 if n1 != n2 else c1 - c2
    return kind


def _version_args(a: list[object], n: int) -> object:
    """Arguments as strings (other values as string() gives them), or the UNDEFINED/ERROR result."""
    if len(a) != n:
        return ERROR
    if any(v is UNDEFINED for v in a):
        return UNDEFINED
    if any(v is ERROR for v in a):
        return ERROR
    return [to_string(v) for v in a]


@_strict("versioncmp")
def _versioncmp(a: list[object]) -> object:
    s = _version_args(a, 2)
    return s if type(s) is not list else versioncmp(s[0], s[1])


for _n, _t in {"versionGT": lambda r: r > 0, "versionGE": lambda r: r >= 0, "versionLT": lambda r: r < 0,
               "versionLE": lambda r: r <= 0, "versionEQ": lambda r: r == 0}.items():
    def _version_test(a: list[object], test: Callable[[int], bool] = _t) -> object:
        s = _version_args(a, 2)
        return s if type(s) is not list else test(versioncmp(s[0], s[1]))
    _STRICT[_n.lower()] = _version_test


@_strict("version_in_range")
def _version_in_range(a: list[object]) -> object:
    if len(a) != 3 or a[0] is UNDEFINED or a[0] is ERROR:
        return ERROR
    s = _version_args(a, 3)
    if type(s) is not list:
        return s
    v, lo, hi = s
    return versioncmp(lo, v) <= 0 and versioncmp(v, hi) <= 0


# ---------------------------------------------------------------- string-list sets

def _sl_subset(fold: bool) -> Strict:
    def fn(a: list[object]) -> object:
        if len(a) not in (2, 3):
            return ERROR
        if any(v is ERROR or (v is not UNDEFINED and type(v) is not str) for v in a):
            return ERROR
        sub, sup = a[0], a[1]
        if sub is UNDEFINED:
            return UNDEFINED if sup is UNDEFINED else True
        delims = a[2] if len(a) == 3 and a[2] is not UNDEFINED else " ,"
        items = split_list(sub, delims)  # type: ignore[arg-type]
        if sup is UNDEFINED:
            return not items
        pool = split_list(sup, delims)  # type: ignore[arg-type]
        if fold:
            items, pool = [ops.ascii_lower(x) for x in items], [ops.ascii_lower(x) for x in pool]
        return set(items) <= set(pool)
    return fn


_STRICT["stringlistsubsetmatch"] = _sl_subset(False)
_STRICT["stringlistisubsetmatch"] = _sl_subset(True)


@_strict("regexpMember")
def _regexp_member(a: list[object]) -> object:
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
    r = compile_regex(pat, opts)  # type: ignore[arg-type]
    saw_undefined = False
    for v in lst:
        if v is UNDEFINED:
            saw_undefined = True
        elif type(v) is not str:
            return ERROR
        elif r is not None:
            if not subject_ok(r, v):  # type: ignore[arg-type]
                return ERROR
            if r.search(v) is not None:  # type: ignore[arg-type]
                return True
    return UNDEFINED if saw_undefined else False


# ---------------------------------------------------------------- environments

_ENV_SPECIAL = frozenset(" \t\n\r\f\v'")


def _env_quote(s: str) -> str:
    """One word of the space-separated environment syntax: blanks and quotes quoted one by one."""
    if not any(ch in _ENV_SPECIAL for ch in s):
        return s
    return "".join(("'" + ("''" if ch == "'" else ch) + "'") if ch in _ENV_SPECIAL else ch for ch in s)


def _env_text(env: dict[str, str]) -> str:
    return " ".join(_env_quote(k) + "=" + _env_quote(env[k]) for k in sorted(env))


def split_v2_words(text: str) -> list[str] | None:
    """Split the space-separated syntax into words, undoing single quotes (``''`` is a quote
    inside them); None when a quote is left open."""
    words: list[str] = []
    cur: list[str] = []
    in_word = quoted = False
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if quoted:
            if ch == "'":
                if text.startswith("''", i):
                    cur.append("'")
                    i += 1
                else:
                    quoted = False
            else:
                cur.append(ch)
        elif ch == "'":
            quoted = in_word = True
        elif ch in " \t\n\r\f\v":
            if in_word:
                words.append("".join(cur))
                cur, in_word = [], False
        else:
            cur.append(ch)
            in_word = True
        i += 1
    if quoted:
        return None
    if in_word:
        words.append("".join(cur))
    return words


def _env_add(env: dict[str, str], entry: str) -> bool:
    name, eq, value = entry.partition("=")
    if not eq or not name:
        return False
    env[name] = value
    return True


@_strict("envV1ToV2")
def _env_v1_to_v2(a: list[object]) -> object:
    """Old ``A=1;B=2`` environment text to the space-separated form (names sorted, last wins)."""
    if len(a) != 1:
        return ERROR
    v = a[0]
    if v is UNDEFINED or type(v) is not str:
        return v if v is UNDEFINED else ERROR
    env: dict[str, str] = {}
    for entry in v.split(";"):  # type: ignore[union-attr]
        entry = entry.lstrip()
        if entry and not _env_add(env, entry):
            return ERROR
    return _env_text(env)


@_strict("mergeEnvironment")
def _merge_environment(a: list[object]) -> object:
    """Environments in the space-separated form merged left to right (UNDEFINED counts as empty)."""
    env: dict[str, str] = {}
    for v in a:
        if v is UNDEFINED:
            continue
        if type(v) is not str:
            return ERROR
        words = split_v2_words(v)  # type: ignore[arg-type]
        if words is None or not all(_env_add(env, w) for w in words):
            return ERROR
    return _env_text(env)


# ---------------------------------------------------------------- users

@_strict("userHome")
def _user_home(a: list[object]) -> object:
    """The user's home directory from the password database, else the default (if a string)."""
    if len(a) not in (1, 2):
        return ERROR
    user = a[0]
    if user is ERROR or (user is not UNDEFINED and type(user) is not str):
        return ERROR
    home = None
    if type(user) is str and user:
        import pwd

        try:
            home = pwd.getpwnam(user).pw_dir  # type: ignore[arg-type]
        except (KeyError, ValueError):
            home = None
    if home:
        return home
    if len(a) == 2 and type(a[1]) is str:
        return a[1]
    return UNDEFINED


@_strict("userMap")
def _user_map(a: list[object]) -> object:
    """htcd defines no ClassAd user maps, so every user is in no group: the default group when
    one is given, else UNDEFINED (what HTCondor answers with no map configured)."""
    if not 2 <= len(a) <= 4:
        return ERROR
    if len(a) == 4 and type(a[3]) is str and type(a[1]) is str:
        return a[3]
    return UNDEFINED


# ---------------------------------------------------------------- evaluating in other ads

def _compile_in_contexts(count: bool, fns: list[Any], args: list[Any]) -> Any:
    """``evalInEachContext(expr, ads)`` / ``countMatches(expr, ads)``: ``expr`` evaluated with
    each ad of the list as its scope (a list of values / how many are true).  As in HTCondor, a
    bare attribute name found in this ad or TARGET stands for its expression, which is what then
    runs in each ad."""
    from .expr import AttrRef

    if len(fns) != 2:
        return lambda s, c: ERROR
    expr_fn, list_fn = fns
    name = args[0].lname if type(args[0]) is AttrRef else None

    def fn(s: Any, c: Any) -> object:
        lst = list_fn(s, c)
        if lst is UNDEFINED:
            return 0 if count else UNDEFINED
        if type(lst) is not list:
            return ERROR
        f = expr_fn
        if name is not None:
            e = None
            scope = s
            while scope is not None and e is None:
                e = scope._attrs.get(name)
                scope = scope._parent
            if e is None and c.target is not None:
                e = c.target._attrs.get(name)
            if e is not None:
                f = e.tree().compiled()
        if count:
            return sum(1 for ad in lst if _is_ad(ad) and ops.to_bool3(f(ad, c)) is True)
        return [f(ad, c) if _is_ad(ad) else (UNDEFINED if ad is UNDEFINED else ERROR) for ad in lst]
    return fn


# ---------------------------------------------------------------- unresolved references

def _attr_entry(arg: Any, s: Any) -> tuple[Any, Any] | None:
    """The stored entry an ``attr`` or ``MY.attr``/``ad.attr`` argument names, looked up from
    ``s``, with the ad holding it."""
    from .expr import AttrRef, Select

    names: list[str] = []
    while type(arg) is Select:
        names.append(arg.lname)
        arg = arg.base
    if type(arg) is not AttrRef:
        return None
    names.append(arg.lname)
    names.reverse()
    if names[0] == "my" and len(names) > 1:
        names = names[1:]
    holder = s
    e = None
    while holder is not None:
        e = holder._attrs.get(names[0])
        if e is not None:
            break
        holder = holder._parent
    for name in names[1:]:
        if e is None:
            return None
        holder = getattr(e.tree(), "ad", None)  # a nested ad literal
        if holder is None:
            return None
        e = holder._attrs.get(name)
    return None if e is None else (e, holder)


def _unresolved_names(tree: Any, ad: Any, target: Any) -> list[str]:
    """Names an expression reads that ``ad`` (or the ads around it) does not define: bare names,
    ``MY.x`` and ``TARGET.x`` (printed without the scope), and ``a.b`` chains from unknown ``a``."""
    from .expr import AttrRef, Select, unparse_name

    def known(name: str) -> bool:
        scope = ad
        while scope is not None:
            if name in scope._attrs:
                return True
            scope = scope._parent
        return target is not None and name in target._attrs

    found: dict[str, str] = {}
    stack = [tree]
    while stack:
        n = stack.pop()
        if type(n) is AttrRef:
            if n.lname not in ("my", "target") and not known(n.lname):
                found.setdefault(n.lname, n.name)
            continue
        if type(n) is Select:
            path: list[Any] = []
            base = n
            while type(base) is Select:
                path.append(base)
                base = base.base
            if type(base) is not AttrRef:
                stack.append(base)
                continue
            names = [unparse_name(base.name)] + [unparse_name(x.name) for x in reversed(path)]
            root = base.lname
            if root == "target":
                if target is not None and path[-1].lname in target._attrs:
                    continue
                text = ".".join(names[1:])
            elif root == "my":
                if known(path[-1].lname):
                    continue
                text = ".".join(names[1:])
            elif known(root):
                if _attr_entry(n, ad) is not None:
                    continue
                text = names[-1]  # a known ad without this attribute
            else:
                text = ".".join(names)
            found.setdefault(text.lower(), text)
            continue
        stack.extend(reversed(n._kids()))  # left to right: the first spelling of a name is kept
    return sorted(found.values(), key=str.lower)


def _compile_unresolved(fns: list[Any], args: list[Any]) -> Any:
    """``unresolved(attr)``: the names ``attr``'s expression reads that this ad lacks, joined
    with commas; ``unresolved(attr, pattern)``: whether any of them matches the pattern."""
    if len(args) not in (1, 2):
        return lambda s, c: ERROR
    arg = args[0]

    def fn(s: Any, c: Any) -> object:
        found = _attr_entry(arg, s) if s is not None else None
        if found is None:
            from .expr import AttrRef, Select

            return UNDEFINED if type(arg) in (AttrRef, Select) else ERROR
        names = _unresolved_names(found[0].tree(), found[1], c.target)
        if len(fns) == 1:
            return ",".join(names)
        pat = fns[1](s, c)
        if type(pat) is not str:
            return ERROR
        r = compile_regex(pat)  # type: ignore[arg-type]
        if r is None or not all(subject_ok(r, x) for x in names):
            return ERROR
        return any(r.search(x) is not None for x in names)
    return fn

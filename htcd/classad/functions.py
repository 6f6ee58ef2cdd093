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
    if t is AbsTime:
        return real_to_int(v.epoch)  # type: ignore[union-attr]
    if t is RelTime:
        return real_to_int(v.seconds)  # type: ignore[union-attr]
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
    if t is AbsTime:
        return float(v.epoch)  # type: ignore[union-attr]
    if t is RelTime:
        return float(v.seconds)  # type: ignore[union-attr]
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
    parts = []
    for v in items:  # type: ignore[union-attr]
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

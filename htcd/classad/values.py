"""ClassAd values that have no natural Python type, plus value printing.

Evaluated values are plain Python objects (int, float, str, bool, list, ClassAd) so callers can use
them directly; only UNDEFINED, ERROR and the two time types need classes of their own.
"""

from __future__ import annotations

import math
from typing import Any

INT_MIN = -(1 << 63)
INT_MAX = (1 << 63) - 1

Value = Any
"""An evaluated ClassAd value: bool, int, float, str, list, ClassAd, AbsTime, RelTime, UNDEFINED
or ERROR.  Hot code tests ``t = type(v)`` once and branches on ``t``, which a type checker cannot
narrow ``v`` through, so a value is typed Any and each branch relies on the type it tested."""
_U64 = 1 << 64


class _Special:
    """Base of the two special values: one instance each, false in Python tests, pickled by name."""

    __slots__ = ()
    _inst: _Special | None = None
    _name = ""

    def __new__(cls) -> _Special:
        if cls._inst is None:
            cls._inst = super().__new__(cls)
        return cls._inst

    def __repr__(self) -> str:
        return self._name.lower()

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return self._name


class _Undefined(_Special):
    """The ClassAd UNDEFINED value: an attribute that is missing or cannot be resolved."""

    __slots__ = ()
    _name = "UNDEFINED"


class _Error(_Special):
    """The ClassAd ERROR value: a type mismatch or an impossible operation."""

    __slots__ = ()
    _name = "ERROR"


UNDEFINED = _Undefined()
ERROR = _Error()
UndefinedType = _Undefined
ErrorType = _Error


class RelTime:
    """A relative time (a duration in seconds), printed as relTime(\"...\")."""

    __slots__ = ("seconds",)

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RelTime) and other.seconds == self.seconds

    def __hash__(self) -> int:
        return hash(("reltime", self.seconds))

    def __repr__(self) -> str:
        return f"RelTime({self.seconds!r})"

    def text(self, fraction: bool = False) -> str:
        """HTCondor's [-][D+][HH:][MM:]SS[.fff] form: leading zero fields are left out.  A value
        prints whole seconds (HTCondor reads a relTime value's seconds as an integer to print
        it); ``fraction`` keeps the fraction, as a relTime literal prints."""
        secs = self.seconds if fraction else int(self.seconds)
        sign = "-" if secs < 0 else ""
        secs = abs(secs)
        whole = int(secs)
        frac = secs - math.floor(secs)
        days, rest = divmod(whole, 86400)
        hours, rest = divmod(rest, 3600)
        mins, s = divmod(rest, 60)
        # whole seconds print as %02d; with a fraction HTCondor prints them with %02g
        sec = f"{s:02d}" if not frac else format(s + frac, "02g")
        if days:
            return f"{sign}{days}+{hours:02d}:{mins:02d}:{sec}"
        if hours:
            return f"{sign}{hours:02d}:{mins:02d}:{sec}"
        if mins:
            return f"{sign}{mins:02d}:{sec}"
        return f"{sign}{sec}"


class AbsTime:
    """An absolute time: seconds since the epoch and the zone offset (seconds east of UTC)."""

    __slots__ = ("epoch", "offset")

    def __init__(self, epoch: float, offset: int = 0) -> None:
        self.epoch = epoch
        self.offset = offset

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AbsTime) and other.epoch == self.epoch and other.offset == self.offset

    def __hash__(self) -> int:
        return hash(("abstime", self.epoch, self.offset))

    def __repr__(self) -> str:
        return f"AbsTime({self.epoch!r}, {self.offset!r})"

    def text(self) -> str:
        """ISO 8601 with the zone offset, as HTCondor prints absTime values."""
        secs = int(self.epoch) + self.offset
        days, rest = divmod(secs, 86400)
        y, m, d = civil_from_days(days)
        off = self.offset
        sign = "-" if off <= 0 else "+"  # HTCondor prints UTC as -00:00
        off = abs(off)
        return (f"{y}-{m:02d}-{d:02d}T{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
                f"{sign}{off // 3600:02d}:{off % 3600 // 60:02d}")


def civil_from_days(days: int) -> tuple[int, int, int]:
    """Year, month, day of a day count since 1970-01-01 (proleptic Gregorian, any year)."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (m <= 2), m, d


def wrap64(n: int) -> int:
    """Wrap an unbounded int to a signed 64-bit int, as C arithmetic on int64 does."""
    if INT_MIN <= n <= INT_MAX:
        return n
    n &= _U64 - 1
    return n - _U64 if n > INT_MAX else n


def is_true(v: Value) -> bool:
    """True for boolean true or a nonzero number (how Requirements are judged); False otherwise."""
    t = type(v)
    if t is bool:
        return v
    if t is int or t is float:
        return v != 0
    return False


# ---------------------------------------------------------------- printing

_ESC = {
    "\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r",
    "\a": "\\a", "\b": "\\b", "\f": "\\f", "\v": "\\v",
}


def utf8_bytes(s: str) -> bytes:
    """The bytes a string stands for: text read from octal escapes that are not UTF-8 is held as
    lone surrogates (Python's surrogateescape), which give back their byte."""
    try:
        return s.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return s.encode("utf-8", "surrogatepass")


def from_utf8_bytes(b: bytes) -> str:
    """The string holding bytes ``b`` (bytes that are not UTF-8 kept as lone surrogates)."""
    return b.decode("utf-8", "surrogateescape")


def quote_string(s: str, q: str = '"') -> str:
    """Quote a string the way HTCondor's unparser does (C escapes, other bytes as octal)."""
    if s.isascii() and s.isprintable() and "\\" not in s and q not in s:
        return q + s + q
    out = [q]
    for ch in s:
        e = _ESC.get(ch)
        if e is not None and (ch != '"' or q == '"'):
            out.append(e)
        elif ch == q:
            out.append("\\" + q)
        elif " " <= ch < "\x7f":
            out.append(ch)
        else:
            for b in utf8_bytes(ch):
                out.append(f"\\{b:03o}")
    out.append(q)
    return "".join(out)


def quote_string_old(s: str) -> str:
    """Old long format strings: only the double quote is escaped, everything else is raw."""
    return '"' + s.replace('"', '\\"') + '"'


def _special_real(x: float) -> str | None:
    """Zero, NaN and the infinities as both formats spell them; None for other reals."""
    if x == 0.0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    if x != x:
        return 'real("NaN")'
    if x in (math.inf, -math.inf):
        return 'real("INF")' if x > 0 else 'real("-INF")'
    return None


def format_real(x: float) -> str:
    """Reals as HTCondor's unparser prints them: %.15E, with 0.0 and the specials spelled out."""
    special = _special_real(x)
    return f"{x:.15E}" if special is None else special


def format_real_old(x: float) -> str:
    """Reals as the old long format (condor_q -l) prints them: %.16G, always with a point or exponent."""
    special = _special_real(x)
    if special is not None:
        return special
    s = f"{x:.16G}"
    if "." not in s and "E" not in s:
        s += ".0"
    return s


_LIST_SOURCES: dict[int, tuple[list[Any], list[Any], Any]] = {}
_LIST_SOURCES_MAX = 1024


def remember_list_source(v: list[Any], items: Any) -> list[Any]:
    """Note that list value ``v`` was evaluated from the element expressions ``items``, so that it
    prints as written (``{1 + 1, x}`` prints ``{ 1 + 1,x }``), as HTCondor prints a list, whose
    elements it keeps as expressions.  Bounded: the oldest notes go first, and a list that no
    longer holds the values it was noted with (a caller changed it) prints its values."""
    if len(_LIST_SOURCES) >= _LIST_SOURCES_MAX:
        for k in list(_LIST_SOURCES)[: _LIST_SOURCES_MAX // 2]:
            del _LIST_SOURCES[k]
    _LIST_SOURCES[id(v)] = (v, list(v), items)
    return v


def unparse_value(v: Value, old: bool = False) -> str:
    """Print an evaluated value as ClassAd text."""
    t = type(v)
    if t is bool:
        return "true" if v else "false"
    if t is int:
        return str(v)
    if t is float:
        return format_real_old(v) if old else format_real(v)
    if t is str:
        return quote_string_old(v) if old else quote_string(v)
    if v is UNDEFINED:
        return "undefined"
    if v is ERROR:
        return "error"
    if t is list:
        if not v:
            return "{  }"
        source = _LIST_SOURCES.get(id(v))
        if source is not None and source[0] is v and source[1] == v:
            return "{ " + ",".join(e.unparse(old) for e in source[2]) + " }"
        return "{ " + ",".join(unparse_value(x, old) for x in v) + " }"
    if t is AbsTime:
        return f'absTime("{v.text()}")'
    if t is RelTime:
        return f'relTime("{v.text()}")'
    unparse = getattr(v, "_unparse", None)
    if unparse is not None:
        return unparse(old)
    raise TypeError(f"not a ClassAd value: {v!r}")

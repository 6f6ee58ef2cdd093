"""Expression trees: lexer, parser, unparser and the closure compiler.

Each tree compiles once, on first evaluation, into nested Python closures ``f(scope, ctx)``; the
negotiator evaluates the same Requirements against thousands of ads, so the per-eval cost is what
matters.  Parsing enforces explicit depth limits so hostile input fails with ClassAdSyntaxError
instead of exhausting the Python stack.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from htcd.errors import UserError

from . import ops
from .values import ERROR, INT_MIN, UNDEFINED, format_real, quote_string, unparse_value

if TYPE_CHECKING:
    from .ad import ClassAd

MAX_NESTING = 100  # brackets, unary operators and ternaries inside one another
MAX_HEIGHT = 200  # tree height, not counting long chains of one left-associative operator
MAX_HOPS = 128  # attribute references followed within one evaluation


class ClassAdSyntaxError(UserError):
    """ClassAd text that does not parse."""


Fn = Callable[[Any, Any], object]
_NC = object()  # "not a constant" marker


# ---------------------------------------------------------------- evaluation context

class Ctx:
    """Who MY and TARGET are during one evaluation, and which attributes are mid-evaluation."""

    __slots__ = ("my", "target", "busy", "_swap")

    def __init__(self, my: ClassAd | None, target: ClassAd | None, busy: set[int] | None = None) -> None:
        self.my = my
        self.target = target
        self.busy = set() if busy is None else busy
        self._swap: Ctx | None = None

    def other(self) -> Ctx:
        """The context seen from the target's side (MY and TARGET exchanged)."""
        o = self._swap
        if o is None:
            o = Ctx(self.target, self.my, self.busy)
            o._swap = self
            self._swap = o
        return o


def eval_entry(ad: ClassAd, e: Any, c: Ctx) -> object:
    """Evaluate one stored attribute in its own ad; a reference cycle gives UNDEFINED."""
    v = e.const
    if v is not _NC:
        return v
    fn = e.fn
    if fn is None:
        fn = e.compile()
        v = e.const
        if v is not _NC:
            return v
    k = id(e)
    busy = c.busy
    if k in busy:
        return UNDEFINED
    if len(busy) >= MAX_HOPS:
        return ERROR
    busy.add(k)
    try:
        return fn(ad, c)
    finally:
        busy.discard(k)


def lookup(scope: ClassAd | None, lname: str, c: Ctx) -> object:
    """Bare name: the current ad, its enclosing ads, then TARGET."""
    ad = scope
    while ad is not None:
        e = ad._attrs.get(lname)
        if e is not None:
            return eval_entry(ad, e, c)
        ad = ad._parent
    t = c.target
    if t is not None and t is not scope:
        e = t._attrs.get(lname)
        if e is not None:
            return eval_entry(t, e, c.other())
    return UNDEFINED


def select(v: object, lname: str, c: Ctx) -> object:
    """``v.name``: attribute of an ad, else of the ads enclosing it (as HTCondor looks names up
    in scope: ``[a = 7].b`` finds ``b`` in the ad the literal sits in); over a list, the
    attribute of each element."""
    attrs = getattr(v, "_attrs", None)
    if attrs is not None:
        ad = v
        while True:
            e = attrs.get(lname)
            if e is not None:
                return eval_entry(ad, e, c)  # type: ignore[arg-type]
            ad = ad._parent  # type: ignore[attr-defined]
            if ad is None:
                return UNDEFINED
            attrs = ad._attrs
    if type(v) is list:
        return [select(x, lname, c) for x in v]
    if v is UNDEFINED:
        return UNDEFINED
    return ERROR


# ---------------------------------------------------------------- nodes

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_KEYWORDS = frozenset({"true", "false", "undefined", "error", "is", "isnt"})


def unparse_name(name: str) -> str:
    """Attribute names that are not plain identifiers print in single quotes."""
    if _IDENT.match(name) and name.lower() not in _KEYWORDS:
        return name
    return quote_string(name, "'")


class Expr:
    """A parsed ClassAd expression.  Immutable; compiled lazily and cached."""

    __slots__ = ("_fn", "h")

    def __init__(self) -> None:
        self._fn: Fn | None = None
        self.h = 1

    # public API
    def eval(self, my: ClassAd | None = None, target: ClassAd | None = None) -> object:
        """Evaluate with MY=my and TARGET=target."""
        fn = self._fn
        if fn is None:
            fn = self.compiled()
        try:
            return fn(my, Ctx(my, target))
        except RecursionError:
            return ERROR

    def compiled(self) -> Fn:
        """The closure for this tree (built once)."""
        fn = self._fn
        if fn is None:
            fn = self._fn = self._compile()
        return fn

    def __str__(self) -> str:
        out: list[str] = []
        self._unparse(out, False)
        return "".join(out)

    def unparse(self, old: bool = False) -> str:
        """HTCondor's unparse text; ``old`` prints reals as the long format does."""
        out: list[str] = []
        self._unparse(out, old)
        return "".join(out)

    def __repr__(self) -> str:
        return f"Expr({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Expr) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))

    @staticmethod
    def literal(value: object) -> Expr:
        """An expression for a Python value (None means UNDEFINED)."""
        return literal(value)

    def is_literal(self) -> bool:
        return False

    # subclass hooks
    def _unparse(self, out: list[str], old: bool) -> None:
        raise NotImplementedError

    def _compile(self) -> Fn:
        raise NotImplementedError

    def const_value(self) -> object:
        """The value if this tree is a constant needing no context, else an internal marker."""
        return _NC


class Literal(Expr):
    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        super().__init__()
        self.value = value

    def is_literal(self) -> bool:
        return True

    def const_value(self) -> object:
        return self.value

    def _unparse(self, out: list[str], old: bool) -> None:
        out.append(unparse_value(self.value, old))

    def _compile(self) -> Fn:
        v = self.value
        return lambda s, c: v


class RelTimeLiteral(Literal):
    """``relTime("text")`` read at parse time: a number of seconds (a real, as in HTCondor) that
    prints back as ``relTime("[D+]HH:MM:SS")``."""

    __slots__ = ()

    def _unparse(self, out: list[str], old: bool) -> None:
        from .values import RelTime

        out.append(f'relTime("{RelTime(self.value).text()}")')  # type: ignore[arg-type]


class AttrRef(Expr):
    """A bare attribute name."""

    __slots__ = ("name", "lname")

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.lname = name.lower()

    def _unparse(self, out: list[str], old: bool) -> None:
        out.append(unparse_name(self.name))

    def _compile(self) -> Fn:
        k = self.lname
        _lookup = lookup
        return lambda s, c: _lookup(s, k, c)


class Select(Expr):
    """``base.name``; ``MY.name`` and ``TARGET.name`` compile to direct scope lookups."""

    __slots__ = ("base", "name", "lname")

    def __init__(self, base: Expr, name: str) -> None:
        super().__init__()
        self.base = base
        self.name = name
        self.lname = name.lower()
        self.h = base.h + 1

    def _unparse(self, out: list[str], old: bool) -> None:
        self.base._unparse(out, old)
        out.append(".")
        out.append(unparse_name(self.name))

    def _compile(self) -> Fn:
        k = self.lname
        b = self.base
        _eval_entry = eval_entry
        if type(b) is AttrRef and b.lname == "target":
            def target_ref(s: Any, c: Ctx) -> object:
                t = c.target
                if t is None:
                    return UNDEFINED
                e = t._attrs.get(k)
                if e is None:
                    return UNDEFINED
                v = e.const
                if v is not _NC:
                    return v
                return _eval_entry(t, e, c.other())
            return target_ref
        if type(b) is AttrRef and b.lname == "my":
            def my_ref(s: Any, c: Ctx) -> object:
                m = c.my
                if m is None:
                    return UNDEFINED
                e = m._attrs.get(k)
                if e is None:
                    return UNDEFINED
                v = e.const
                if v is not _NC:
                    return v
                return _eval_entry(m, e, c)
            return my_ref
        bf = b.compiled()
        _select = select
        return lambda s, c: _select(bf(s, c), k, c)


class Index(Expr):
    __slots__ = ("base", "index")

    def __init__(self, base: Expr, index: Expr) -> None:
        super().__init__()
        self.base = base
        self.index = index
        self.h = max(base.h, index.h) + 1

    def _unparse(self, out: list[str], old: bool) -> None:
        self.base._unparse(out, old)
        out.append("[")
        self.index._unparse(out, old)
        out.append("]")

    def _compile(self) -> Fn:
        bf = self.base.compiled()
        xf = self.index.compiled()

        def index(s: Any, c: Ctx) -> object:
            v = bf(s, c)
            i = xf(s, c)
            if v is ERROR or i is ERROR:
                return ERROR
            if v is UNDEFINED or i is UNDEFINED:
                return UNDEFINED
            if type(v) is list:
                if type(i) is int and 0 <= i < len(v):
                    return v[i]
                return ERROR
            attrs = getattr(v, "_attrs", None)
            if attrs is not None and type(i) is str:
                e = attrs.get(i.lower())
                return UNDEFINED if e is None else eval_entry(v, e, c)  # type: ignore[arg-type]
            return ERROR
        return index


class Unary(Expr):
    __slots__ = ("op", "operand")

    def __init__(self, op: str, operand: Expr) -> None:
        super().__init__()
        self.op = op
        self.operand = operand
        self.h = operand.h + 1

    def _unparse(self, out: list[str], old: bool) -> None:
        out.append(" " + self.op)
        self.operand._unparse(out, old)

    def _compile(self) -> Fn:
        f = self.operand.compiled()
        op = self.op
        _unary = ops.unary
        if op == "!":
            def not_(s: Any, c: Ctx) -> object:
                v = f(s, c)
                if v is True:
                    return False
                if v is False:
                    return True
                return _unary("!", v)
            return not_
        return lambda s, c: _unary(op, f(s, c))


class Paren(Expr):
    __slots__ = ("inner",)

    def __init__(self, inner: Expr) -> None:
        super().__init__()
        self.inner = inner
        self.h = inner.h + 1

    def _unparse(self, out: list[str], old: bool) -> None:
        out.append("(")
        self.inner._unparse(out, old)
        out.append(")")

    def const_value(self) -> object:
        return self.inner.const_value()

    def _compile(self) -> Fn:
        return self.inner.compiled()


_OP_TEXT = {"=?=": "is", "=!=": "isnt"}
_CMP_OPS = frozenset({"==", "!=", "<", "<=", ">", ">="})


class Binary(Expr):
    __slots__ = ("op", "left", "right")

    def __init__(self, op: str, left: Expr, right: Expr) -> None:
        super().__init__()
        self.op = op
        self.left = left
        self.right = right
        if type(left) is Binary and left.op == op:
            self.h = max(left.h, right.h + 1)
        else:
            self.h = max(left.h, right.h) + 1

    def _chain(self) -> list[Expr]:
        """Operands of a left-leaning chain of this operator, iteratively (chains can be long)."""
        items: list[Expr] = []
        node: Expr = self
        op = self.op
        while type(node) is Binary and node.op == op:  # type: ignore[attr-defined]
            items.append(node.right)  # type: ignore[attr-defined]
            node = node.left  # type: ignore[attr-defined]
        items.append(node)
        items.reverse()
        return items

    def _unparse(self, out: list[str], old: bool) -> None:
        items = self._chain()
        sep = " " + _OP_TEXT.get(self.op, self.op) + " "
        items[0]._unparse(out, old)
        for x in items[1:]:
            out.append(sep)
            x._unparse(out, old)

    def _compile(self) -> Fn:
        items = self._chain()
        op = self.op
        fns = [x.compiled() for x in items]
        if op == "&&":
            return _compile_and(fns)
        if op == "||":
            return _compile_or(fns)
        if len(fns) > 2:
            impl = ops.BINARY_IMPL[op]
            first, rest = fns[0], fns[1:]

            def chain(s: Any, c: Ctx) -> object:
                v = first(s, c)
                for f in rest:
                    v = impl(v, f(s, c))
                return v
            return chain
        lf, rf = fns
        if op in _CMP_OPS:
            return _compile_cmp(op, lf, rf, items[1].const_value())
        if op in ("+", "-", "*"):
            return _compile_arith(op, lf, rf)
        impl = ops.BINARY_IMPL[op]
        return lambda s, c: impl(lf(s, c), rf(s, c))


def _compile_and(fns: list[Fn]) -> Fn:
    _and = ops.logic_and
    if len(fns) == 2:
        lf, rf = fns

        def and2(s: Any, c: Ctx) -> object:
            v = lf(s, c)
            if v is False:
                return False
            if v is True:
                r = rf(s, c)
                if r is True or r is False:
                    return r
                return ops.to_bool3(r)
            return _and(v, lambda: rf(s, c))
        return and2

    first, rest = fns[0], fns[1:]

    def and_n(s: Any, c: Ctx) -> object:
        v = first(s, c)
        for f in rest:
            if v is False:
                return False
            if v is True:
                v = ops.to_bool3(f(s, c))
            else:
                v = _and(v, lambda f=f: f(s, c))
        return ops.to_bool3(v) if v is not False and v is not True else v
    return and_n


def _compile_or(fns: list[Fn]) -> Fn:
    _or = ops.logic_or
    if len(fns) == 2:
        lf, rf = fns

        def or2(s: Any, c: Ctx) -> object:
            v = lf(s, c)
            if v is True:
                return True
            if v is False:
                r = rf(s, c)
                if r is True or r is False:
                    return r
                return ops.to_bool3(r)
            return _or(v, lambda: rf(s, c))
        return or2

    first, rest = fns[0], fns[1:]

    def or_n(s: Any, c: Ctx) -> object:
        v = first(s, c)
        for f in rest:
            if v is True:
                return True
            if v is False:
                v = ops.to_bool3(f(s, c))
            else:
                v = _or(v, lambda f=f: f(s, c))
        return ops.to_bool3(v) if v is not False and v is not True else v
    return or_n


def _compile_cmp(op: str, lf: Fn, rf: Fn, rconst: object) -> Fn:
    _compare = ops.compare
    tk = type(rconst)
    if tk is int or tk is float:
        k = rconst
        if op == ">=":
            def ge_k(s: Any, c: Ctx) -> object:
                v = lf(s, c)
                tv = type(v)
                if tv is int or tv is float:
                    return v >= k
                return _compare(">=", v, k)
            return ge_k
        if op == ">":
            def gt_k(s: Any, c: Ctx) -> object:
                v = lf(s, c)
                tv = type(v)
                if tv is int or tv is float:
                    return v > k
                return _compare(">", v, k)
            return gt_k
        if op == "<=":
            def le_k(s: Any, c: Ctx) -> object:
                v = lf(s, c)
                tv = type(v)
                if tv is int or tv is float:
                    return v <= k
                return _compare("<=", v, k)
            return le_k
        if op == "<":
            def lt_k(s: Any, c: Ctx) -> object:
                v = lf(s, c)
                tv = type(v)
                if tv is int or tv is float:
                    return v < k
                return _compare("<", v, k)
            return lt_k
        if op == "==":
            def eq_k(s: Any, c: Ctx) -> object:
                v = lf(s, c)
                tv = type(v)
                if tv is int or tv is float:
                    return v == k
                return _compare("==", v, k)
            return eq_k
    if tk is str and op == "==":
        lk = ops.ascii_lower(rconst)  # type: ignore[arg-type]
        _lower = ops.ascii_lower

        def eq_s(s: Any, c: Ctx) -> object:
            v = lf(s, c)
            if type(v) is str:
                return _lower(v) == lk
            return _compare("==", v, rconst)
        return eq_s

    def cmp(s: Any, c: Ctx) -> object:
        a = lf(s, c)
        b = rf(s, c)
        return _compare(op, a, b)
    return cmp


def _compile_arith(op: str, lf: Fn, rf: Fn) -> Fn:
    _arith = ops.arith
    lo, hi = INT_MIN, -INT_MIN - 1
    if op == "+":
        def add(s: Any, c: Ctx) -> object:
            a = lf(s, c)
            b = rf(s, c)
            if type(a) is int and type(b) is int:
                r = a + b
                if lo <= r <= hi:
                    return r
            return _arith("+", a, b)
        return add
    if op == "*":
        def mul(s: Any, c: Ctx) -> object:
            a = lf(s, c)
            b = rf(s, c)
            if type(a) is int and type(b) is int:
                r = a * b
                if lo <= r <= hi:
                    return r
            return _arith("*", a, b)
        return mul

    def sub(s: Any, c: Ctx) -> object:
        a = lf(s, c)
        b = rf(s, c)
        if type(a) is int and type(b) is int:
            r = a - b
            if lo <= r <= hi:
                return r
        return _arith("-", a, b)
    return sub


class Cond(Expr):
    """``c ? a : b``."""

    __slots__ = ("cond", "then", "other")

    def __init__(self, cond: Expr, then: Expr, other: Expr) -> None:
        super().__init__()
        self.cond = cond
        self.then = then
        self.other = other
        self.h = max(cond.h, then.h, other.h) + 1

    def _unparse(self, out: list[str], old: bool) -> None:
        self.cond._unparse(out, old)
        out.append(" ? ")
        self.then._unparse(out, old)
        out.append(" : ")
        self.other._unparse(out, old)

    def _compile(self) -> Fn:
        cf = self.cond.compiled()
        tf = self.then.compiled()
        of = self.other.compiled()
        _b3 = ops.to_bool3

        def cond(s: Any, c: Ctx) -> object:
            v = cf(s, c)
            if v is not True and v is not False:
                v = _b3(v)
                if v is UNDEFINED or v is ERROR:
                    return v
            return tf(s, c) if v else of(s, c)
        return cond


class Elvis(Expr):
    """``a ?: b``: a unless it is UNDEFINED."""

    __slots__ = ("left", "right")

    def __init__(self, left: Expr, right: Expr) -> None:
        super().__init__()
        self.left = left
        self.right = right
        self.h = max(left.h, right.h) + 1

    def _unparse(self, out: list[str], old: bool) -> None:
        self.left._unparse(out, old)
        out.append(" ?: ")
        self.right._unparse(out, old)

    def _compile(self) -> Fn:
        lf = self.left.compiled()
        rf = self.right.compiled()

        def elvis(s: Any, c: Ctx) -> object:
            v = lf(s, c)
            return rf(s, c) if v is UNDEFINED else v
        return elvis


class Call(Expr):
    __slots__ = ("name", "args")

    def __init__(self, name: str, args: list[Expr]) -> None:
        super().__init__()
        self.name = name
        self.args = args
        self.h = max((a.h for a in args), default=0) + 1

    def _unparse(self, out: list[str], old: bool) -> None:
        out.append(self.name)
        out.append("(")
        for i, a in enumerate(self.args):
            if i:
                out.append(",")
            a._unparse(out, old)
        out.append(")")

    def _compile(self) -> Fn:
        from .functions import compile_call

        return compile_call(self.name, [a.compiled() for a in self.args], self.args)


class ListExpr(Expr):
    __slots__ = ("items",)

    def __init__(self, items: list[Expr]) -> None:
        super().__init__()
        self.items = items
        self.h = max((a.h for a in items), default=0) + 1

    def _unparse(self, out: list[str], old: bool) -> None:
        if not self.items:
            out.append("{  }")
            return
        out.append("{ ")
        for i, a in enumerate(self.items):
            if i:
                out.append(",")
            a._unparse(out, old)
        out.append(" }")

    def _compile(self) -> Fn:
        consts = [x.const_value() for x in self.items]
        if all(v is not _NC for v in consts) and not any(type(v) is list for v in consts):
            return lambda s, c: list(consts)
        fns = [x.compiled() for x in self.items]
        return lambda s, c: [f(s, c) for f in fns]


class AdExpr(Expr):
    """A nested ad literal ``[ a = 1; b = a ]``; evaluates to a ClassAd whose parent is the scope."""

    __slots__ = ("ad",)

    def __init__(self, ad: ClassAd) -> None:
        super().__init__()
        self.ad = ad
        self.h = max((e.expr.h for e in ad._attrs.values() if e.expr is not None), default=0) + 1

    def _unparse(self, out: list[str], old: bool) -> None:
        out.append(self.ad._unparse(old))

    def _compile(self) -> Fn:
        tmpl = self.ad
        return lambda s, c: tmpl._view(s)


def literal(value: object) -> Expr:
    """Build an expression tree from a Python value."""
    from .ad import ClassAd

    if isinstance(value, Expr):
        return value
    t = type(value)
    if value is None:
        return Literal(UNDEFINED)
    if t is int:
        if not INT_MIN <= value <= -INT_MIN - 1:  # type: ignore[operator]
            raise ValueError(f"integer out of 64-bit range: {value}")
        return Literal(value)
    if t in (bool, float, str) or value is UNDEFINED or value is ERROR:
        return Literal(value)
    if isinstance(value, (list, tuple)):
        return ListExpr([literal(x) for x in value])
    if isinstance(value, ClassAd):
        return AdExpr(value.copy())
    if isinstance(value, int):
        return Literal(int(value))
    from .values import AbsTime, RelTime

    if t in (AbsTime, RelTime):
        return Literal(value)
    raise TypeError(f"cannot make a ClassAd expression from {type(value).__name__}")


# ---------------------------------------------------------------- lexer

_TOKEN = re.compile(
    r"""
    (?P<ws>(?:\s+|//[^\n]*|/\*.*?\*/)+)
  | (?P<real>(?:\d+\.\d+(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+))
  | (?P<int>\d+)
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<str>"(?:[^"\\]|\\.)*")
  | (?P<qname>'(?:[^'\\]|\\.)*')
  | (?P<op>>>>|=\?=|=!=|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%<>!~&|^()\[\]{},;.?:=])
  | (?P<bad>.)
    """,
    re.VERBOSE | re.DOTALL,
)

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
            "\\": "\\", '"': '"', "'": "'", "?": "?"}
_ESC_RE = re.compile(r"\\([0-7]{1,3}|.)", re.DOTALL)


def _unescape(body: str) -> str:
    if "\\" not in body:
        return body
    raw = bytearray()
    pos = 0
    for m in _ESC_RE.finditer(body):
        raw += body[pos:m.start()].encode("utf-8", "surrogatepass")
        g = m.group(1)
        if g[0] in "01234567":
            raw.append(int(g, 8) & 0xFF)
        else:
            raw += _ESCAPES.get(g, g).encode("utf-8", "surrogatepass")
        pos = m.end()
    raw += body[pos:].encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "surrogateescape")


class Tok:
    __slots__ = ("kind", "text", "pos", "end", "value")

    def __init__(self, kind: str, text: str, pos: int, end: int, value: object = None) -> None:
        self.kind = kind
        self.text = text
        self.pos = pos
        self.end = end
        self.value = value


def _where(src: str, pos: int) -> tuple[int, int]:
    line = src.count("\n", 0, pos) + 1
    col = pos - (src.rfind("\n", 0, pos) + 1) + 1
    return line, col


def _unescape_old(body: str) -> str:
    return body.replace('\\"', '"')


def tokenize(src: str, old: bool = False) -> list[Tok]:
    """Split text into tokens; adjacent string literals are joined as HTCondor does."""
    toks: list[Tok] = []
    append = toks.append
    keywords = _KEYWORDS
    last_str: Tok | None = None
    for m in _TOKEN.finditer(src):
        kind = m.lastgroup
        if kind == "ws":
            continue
        text = m.group()
        pos, end = m.span()
        if kind == "id":
            low = text.lower()
            if low in keywords:
                append(Tok("kw", text, pos, end, low))
            else:
                append(Tok("id", text, pos, end, text))
        elif kind == "op":
            if text == "/" and src.startswith("/*", pos):
                line, col = _where(src, pos)
                raise ClassAdSyntaxError("unterminated comment", line=line, column=col)
            append(Tok("op", text, pos, end, text))
        elif kind == "int":
            if len(text) > 1 and text[0] == "0":
                line, col = _where(src, pos)
                raise ClassAdSyntaxError(f"bad number {text!r}: expected a decimal without leading zero",
                                         line=line, column=col)
            append(Tok("int", text, pos, end, int(text)))
        elif kind == "str":
            v = _unescape_old(text[1:-1]) if old else _unescape(text[1:-1])
            if last_str is not None and toks[-1] is last_str:
                last_str.value = last_str.value + v  # type: ignore[operator]
                last_str.end = end
                continue
            last_str = Tok("str", text, pos, end, v)
            append(last_str)
        elif kind == "real":
            append(Tok("real", text, pos, end, float(text)))
        elif kind == "qname":
            append(Tok("id", text, pos, end, _unescape(text[1:-1])))
        else:
            line, col = _where(src, pos)
            raise ClassAdSyntaxError(f"unexpected character {src[pos]!r}", line=line, column=col)
    n = len(src)
    toks.append(Tok("eof", "", n, n))
    return toks


# ---------------------------------------------------------------- parser

_PREC = {
    "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5,
    "==": 6, "!=": 6, "=?=": 6, "=!=": 6, "is": 6, "isnt": 6,
    "<": 7, "<=": 7, ">": 7, ">=": 7,
    "<<": 8, ">>": 8, ">>>": 8,
    "+": 9, "-": 9,
    "*": 10, "/": 10, "%": 10,
}
_KW_OP = {"is": "=?=", "isnt": "=!="}


class Parser:
    """Recursive descent with precedence climbing; explicit nesting limits."""

    def __init__(self, src: str, old: bool = False) -> None:
        if not isinstance(src, str):
            raise TypeError("ClassAd text must be a str")
        self.src = src
        self.toks = tokenize(src, old)
        self.i = 0
        self.depth = 0

    # helpers
    def peek(self) -> Tok:
        return self.toks[self.i]

    def next(self) -> Tok:
        t = self.toks[self.i]
        self.i += 1
        return t

    def error(self, msg: str, tok: Tok | None = None) -> ClassAdSyntaxError:
        tok = tok or self.peek()
        line, col = _where(self.src, tok.pos)
        found = "end of input" if tok.kind == "eof" else repr(tok.text)
        return ClassAdSyntaxError(f"{msg}, found {found}", line=line, column=col)

    def expect(self, text: str) -> Tok:
        t = self.peek()
        if t.kind == "op" and t.text == text:
            self.i += 1
            return t
        raise self.error(f"expected {text!r}")

    def at_op(self, text: str) -> bool:
        t = self.toks[self.i]
        return t.kind == "op" and t.text == text

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.error(f"expression nested more than {MAX_NESTING} deep")

    def check(self, node: Expr) -> Expr:
        if node.h > MAX_HEIGHT:
            raise self.error(f"expression tree deeper than {MAX_HEIGHT}")
        return node

    # grammar
    def parse_expr(self) -> Expr:
        self.enter()
        try:
            cond = self.parse_binary(1)
            if self.at_op("?"):
                self.i += 1
                then = self.parse_expr()
                self.expect(":")
                return self.check(Cond(cond, then, self.parse_expr()))
            return cond
        finally:
            self.depth -= 1

    def _binop(self) -> str | None:
        t = self.toks[self.i]
        if t.kind == "op":
            return t.text if t.text in _PREC else None
        if t.kind == "kw" and t.value in _KW_OP:
            return t.value  # type: ignore[return-value]
        return None

    def parse_binary(self, min_prec: int) -> Expr:
        left = self.parse_unary()
        while True:
            op = self._binop()
            if op is None:
                return left
            prec = _PREC[op]
            if prec < min_prec:
                return left
            self.i += 1
            right = self.parse_binary(prec + 1)
            left = self.check(Binary(_KW_OP.get(op, op), left, right))

    def parse_unary(self) -> Expr:
        t = self.peek()
        if t.kind == "op" and t.text in ("-", "+", "!", "~"):
            self.i += 1
            nxt = self.peek()
            if t.text == "-" and nxt.kind in ("int", "real") and nxt.pos == t.end:
                self.i += 1
                return self.parse_elvis(self.parse_postfix(self._number(nxt, True)))
            self.enter()
            try:
                return self.check(Unary(t.text, self.parse_unary()))
            finally:
                self.depth -= 1
        return self.parse_elvis(self.parse_postfix(self.parse_primary()))

    def parse_elvis(self, node: Expr) -> Expr:
        """``a ?: b`` binds as HTCondor's grammar has it: tighter than unary and binary operators,
        left to right, with postfix expressions (or a negative number) on both sides, so
        ``x ?: 0 + 1`` is ``(x ?: 0) + 1`` and ``-x ?: 5`` is ``-(x ?: 5)``."""
        toks = self.toks
        while True:
            t = toks[self.i]
            if not (t.kind == "op" and t.text == "?"):
                return node
            c = toks[self.i + 1]
            if not (c.kind == "op" and c.text == ":"):
                return node
            self.i += 2
            nxt = toks[self.i]
            if nxt.kind == "op" and nxt.text == "-" and toks[self.i + 1].kind in ("int", "real") \
                    and toks[self.i + 1].pos == nxt.end:
                self.i += 2
                right = self.parse_postfix(self._number(toks[self.i - 1], True))
            else:
                right = self.parse_postfix(self.parse_primary())
            node = self.check(Elvis(node, right))

    def _number(self, tok: Tok, neg: bool) -> Expr:
        v = tok.value
        if neg:
            v = -v  # type: ignore[operator]
        if tok.kind == "int" and not INT_MIN <= v <= -INT_MIN - 1:  # type: ignore[operator]
            raise self.error("integer literal out of 64-bit range", tok)
        return Literal(v)

    def parse_postfix(self, node: Expr) -> Expr:
        while True:
            t = self.peek()
            if t.kind != "op":
                return node
            if t.text == ".":
                self.i += 1
                n = self.next()
                if n.kind != "id":
                    self.i -= 1
                    raise self.error("expected an attribute name after '.'")
                node = self.check(Select(node, n.value))  # type: ignore[arg-type]
            elif t.text == "[":
                self.i += 1
                self.enter()
                try:
                    idx = self.parse_expr()
                finally:
                    self.depth -= 1
                self.expect("]")
                node = self.check(Index(node, idx))
            else:
                return node

    def parse_primary(self) -> Expr:
        t = self.next()
        k = t.kind
        if k == "int" or k == "real":
            return self._number(t, False)
        if k == "str":
            return Literal(t.value)
        if k == "kw":
            v = t.value
            if v == "true":
                return Literal(True)
            if v == "false":
                return Literal(False)
            if v == "undefined":
                return Literal(UNDEFINED)
            if v == "error":
                return Literal(ERROR)
            self.i -= 1
            raise self.error("expected an expression")
        if k == "id":
            if self.at_op("(") and not t.text.startswith("'"):
                self.i += 1
                args = self._items(")")
                if len(args) == 1 and type(args[0]) is Literal and type(args[0].value) is str \
                        and t.text.lower() in ("abstime", "reltime"):
                    return self._time_literal(t, args[0].value)
                return self.check(Call(t.text, args))
            return AttrRef(t.value)  # type: ignore[arg-type]
        if k == "op":
            if t.text == "(":
                self.enter()
                try:
                    inner = self.parse_expr()
                finally:
                    self.depth -= 1
                self.expect(")")
                return self.check(Paren(inner))
            if t.text == "{":
                return self.check(ListExpr(self._items("}")))
            if t.text == "[":
                self.i -= 1
                return self.check(AdExpr(self.parse_ad_body()))
        self.i -= 1
        raise self.error("expected an expression")

    def _time_literal(self, name: Tok, text: str) -> Expr:
        """``absTime("...")`` / ``relTime("...")`` of a string literal is read at parse time, as
        HTCondor does: malformed text is a syntax error."""
        from .functions import parse_abstime, parse_reltime

        if name.text.lower() == "abstime":
            at = parse_abstime(text)
            if at is None:
                raise self.error(f"bad absTime text {text!r}", name)
            return Literal(at)
        secs = parse_reltime(text)
        if secs is None:
            raise self.error(f"bad relTime text {text!r}", name)
        return RelTimeLiteral(float(secs))

    def _items(self, close: str) -> list[Expr]:
        self.enter()
        try:
            items: list[Expr] = []
            if self.at_op(close):
                self.i += 1
                return items
            while True:
                items.append(self.parse_expr())
                if self.at_op(","):
                    self.i += 1
                    continue
                self.expect(close)
                return items
        finally:
            self.depth -= 1

    def parse_ad_body(self) -> ClassAd:
        """``[ name = expr; ... ]`` (empty statements allowed)."""
        from .ad import ClassAd

        self.expect("[")
        self.enter()
        try:
            ad = ClassAd()
            while True:
                if self.at_op("]"):
                    self.i += 1
                    return ad
                if self.at_op(";"):
                    self.i += 1
                    continue
                n = self.next()
                if n.kind != "id":
                    self.i -= 1
                    raise self.error("expected an attribute name or ']'")
                self.expect("=")
                ad._set(n.value, self.parse_expr(), None)  # type: ignore[arg-type]
                if self.at_op(";"):
                    self.i += 1
                elif not self.at_op("]"):
                    raise self.error("expected ';' or ']'")
        finally:
            self.depth -= 1

    def expect_end(self) -> None:
        if self.peek().kind != "eof":
            raise self.error("expected end of input")


_CACHE: dict[tuple[str, bool], Expr] = {}
CACHE_SIZE = 4096  # distinct texts whose trees are kept (least recently used dropped first)


def parse_expr(text: str, old: bool = False) -> Expr:
    """Parse one expression; the whole text must be consumed.  ``old`` reads strings as the old
    long format writes them (only \\" is an escape).

    Trees are immutable, so identical text (schedds and collectors see the same Requirements in
    thousands of ads) is parsed once: a bounded LRU dict maps text to its tree.  Texts holding a
    nested ad (``[``) are not cached, since a nested ad is a mutable ClassAd."""
    key = (text, old)
    cache = _CACHE
    e = cache.pop(key, None)
    if e is not None:
        cache[key] = e
        return e
    p = Parser(text, old)
    if p.peek().kind == "eof":
        raise p.error("expected an expression")
    e = p.parse_expr()
    p.expect_end()
    if "[" not in text:
        if len(cache) >= CACHE_SIZE:
            del cache[next(iter(cache))]
        cache[key] = e
    return e


def unparse(x: object) -> str:
    """Unparse an expression or a value."""
    if isinstance(x, Expr):
        return str(x)
    return unparse_value(x)


__all__ = ["ClassAdSyntaxError", "Expr", "parse_expr", "unparse", "format_real"]

"""Expression trees: lexer, parser, unparser and the closure compiler.

Each tree compiles once, on first evaluation, into nested Python closures ``f(scope, ctx)``; the
negotiator evaluates the same Requirements against thousands of ads, so the per-eval cost is what
matters.  Parsing enforces explicit depth limits so hostile input fails with ClassAdSyntaxError
instead of exhausting the Python stack.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
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

    __slots__ = ("_fn",)  # the compiled closure; unset until first needed (one store less per node)

    @property
    def h(self) -> int:
        """Tree height as the parser limits it (a chain of one left-associative operator counts
        once, since unparse and compile walk such chains iteratively)."""
        return tree_height(self)

    # public API
    def eval(self, my: ClassAd | None = None, target: ClassAd | None = None) -> object:
        """Evaluate with MY=my and TARGET=target."""
        try:
            fn = self._fn
        except AttributeError:
            fn = self.compiled()
        try:
            return fn(my, Ctx(my, target))
        except RecursionError:
            return ERROR

    def compiled(self) -> Fn:
        """The closure for this tree (built once)."""
        try:
            return self._fn
        except AttributeError:
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

    def _kids(self) -> Sequence[Expr]:
        """Direct subtrees."""
        return ()

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

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    @property
    def lname(self) -> str:
        """The name as looked up (names are case-insensitive)."""
        return self.name.lower()

    def _unparse(self, out: list[str], old: bool) -> None:
        out.append(unparse_name(self.name))

    def _compile(self) -> Fn:
        k = self.lname
        _lookup = lookup
        return lambda s, c: _lookup(s, k, c)


class Select(Expr):
    """``base.name``; ``MY.name`` and ``TARGET.name`` compile to direct scope lookups."""

    __slots__ = ("base", "name")

    def __init__(self, base: Expr, name: str) -> None:
        self.base = base
        self.name = name

    @property
    def lname(self) -> str:
        """The name as looked up (names are case-insensitive)."""
        return self.name.lower()

    def _kids(self) -> Sequence[Expr]:
        return (self.base,)

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
        self.base = base
        self.index = index

    def _kids(self) -> Sequence[Expr]:
        return (self.base, self.index)

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
        self.op = op
        self.operand = operand

    def _kids(self) -> Sequence[Expr]:
        return (self.operand,)

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
        self.inner = inner

    def _kids(self) -> Sequence[Expr]:
        return (self.inner,)

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
        self.op = op
        self.left = left
        self.right = right

    def _kids(self) -> Sequence[Expr]:
        return (self.left, self.right)

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
        if op == "&&" or op == "||":
            return _compile_logic(fns, op == "||")
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


def _compile_logic(fns: list[Fn], stop: bool) -> Fn:
    """A chain of ``&&`` (``stop`` False) or ``||`` (``stop`` True), short-circuiting on ``stop``."""
    _logic = ops.logic
    _b3 = ops.to_bool3
    go = not stop
    if len(fns) == 2:
        lf, rf = fns

        def logic2(s: Any, c: Ctx) -> object:
            v = lf(s, c)
            if v is stop:
                return stop
            if v is go:
                r = rf(s, c)
                if r is True or r is False:
                    return r
                return _b3(r)
            return _logic(v, lambda: rf(s, c), stop)
        return logic2

    first, rest = fns[0], fns[1:]

    def logic_n(s: Any, c: Ctx) -> object:
        v = first(s, c)
        for f in rest:
            if v is stop:
                return stop
            if v is go:
                v = _b3(f(s, c))
            else:
                v = _logic(v, lambda f=f: f(s, c), stop)
        return _b3(v) if v is not False and v is not True else v
    return logic_n


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
        self.cond = cond
        self.then = then
        self.other = other

    def _kids(self) -> Sequence[Expr]:
        return (self.cond, self.then, self.other)

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
        self.left = left
        self.right = right

    def _kids(self) -> Sequence[Expr]:
        return (self.left, self.right)

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
        self.name = name
        self.args = args

    def _kids(self) -> Sequence[Expr]:
        return self.args

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
        self.items = items

    def _kids(self) -> Sequence[Expr]:
        return self.items

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
        self.ad = ad

    def _kids(self) -> Sequence[Expr]:
        return [e.expr for e in self.ad._attrs.values() if e.expr is not None]

    def _unparse(self, out: list[str], old: bool) -> None:
        out.append(self.ad._unparse(old))

    def _compile(self) -> Fn:
        tmpl = self.ad
        return lambda s, c: tmpl._view(s)


def _node_height(n: Expr, known: dict[int, int]) -> int:
    """Height of ``n`` from its subtrees' heights in ``known`` (by id; absent means a leaf)."""
    get = known.get
    if type(n) is Binary:
        left, right = n.left, n.right
        lh, rh = get(id(left), 1), get(id(right), 1)
        if type(left) is Binary and left.op == n.op:
            return max(lh, rh + 1)
        return max(lh, rh) + 1
    return max((get(id(k), 1) for k in n._kids()), default=0) + 1


def tree_height(root: Expr) -> int:
    """Height of a whole tree, iteratively (trees built outside the parser can be deep)."""
    known: dict[int, int] = {}
    stack: list[tuple[Expr, bool]] = [(root, False)]
    while stack:
        n, done = stack.pop()
        if done:
            known[id(n)] = _node_height(n, known)
        else:
            stack.append((n, True))
            stack.extend((k, False) for k in n._kids())
    return known[id(root)]


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

# One match per token: skip blanks and comments, then capture the token text.  A number directly
# after '-' is captured with it ("-5"): in operand position that is a negative literal, in operator
# position the parser splits it back into '-' and the number.  An unterminated comment, string or
# quoted name takes the rest of the text (one failed scan, not one per quote); other characters no
# rule accepts come out as one-character tokens.  The parser rejects both (see _lex_problem).  The
# end of the text matches as "" (once or twice).  Commonest first: names, then one-character operators.
_LEX = re.compile(
    r"""(?:\s+|//[^\n]*|/\*.*?\*/)*+
    ( [A-Za-z_][A-Za-z0-9_]*
    | [(),{}*+%^~;?:\[\]]
    | >>>|=[?!]=|[=!<>]=|<<|>>|&&|\|\|
    | -?(?:\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)
    | "[^"\\]*(?:\\.[^"\\]*)*"
    | '[^'\\]*(?:\\.[^'\\]*)*'
    | (?:/\*|["']).*
    | \S
    | \Z )""",
    re.VERBOSE | re.DOTALL,
)
_LEX_PLAIN = re.compile(_LEX.pattern.replace(r"(?:\s+|//[^\n]*|/\*.*?\*/)*+", r"\s*+"), re.VERBOSE | re.DOTALL)
"""The same tokens for text without comments (one less alternative to try before each token)."""
_QUOTED = re.compile(r""""[^"\\]*(?:\\.[^"\\]*)*"|'[^'\\]*(?:\\.[^'\\]*)*'""", re.DOTALL)
_IDSTART = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_NUMSTART = frozenset("0123456789.-")
_OPCHARS = frozenset("-+*/%<>!~&|^()[]{},;.?:=")

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


def _unescape_old(body: str) -> str:
    return body.replace('\\"', '"')


def _where(src: str, pos: int) -> tuple[int, int]:
    line = src.count("\n", 0, pos) + 1
    col = pos - (src.rfind("\n", 0, pos) + 1) + 1
    return line, col


def _is_number(t: str) -> bool:
    """Token text of a number literal, possibly with its '-' (a lone '.' or '-' is an operator)."""
    return t[:1] in _NUMSTART and len(t) > 1 or t.isdecimal()


def _lex_problem(t: str) -> tuple[str, int] | None:
    """What is lexically wrong with one token (message, offset of the bad part), if anything."""
    if not t:
        return None
    if t[0] in "\"'" and not _QUOTED.fullmatch(t):
        return f"unexpected character {t[0]!r}", 0
    if len(t) == 1:
        if t in _OPCHARS or t in _IDSTART or t.isdecimal():
            return None
        return f"unexpected character {t!r}", 0
    if t[:2] == "/*":
        return "unterminated comment", 0
    body = t[1:] if t[0] == "-" else t
    if body[0] == "0" and len(body) > 1 and body.isdecimal():
        return f"bad number {body!r}: expected a decimal without leading zero", len(t) - len(body)
    return None


class Tok:
    """One token with its place in the text (for callers that read single tokens)."""

    __slots__ = ("kind", "text", "pos", "end", "value")

    def __init__(self, kind: str, text: str, pos: int, end: int, value: object = None) -> None:
        self.kind = kind
        self.text = text
        self.pos = pos
        self.end = end
        self.value = value


# ---------------------------------------------------------------- parser

_PREC = {
    "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5,
    "==": 6, "!=": 6, "=?=": 6, "=!=": 6,
    "<": 7, "<=": 7, ">": 7, ">=": 7,
    "<<": 8, ">>": 8, ">>>": 8,
    "+": 9, "-": 9,
    "*": 10, "/": 10, "%": 10,
}
_KW_OP = {"is": "=?=", "isnt": "=!="}


def _any_case(word: str) -> list[str]:
    out = [""]
    for ch in word:
        out = [p + c for p in out for c in {ch.lower(), ch.upper()}]
    return out


_KW_ANY = frozenset(v for w in _KEYWORDS for v in _any_case(w))  # keywords in every spelling: no lower()
_KW_OP_ANY = {v: op for w, op in _KW_OP.items() for v in _any_case(w)}
# What may follow an operand: binary operators by precedence (is/isnt in every spelling), and the
# tokens that end a run of them as 0.  Anything else is looked at more closely.
_AFTER = {**_PREC, **dict.fromkeys(_KW_OP_ANY, 6), **dict.fromkeys((")", ",", "", "]", "}", ":", "?", ";"), 0)}
_UNARY = frozenset({"-", "+", "!", "~"})
_AFTER_OPERAND = frozenset({".", "[", "(", "?"})  # an operand followed by these is not a simple one
_DIGITS = frozenset("0123456789")
_CONSTS: dict[str, object] = {"true": True, "false": False, "undefined": UNDEFINED, "error": ERROR}
_INT_MAX = -INT_MIN - 1


class Parser:
    """Precedence climbing over a list of token strings, with explicit nesting limits.

    Tokens are plain strings from one ``findall`` and ``self.i`` indexes them; positions are only
    worked out when there is an error to report.  Depth (``d``) is passed down instead of kept in
    a counter.  Tree height is only tracked when the text has more tokens than MAX_HEIGHT (every
    node consumes a token, so shorter text cannot build a taller tree)."""

    __slots__ = ("src", "old", "toks", "i", "deep", "heights")

    def __init__(self, src: str, old: bool = False) -> None:
        if not isinstance(src, str):
            raise TypeError("ClassAd text must be a str")
        self.src = src
        self.old = old
        toks = (_LEX if "/*" in src or "//" in src else _LEX_PLAIN).findall(src)
        k = len(toks) - 2  # the last token before the one or two "" at the end
        if k > 0 and not toks[k]:
            k -= 1
        if k >= 0:
            last = toks[k]
            q = last[:1]
            if (q == '"' or q == "'") and not (len(last) > 1 and last[-1] == q and last[-2] != "\\") \
                    and not _QUOTED.fullmatch(last):
                toks[k] = "\0"  # an unterminated string: no rule accepts this
        self.deep = len(toks) >= MAX_HEIGHT
        toks += ("", "")  # end of input, and room to look one past it
        self.toks = toks
        self.i = 0
        if self.deep:
            self.heights: dict[int, int] = {}

    # errors
    def error(self, msg: str, at: int | None = None, skip: int = 0) -> ClassAdSyntaxError:
        """The error to raise for token ``at`` (default: the current one): the first lexical error
        in the text if there is one (as a separate lexer pass would report it), else ``msg``."""
        src = self.src
        i = self.i if at is None else at
        pos, found = len(src), "end of input"
        for k, m in enumerate(_LEX.finditer(src)):
            raw = m.group(1)
            bad = _lex_problem(raw)
            if bad is not None:
                line, col = _where(src, m.start(1) + bad[1])
                return ClassAdSyntaxError(bad[0], line=line, column=col)
            if k == i and raw:
                cut = len(raw) - len(self.toks[i]) + skip  # a '-' split off or skipped
                pos = m.start(1) + cut
                neg = not cut and len(raw) > 1 and raw[0] == "-"  # "-5": the '-' comes first
                found = repr("-" if neg else raw[cut:])
        line, col = _where(src, pos)
        return ClassAdSyntaxError(f"{msg}, found {found}", line=line, column=col)

    def _check(self, node: Expr) -> Expr:
        hs = self.heights
        h = hs[id(node)] = _node_height(node, hs)
        if h > MAX_HEIGHT:
            raise self.error(f"expression tree deeper than {MAX_HEIGHT}")
        return node

    def expect(self, text: str) -> None:
        if self.toks[self.i] != text:
            raise self.error(f"expected {text!r}")
        self.i += 1

    def expect_end(self) -> None:
        if self.toks[self.i] != "":
            raise self.error("expected end of input")

    def peek(self) -> Tok:
        """The current token as a Tok (kinds: id, kw, int, real, str, op, eof); a lexical error
        anywhere in the text is raised first, as a separate lexer pass would."""
        if any(_lex_problem(raw) for raw in _LEX.findall(self.src)):
            raise self.error("bad token")
        i = self.i
        t = self.toks[i]
        if t == "":
            n = len(self.src)
            return Tok("eof", "", n, n)
        pos = 0
        for k, m in enumerate(_LEX.finditer(self.src)):
            if k == i:
                pos = m.start(1) + len(m.group(1)) - len(t)
                break
        end = pos + len(t)
        c = t[0]
        if c in _IDSTART:
            low = t.lower()
            return Tok("kw", t, pos, end, low) if low in _KEYWORDS else Tok("id", t, pos, end, t)
        if c == "'" and len(t) > 1:
            return Tok("id", t, pos, end, _unescape(t[1:-1]))
        if c == '"' and len(t) > 1:
            return Tok("str", t, pos, end, _unescape_old(t[1:-1]) if self.old else _unescape(t[1:-1]))
        if _is_number(t) and t[0] != "-":
            if "." in t or "e" in t or "E" in t:
                return Tok("real", t, pos, end, float(t))
            return Tok("int", t, pos, end, int(t))
        if t[0] == "-" and len(t) > 1:
            return Tok("op", "-", pos, pos + 1, "-")
        return Tok("op", t, pos, end, t)

    def next(self) -> Tok:
        """The current token as a Tok, stepping past it."""
        t = self.peek()
        if t.kind == "op" and t.text == "-" and len(self.toks[self.i]) > 1:
            self.toks[self.i] = self.toks[self.i][1:]
        else:
            self.i += 1
        return t

    # grammar
    def parse_expr(self, d: int = 0) -> Expr:
        """expr := binary [ '?' expr ':' expr ]"""
        d += 1
        if d > MAX_NESTING:
            raise self.error(f"expression nested more than {MAX_NESTING} deep")
        node = self.binary(d)
        if self.toks[self.i] == "?":
            return self._cond(node, d)
        return node

    def _cond(self, node: Expr, d: int) -> Expr:
        """``node ? then : other``, at the '?' (``d`` is the depth of the whole expression)."""
        self.i += 1
        then = self.parse_expr(d)
        self.expect(":")
        node = Cond(node, then, self.parse_expr(d))
        if self.deep:
            self._check(node)
        return node

    def binary(self, d: int, min_prec: int = 1, node: Expr | None = None) -> Expr:
        """Operands joined by binary operators of precedence ``min_prec`` or more, by precedence
        climbing: a call only where a tighter operator follows, none per precedence level.  The
        commonest operands (a name, ``MY.name``/``TARGET.name``, a number, one string, a
        parenthesis, a call) are read inline; anything else goes through unary().  ``node`` is an
        operand already read."""
        toks = self.toks
        prec_of = _AFTER.get
        deep = self.deep
        i = self.i
        left: Expr | None = None
        op = ""
        p = 0
        while True:
            if node is None:
                t = toks[i]
                nx = toks[i + 1]
                c = t[:1]
                if c in _IDSTART:
                    if nx == ".":
                        n = toks[i + 2]
                        if n[:1] in _IDSTART and toks[i + 3] not in _AFTER_OPERAND \
                                and t not in _KW_ANY and n not in _KW_ANY:
                            node = Select(AttrRef(t), n)
                            i += 3
                            if deep:
                                self._check(node)
                    elif nx not in _AFTER_OPERAND:
                        if t not in _KW_ANY:
                            node = AttrRef(t)
                            i += 1
                        else:
                            low = t.lower()
                            if low in _CONSTS:
                                node = Literal(_CONSTS[low])
                                i += 1
                    elif nx == "(" and t not in _KW_ANY:
                        node = self._call(t, i, d)
                        i = self.i
                        if toks[i] in _AFTER_OPERAND:
                            node = self._tail(node, d)
                            i = self.i
                elif t == "(" and d + 2 <= MAX_NESTING:  # as _group, without the calls
                    self.i = i + 1
                    node = self.binary(d + 2)
                    i = self.i
                    if toks[i] == "?":
                        node = self._cond(node, d + 2)
                        i = self.i
                    if toks[i] != ")":
                        raise self.error("expected ')'")
                    i += 1
                    node = Paren(node)
                    if deep:
                        self.i = i
                        self._check(node)
                    if toks[i] in _AFTER_OPERAND:
                        self.i = i
                        node = self._tail(node, d)
                        i = self.i
                elif t == "{":
                    node = self._group(t, i, d)
                    i = self.i
                    if toks[i] in _AFTER_OPERAND:
                        node = self._tail(node, d)
                        i = self.i
                elif nx in _AFTER_OPERAND:
                    pass
                elif c == '"':
                    if len(t) > 1 and nx[:1] != '"':
                        v = t[1:-1]
                        if "\\" in v:
                            v = _unescape_old(v) if self.old else _unescape(v)
                        node = Literal(v)
                        i += 1
                elif c in _DIGITS:
                    if len(t) < 19 and t.isdigit() and (c != "0" or len(t) == 1):
                        node = Literal(int(t))
                    else:
                        node = self._number(t, i)
                    i += 1
                if node is None:
                    self.i = i
                    node = self.unary(d)
                    i = self.i
            # the operator after it, not consumed yet
            nop = toks[i]
            p2 = prec_of(nop)
            if p2 is None:
                p2 = 9 if nop[:1] == "-" and len(nop) > 1 else 0  # "-5" after an operand: '-' then 5
            if left is None:
                left = node
            else:
                if p2 > p:  # a tighter operator: it takes this operand
                    self.i = i
                    node = self.binary(d, p + 1, node)
                    i = self.i
                    nop = toks[i]
                    p2 = prec_of(nop)
                    if p2 is None:
                        p2 = 9 if nop[:1] == "-" and len(nop) > 1 else 0
                left = Binary(op, left, node)
                if deep:
                    self.i = i
                    self._check(left)
            if p2 < min_prec:  # 0: the end of this run
                self.i = i
                return left
            p = p2
            if nop in _KW_OP_ANY:
                op = _KW_OP_ANY[nop]
                i += 1
            elif p2 == 9 and len(nop) > 1:
                op = "-"
                toks[i] = nop[1:]
            else:
                op = nop
                i += 1
            node = None

    def unary(self, d: int) -> Expr:
        t = self.toks[self.i]
        if t in _UNARY:
            self.i += 1
            d += 1
            if d > MAX_NESTING:
                raise self.error(f"expression nested more than {MAX_NESTING} deep")
            node: Expr = Unary(t, self.unary(d))
            if self.deep:
                self._check(node)
            return node
        return self._tail(self.primary(d), d)

    def _tail(self, node: Expr, d: int) -> Expr:
        """Postfix selections/indexes and elvis after an operand."""
        toks = self.toks
        t = toks[self.i]
        if t == "." or t == "[":
            node = self.postfix(node, d)
            t = toks[self.i]
        if t == "?" and toks[self.i + 1] == ":":
            return self.elvis(node, d)
        return node

    def elvis(self, node: Expr, d: int) -> Expr:
        """``a ?: b`` binds as HTCondor's grammar has it: tighter than unary and binary operators,
        left to right, with postfix expressions (or a negative number) on both sides, so
        ``x ?: 0 + 1`` is ``(x ?: 0) + 1`` and ``-x ?: 5`` is ``-(x ?: 5)``."""
        toks = self.toks
        while toks[self.i] == "?" and toks[self.i + 1] == ":":
            self.i += 2
            right = self.primary(d)
            if toks[self.i] in (".", "["):
                right = self.postfix(right, d)
            node = Elvis(node, right)
            if self.deep:
                self._check(node)
        return node

    def postfix(self, node: Expr, d: int) -> Expr:
        toks = self.toks
        while True:
            t = toks[self.i]
            if t == ".":
                self.i += 1
                n = toks[self.i]
                c = n[:1]
                if c in _IDSTART and n not in _KW_ANY:
                    name = n
                elif c == "'" and len(n) > 1:
                    name = _unescape(n[1:-1])
                else:
                    raise self.error("expected an attribute name after '.'")
                self.i += 1
                node = Select(node, name)
            elif t == "[":
                self.i += 1
                if d + 1 > MAX_NESTING:
                    raise self.error(f"expression nested more than {MAX_NESTING} deep")
                idx = self.parse_expr(d + 1)
                self.expect("]")
                node = Index(node, idx)
            else:
                return node
            if self.deep:
                self._check(node)

    def primary(self, d: int) -> Expr:
        toks = self.toks
        i = self.i
        t = toks[i]
        c = t[:1]
        if c in _IDSTART:
            if t in _KW_ANY:
                low = t.lower()
                if low in _CONSTS:
                    self.i = i + 1
                    return Literal(_CONSTS[low])
                raise self.error("expected an expression")
            if toks[i + 1] == "(":
                return self._call(t, i, d)
            self.i = i + 1
            return AttrRef(t)
        if _is_number(t):
            self.i = i + 1
            return self._number(t, i)
        if c == '"' and len(t) > 1:
            old = self.old
            v = _unescape_old(t[1:-1]) if old else _unescape(t[1:-1])
            i += 1
            t = toks[i]
            while t[:1] == '"' and len(t) > 1:  # adjacent strings are one literal
                v += _unescape_old(t[1:-1]) if old else _unescape(t[1:-1])
                i += 1
                t = toks[i]
            self.i = i
            return Literal(v)
        if t == "(" or t == "{":
            return self._group(t, i, d)
        if t == "[":
            node: Expr = AdExpr(self.parse_ad_body(d))
        elif c == "'" and len(t) > 1:
            self.i = i + 1
            return AttrRef(_unescape(t[1:-1]))
        else:
            raise self.error("expected an expression")
        if self.deep:
            self._check(node)
        return node

    def _call(self, name: str, i: int, d: int) -> Expr:
        """``name(args)`` with the name at token ``i``."""
        self.i = i + 2
        args = self.items(")", d)
        if len(args) == 1 and len(name) == 7:
            low = name.lower()
            if low == "abstime" or low == "reltime":
                a = args[0]
                if type(a) is Literal and type(a.value) is str:
                    return self._time_literal(i, low, a.value)
        node = Call(name, args)
        if self.deep:
            self._check(node)
        return node

    def _group(self, t: str, i: int, d: int) -> Expr:
        """``( expr )`` or ``{ items }`` opening at token ``i``."""
        self.i = i + 1
        if t == "(":
            if d + 1 > MAX_NESTING:
                raise self.error(f"expression nested more than {MAX_NESTING} deep")
            inner = self.parse_expr(d + 1)
            if self.toks[self.i] != ")":
                raise self.error("expected ')'")
            self.i += 1
            node: Expr = Paren(inner)
        else:
            node = ListExpr(self.items("}", d))
        if self.deep:
            self._check(node)
        return node

    def _number(self, t: str, i: int) -> Expr:
        if "." in t or "e" in t or "E" in t:
            return Literal(float(t))
        v = int(t)
        if not INT_MIN <= v <= _INT_MAX:
            raise self.error("integer literal out of 64-bit range", i, 1 if t[0] == "-" else 0)
        if t[0] == "0" and len(t) > 1 or t[:2] == "-0" and len(t) > 2:
            raise self.error("bad number")  # reported as the lexical error it is
        return Literal(v)

    def _time_literal(self, at: int, low: str, text: str) -> Expr:
        """``absTime("...")`` / ``relTime("...")`` of a string literal is read at parse time, as
        HTCondor does: malformed text is a syntax error."""
        from .functions import parse_abstime, parse_reltime

        if low == "abstime":
            t = parse_abstime(text)
            if t is None:
                raise self.error(f"bad absTime text {text!r}", at)
            return Literal(t)
        secs = parse_reltime(text)
        if secs is None:
            raise self.error(f"bad relTime text {text!r}", at)
        return RelTimeLiteral(float(secs))

    def items(self, close: str, d: int) -> list[Expr]:
        d += 1
        if d > MAX_NESTING:
            raise self.error(f"expression nested more than {MAX_NESTING} deep")
        toks = self.toks
        items: list[Expr] = []
        if toks[self.i] == close:
            self.i += 1
            return items
        deeper = d + 1
        if deeper > MAX_NESTING:  # as parse_expr(d) would say
            raise self.error(f"expression nested more than {MAX_NESTING} deep")
        binary = self.binary
        while True:
            node = binary(deeper)
            t = toks[self.i]
            if t == "?":
                node = self._cond(node, deeper)
                t = toks[self.i]
            items.append(node)
            if t == ",":
                self.i += 1
                continue
            if t != close:
                raise self.error(f"expected {close!r}")
            self.i += 1
            return items

    def parse_ad_body(self, d: int = 0) -> ClassAd:
        """``[ name = expr; ... ]`` (empty statements allowed)."""
        from .ad import ClassAd

        self.expect("[")
        d += 1
        if d > MAX_NESTING:
            raise self.error(f"expression nested more than {MAX_NESTING} deep")
        toks = self.toks
        ad = ClassAd()
        while True:
            t = toks[self.i]
            if t == "]":
                self.i += 1
                return ad
            if t == ";":
                self.i += 1
                continue
            c = t[:1]
            if c in _IDSTART and t not in _KW_ANY:
                name = t
            elif c == "'" and len(t) > 1:
                name = _unescape(t[1:-1])
            else:
                raise self.error("expected an attribute name or ']'")
            self.i += 1
            self.expect("=")
            ad._set(name, self.parse_expr(d), None)
            t = toks[self.i]
            if t == ";":
                self.i += 1
            elif t != "]":
                raise self.error("expected ';' or ']'")


_CACHE: dict[tuple[str, bool], Expr] = {}
CACHE_SIZE = 4096  # distinct texts whose trees are kept (least recently used dropped first); 0: none


def parse_expr(text: str, old: bool = False) -> Expr:
    """Parse one expression; the whole text must be consumed.  ``old`` reads strings as the old
    long format writes them (only \\" is an escape).

    Trees are immutable, so identical text (schedds and collectors see the same Requirements in
    thousands of ads) is parsed once: a bounded LRU dict maps text to its tree.  Texts holding a
    nested ad (``[``) are not cached, since a nested ad is a mutable ClassAd."""
    if CACHE_SIZE <= 0:
        p = Parser(text, old)
        e = p.parse_expr()
        p.expect_end()
        return e
    key = (text, old)
    cache = _CACHE
    e = cache.pop(key, None)
    if e is not None:
        cache[key] = e
        return e
    p = Parser(text, old)
    e = p.parse_expr()
    p.expect_end()
    if "[" not in text:
        if len(cache) >= CACHE_SIZE:  # drop the least recently used half (one rebuild, not one per miss)
            keep = list(cache.items())[CACHE_SIZE // 2:]
            cache.clear()
            cache.update(keep)
        cache[key] = e
    return e


def unparse(x: object) -> str:
    """Unparse an expression or a value."""
    if isinstance(x, Expr):
        return str(x)
    return unparse_value(x)


__all__ = ["ClassAdSyntaxError", "Expr", "parse_expr", "unparse", "format_real"]

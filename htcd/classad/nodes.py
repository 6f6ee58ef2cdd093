"""Expression trees: the node classes, how each prints (unparse) and what it compiles to.

Trees are immutable once built.  Each node compiles lazily, once, by handing its compiled
subtrees to the builders in ``compiler``; ``ad`` registers the ClassAd class here (see
``set_ad_class``) so that nodes and the parser can hold nested ads without importing it."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Protocol

from . import compiler
from .registry import compile_call
from .runtime import NOT_CONST, AdTemplate, Ctx, Fn, Scope
from .values import ERROR, INT_MAX, INT_MIN, UNDEFINED, AbsTime, RelTime, quote_string, unparse_value


class TreeEntry(Protocol):
    """One stored attribute as the tree code sees it: its tree, if parsed."""

    @property
    def expr(self) -> Expr | None: ...


class NestedAd(AdTemplate, Protocol):
    """A ClassAd as the nodes and the parser use one (``ad.ClassAd``, which sits above them)."""

    @property
    def _attrs(self) -> Mapping[str, TreeEntry]: ...

    def _set(self, name: str, expr: Expr | None, text: str | None) -> None: ...

    def _unparse(self, old: bool = False) -> str: ...

    def copy(self) -> NestedAd: ...


_AD_CLASS: list[type[NestedAd]] = []


def set_ad_class(cls: type[NestedAd]) -> None:
    """Record the ClassAd class (called once, by ``ad``, which sits above this module)."""
    _AD_CLASS[:] = [cls]


def ad_class() -> type[NestedAd]:
    """The ClassAd class, for building and recognising nested ads."""
    return _AD_CLASS[0]



_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
KEYWORDS = frozenset({"true", "false", "undefined", "error", "is", "isnt"})
_QUOTED_WORDS = KEYWORDS | {"parent"}  # HTCondor's unparser quotes these names ('PARENT')


def unparse_name(name: str) -> str:
    """Attribute names that are not plain identifiers print in single quotes."""
    if _IDENT.match(name) and name.lower() not in _QUOTED_WORDS:
        return name
    return quote_string(name, "'")


def _unparse_parts(out: list[str], old: bool, *parts: Expr | str) -> None:
    """Print subtrees and the text around them, in order."""
    for p in parts:
        if isinstance(p, str):
            out.append(p)
        else:
            p._unparse(out, old)


def _unparse_joined(out: list[str], old: bool, items: Sequence[Expr], sep: str) -> None:
    """Print subtrees with ``sep`` between them."""
    for i, x in enumerate(items):
        if i:
            out.append(sep)
        x._unparse(out, old)


class Expr:
    """A parsed ClassAd expression.  Immutable; compiled lazily and cached."""

    __slots__ = ("_fn",)  # the compiled closure; unset until first needed (one store less per node)
    _fn: Fn

    @property
    def h(self) -> int:
        """Tree height as the parser limits it (a chain of one left-associative operator counts
        once, since unparse and compile walk such chains iteratively)."""
        return tree_height(self)

    # public API
    def eval(self, my: Scope | None = None, target: Scope | None = None) -> object:
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
        return NOT_CONST


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
        return compiler.compile_const(self.value)


class RelTimeLiteral(Literal):
    """``relTime("text")`` read at parse time: a number of seconds (a real, as in HTCondor) that
    prints back as ``relTime("[D+]HH:MM:SS")``."""

    __slots__ = ()

    value: float

    def _unparse(self, out: list[str], old: bool) -> None:
        out.append(f'relTime("{RelTime(self.value).text(fraction=True)}")')


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
        return compiler.compile_lookup(self.lname)


class AbsRef(Expr):
    """``.name``: a name looked up in the outermost ad (HTCondor's absolute reference)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    @property
    def lname(self) -> str:
        return self.name.lower()

    def _unparse(self, out: list[str], old: bool) -> None:
        out.append("." + unparse_name(self.name))

    def _compile(self) -> Fn:
        return compiler.compile_absolute(self.lname)


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
        _unparse_parts(out, old, self.base, ".", self.name)  # HTCondor never quotes a selected name

    def _compile(self) -> Fn:
        k = self.lname
        b = self.base
        if type(b) is AttrRef and b.lname in ("target", "my"):
            return compiler.compile_scoped_ref(k, b.lname == "target")
        return compiler.compile_select(b.compiled(), k)


class Index(Expr):
    __slots__ = ("base", "index")

    def __init__(self, base: Expr, index: Expr) -> None:
        self.base = base
        self.index = index

    def _kids(self) -> Sequence[Expr]:
        return (self.base, self.index)

    def _unparse(self, out: list[str], old: bool) -> None:
        _unparse_parts(out, old, self.base, "[", self.index, "]")

    def _compile(self) -> Fn:
        return compiler.compile_index(self.base.compiled(), self.index.compiled())


class Unary(Expr):
    __slots__ = ("op", "operand")

    def __init__(self, op: str, operand: Expr) -> None:
        self.op = op
        self.operand = operand

    def _kids(self) -> Sequence[Expr]:
        return (self.operand,)

    def _unparse(self, out: list[str], old: bool) -> None:
        _unparse_parts(out, old, " " + self.op, self.operand)

    def _compile(self) -> Fn:
        return compiler.compile_unary(self.op, self.operand.compiled())


class Paren(Expr):
    __slots__ = ("inner",)

    def __init__(self, inner: Expr) -> None:
        self.inner = inner

    def _kids(self) -> Sequence[Expr]:
        return (self.inner,)

    def _unparse(self, out: list[str], old: bool) -> None:
        _unparse_parts(out, old, "(", self.inner, ")")

    def const_value(self) -> object:
        return self.inner.const_value()

    def _compile(self) -> Fn:
        return self.inner.compiled()


_OP_TEXT = {"=?=": "is", "=!=": "isnt"}


class Binary(Expr):
    __slots__ = ("left", "op", "right")

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
        while type(node) is Binary and node.op == op:
            items.append(node.right)
            node = node.left
        items.append(node)
        items.reverse()
        return items

    def _unparse(self, out: list[str], old: bool) -> None:
        _unparse_joined(out, old, self._chain(), " " + _OP_TEXT.get(self.op, self.op) + " ")

    def _compile(self) -> Fn:
        items = self._chain()
        rconst = items[1].const_value() if len(items) == 2 else NOT_CONST
        return compiler.compile_binary(self.op, [x.compiled() for x in items], rconst)


class Cond(Expr):
    """``c ? a : b``."""

    __slots__ = ("cond", "other", "then")

    def __init__(self, cond: Expr, then: Expr, other: Expr) -> None:
        self.cond = cond
        self.then = then
        self.other = other

    def _kids(self) -> Sequence[Expr]:
        return (self.cond, self.then, self.other)

    def _unparse(self, out: list[str], old: bool) -> None:
        _unparse_parts(out, old, self.cond, " ? ", self.then, " : ", self.other)

    def _compile(self) -> Fn:
        return compiler.compile_cond(self.cond.compiled(), self.then.compiled(), self.other.compiled())


class Elvis(Expr):
    """``a ?: b``: a unless it is UNDEFINED."""

    __slots__ = ("left", "right")

    def __init__(self, left: Expr, right: Expr) -> None:
        self.left = left
        self.right = right

    def _kids(self) -> Sequence[Expr]:
        return (self.left, self.right)

    def _unparse(self, out: list[str], old: bool) -> None:
        _unparse_parts(out, old, self.left, " ?: ", self.right)

    def _compile(self) -> Fn:
        return compiler.compile_elvis(self.left.compiled(), self.right.compiled())


class Call(Expr):
    __slots__ = ("args", "name")

    def __init__(self, name: str, args: list[Expr]) -> None:
        self.name = name
        self.args = args

    def _kids(self) -> Sequence[Expr]:
        return self.args

    def _unparse(self, out: list[str], old: bool) -> None:
        out.append(self.name + "(")
        _unparse_joined(out, old, self.args, ",")
        out.append(")")

    def _compile(self) -> Fn:
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
        _unparse_joined(out, old, self.items, ",")
        out.append(" }")

    def _compile(self) -> Fn:
        consts = [x.const_value() for x in self.items]
        # a list of constants that print as written needs no note of its source
        plain = all(v is not NOT_CONST and type(v) is not list and unparse_value(v) == str(x)
                    for v, x in zip(consts, self.items, strict=True))
        return compiler.compile_list(consts, [x.compiled() for x in self.items], self.items, plain)


class AdExpr(Expr):
    """A nested ad literal ``[ a = 1; b = a ]``; evaluates to a ClassAd whose parent is the scope."""

    __slots__ = ("ad",)

    def __init__(self, ad: NestedAd) -> None:
        self.ad = ad

    def _kids(self) -> Sequence[Expr]:
        return [e.expr for e in self.ad._attrs.values() if e.expr is not None]

    def _unparse(self, out: list[str], old: bool) -> None:
        out.append(self.ad._unparse(old))

    def _compile(self) -> Fn:
        return compiler.compile_nested_ad(self.ad)


def node_height(n: Expr, known: dict[int, int]) -> int:
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
            known[id(n)] = node_height(n, known)
        else:
            stack.append((n, True))
            stack.extend((k, False) for k in n._kids())
    return known[id(root)]


def literal(value: object) -> Expr:
    """Build an expression tree from a Python value."""
    if isinstance(value, Expr):
        return value
    t = type(value)
    if value is None:
        return Literal(UNDEFINED)
    if isinstance(value, int) and t is int:
        if not INT_MIN <= value <= INT_MAX:
            raise ValueError(f"integer out of 64-bit range: {value}")
        return Literal(value)
    if t in (bool, float, str) or value is UNDEFINED or value is ERROR:
        return Literal(value)
    if isinstance(value, (list, tuple)):
        return ListExpr([literal(x) for x in value])
    if isinstance(value, ad_class()):
        return AdExpr(value.copy())
    if isinstance(value, int):
        return Literal(int(value))
    if t in (AbsTime, RelTime):
        return Literal(value)
    raise TypeError(f"cannot make a ClassAd expression from {type(value).__name__}")


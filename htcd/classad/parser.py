"""The ClassAd parser: precedence climbing over the lexer's tokens, with explicit depth limits.

Parsing enforces the limits so hostile input fails with ClassAdSyntaxError instead of
exhausting the Python stack."""

from __future__ import annotations

from htcd.errors import UserError

from .lexer import (
    IDSTART,
    LEX,
    LEX_PLAIN,
    QUOTED,
    Tok,
    is_number,
    lex_problem,
    line_col,
    unescape,
    unescape_old,
)
from .nodes import (
    KEYWORDS,
    AbsRef,
    AdExpr,
    AttrRef,
    Binary,
    Call,
    Cond,
    Elvis,
    Expr,
    Index,
    ListExpr,
    Literal,
    NestedAd,
    Paren,
    RelTimeLiteral,
    Select,
    Unary,
    ad_class,
    node_height,
)
from .timetext import parse_abstime, parse_reltime
from .values import ERROR, INT_MAX, INT_MIN, UNDEFINED

MAX_NESTING = 100  # brackets, unary operators and ternaries inside one another
MAX_HEIGHT = 200  # tree height, not counting long chains of one left-associative operator


class ClassAdSyntaxError(UserError):
    """ClassAd text that does not parse."""


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


_KW_ANY = frozenset(v for w in KEYWORDS for v in _any_case(w))  # keywords in every spelling: no lower()
_KW_OP_ANY = {v: op for w, op in _KW_OP.items() for v in _any_case(w)}
# What may follow an operand: binary operators by precedence (is/isnt in every spelling), and the
# tokens that end a run of them as 0.  Anything else is looked at more closely.
_AFTER = {**_PREC, **dict.fromkeys(_KW_OP_ANY, 6), **dict.fromkeys((")", ",", "", "]", "}", ":", "?", ";"), 0)}
_UNARY = frozenset({"-", "+", "!", "~"})
_AFTER_OPERAND = frozenset({".", "[", "(", "?"})  # an operand followed by these is not a simple one
_DIGITS = frozenset("0123456789")
_CONSTS: dict[str, object] = {"true": True, "false": False, "undefined": UNDEFINED, "error": ERROR}


class Parser:
    """Precedence climbing over a list of token strings, with explicit nesting limits.

    Tokens are plain strings from one ``findall`` and ``self.i`` indexes them; positions are only
    worked out when there is an error to report.  Depth (``d``) is passed down instead of kept in
    a counter.  Tree height is only tracked when the text has more tokens than MAX_HEIGHT (every
    node consumes a token, so shorter text cannot build a taller tree)."""

    __slots__ = ("deep", "heights", "i", "old", "src", "toks")

    def __init__(self, src: str, old: bool = False) -> None:
        if not isinstance(src, str):
            raise TypeError("ClassAd text must be a str")
        self.src = src
        self.old = old
        toks = (LEX if "/*" in src or "//" in src else LEX_PLAIN).findall(src)
        k = len(toks) - 2  # the last token before the one or two "" at the end
        if k > 0 and not toks[k]:
            k -= 1
        if k >= 0:
            last = toks[k]
            q = last[:1]
            if (q == '"' or q == "'") and not (len(last) > 1 and last[-1] == q and last[-2] != "\\") \
                    and not QUOTED.fullmatch(last):
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
        for k, m in enumerate(LEX.finditer(src)):
            raw = m.group(1)
            bad = lex_problem(raw)
            if bad is not None:
                line, col = line_col(src, m.start(1) + bad[1])
                return ClassAdSyntaxError(bad[0], line=line, column=col)
            if k == i and raw:
                cut = len(raw) - len(self.toks[i]) + skip  # a '-' split off or skipped
                pos = m.start(1) + cut
                neg = not cut and len(raw) > 1 and raw[0] == "-"  # "-5": the '-' comes first
                found = repr("-" if neg else raw[cut:])
        line, col = line_col(src, pos)
        return ClassAdSyntaxError(f"{msg}, found {found}", line=line, column=col)

    def _check(self, node: Expr) -> Expr:
        hs = self.heights
        h = hs[id(node)] = node_height(node, hs)
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
        if any(lex_problem(raw) for raw in LEX.findall(self.src)):
            raise self.error("bad token")
        i = self.i
        t = self.toks[i]
        if t == "":
            n = len(self.src)
            return Tok("eof", "", n, n)
        pos = 0
        for k, m in enumerate(LEX.finditer(self.src)):
            if k == i:
                pos = m.start(1) + len(m.group(1)) - len(t)
                break
        end = pos + len(t)
        c = t[0]
        if c in IDSTART:
            low = t.lower()
            return Tok("kw", t, pos, end, low) if low in KEYWORDS else Tok("id", t, pos, end, t)
        if c == "'" and len(t) > 1:
            return Tok("id", t, pos, end, unescape(t[1:-1]))
        if c == '"' and len(t) > 1:
            return Tok("str", t, pos, end, unescape_old(t[1:-1]) if self.old else unescape(t[1:-1]))
        if is_number(t) and t[0] != "-":
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
                if c in IDSTART:
                    if nx == ".":
                        n = toks[i + 2]
                        if n[:1] in IDSTART and toks[i + 3] not in _AFTER_OPERAND \
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
                            v = unescape_old(v) if self.old else unescape(v)
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
                if c in IDSTART and n not in _KW_ANY:
                    name = n
                elif c == "'" and len(n) > 1:
                    name = unescape(n[1:-1])
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
        if c in IDSTART:
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
        if is_number(t):
            self.i = i + 1
            return self._number(t, i)
        if c == '"' and len(t) > 1:
            old = self.old
            v = unescape_old(t[1:-1]) if old else unescape(t[1:-1])
            i += 1
            t = toks[i]
            while t[:1] == '"' and len(t) > 1:  # adjacent strings are one literal
                v += unescape_old(t[1:-1]) if old else unescape(t[1:-1])
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
            return AttrRef(unescape(t[1:-1]))
        elif t == ".":
            n = toks[i + 1]
            if n[:1] in IDSTART and n not in _KW_ANY:
                name = n
            elif n[:1] == "'" and len(n) > 1:
                name = unescape(n[1:-1])
            else:
                raise self.error("expected an attribute name after '.'", i + 1)
            self.i = i + 2
            return AbsRef(name)
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
        if not INT_MIN <= v <= INT_MAX:
            raise self.error("integer literal out of 64-bit range", i, 1 if t[0] == "-" else 0)
        if (t[0] == "0" and len(t) > 1) or (t[:2] == "-0" and len(t) > 2):
            raise self.error("bad number")  # reported as the lexical error it is
        return Literal(v)

    def _time_literal(self, at: int, low: str, text: str) -> Expr:
        """``absTime("...")`` / ``relTime("...")`` of a string literal is read at parse time, as
        HTCondor does: malformed text is a syntax error."""
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

    def parse_ad_body(self, d: int = 0) -> NestedAd:
        """``[ name = expr; ... ]`` (empty statements allowed)."""
        self.expect("[")
        d += 1
        if d > MAX_NESTING:
            raise self.error(f"expression nested more than {MAX_NESTING} deep")
        toks = self.toks
        ad = ad_class()()
        while True:
            t = toks[self.i]
            if t == "]":
                self.i += 1
                return ad
            if t == ";":
                self.i += 1
                continue
            c = t[:1]
            if c in IDSTART and t not in _KW_ANY:
                name = t
            elif c == "'" and len(t) > 1:
                name = unescape(t[1:-1])
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

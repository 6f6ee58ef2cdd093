"""Macro expansion: ``$(NAME)``, ``$(NAME:default)``, ``$ENV()``, ``$INT()``, ``$REAL()``.

Kept apart from the parser so the same scanner serves lazy lookups, ``if`` lines, include
targets and the self-reference rewrite done when a knob is defined.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from htcd.errors import UserError


class ConfigError(UserError):
    """A mistake in a configuration file or value; names the file and line when known."""


def find_close(text: str, start: int) -> int:
    """Index of the ``)`` matching the ``(`` just before ``start``, or -1 when unbalanced."""
    depth = 1
    i = start
    n = len(text)
    while i < n:
        c = text[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def split_top(text: str, sep: str, maxsplit: int = -1) -> list[str]:
    """Split on ``sep`` outside parentheses, so defaults may hold nested macros."""
    out: list[str] = []
    depth = 0
    last = 0
    for i, c in enumerate(text):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == sep and depth == 0 and (maxsplit < 0 or len(out) < maxsplit):
            out.append(text[last:i])
            last = i + 1
    out.append(text[last:])
    return out


# A lookup returns the raw text of a knob (None when undefined) given its name.
Lookup = Callable[[str], "str | None"]


def expand(text: str, lookup: Callable[[str, list[str]], str | None], env: dict[str, str] | os._Environ,
           stack: list[str]) -> str:
    """Expand every macro of ``text``; ``lookup(name, stack)`` returns a knob's expanded value.

    ``$$(...)`` is kept verbatim: it is filled in at match time, not from the config.
    """
    if "$" not in text:
        return text
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        j = text.find("$", i)
        if j < 0:
            out.append(text[i:])
            break
        out.append(text[i:j])
        if text.startswith("$$(", j):
            close = find_close(text, j + 3)
            if close < 0:
                out.append(text[j:])
                break
            out.append(text[j:close + 1])
            i = close + 1
            continue
        if text.startswith("$(", j):
            close = find_close(text, j + 2)
            if close < 0:
                out.append(text[j:])
                break
            body = text[j + 2:close]
            out.append(_macro(body, lookup, env, stack))
            i = close + 1
            continue
        k = j + 1
        while k < n and (text[k].isalnum() or text[k] == "_"):
            k += 1
        fname = text[j + 1:k].upper()
        if k < n and text[k] == "(" and fname in _FUNCS:
            close = find_close(text, k + 1)
            if close < 0:
                out.append(text[j:])
                break
            body = text[k + 1:close]
            out.append(_FUNCS[fname](body, lookup, env, stack))
            i = close + 1
            continue
        out.append("$")
        i = j + 1
    return "".join(out)


def _macro(body: str, lookup, env, stack: list[str]) -> str:
    parts = split_top(body, ":", 1)
    name = parts[0].strip()
    if "$" in name:
        name = expand(name, lookup, env, stack).strip()
    if name.upper() == "DOLLAR":
        return "$"
    value = lookup(name, stack)
    if value:
        return value
    if len(parts) > 1:
        return expand(parts[1], lookup, env, stack)
    return ""


def _env(body: str, lookup, env, stack: list[str]) -> str:
    parts = split_top(body, ":", 1)
    name = expand(parts[0], lookup, env, stack).strip()
    value = env.get(name)
    if value is not None:
        return value
    if len(parts) > 1:
        return expand(parts[1], lookup, env, stack)
    return "UNDEFINED"


def _number(body: str, lookup, env, stack: list[str], real: bool) -> str:
    parts = split_top(body, ",", 1)
    arg = expand(parts[0], lookup, env, stack).strip()
    known = lookup(arg, stack) if _is_name(arg) else None
    expr = known if known else arg
    try:
        value = Arith(expr).parse()
    except ValueError as err:
        kind = "$REAL" if real else "$INT"
        raise ConfigError(f"{kind}({body}): {expr!r} is not a number ({err})") from None
    if len(parts) > 1:
        fmt = parts[1].strip()
        try:
            return fmt % (float(value) if real else int(value))
        except (TypeError, ValueError) as err:
            raise ConfigError(f"bad format {fmt!r} in $INT/$REAL({body}): {err}") from None
    if real:
        return repr(float(value)).removesuffix(".0") if float(value).is_integer() else repr(float(value))
    return str(int(value))


def _is_name(text: str) -> bool:
    return bool(text) and all(c.isalnum() or c in "_." for c in text) and not text[0].isdigit()


_FUNCS: dict[str, Callable[..., str]] = {
    "ENV": _env,
    "INT": lambda b, lk, e, s: _number(b, lk, e, s, False),
    "REAL": lambda b, lk, e, s: _number(b, lk, e, s, True),
}


class Arith:
    """Tiny evaluator for the arithmetic ``$INT``/``$REAL`` accept: + - * / % and parentheses.

    Hand-written so loading a config never imports a parser module it rarely needs.
    """

    def __init__(self, text: str) -> None:
        self.toks = self._tokens(text)
        self.pos = 0

    @staticmethod
    def _tokens(text: str) -> list[str]:
        toks: list[str] = []
        i = 0
        while i < len(text):
            c = text[i]
            if c.isspace():
                i += 1
            elif c.isdigit() or c == ".":
                k = i
                while k < len(text) and (text[k].isalnum() or text[k] == "."):
                    k += 1
                toks.append(text[i:k])
                i = k
            elif c.isalpha() or c == "_":
                k = i
                while k < len(text) and (text[k].isalnum() or text[k] == "_"):
                    k += 1
                toks.append(text[i:k].lower())
                i = k
            elif c in "+-*/%(){},":
                toks.append(c)
                i += 1
            else:
                raise ValueError(f"unexpected {c!r}")
        return toks

    def parse(self) -> float | int:
        if not self.toks:
            raise ValueError("empty")
        v = self._sum()
        if self.pos != len(self.toks):
            raise ValueError(f"unexpected {self.toks[self.pos]!r}")
        return v

    def _peek(self) -> str | None:
        return self.toks[self.pos] if self.pos < len(self.toks) else None

    def _sum(self) -> float | int:
        v = self._prod()
        while self._peek() in ("+", "-"):
            op = self.toks[self.pos]
            self.pos += 1
            r = self._prod()
            v = v + r if op == "+" else v - r
        return v

    def _prod(self) -> float | int:
        v = self._unary()
        while self._peek() in ("*", "/", "%"):
            op = self.toks[self.pos]
            self.pos += 1
            r = self._unary()
            if op == "*":
                v = v * r
            elif r == 0:
                raise ValueError("division by zero")
            elif op == "/":
                v = int(v / r) if isinstance(v, int) and isinstance(r, int) else v / r
            else:
                v = v % r
        return v

    def _items(self, end: str) -> list[float | int]:
        """Comma-separated operands up to ``end``; a ``{...}`` list is flattened into them."""
        items: list[float | int] = []
        while True:
            if self._peek() == "{":
                self.pos += 1
                items.extend(self._items("}"))
            elif self._peek() != end:
                items.append(self._sum())
            t = self._peek()
            self.pos += 1
            if t == end:
                return items
            if t != ",":
                raise ValueError(f"expected ',' or {end!r}")

    def _unary(self) -> float | int:
        t = self._peek()
        if t in ("+", "-"):
            self.pos += 1
            v = self._unary()
            return -v if t == "-" else v
        if t == "(":
            self.pos += 1
            v = self._sum()
            if self._peek() != ")":
                raise ValueError("missing )")
            self.pos += 1
            return v
        if t is None:
            raise ValueError("missing operand")
        if t in ("min", "max") and self.pos + 1 < len(self.toks) and self.toks[self.pos + 1] == "(":
            self.pos += 2
            args = self._items(")")
            if not args:
                raise ValueError(f"{t}() of nothing")
            return min(args) if t == "min" else max(args)
        if t == "{":
            raise ValueError("a list is only allowed inside min() or max()")
        self.pos += 1
        try:
            return int(t, 0) if not any(c in t for c in ".eE") or t.lower().startswith("0x") else float(t)
        except ValueError:
            raise ValueError(f"bad number {t!r}") from None

"""Macro expansion: ``$(NAME)``, ``$(NAME:default)`` and the ``$FUNC(...)`` functions.

Kept apart from the parser so the same scanner serves lazy lookups, ``if`` lines, include
targets and the self-reference rewrite done when a knob is defined.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from htcd.errors import UserError


class ConfigError(UserError):
    """A mistake in a configuration file or value; names the file and line when known."""


#: (source, line) of the definitions being expanded, innermost last: where a warning points.
WHERE: list[tuple[str, int]] = []
_WARNED: set[str] = set()


def warn(message: str) -> None:
    """Print a warning about the definition being expanded, once per definition and message."""
    import sys

    where = f"{WHERE[-1][0]}:{WHERE[-1][1]}: " if WHERE else ""
    text = f"{where}warning: {message}"
    if text not in _WARNED:
        _WARNED.add(text)
        print(text, file=sys.stderr)


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


def expand(text: str, lookup: Callable[[str, list[str]], str | None], env: Mapping[str, str],
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
        fname = text[j + 1:k]  # case matters: $int(...) is not a function, as in HTCondor
        if k < n and text[k] == "(" and fname[:1].isalpha():
            close = find_close(text, k + 1)
            if close < 0:
                out.append(text[j:])
                break
            body = text[k + 1:close]
            func = _FUNCS.get(fname)
            if func is not None:
                out.append(func(body, lookup, env, stack))
            elif fname[0] == "F" and all(c in _F_OPTIONS for c in fname[1:]):
                out.append(_fpath(fname[1:], body, lookup, env, stack))
            else:
                whole = text[j:close + 1]
                warn(f"unknown function {whole} is kept as written (known: $ENV, $INT, $REAL, $STRING, "
                     "$EVAL, $F[pdnxbqauwf], $BASENAME, $DIRNAME, $SUBSTR, $CHOICE, $RANDOM_CHOICE, "
                     "$RANDOM_INTEGER; write $(DOLLAR) for a literal $)")
                out.append(whole)
            i = close + 1
            continue
        out.append("$")
        i = j + 1
    return "".join(out)


def _macro(body: str, lookup, env, stack: list[str]) -> str:
    parts = split_top(body, ":", 1)
    name = parts[0]
    if not _macro_name(name):  # HTCondor: "$( A )", "$(1?)", "$(A-B)" are not macros, kept as written
        return "$(" + body + ")"
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


def _macro_name(name: str) -> bool:
    """Whether ``name`` may be a macro's name: letters, digits, ``_ . /`` and nested macros."""
    i = 0
    while i < len(name):
        c = name[i]
        if name.startswith("$(", i):
            close = find_close(name, i + 2)
            if close < 0:
                return False
            i = close + 1
            continue
        if not (c.isalnum() or c in "_./"):
            return False
        i += 1
    return bool(name)


def _env(body: str, lookup, env, stack: list[str]) -> str:
    parts = split_top(body, ":", 1)
    name = expand(parts[0], lookup, env, stack).strip()
    value = env.get(name)
    if value is not None:
        return value
    if len(parts) > 1:
        return expand(parts[1], lookup, env, stack)
    return "UNDEFINED"


def _evaluate(text: str) -> object:
    """``text`` as a ClassAd expression evaluated in an empty ad; ``_UNPARSABLE`` when it is not one.

    The ClassAd engine is imported here, on the first such function, so that reading a config
    that uses none costs nothing."""
    from htcd.classad import parse_expr

    try:
        return parse_expr(text).eval()
    except UserError:
        return _UNPARSABLE


_UNPARSABLE = object()


def _format(what: str, fmt: str, value: object) -> str:
    try:
        return fmt % value
    except (TypeError, ValueError) as err:
        raise ConfigError(f"bad format {fmt!r} in {what}: {err}") from None


def _number(body: str, lookup, env, stack: list[str], real: bool) -> str:
    """``$INT(x[,fmt])`` / ``$REAL(x[,fmt])``: x (a knob's value, or the text itself) evaluated as
    arithmetic, else as a ClassAd expression (``"a" == "a"`` is 1); formatted with fmt (all of
    the text after the comma), else as %d / %.16G."""
    parts = split_top(body, ",", 1)
    arg = expand(parts[0], lookup, env, stack).strip()
    known = lookup(arg, stack) if _is_name(arg) else None
    expr = known if known else arg
    kind = "$REAL" if real else "$INT"
    value: object
    try:
        value = Arith(expr).parse()
    except ValueError as err:
        value = _evaluate(expr)
        if isinstance(value, bool):
            value = int(value)
        elif not isinstance(value, (int, float)):
            raise ConfigError(f"{kind}({body}): {expr!r} is not a number ({err})") from None
    number = float(value) if real else int(value)
    if len(parts) > 1:
        return _format(f"{kind}({body})", expand(parts[1], lookup, env, stack), number)
    return f"{number:.16G}" if real else str(number)


def _string(body: str, lookup, env, stack: list[str]) -> str:
    """``$STRING(x[,fmt])``: x evaluated; a string is formatted (``%s``), anything else is
    given back as written, as HTCondor does."""
    parts = split_top(body, ",", 1)
    text = _arg_value(parts[0], lookup, env, stack)
    value = _evaluate(text)
    if not isinstance(value, str):
        return text
    fmt = expand(parts[1], lookup, env, stack) if len(parts) > 1 else "%s"
    return _format(f"$STRING({body})", fmt, value)


def _eval(body: str, lookup, env, stack: list[str]) -> str:
    """``$EVAL(x)``: x evaluated; a string without quotes, any other value as ClassAds print it."""
    text = _arg_value(body, lookup, env, stack)
    value = _evaluate(text)
    if value is _UNPARSABLE:
        raise ConfigError(f"$EVAL({body}): {text!r} is not a ClassAd expression")
    if isinstance(value, str):
        return value
    from htcd.classad import unparse

    return unparse(value)


def _basename(body: str, lookup, env, stack: list[str]) -> str:
    """``$BASENAME(path[, suffix])``: the file name, without suffix when it ends with it."""
    parts = split_top(body, ",", 1)
    path = _arg_value(parts[0], lookup, env, stack)
    name = path[max(path.rfind("/"), path.rfind("\\")) + 1:]
    if len(parts) > 1:
        suffix = expand(parts[1], lookup, env, stack).strip()
        if suffix and name.endswith(suffix):
            name = name[:-len(suffix)]
    return name


def _dirname(body: str, lookup, env, stack: list[str]) -> str:
    """``$DIRNAME(path)``: the directory with its trailing separator (``$Fp``)."""
    path = _arg_value(body, lookup, env, stack)
    return path[:max(path.rfind("/"), path.rfind("\\")) + 1]


def _is_name(text: str) -> bool:
    return bool(text) and all(c.isalnum() or c in "_." for c in text) and not text[0].isdigit()


def _arg_value(arg: str, lookup, env, stack: list[str]) -> str:
    """An argument that names a knob stands for the knob's value; anything else is itself."""
    arg = expand(arg, lookup, env, stack).strip()
    if _is_name(arg):
        value = lookup(arg, stack)
        if value:
            return value
    return arg


def _int_arg(what: str, arg: str, lookup, env, stack: list[str]) -> int:
    text = _arg_value(arg, lookup, env, stack)
    try:
        value = Arith(text).parse()
    except ValueError:
        raise ConfigError(f"{what}: {text!r} is not an integer") from None
    if isinstance(value, float):
        if not value.is_integer():
            raise ConfigError(f"{what}: {text!r} is not an integer")
        value = int(value)
    return value


# $F options: p whole directory, d last directory (dd the last two...), n file name without
# extension, x extension, b without the trailing /, q in double quotes, u / w slashes to
# Unix / Windows style; a and f are accepted and change nothing here, as in HTCondor.
_F_OPTIONS = frozenset("pdnxbqauwf")


def _fpath(opts: str, body: str, lookup, env, stack: list[str]) -> str:
    path = _arg_value(body, lookup, env, stack)
    if "u" in opts:
        path = path.replace("\\", "/")
    cut = max(path.rfind("/"), path.rfind("\\"))
    dirpart, filename = path[:cut + 1], path[cut + 1:]
    dot = filename.rfind(".")
    if dot > 0:
        stem, ext = filename[:dot], filename[dot:]
    else:
        stem, ext = filename, ""
    if not any(c in opts for c in "pdnx"):
        result = path
    else:
        result = ""
        if "p" in opts:
            result = dirpart
        elif "d" in opts and dirpart:
            parts = [x for x in dirpart.replace("\\", "/").split("/") if x]
            keep = opts.count("d")
            sep = dirpart[-1]
            result = sep.join(parts[-keep:]) + sep if parts else dirpart
        if result and "b" in opts and len(result) > 1:
            result = result.rstrip("/\\")
        if "n" in opts:
            result += stem
        if "x" in opts:
            result += ext[1:] if "b" in opts and "n" not in opts else ext
    if "w" in opts:
        result = result.replace("/", "\\")
    if "q" in opts and result:
        result = f"'{result}'" if "a" in opts else f'"{result}"'
    return result


def _substr(body: str, lookup, env, stack: list[str]) -> str:
    """``$SUBSTR(knob, start[, length])``: Python-like, a negative start counts from the end and
    a negative length leaves that many characters off the end."""
    parts = split_top(body, ",")
    if len(parts) not in (2, 3):
        raise ConfigError(f"$SUBSTR({body}): expected a knob, a start and an optional length")
    name = expand(parts[0], lookup, env, stack).strip()
    value = (lookup(name, stack) or "") if _is_name(name) else name
    start = _int_arg(f"$SUBSTR({body})", parts[1], lookup, env, stack)
    if start < 0:
        start = max(len(value) + start, 0)
    if len(parts) == 2:
        return value[start:]
    length = _int_arg(f"$SUBSTR({body})", parts[2], lookup, env, stack)
    return value[start:start + length] if length >= 0 else value[start:length]


def _items(args: list[str], lookup, env, stack: list[str]) -> list[str]:
    """The items of ``$CHOICE`` / ``$RANDOM_CHOICE``: a single knob name means its comma list."""
    if len(args) == 1:
        arg = expand(args[0], lookup, env, stack).strip()
        value = lookup(arg, stack) if _is_name(arg) else None
        if value:
            return [x.strip() for x in value.split(",")]
        return [arg] if arg else []
    return [expand(a, lookup, env, stack).strip() for a in args]


def _choice(body: str, lookup, env, stack: list[str]) -> str:
    """``$CHOICE(index, a, b, ...)`` or ``$CHOICE(index, LISTKNOB)``: the item at index (from 0)."""
    parts = split_top(body, ",")
    if len(parts) < 2:
        raise ConfigError(f"$CHOICE({body}): expected an index and a list")
    index = _int_arg(f"$CHOICE({body})", parts[0], lookup, env, stack)
    items = _items(parts[1:], lookup, env, stack)
    if not 0 <= index < len(items):
        raise ConfigError(f"$CHOICE({body}): index {index} is outside the list of {len(items)}")
    return items[index]


def _rng(kind: str, body: str, stack: list[str]):
    """A generator seeded by the host, the knob being expanded and the call.

    The pick is then stable on one host across reads (so comparing two configs, or a
    reconfig, does not see a change that is only a new draw) yet differs between hosts and
    between knobs, which is what spreading e.g. checkpoint times over a pool needs.
    """
    import random
    import socket

    knob = stack[-1] if stack else ""
    return random.Random(f"{socket.gethostname()}\0{knob}\0{kind}\0{body}")


def _random_choice(body: str, lookup, env, stack: list[str]) -> str:
    items = _items(split_top(body, ","), lookup, env, stack)
    if not items:
        raise ConfigError("$RANDOM_CHOICE() needs at least one item")
    return _rng("choice", body, stack).choice(items)


def _random_integer(body: str, lookup, env, stack: list[str]) -> str:
    """``$RANDOM_INTEGER(min, max[, step])``: min, min+step, ... up to max, inclusive."""
    parts = split_top(body, ",")
    if len(parts) not in (2, 3):
        raise ConfigError(f"$RANDOM_INTEGER({body}): expected min, max and an optional step")
    what = f"$RANDOM_INTEGER({body})"
    low, high = (_int_arg(what, p, lookup, env, stack) for p in parts[:2])
    step = _int_arg(what, parts[2], lookup, env, stack) if len(parts) == 3 else 1
    if step <= 0 or high < low:
        raise ConfigError(f"{what}: needs min <= max and a positive step")
    return str(_rng("integer", body, stack).randrange(low, high + 1, step))


_FUNCS: dict[str, Callable[..., str]] = {
    "ENV": _env,
    "INT": lambda b, lk, e, s: _number(b, lk, e, s, False),
    "REAL": lambda b, lk, e, s: _number(b, lk, e, s, True),
    "STRING": _string,
    "EVAL": _eval,
    "BASENAME": _basename,
    "DIRNAME": _dirname,
    "SUBSTR": _substr,
    "CHOICE": _choice,
    "RANDOM_CHOICE": _random_choice,
    "RANDOM_INTEGER": _random_integer,
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

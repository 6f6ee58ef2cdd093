"""Macro expansion for submit files: ``$(NAME)``, ``$(NAME:default)``, ``$ENV()``,
``$INT()``, ``$REAL()``, ``$F<flags>()``, ``$RANDOM_CHOICE()``, ``$RANDOM_INTEGER()``,
``$CHOICE()``, ``$SUBSTR()`` and ``$(DOLLAR)``.

Undefined macros expand to the empty string, as condor_submit does.  ``$$(...)`` is a
match-time reference and is left untouched for the negotiator.
"""

from __future__ import annotations

import ast
import functools
import operator
import os
import random
import re
from collections.abc import Callable, Mapping

from htcd.submit.errors import SubmitError

_DOLLAR_MARK = "\x00DOLLAR\x00"
_MAX_DEPTH = 32
_FUNC = re.compile(r"\$(ENV|INT|REAL|RANDOM_CHOICE|RANDOM_INTEGER|CHOICE|SUBSTR|DIRNAME|BASENAME|F[a-zA-Z]*|)\(",
                   re.IGNORECASE)


class MacroError(ValueError):
    """Expansion failed; the caller attaches the submit line."""


Lookup = Callable[[str], str | None]


def _matching_paren(text: str, start: int) -> int:
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


_OPS: dict[type, Callable[..., float | int]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.Mod: operator.mod, ast.FloorDiv: operator.floordiv,
    ast.USub: operator.neg, ast.UAdd: operator.pos,
}


def arith(text: str) -> float | int:
    """Evaluate simple arithmetic (numbers, + - * / %, parentheses) without eval()."""

    def walk(node: ast.AST) -> float | int:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float) \
                and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](walk(node.operand))
        raise MacroError(f"{text!r} is not a number")

    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as err:
        raise MacroError(f"{text!r} is not a number") from err
    try:
        return walk(tree)
    except ZeroDivisionError as err:
        raise MacroError(f"{text!r} divides by zero") from err


def _printf(fmt: str, value: float | int) -> str:
    try:
        return fmt % value
    except (TypeError, ValueError) as err:
        raise MacroError(f"bad format {fmt!r}") from err


def _file_parts(flags: str, path: str, directory: str) -> str:
    """``$F<flags>(name)`` path pieces, as the manual describes them: f=full path (against
    ``directory``), p=directory, d=its last part (wins over p), n=base name, x=extension, b=d
    without its slash / x without its dot, u/w=slashes/backslashes, q=quoted ("", or '' with a)."""
    flags = flags.lower()
    if "f" in flags and not os.path.isabs(path):
        path = directory.rstrip("/") + "/" + path
    if "u" in flags:
        path = path.replace("\\", "/")
    dirname, base = os.path.split(path)
    stem, ext = os.path.splitext(base)
    out = ""
    if "d" in flags:
        parent = os.path.basename(dirname)
        out += parent + ("/" if parent and "b" not in flags else "")
    elif "p" in flags:
        out += dirname + ("/" if dirname and not dirname.endswith("/") else "")
    if "n" in flags:
        out += stem
    if "x" in flags:
        out += ext[1:] if "b" in flags else ext
    if not any(f in flags for f in "pdnx"):
        out = path
    if "w" in flags:
        out = out.replace("/", "\\")
    if "q" in flags:
        mark = "'" if "a" in flags else '"'
        out = mark + out + mark
    return out


@functools.lru_cache(maxsize=4096)
def _split_refs(text: str) -> tuple[str | tuple[str, str], ...]:
    """``text`` as literal pieces and (function, unexpanded body) references; cached, since the
    same values are expanded for every job."""
    out: list[str | tuple[str, str]] = []
    i = 0
    while True:
        j = text.find("$", i)
        if j < 0:
            out.append(text[i:])
            break
        if text.startswith("$$", j):
            # Match-time $$(...) stays verbatim.
            end = _matching_paren(text, j + 2) if text.startswith("(", j + 2) else -1
            stop = end + 1 if end >= 0 else j + 2
            out.append(text[i:stop])
            i = stop
            continue
        m = _FUNC.match(text, j)
        if not m:
            out.append(text[i:j + 1])
            i = j + 1
            continue
        close = _matching_paren(text, m.end() - 1)
        if close < 0:
            raise MacroError(f"unclosed macro reference {text[j:]!r}")
        out.append(text[i:j])
        out.append((m.group(1), text[m.end():close]))
        i = close + 1
    return tuple(out)


class Expander:
    """Expands macro references against a lookup function and an environment."""

    def __init__(self, lookup: Lookup, env: Mapping[str, str], directory: str | None = None) -> None:
        self.lookup = lookup
        self.env = env
        #: What ``$Ff()`` makes a relative name absolute against (condor_submit: its working directory).
        self.directory = directory or os.getcwd()

    def expand(self, text: str) -> str:
        """Fully expand ``text``; ``$(DOLLAR)`` becomes a literal ``$`` only at the very end."""
        return self._expand(text, 0).replace(_DOLLAR_MARK, "$")

    def _expand(self, text: str, depth: int) -> str:
        if depth > _MAX_DEPTH:
            raise MacroError("macro expansion is too deeply nested (a macro refers to itself?)")
        if "$" not in text:
            return text
        out: list[str] = []
        for part in _split_refs(text):
            if isinstance(part, str):
                out.append(part)
            else:
                func, inner = part
                out.append(self._call(func, self._expand(inner, depth + 1), depth))
        return "".join(out)

    def _call(self, func: str, body: str, depth: int) -> str:
        kind = func.upper()
        if kind == "":
            name, sep, default = body.partition(":")
            name = name.strip()
            if name.upper() == "DOLLAR":
                return _DOLLAR_MARK
            value = self.lookup(name)
            if value is None:
                return default if sep else ""
            return self._expand(value, depth + 1)
        if kind == "ENV":
            name, sep, default = body.partition(":")
            value = self.env.get(name.strip())
            # an unset variable without a default is the word UNDEFINED, as the manual says
            return value if value is not None else (default if sep else "UNDEFINED")
        if kind in ("INT", "REAL"):
            name, _, fmt = body.partition(",")
            name = name.strip()
            raw = self.lookup(name)
            text = self._expand(raw, depth + 1) if raw is not None else name
            num = arith(text)
            if kind == "INT":
                if isinstance(num, float) and not num.is_integer():
                    num = int(num)
                return _printf(fmt.strip(), int(num)) if fmt.strip() else str(int(num))
            if fmt.strip():
                return _printf(fmt.strip(), float(num))
            return f"{float(num):G}"
        if kind in ("RANDOM_CHOICE", "RANDOM_INTEGER", "CHOICE", "SUBSTR"):
            return self._list_func(kind, [a.strip() for a in body.split(",")], depth)
        # $F<flags>(name), $DIRNAME(name) = $Fp(name), $BASENAME(name) = $Fnx(name)
        raw = self.lookup(body.strip())
        path = self._expand(raw, depth + 1) if raw is not None else body.strip()
        if len(path) >= 2 and path[0] == path[-1] == '"':  # a quoted value (MY.x = "a/b") is its text
            path = path[1:-1]
        flags = {"DIRNAME": "p", "BASENAME": "nx"}.get(kind, func[1:])
        return _file_parts(flags, path, self.directory)


    def _value(self, name: str, depth: int) -> str:
        """A macro's expanded value, or the text itself when no macro has that name."""
        raw = self.lookup(name)
        return self._expand(raw, depth + 1) if raw is not None else name

    def _list_func(self, kind: str, args: list[str], depth: int) -> str:
        """The functions whose arguments are a comma-separated list."""
        if kind == "RANDOM_CHOICE":
            if not args or args == [""]:
                raise MacroError("$RANDOM_CHOICE() needs at least one choice")
            return random.choice(args)
        if kind == "RANDOM_INTEGER":
            if len(args) not in (2, 3):
                raise MacroError("$RANDOM_INTEGER(min, max[, step]) needs two or three numbers")
            lo, hi, *step = (int(arith(a)) for a in args)
            if hi < lo or (step and step[0] <= 0):
                raise MacroError(f"$RANDOM_INTEGER({', '.join(args)}): empty range")
            return str(random.randrange(lo, hi + 1, step[0] if step else 1))
        if kind == "CHOICE":
            if len(args) < 2:
                raise MacroError("$CHOICE(index, a, b, ...) needs an index and at least one choice")
            index = int(arith(self._value(args[0], depth)))
            if not 0 <= index < len(args) - 1:
                raise MacroError(f"$CHOICE: index {index} is out of range")
            return args[index + 1]
        # SUBSTR(name, start[, length]); a negative start counts from the end, as in HTCondor
        if len(args) not in (2, 3):
            raise MacroError("$SUBSTR(name, start[, length]) needs two or three arguments")
        text = self._value(args[0], depth)
        start = int(arith(args[1]))
        if start < 0:
            start = max(0, len(text) + start)
        if len(args) == 3:
            length = int(arith(args[2]))
            end = start + length if length >= 0 else len(text) + length
            return text[start:end]
        return text[start:]


def expand_or_raise(expander: Expander, text: str, *, source: str, line: int) -> str:
    """Expand ``text``, turning a MacroError into a SubmitError on the given line."""
    try:
        return expander.expand(text)
    except MacroError as err:
        raise SubmitError(str(err), source=source, line=line) from err


#: Names given to a variable's earlier value when a later value refers to itself (``foo = x $(foo)``).
PREVIOUS_PREFIX = "__previous"


def _reference(name: str) -> re.Pattern[str]:
    return re.compile(r"(\$(?:INT|REAL|CHOICE|SUBSTR|DIRNAME|BASENAME|F[a-zA-Z]*|)\(\s*)" + re.escape(name)
                      + r"(?=\s*[:,)])",
                      re.IGNORECASE)


def self_reference(name: str, value: str) -> bool:
    """Whether ``value`` refers to the variable ``name`` (lower case) itself."""
    return "$" in value and _reference(name).search(value) is not None


def rename_reference(value: str, name: str, new: str) -> str:
    """``value`` with its references to ``name`` pointing at ``new`` instead."""
    return _reference(name).sub(lambda m: m.group(1) + new, value)

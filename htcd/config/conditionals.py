"""The configuration language's ``if``/``elif``/``else``/``endif``: shared by configuration files
and submit files (which test their own variables through their own ``Scope``)."""

from __future__ import annotations

from typing import Protocol

from htcd.config._expand import ConfigError

COMPAT_VERSION = (25, 14, 1)  # the HTCondor version ``if version`` compares with

#: What an ``if`` may test, for the error of one that HTCondor's language does not allow.
SUPPORTED_IF = (" (an if tests one of: true/false/yes/no, a number (non-zero is true), 'defined NAME', "
                 "'version OP x.y[.z]' with OP one of >= <= == != > <; each may be negated with '!'; "
                 "for arithmetic, compute a knob with $INT(...) and test that)")


class Scope(Protocol):
    """What a condition may ask of the file it is in."""

    def expand(self, text: str) -> str: ...

    def is_defined(self, name: str) -> bool: ...


def step(scope: Scope, kw: str, rest: str, stack: list[list], active: bool, source: str, line: int) -> bool:
    """One ``if``/``elif``/``else``/``endif`` line: whether the lines after it are read.  ``stack``
    holds the open ifs ([parent active, this branch taken, any branch taken, seen else, line])."""
    if kw == "if":
        cond = evaluate(scope, rest, source, line) if active else False
        stack.append([active, cond, cond, False, line])
        return active and cond
    if not stack:
        raise ConfigError(f"{kw} without matching if", source=source, line=line)
    frame = stack[-1]
    parent = frame[0]
    if kw == "endif":
        stack.pop()
        return parent
    if frame[3]:
        raise ConfigError(f"{kw} after else", source=source, line=line)
    if kw == "else":
        frame[3] = True
        frame[1] = not frame[2]
    else:  # elif
        cond = (not frame[2]) and parent and evaluate(scope, rest, source, line)
        frame[1] = cond
        frame[2] = frame[2] or cond
    return parent and frame[1]

def evaluate(scope: Scope, text: str, source: str, line: int) -> bool:
    """``[!] defined NAME``, ``[!] version OP x.y.z``, or one boolean/number; a condition
    that expands to nothing (``if $(UNSET)``) is false, as in HTCondor."""
    if not text.strip():
        raise ConfigError("if without a condition", source=source, line=line)
    try:
        t = scope.expand(text).strip()
    except ConfigError as err:
        raise ConfigError(err.message, source=source, line=line) from None
    negate = False
    while t.startswith("!"):
        negate = not negate
        t = t[1:].strip()
    words = t.split()
    if not words:
        return negate
    head = words[0].lower()
    if head == "defined" and len(words) == 2:
        result = scope.is_defined(words[1])
    elif head == "version":
        result = version_test(t[len("version"):], source, line)
    elif len(words) == 1:
        w = head
        if w in ("true", "yes"):
            result = True
        elif w in ("false", "no"):
            result = False
        else:
            try:
                result = float(w) != 0
            except ValueError:
                raise ConfigError(f"{text.strip()} is not a valid if condition: not a boolean, "
                                  f"number, 'defined NAME' or 'version OP x.y'{SUPPORTED_IF}",
                                  source=source, line=line) from None
    else:
        raise ConfigError(f"{text.strip()} is not a valid if condition: complex conditionals "
                          f"are not supported{SUPPORTED_IF}", source=source, line=line)
    return result != negate


def version_test(text: str, source: str, line: int) -> bool:
    t = text.strip()
    for op in (">=", "<=", "==", "!=", ">", "<"):
        if t.startswith(op):
            ver = t[len(op):].strip()
            break
    else:
        raise ConfigError(f"version test needs an operator (>=, <=, ==, !=, >, <): version {t}",
                          source=source, line=line)
    try:
        parts = tuple(int(x) for x in ver.split("."))
    except ValueError:
        raise ConfigError(f"bad version {ver!r}: expected x.y or x.y.z", source=source, line=line) from None
    want = (*parts, 0, 0, 0)[:3]
    have = COMPAT_VERSION
    return {">=": have >= want, "<=": have <= want, "==": have == want, "!=": have != want,
            ">": have > want, "<": have < want}[op]

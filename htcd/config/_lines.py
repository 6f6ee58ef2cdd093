"""The shape of one config line: its first word and, for an assignment, the operator.

Shared by the parser (htcd.config._core) and the persistent-config writer (htcd.config.persist),
which must read ``config_val -set`` values exactly as the parser would.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[\w.]*")  # letters, digits, _ and .


def first_word(line: str) -> tuple[str, str]:
    k = _WORD.match(line).end()  # type: ignore[union-attr]  # matches the empty string at least
    return line[:k], line[k:]


#: ``NAME += more`` appends with a blank; ``NAME +,= more`` with the separator ``,`` (any of
#: ``, ; | & *``), and a doubled one goes between blanks (``NAME +&&= more``: ``a && more``).
_PLUS = re.compile(r"\+(?:([,;|&*])(\1)?)?=")


def assignment(line: str) -> tuple[str | None, str | None, str]:
    """(name, operator, value text).  The operator is ``=``, ``:``, ``@=``, an append
    (``+=``, ``+,=``, ``+&&=``...), or ``junk=`` / ``junk:`` for ``NAME words = value``,
    whose words HTCondor skips (``A -= b`` assigns b): the parser warns about those."""
    name, rest = first_word(line)
    if not name:
        return None, None, ""
    spaced = rest[:1].isspace()
    rest = rest.lstrip()
    if rest.startswith("@="):
        return name, "@=", rest[2:]
    if rest.startswith("=") or rest.startswith(":"):
        return name, rest[0], rest[1:]
    if not spaced:
        return None, None, ""
    m = _PLUS.match(rest)
    if m:
        return name, rest[:m.end()], rest[m.end():]
    k = 0
    while k < len(rest) and rest[k] not in "=:@+":
        k += 1
    if rest[k:k + 1] in ("=", ":"):
        return name, "junk" + rest[k], rest[k + 1:]
    return None, None, ""


def append_separator(op: str) -> str:
    """What an append operator puts between the old value and the new text."""
    sep = op[1:-1]
    if not sep:
        return " "
    return sep if len(sep) == 1 else f" {sep} "

"""The shape of one config line: its first word and, for an assignment, the operator.

Shared by the parser (htcd.config._core) and the persistent-config writer (htcd.config.persist),
which must read ``config_val -set`` values exactly as the parser would.
"""

from __future__ import annotations


def first_word(line: str) -> tuple[str, str]:
    k = 0
    while k < len(line) and (line[k].isalnum() or line[k] in "_."):
        k += 1
    return line[:k], line[k:]


#: Characters that may stand before ``=`` as an operator (``NAME += more``).  HTCondor 25 reads
#: ``+=`` as an append and every other one as a plain assignment; the operator must be
#: separated from the name (``NAME+=x`` is an illegal identifier there).
OPERATOR_CHARS = frozenset("+-?*!|&/%^~<>.")


def assignment(line: str) -> tuple[str | None, str | None, str]:
    """(name, operator, value text): the operator is ``=``, ``:``, ``@=`` or ``+=``."""
    name, rest = first_word(line)
    if not name:
        return None, None, ""
    spaced = rest[:1].isspace()
    rest = rest.lstrip()
    if spaced and rest[:1] in OPERATOR_CHARS and rest[1:2] == "=":
        return name, "+=" if rest[0] == "+" else "=", rest[2:]
    if rest.startswith("@="):
        return name, "@=", rest[2:]
    if rest.startswith("=") or rest.startswith(":"):
        return name, rest[0], rest[1:]
    return None, None, ""

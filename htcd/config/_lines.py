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


def assignment(line: str) -> tuple[str | None, str | None, str]:
    name, rest = first_word(line)
    if not name:
        return None, None, ""
    rest = rest.lstrip()
    if rest.startswith("@="):
        return name, "@=", rest[2:]
    if rest.startswith("=") or rest.startswith(":"):
        return name, rest[0], rest[1:]
    return None, None, ""

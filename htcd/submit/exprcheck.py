"""ClassAd expression validation, isolated so the real parser drops in without other edits.

When ``htcd.classad.parse_expr`` is importable it is the judge.  Until then a small
structural check (balanced brackets, closed strings, no dangling operators) catches the
common typos so a bad ``requirements`` fails at submit time rather than in the queue.
"""

from __future__ import annotations

import re
from collections.abc import Callable


def _load_parser() -> Callable[[str], object] | None:
    try:
        from htcd.classad import parse_expr
    except ImportError:
        return None
    return parse_expr


_TRAILING_OP = re.compile(r"(&&|\|\||[-+*/%<>=!?:]|\bisnt|\bis)\s*$", re.IGNORECASE)
_LEADING_OP = re.compile(r"^\s*(&&|\|\||[*/%<>=?:])")


def _fallback_check(text: str) -> None:
    """Raise ValueError for text that cannot be a ClassAd expression."""
    if not text.strip():
        raise ValueError("empty expression")
    stack: list[str] = []
    pairs = {")": "(", "]": "[", "}": "{"}
    i = 0
    while i < len(text):
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < len(text) and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            if j >= len(text):
                raise ValueError("unterminated string")
            i = j + 1
            continue
        if c in "([{":
            stack.append(c)
        elif c in ")]}" and (not stack or stack.pop() != pairs[c]):
            raise ValueError(f"unbalanced '{c}'")
        i += 1
    if stack:
        raise ValueError(f"unclosed '{stack[-1]}'")
    if _TRAILING_OP.search(text) or _LEADING_OP.search(text):
        raise ValueError("expression starts or ends with an operator")


def check_expr(text: str) -> None:
    """Raise ValueError (with the parser's reason) if ``text`` is not a valid ClassAd expression."""
    parser = _load_parser()
    if parser is None:
        _fallback_check(text)
        return
    try:
        parser(text)
    except Exception as err:  # the parser's own syntax error type; reported as a reason
        raise ValueError(str(err)) from err

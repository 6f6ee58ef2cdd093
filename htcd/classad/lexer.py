"""The ClassAd lexer: one regular expression splits text into token strings.

The parser works on plain token strings; positions, kinds and lexical errors are only worked
out when an error is reported or a caller asks for a single token (``Tok``)."""

from __future__ import annotations

import re

from .values import Value

# rule accepts come out as one-character tokens.  The parser rejects both (see lex_problem).  The
# end of the text matches as "" (once or twice).  Commonest first: names, then one-character operators.
LEX = re.compile(
    r"""(?:\s+|//[^\n]*|/\*.*?\*/)*+
    ( [A-Za-z_][A-Za-z0-9_]*
    | [(),{}*+%^~;?:\[\]]
    | >>>|=[?!]=|[=!<>]=|<<|>>|&&|\|\|
    | -?(?:\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)
    | "[^"\\]*(?:\\.[^"\\]*)*"
    | '[^'\\]*(?:\\.[^'\\]*)*'
    | (?:/\*|["']).*
    | \S
    | \Z )""",
    re.VERBOSE | re.DOTALL,
)
LEX_PLAIN = re.compile(LEX.pattern.replace(r"(?:\s+|//[^\n]*|/\*.*?\*/)*+", r"\s*+"), re.VERBOSE | re.DOTALL)
"""The same tokens for text without comments (one less alternative to try before each token)."""
QUOTED = re.compile(r""""[^"\\]*(?:\\.[^"\\]*)*"|'[^'\\]*(?:\\.[^'\\]*)*'""", re.DOTALL)
IDSTART = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_NUMSTART = frozenset("0123456789.-")
_OPCHARS = frozenset("-+*/%<>!~&|^()[]{},;.?:=")

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
            "\\": "\\", '"': '"', "'": "'", "?": "?"}
_ESC_RE = re.compile(r"\\([0-7]{1,3}|.)", re.DOTALL)


def unescape(body: str) -> str:
    """The text of a quoted string or name between its quotes, C escapes resolved."""
    if "\\" not in body:
        return body
    raw = bytearray()
    pos = 0
    for m in _ESC_RE.finditer(body):
        raw += body[pos:m.start()].encode("utf-8", "surrogatepass")
        g = m.group(1)
        if g[0] in "01234567":
            raw.append(int(g, 8) & 0xFF)
        else:
            raw += _ESCAPES.get(g, g).encode("utf-8", "surrogatepass")
        pos = m.end()
    raw += body[pos:].encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "surrogateescape")


def unescape_old(body: str) -> str:
    """The same for the old long format, where only \\" is an escape."""
    return body.replace('\\"', '"')


def line_col(src: str, pos: int) -> tuple[int, int]:
    """1-based line and column of offset ``pos``."""
    line = src.count("\n", 0, pos) + 1
    col = pos - (src.rfind("\n", 0, pos) + 1) + 1
    return line, col


def is_number(t: str) -> bool:
    """Token text of a number literal, possibly with its '-' (a lone '.' or '-' is an operator)."""
    return (t[:1] in _NUMSTART and len(t) > 1) or t.isdecimal()


def lex_problem(t: str) -> tuple[str, int] | None:
    """What is lexically wrong with one token (message, offset of the bad part), if anything."""
    if not t:
        return None
    if t[0] in "\"'" and not QUOTED.fullmatch(t):
        return f"unexpected character {t[0]!r}", 0
    if len(t) == 1:
        if t in _OPCHARS or t in IDSTART or t.isdecimal():
            return None
        return f"unexpected character {t!r}", 0
    if t[:2] == "/*":
        return "unterminated comment", 0
    body = t[1:] if t[0] == "-" else t
    if body[0] == "0" and len(body) > 1 and body.isdecimal():
        return f"bad number {body!r}: expected a decimal without leading zero", len(t) - len(body)
    return None


class Tok:
    """One token with its place in the text (for callers that read single tokens)."""

    __slots__ = ("end", "kind", "pos", "text", "value")

    def __init__(self, kind: str, text: str, pos: int, end: int, value: Value = None) -> None:
        self.kind = kind
        self.text = text
        self.pos = pos
        self.end = end
        self.value = value

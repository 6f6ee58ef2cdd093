"""ClassAd string quoting and HTCondor's argument/environment syntaxes."""

from __future__ import annotations

# ClassAd escapes; other control characters as octal, as HTCondor prints them (a raw \f or \v would
# end a line of an old-format ad).
_ESCAPES = str.maketrans({**{chr(c): f"\\{c:03o}" for c in range(32)}, "\\": "\\\\", '"': '\\"', "\n": "\\n",
                          "\t": "\\t", "\r": "\\r", "\a": "\\a", "\b": "\\b", "\f": "\\f", "\v": "\\v"})


# The whitespace a canonical argument or environment value quotes (C's, not Python's wider str.isspace).
_C_SPACE = frozenset(" \t\n\r")


def quote(value: str) -> str:
    """ClassAd string literal text for ``value``."""
    return '"' + value.translate(_ESCAPES) + '"'


def split_new_syntax(text: str) -> list[str]:
    """Split the inside of a double-quoted (new syntax) arguments/environment value.

    ``""`` is a literal double quote; single quotes group words, with ``''`` a literal
    single quote inside them; whitespace separates words.
    """
    words: list[str] = []
    cur: list[str] = []
    have = False
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"':
            if text.startswith('""', i):
                cur.append('"')
                have = True
                i += 2
                continue
            raise ValueError('found an unescaped double quote (write "" for a literal one)')
        if c == "'":
            have = True
            i += 1
            while True:
                if i >= n:
                    raise ValueError("unterminated single quote")
                if text[i] == "'":
                    if text.startswith("''", i):
                        cur.append("'")
                        i += 2
                        continue
                    i += 1
                    break
                if text.startswith('""', i):
                    cur.append('"')
                    i += 2
                    continue
                cur.append(text[i])
                i += 1
            continue
        if c.isspace():
            if have:
                words.append("".join(cur))
                cur, have = [], False
            i += 1
            continue
        cur.append(c)
        have = True
        i += 1
    if have:
        words.append("".join(cur))
    return words


def join_canonical(words: list[str]) -> str:
    """HTCondor's canonical new-syntax text: whitespace and ``'`` runs go inside single quotes."""
    out: list[str] = []
    for word in words:
        if word == "":
            out.append("''")
            continue
        parts: list[str] = []
        quoted = False
        for c in word:
            special = c in _C_SPACE or c == "'"
            if special and not quoted:
                parts.append("'")
                quoted = True
            elif not special and quoted:
                parts.append("'")
                quoted = False
            parts.append("''" if c == "'" else c)
        if quoted:
            parts.append("'")
        out.append("".join(parts))
    return " ".join(out)


def is_new_syntax(value: str) -> bool:
    v = value.strip()
    return len(v) >= 2 and v.startswith('"') and v.endswith('"')


def parse_environment(value: str) -> dict[str, str]:
    """Parse either environment syntax into an ordered name -> value mapping."""
    env: dict[str, str] = {}
    if is_new_syntax(value):
        entries = split_new_syntax(value.strip()[1:-1])
    else:
        entries = [e for e in value.split(";") if e.strip()]
    for entry in entries:
        name, sep, val = entry.partition("=")
        name = name.strip(" \t")  # a value keeps its own tabs and control characters, as in condor_submit
        if not sep or not name:
            raise ValueError(f"environment entry {entry!r} is not NAME=VALUE")
        env[name] = val
    return env

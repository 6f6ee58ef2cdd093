"""transfer_output_remaps: ``"name1 = path1; name2 = path2"``.

Entries are separated by ``;`` and each maps a name (as transfer_output_files or the sandbox
names it) to a destination, relative to the Iwd or absolute.  A ``;``, ``=`` or ``\\`` that
belongs to a name is written with a backslash before it, as in HTCondor.
"""

from __future__ import annotations


class RemapError(ValueError):
    """transfer_output_remaps does not parse; the message says where."""


def _split(text: str, sep: str) -> list[str]:
    """Split on ``sep`` where it is not escaped; escapes are kept for the next step."""
    parts, cur, i = [], [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            cur.append(text[i:i + 2])
            i += 2
            continue
        if ch == sep:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    parts.append("".join(cur))
    return parts


def _unescape(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text) and text[i + 1] in ";=\\":
            out.append(text[i + 1])
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def parse_remaps(text: str) -> dict[str, str]:
    """{name: destination}; raises RemapError for an entry without ``=`` or with an empty side."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1]
    remaps: dict[str, str] = {}
    for raw in _split(text, ";"):
        if not raw.strip():
            continue
        pair = _split(raw, "=")
        if len(pair) != 2:
            raise RemapError(f"transfer_output_remaps entry {raw.strip()!r} is not 'name = destination'")
        name, dest = (_unescape(p.strip()) for p in pair)
        if not name or not dest:
            raise RemapError(f"transfer_output_remaps entry {raw.strip()!r} has an empty name or destination")
        remaps[name] = dest
    return remaps

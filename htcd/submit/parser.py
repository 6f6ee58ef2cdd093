"""Turns submit-file text into an ordered list of statements.

Settings and queue statements are kept in file order because each ``queue`` uses the
settings written above it; macro expansion is deferred to job-building time so that
``$(Process)``, ``$(Item)`` and friends see per-job values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from htcd.submit.errors import SubmitError


@dataclass(frozen=True)
class Setting:
    """``name = value``; ``name`` keeps its spelling, lookups fold case."""

    name: str
    value: str
    line: int

    @property
    def key(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class QueueStatement:
    """One ``queue`` line: how many jobs per item and where the items come from."""

    line: int
    count: str = "1"  # expanded at job-building time; may hold macros
    variables: tuple[str, ...] = ()
    source: str = ""  # "", "in", "matching", "from"
    items: tuple[str, ...] = ()  # inline items or rows, or globs for "matching"
    filename: str = ""  # for "from file", or the command line for "from command |"
    slice_text: str = ""
    match_kind: str = ""  # "", "files", "dirs"
    from_command: bool = False  # "from command |": the rows are the command's output


@dataclass
class ParsedFile:
    """All statements of one submit file, in order."""

    filename: str
    statements: list[Setting | QueueStatement] = field(default_factory=list)


_ASSIGN = re.compile(r"^(?P<name>[+]?[A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(?P<value>.*)$", re.DOTALL)
_QUEUE = re.compile(r"^queue\b(?P<rest>.*)$", re.IGNORECASE | re.DOTALL)
_KEYWORD = re.compile(r"(?<!\S)(in|matching|from)(?=\s|\(|$)", re.IGNORECASE)
_SLICE = re.compile(r"^\s*(\[[^\]]*\])\s*")


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Join backslash continuations; return (first physical line number, text) pairs."""
    out: list[tuple[int, str]] = []
    buf: list[str] = []
    start = 0
    for num, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if not buf:
            start = num
            if line.lstrip().startswith("#"):
                continue
        if line.endswith("\\"):
            buf.append(line[:-1])
            continue
        buf.append(line)
        out.append((start, " ".join(part.strip() for part in buf).strip()))
        buf = []
    if buf:
        out.append((start, " ".join(part.strip() for part in buf).strip()))
    return out


def _split_words(text: str) -> list[str]:
    return [w for w in re.split(r"[\s,]+", text.strip()) if w]


def parse_file(text: str, filename: str) -> ParsedFile:
    """Parse the text into settings and queue statements; raise SubmitError on bad syntax."""
    parsed = ParsedFile(filename)
    lines = _logical_lines(text)
    i = 0
    while i < len(lines):
        num, line = lines[i]
        i += 1
        if not line:
            continue
        qm = _QUEUE.match(line)
        if qm and not re.match(r"^queue\s*=", line, re.IGNORECASE):
            rest = qm.group("rest").strip()
            # A list opened with "(" but not closed on this line runs until a line ")".
            if rest.endswith("(") or (rest.count("(") > rest.count(")")):
                body: list[str] = []
                closed = False
                while i < len(lines):
                    _, nxt = lines[i]
                    i += 1
                    if nxt.startswith(")"):
                        closed = True
                        break
                    body.append(nxt)
                if not closed:
                    raise SubmitError("queue statement: no closing ')' for the item list",
                                      source=filename, line=num)
                rest = rest + "\n" + "\n".join(body) + "\n)"
            parsed.statements.append(parse_queue(rest, num, filename))
            continue
        am = _ASSIGN.match(line)
        if am:
            name = am.group("name")
            if name.lower().startswith("my.") and len(name) > 3:
                name = "+" + name[3:]
            parsed.statements.append(Setting(name, am.group("value").strip(), num))
            continue
        word = line.split()[0]
        raise SubmitError(f"cannot parse line {line!r}: expected 'name = value' or a queue statement"
                          + (f" (unknown statement {word!r})" if word else ""),
                          source=filename, line=num)
    return parsed


def _paren_body(text: str, what: str, line: int, filename: str) -> str:
    text = text.strip()
    if text.startswith("("):
        if not text.endswith(")"):
            raise SubmitError(f"queue statement: {what} list is missing its closing ')'",
                              source=filename, line=line)
        return text[1:-1]
    return text


def parse_queue(rest: str, line: int, filename: str) -> QueueStatement:
    """Parse what follows the ``queue`` keyword."""
    km = _KEYWORD.search(rest)
    if km is None:
        count = rest.strip() or "1"
        if not re.fullmatch(r"\d+|\$\([^)]*\)|\$INT\([^)]*\)", count, re.IGNORECASE):
            raise SubmitError(f"cannot parse queue statement 'queue {rest.strip()}': "
                              "expected a job count or 'in', 'matching' or 'from'",
                              source=filename, line=line)
        return QueueStatement(line=line, count=count)
    head = rest[: km.start()].strip()
    kind = km.group(1).lower()
    tail = rest[km.end():].strip()
    words = _split_words(head)
    count = "1"
    if words and re.fullmatch(r"\d+|\$\(.*\)", words[0]):
        count = words.pop(0)
    for var in words:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", var):
            raise SubmitError(f"queue statement: {var!r} is not a valid variable name",
                              source=filename, line=line)
    slice_text = ""
    sm = _SLICE.match(tail)
    if sm and kind != "matching":
        slice_text = sm.group(1)
        tail = tail[sm.end():]
    if kind == "in":
        body = _paren_body(tail, "item", line, filename)
        if "\n" in body:
            items = [w for row in body.splitlines() for w in _split_list(row)]
        else:
            items = _split_list(body)
        return QueueStatement(line, count, tuple(words), "in", tuple(items), slice_text=slice_text)
    if kind == "matching":
        mk = ""
        m = re.match(r"^(files|dirs)\b\s*", tail, re.IGNORECASE)
        if m:
            mk = m.group(1).lower()
            tail = tail[m.end():]
        sm = _SLICE.match(tail)
        if sm:
            slice_text = sm.group(1)
            tail = tail[sm.end():]
        globs = _split_words(_paren_body(tail, "glob", line, filename))
        if not globs:
            raise SubmitError("queue statement: 'matching' needs at least one pattern",
                              source=filename, line=line)
        return QueueStatement(line, count, tuple(words), "matching", tuple(globs),
                              slice_text=slice_text, match_kind=mk)
    # from
    if tail.startswith("("):
        body = _paren_body(tail, "row", line, filename)
        rows = [r.strip() for r in body.splitlines() if r.strip() and not r.strip().startswith("#")]
        return QueueStatement(line, count, tuple(words), "from", tuple(rows), slice_text=slice_text)
    if not tail:
        raise SubmitError("queue statement: 'from' needs a file name or a '(' row list",
                          source=filename, line=line)
    if tail.endswith("|"):
        command = tail[:-1].strip()
        if not command:
            raise SubmitError("queue statement: 'from ... |' needs a command before the '|'",
                              source=filename, line=line)
        return QueueStatement(line, count, tuple(words), "from", filename=command, slice_text=slice_text,
                              from_command=True)
    return QueueStatement(line, count, tuple(words), "from", filename=tail, slice_text=slice_text)


def _split_list(text: str) -> list[str]:
    """Items of an ``in`` list: comma separated, or whitespace separated when there are no commas."""
    text = text.strip()
    if not text:
        return []
    return [w for w in re.split(r"[\s,]+", text) if w]


def split_row(row: str, nvars: int) -> list[str]:
    """Split one ``from`` row over ``nvars`` variables; the last variable takes the remainder."""
    row = row.strip()
    if nvars <= 1:
        return [row]
    parts = re.split(r"\s*,\s*|\s+", row, maxsplit=nvars - 1)
    parts += [""] * (nvars - len(parts))
    return [p.strip() for p in parts]

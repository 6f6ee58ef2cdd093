"""The statements of a submit description: settings and queue statements, and their syntax.

Settings and queue statements are kept in file order because each ``queue`` uses the
settings written above it; macro expansion is deferred to job-building time so that
``$(Process)``, ``$(Item)`` and friends see per-job values.  ``htcd.submit.reader`` walks
the lines (and ``include``, ``if``, ``use``...) and builds the statements with these pieces.
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
    """All statements of one submit description, in order, with where each came from.

    A statement of the top file carries its own line number.  One read from elsewhere (an
    included file, a command's output, ``-append``, ``-queue``) carries a number past
    ``VIRTUAL_LINE`` that ``origins`` maps to its (source, line), so every later error can
    still name the right file and line.
    """

    filename: str
    statements: list[Setting | QueueStatement] = field(default_factory=list)
    origins: dict[int, tuple[str, int | None]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    #: Variables read while the file was read (``if`` conditions, include names): used, not typos.
    used: set[str] = field(default_factory=set)


#: Statement lines from this number up stand for a line of another source (``ParsedFile.origins``).
VIRTUAL_LINE = 1 << 30


_ASSIGN = re.compile(r"^(?P<name>[+]?[A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(?P<value>.*)$", re.DOTALL)
_QUEUE = re.compile(r"^queue\b(?P<rest>.*)$", re.IGNORECASE | re.DOTALL)
_KEYWORD = re.compile(r"(?<!\S)(in|matching|from)(?=\s|\(|$)", re.IGNORECASE)
_SLICE = re.compile(r"^\s*(\[[^\]]*\])\s*")


def logical_lines(text: str) -> list[tuple[int, str]]:
    """Join backslash continuations; return (first physical line number, text) pairs."""
    out: list[tuple[int, str]] = []
    buf: list[str] = []
    start = 0
    # Only a newline ends a line, as in condor_submit (str.splitlines also splits at \f, \v, \x1c...).
    for num, raw in enumerate(text.split("\n"), start=1):
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


def queue_rest(lines: list[tuple[int, str]], i: int, rest: str, line: int, filename: str) -> tuple[str, int]:
    """What follows ``queue`` on ``lines[i - 1]``, with an item list opened by ``(`` and not closed
    on that line extended up to a line starting with ``)``; returns it and the next line's index."""
    if not (rest.endswith("(") or rest.count("(") > rest.count(")")):
        return rest, i
    body: list[str] = []
    while i < len(lines):
        _, nxt = lines[i]
        i += 1
        if nxt.startswith(")"):
            return rest + "\n" + "\n".join(body) + "\n)", i
        body.append(nxt)
    raise SubmitError("queue statement: no closing ')' for the item list", source=filename, line=line)


def is_queue(line: str) -> re.Match[str] | None:
    """The match of a queue statement (``queue = x`` is a variable, not one)."""
    qm = _QUEUE.match(line)
    return qm if qm and not re.match(r"^queue\s*=", line, re.IGNORECASE) else None


def assignment(line: str) -> Setting | None:
    """``name = value`` (``MY.x`` spelled ``+x``) with line 0, or None when the line is not one."""
    am = _ASSIGN.match(line)
    if am is None:
        return None
    name = am.group("name")
    if name.lower().startswith("my.") and len(name) > 3:
        name = "+" + name[3:]
    return Setting(name, am.group("value").strip(), 0)


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
        # a number, a macro, or arithmetic of them (`queue 15*1000`), evaluated when the jobs are built
        if not re.fullmatch(r"[\d\s+\-*/%().]+", re.sub(r"\$[A-Za-z]*\([^)]*\)", "0", count)):
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

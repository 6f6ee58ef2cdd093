"""Lines and words of a DAG file, read the way DAGMan reads them.

A line's leading and trailing blanks go; a blank line or one whose first character is ``#`` is
skipped; a line ending in ``\\`` continues on the next one.  A comment line never continues;
one inside a continued statement is skipped, and the statement goes on past it only when it
too ends in ``\\`` (HTCondor's reader also keeps the comment's last character: not copied).
Words are split on spaces and tabs; a few fields (the submit file, DIR) may be double-quoted
to hold blanks.
"""

from __future__ import annotations

import re

DELIMITERS = " \t"
_WORD = re.compile(r"[^ \t]+")
_BLANKS = re.compile(r"[ \t]+")
_SKIP: dict[int, re.Pattern[str]] = {}  # skips the first n words of a line


class LineReader:
    """The logical lines of one file's text, each with the number of its first physical line."""

    __slots__ = ("_lines", "_pos")

    def __init__(self, text: str) -> None:
        self._lines = text.splitlines()
        self._pos = 0

    def simple_lines(self) -> tuple[list[str], int]:
        """(the physical lines, the next one's index): a caller may take lines itself while
        they are plain (no continuation) and ``seek`` back for the rest."""
        return self._lines, self._pos

    def seek(self, pos: int) -> None:
        self._pos = pos

    def next_line(self) -> tuple[int, str] | None:
        """The next logical line that is neither blank nor a comment, or None at the end."""
        lines = self._lines
        while self._pos < len(lines):
            start = self._pos + 1
            line = lines[self._pos].strip()
            self._pos += 1
            if not line or line[0] == "#":
                continue
            while line.endswith("\\"):
                line = line[:-1]
                if self._pos >= len(lines):
                    break
                nxt = lines[self._pos].strip()
                self._pos += 1
                if nxt.startswith("#"):
                    # a comment inside a continuation: skipped, and the statement goes on
                    # only if the comment itself ends in a backslash
                    line += "\\" if nxt.endswith("\\") else ""
                    continue
                line = (line + nxt).strip()
            line = line.strip()
            if line:
                return start, line
        return None

    def raw_line(self) -> tuple[int, str] | None:
        """The next physical line, trimmed (inline submit descriptions are read this way)."""
        if self._pos >= len(self._lines):
            return None
        self._pos += 1
        return self._pos, self._lines[self._pos - 1].strip()


class Words:
    """The words of one statement, taken from the left; the rest stays available as text."""

    __slots__ = ("index", "parts", "text")

    def __init__(self, text: str, index: int = 0) -> None:
        self.text = text
        self.parts = text.split()  # blanks are spaces and tabs: a statement line has no others
        self.index = index

    def _offset(self) -> int:
        """Where the next word starts in the text (only the rarer calls need it)."""
        skip = _SKIP.get(self.index)
        if skip is None:
            skip = _SKIP[self.index] = re.compile(r"[ \t]*(?:[^ \t]+[ \t]+)" + f"{{{self.index}}}")
        m = skip.match(self.text)
        return m.end() if m else len(self.text)

    def next(self) -> str | None:
        """The next blank-separated word, or None."""
        if self.index >= len(self.parts):
            return None
        self.index += 1
        return self.parts[self.index - 1]

    def next_quoted(self) -> str | None:
        """The next word, or the text between double quotes when it starts with one."""
        if self.index >= len(self.parts) or not self.parts[self.index].startswith('"'):
            return self.next()
        start = self._offset() + 1
        end = self.text.find('"', start)
        if end < 0:
            end = len(self.text)
        word = self.text[start:end]
        self.index += len(self.text[start - 1:end + 1].split())
        return word

    def peek(self) -> str | None:
        """The next word without taking it."""
        return self.parts[self.index] if self.index < len(self.parts) else None

    def rest(self) -> str:
        """All that is left, blanks around it removed."""
        if self.index >= len(self.parts):
            return ""
        rest = self.text[self._offset():].rstrip()
        self.index = len(self.parts)
        return rest

    def remaining(self) -> list[str]:
        """All words left."""
        words = self.parts[self.index:]
        self.index = len(self.parts)
        return words

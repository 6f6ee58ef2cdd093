"""Lines and words of a DAG file, read the way DAGMan reads them.

A line's leading and trailing blanks go; a blank line or one whose first character is ``#`` is
skipped; a line ending in ``\\`` continues on the next one (a comment line inside such a run
is skipped without ending it, and a comment line itself never continues).  Words are split on
spaces and tabs; a few fields (the submit file, DIR) may be double-quoted to hold blanks.
"""

from __future__ import annotations

DELIMITERS = " \t"


class LineReader:
    """The logical lines of one file's text, each with the number of its first physical line."""

    __slots__ = ("_lines", "_pos")

    def __init__(self, text: str) -> None:
        self._lines = text.splitlines()
        self._pos = 0

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
                while self._pos < len(lines) and lines[self._pos].lstrip().startswith("#"):
                    self._pos += 1
                if self._pos >= len(lines):
                    break
                line = (line + lines[self._pos].strip()).strip()
                self._pos += 1
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

    __slots__ = ("pos", "text")

    def __init__(self, text: str, pos: int = 0) -> None:
        self.text = text
        self.pos = pos

    def _skip_blanks(self) -> None:
        text, pos = self.text, self.pos
        while pos < len(text) and text[pos] in DELIMITERS:
            pos += 1
        self.pos = pos

    def next(self) -> str | None:
        """The next blank-separated word, or None."""
        self._skip_blanks()
        text, start = self.text, self.pos
        if start >= len(text):
            return None
        end = start
        while end < len(text) and text[end] not in DELIMITERS:
            end += 1
        self.pos = end
        return text[start:end]

    def next_quoted(self) -> str | None:
        """The next word, or the text between double quotes when it starts with one."""
        self._skip_blanks()
        text = self.text
        if self.pos < len(text) and text[self.pos] == '"':
            end = text.find('"', self.pos + 1)
            if end < 0:
                end = len(text)
            word = text[self.pos + 1:end]
            self.pos = min(end + 1, len(text))
            return word
        return self.next()

    def peek(self) -> str | None:
        """The next word without taking it."""
        pos = self.pos
        word = self.next()
        self.pos = pos
        return word

    def rest(self) -> str:
        """All that is left, blanks around it removed."""
        self._skip_blanks()
        rest = self.text[self.pos:].rstrip()
        self.pos = len(self.text)
        return rest

    def remaining(self) -> list[str]:
        """All words left."""
        words = []
        while (word := self.next()) is not None:
            words.append(word)
        return words

"""Errors shared by every layer.

A ``UserError`` is a mistake in input a person wrote (a config file, a submit file, an
expression, a command line).  The CLI prints its message and exits non-zero; it never
shows a traceback for one.  Everything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class UserError(Exception):
    """Bad input from a person.  ``str(err)`` is the whole message to print."""

    exit_code: int = 1

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None,
                 column: int | None = None) -> None:
        self.message = message
        self.source = source
        self.line = line
        self.column = column
        super().__init__(self.format())

    def format(self) -> str:
        where = ""
        if self.source is not None:
            where = self.source
            if self.line is not None:
                where += f":{self.line}"
                if self.column is not None:
                    where += f":{self.column}"
            where += ": "
        return where + self.message

"""Errors and warnings of the DAG language, each naming the file, the line and how it was reached."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


class Origin(NamedTuple):
    """Where a statement was read: its file and line, and the INCLUDE/SPLICE lines that led there.

    A tuple, as one is kept for every statement and node of DAGs of 100,000 nodes."""

    file: str
    line: int
    chain: tuple[str, ...] = ()  # outermost last: "included from a.dag:3", "in splice S from a.dag:7"

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}"
        return where + "".join(f" ({link})" for link in self.chain)


class DagError(Exception):
    """A DAG that cannot be run; ``str()`` is ``file:line: reason`` plus the INCLUDE/SPLICE chain."""

    def __init__(self, reason: str, origin: Origin | None = None) -> None:
        self.reason = reason
        self.origin = origin
        super().__init__(self._text())

    def _text(self) -> str:
        if self.origin is None:
            return self.reason
        chain = "".join(f" ({link})" for link in self.origin.chain)
        return f"{self.origin.file}:{self.origin.line}: {self.reason}{chain}"


@dataclass(frozen=True, slots=True)
class DagWarning:
    """Something accepted that does not do all it says (or that HTCondor itself warns about)."""

    reason: str
    origin: Origin | None = None

    def __str__(self) -> str:
        if self.origin is None:
            return f"Warning: {self.reason}"
        chain = "".join(f" ({link})" for link in self.origin.chain)
        return f"{self.origin.file}:{self.origin.line}: Warning: {self.reason}{chain}"

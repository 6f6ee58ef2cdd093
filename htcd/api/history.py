"""``Schedd.history``: htcondor2's arguments turned into htcd's QUERY_SCHEDD_HISTORY, which the
schedd answers from its HISTORY file (newest first, streamed)."""

from __future__ import annotations

import re

from htcd.classad import ClassAdSyntaxError, parse_expr

from .classad import ExprTree, constraint_text
from .errors import HTCondorException

_JOB_ID = re.compile(r"\s*(\d+)\.(\d+)\s*")


def since_expression(since: int | str | ExprTree | None) -> str | None:
    """htcondor2's ``since``: a cluster id (int), a job id (``"C.P"``) or an expression; the scan
    stops before the first ad it names or makes true."""
    if since is None:
        return None
    if isinstance(since, bool):
        raise TypeError("since must be a cluster id, a job id or an expression")
    if isinstance(since, int):
        return f"ClusterId == {since}"
    if isinstance(since, str):
        m = _JOB_ID.fullmatch(since)
        if m:
            return f"ClusterId == {m.group(1)} && ProcId == {m.group(2)}"
    text = str(since)
    try:
        parse_expr(text)
    except ClassAdSyntaxError as exc:
        raise HTCondorException(f"bad since expression {text!r}: {exc}") from None
    return text


def constraint(value: str | ExprTree | None) -> str | None:
    text = constraint_text(value)
    if text:
        try:
            parse_expr(text)
        except ClassAdSyntaxError as exc:
            raise HTCondorException(f"bad constraint {text!r}: {exc}") from None
    return text

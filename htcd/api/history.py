"""Jobs that left the queue, read from the schedd's HISTORY file on this host (htcd's schedd has
no history query command; ``Schedd.history`` is this file, newest first)."""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Callable, Iterator
from typing import Any

from htcd.classad import ClassAdSyntaxError, parse_expr, parse_old_ad

from .classad import ClassAd, ExprTree, constraint_text
from .config import config
from .errors import HTCondorException

_JOB_ID = re.compile(r"\d+\.\d+")


def matching(constraint: str | ExprTree | None, projection: list[str] | None, match: int,
             since: int | str | ExprTree | None) -> Iterator[ClassAd]:
    """The history's job ads that ``constraint`` selects, newest first, as Schedd.history gives them."""
    path = config().get("HISTORY")
    if not path:
        raise HTCondorException("no history: the HISTORY knob is empty, so completed jobs are not kept")
    text = constraint_text(constraint)
    expr = parse_expr(text) if text else None
    stop = _since(since)
    n = 0
    for ad in read_history(path):
        if stop is not None and stop(ad):
            return
        if expr is not None and expr.eval(ad) is not True:
            continue
        out = ClassAd()
        if projection:
            for name in projection:
                if name in ad:
                    out.set_expr(ad.name_of(name) or name, ad.expr_text(name))
        else:
            out.update(ad)
        yield out
        n += 1
        if 0 < match <= n:
            return


def _since(since: int | str | ExprTree | None) -> Callable[[Any], bool] | None:
    if since is None:
        return None
    if isinstance(since, int) and not isinstance(since, bool):
        return lambda ad: int(ad.get_value("CompletionDate", 0) or 0) <= since
    if isinstance(since, str) and _JOB_ID.fullmatch(since):
        c, p = (int(x) for x in since.split("."))
        return lambda ad: ad.get_value("ClusterId") == c and ad.get_value("ProcId") == p
    try:
        expr = parse_expr(str(since))
    except ClassAdSyntaxError as exc:
        raise HTCondorException(f"bad since expression {since!r}: {exc}") from None
    return lambda ad: expr.eval(ad) is True


def read_history(path: str) -> Iterator[Any]:
    """The job ads of a history file and its rotated files, newest first.  The file is a run of
    old-format ads each followed by a ``*** `` banner line (what htcd's schedd appends)."""
    rotated = [p for p in glob.glob(glob.escape(path) + ".*") if p[len(path) + 1:][:1].isdigit()]
    rotated.sort(key=lambda p: (os.stat(p).st_mtime_ns, p), reverse=True)
    for p in [path, *rotated]:
        try:
            with open(p, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise HTCondorException(f"cannot read the history file {p}: {exc.strerror}") from None
        records = re.split(r"(?m)^\*\*\* .*\n?", text)
        complete = records[:-1]  # text after the last banner is a record still being written
        for record in reversed(complete):
            if record.strip():
                try:
                    yield parse_old_ad(record)
                except ClassAdSyntaxError as exc:
                    raise HTCondorException(f"{p}: a history record is no ClassAd: {exc}") from None

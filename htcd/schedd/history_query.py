"""Answering QUERY_SCHEDD_HISTORY: the history's job ads, streamed in chunks as they are read.

The history file may hold millions of ads, so nothing loads it whole: records come from the end
of the file (or, ``forwards``, from its start) one block at a time, through the rotated files,
and each chunk goes out as soon as it is full.  The walk is paced (``htcd.pacer``), so the
schedd answers its other commands while a long history streams.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from htcd.classad import ClassAd, ClassAdSyntaxError, Expr, is_true, parse_old_ad
from htcd.pacer import Pacer
from htcd.schedd import history
from htcd.schedd.query import CHUNK, PRIVATE, parse_constraint
from htcd.wire.errors import CommandError
from htcd.wire.server import Request

if TYPE_CHECKING:
    from htcd.schedd.daemon import Schedd

_PRIVATE_LOWER = {k.lower() for k in PRIVATE}


def _since(text: str | None) -> Expr | None:
    """The expression that ends the scan (the ad making it true is not sent)."""
    if not text:
        return None
    try:
        return parse_constraint(text)
    except CommandError as exc:
        raise CommandError(f"bad since expression: {exc}", "BAD_CONSTRAINT") from None


def wire_of(text: str) -> dict[str, str]:
    """A record's ``Name = expr`` lines as name -> expression text, unparsed (an expression is
    parsed only when a constraint looks at it); a record in any other form goes through the
    full old-format parser, which names what is wrong."""
    wire: dict[str, str] = {}
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        name, eq, expr = stripped.partition("=")
        name = name.rstrip()
        if not eq or not name.isidentifier() or not expr.strip():
            return parse_old_ad(text).to_wire()
        wire[name] = expr.strip()
    return wire


def _project(wire: dict[str, str], wanted: set[str] | None) -> dict[str, str]:
    return {k: v for k, v in wire.items()
            if k.lower() not in _PRIVATE_LOWER and (wanted is None or k.lower() in wanted)}


async def cmd_query_history(schedd: Schedd, req: Request) -> list[dict[str, str]]:
    """``{constraint?, projection?, match?, since?, forwards?, scanlimit?}``: the job ads of the
    history the constraint selects, newest first (``forwards``: oldest first), at most ``match``
    (0: all); the scan stops at the first ad ``since`` is true of, or after ``scanlimit`` ads."""
    constraint = parse_constraint(req.arg_str("constraint"))
    stop = _since(req.arg_str("since"))
    projection = req.arg_list("projection", str)
    wanted = {p.lower() for p in projection} if projection else None
    match = req.arg_int("match", 0)
    scanlimit = req.arg_int("scanlimit", 0)
    forwards = req.arg_bool("forwards")
    path = schedd.config.get("HISTORY")
    if not path:
        raise CommandError("this schedd keeps no history: its HISTORY knob is empty", "NO_HISTORY")
    # a job the queue no longer shows is in the history already: `htcd q` then `htcd history` never misses it
    await schedd.store.departures_recorded()
    pacer = Pacer()
    chunk: list[dict[str, str]] = []
    sent = scanned = 0
    for i, text in enumerate(history.records(path, forwards)):
        if i & 31 == 0 and pacer.due():
            await pacer.pause()
        if not text.strip():
            continue
        try:
            wire = wire_of(text)
        except ClassAdSyntaxError as exc:
            schedd.log.error("history file %s: a record is no ClassAd, skipped: %s", path, exc)
            continue
        scanned += 1
        ad = ClassAd.from_wire(wire) if stop is not None or constraint is not None else None
        if stop is not None and is_true(stop.eval(ad)):
            break
        if constraint is None or is_true(constraint.eval(ad)):
            chunk.append(_project(wire, wanted))
            sent += 1
            if 0 < match <= sent:
                break
            if len(chunk) >= CHUNK:
                await req.send_partial(chunk)
                chunk = []
                await pacer.pause()  # drain() does not yield while the client keeps up
        if 0 < scanlimit <= scanned:
            break
    return chunk


def handler(schedd: Schedd) -> Any:
    """The command handler, bound to the schedd (for ``Schedd.command_handlers``)."""
    return lambda req: cmd_query_history(schedd, req)

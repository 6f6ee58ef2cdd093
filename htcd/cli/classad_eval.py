"""``htcd classad_eval``: evaluate ClassAd expressions, as HTCondor's ``classad_eval`` does.

Command line: every argument is either an assignment (``name = expr``, or a whole ``[ ... ]`` ad),
which is merged into the MY ad, or an expression, which is evaluated against MY (and TARGET) and
printed, one line per expression, in argument order.  ``-file`` reads the MY ad from a file
(new syntax ``[ ... ]`` or the old ``name = value`` long form); ``-my`` gives it as new-syntax
text; ``-target`` / ``-target-file`` give the TARGET ad the same ways.  ``-print-ad`` prints MY
(new syntax) before the results.

``--jsonl`` reads one JSON object per line from stdin, ``{"expr": "...", "my": "<ad>" | null,
"target": "<ad>" | null}``, and writes one JSON line per input line, in order:
``{"type": "integer|real|string|boolean|undefined|error|list|classad|abstime|reltime",
"value": "<unparsed value>"}``, or ``{"type": "parse_error", "message": "..."}`` when the line,
the expression or an ad does not parse (a blank line too, so answers stay one per input line).
A bad line never stops the stream.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from htcd.classad import AbsTime, ClassAd, ClassAdSyntaxError, RelTime, parse_ad, parse_expr, parse_old_ad
from htcd.classad.values import ERROR, UNDEFINED, unparse_value
from htcd.errors import UserError


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.add_argument("items", nargs="*", metavar="ASSIGNMENT|EXPR",
                   help="'name = expr' (or '[ ... ]') adds to the MY ad; anything else is evaluated")
    p.add_argument("-file", metavar="PATH", help="read the MY ad from this file (new or old syntax)")
    p.add_argument("-my", metavar="AD", help="the MY ad as new-syntax text")
    p.add_argument("-target", metavar="AD", help="the TARGET ad as new-syntax text")
    p.add_argument("-target-file", dest="target_file", metavar="PATH", help="read the TARGET ad from this file")
    p.add_argument("-print-ad", dest="print_ad", action="store_true", help="print the MY ad before the results")
    p.add_argument("--jsonl", "-jsonl", dest="jsonl", action="store_true",
                   help="read JSON lines {expr, my, target} from stdin; write one JSON result per line")
    return run


TYPE_NAMES: list[tuple[type, str]] = [
    (bool, "boolean"), (int, "integer"), (float, "real"), (str, "string"), (list, "list"),
    (ClassAd, "classad"), (AbsTime, "abstime"), (RelTime, "reltime"),
]


def type_name(v: object) -> str:
    """The ClassAd type of an evaluation result."""
    if v is UNDEFINED:
        return "undefined"
    if v is ERROR:
        return "error"
    for t, n in TYPE_NAMES:
        if isinstance(v, t):
            return n
    return "error"


def read_ad(text: str) -> ClassAd:
    """An ad in new syntax (``[ ... ]``) or the old long form (``name = value`` lines)."""
    if text.lstrip().startswith("["):
        return parse_ad(text)
    return parse_old_ad(text)


def _read_file(path: str) -> ClassAd:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror}") from exc
    return read_ad(text)


def _is_assignment(item: str) -> bool:
    """``name = expr`` (a single ``=``, not ``==``, ``=?=``, ``=!=``, ``<=``, ``>=``, ``!=``)."""
    name, eq, rest = item.partition("=")
    if not eq or rest.startswith(("=", "?", "!")) or name.endswith(("<", ">", "!", "=")):
        return False
    name = name.strip()
    return bool(name) and (name.replace("_", "a").isalnum() and not name[0].isdigit())


def run(args: argparse.Namespace) -> int:
    if args.jsonl:
        return run_jsonl(sys.stdin, sys.stdout)
    my = _read_file(args.file) if args.file else ClassAd()
    if args.my:
        my.update(parse_ad(args.my))
    target = None
    if args.target_file:
        target = _read_file(args.target_file)
    if args.target:
        extra = parse_ad(args.target)
        if target is None:
            target = extra
        else:
            target.update(extra)
    out = sys.stdout
    printed = False
    for item in args.items:
        if item.lstrip().startswith("["):
            my.update(parse_ad(item))
            continue
        if _is_assignment(item):
            name, _, text = item.partition("=")
            my.set_expr(name.strip(), text.strip())
            continue
        if args.print_ad and not printed:
            out.write(my.to_new() + "\n")
            printed = True
        out.write(unparse_value(parse_expr(item).eval(my, target)) + "\n")
    if args.print_ad and not printed:
        out.write(my.to_new() + "\n")
    return 0


def eval_line(line: str) -> dict[str, Any]:
    """One JSON-lines request to its one-line answer (never raises)."""
    try:
        req = json.loads(line)
    except ValueError as exc:
        return {"type": "parse_error", "message": f"bad JSON: {exc}"}
    if not isinstance(req, dict) or not isinstance(req.get("expr"), str):
        return {"type": "parse_error", "message": 'expected an object with a string "expr"'}
    ads: list[ClassAd | None] = []
    for key in ("my", "target"):
        text = req.get(key)
        if text is None:
            ads.append(None)
        elif not isinstance(text, str):
            return {"type": "parse_error", "message": f'"{key}" must be a string or null'}
        else:
            try:
                ads.append(parse_ad(text))
            except ClassAdSyntaxError as exc:
                return {"type": "parse_error", "message": f"{key}: {exc}"}
    try:
        tree = parse_expr(req["expr"])
    except ClassAdSyntaxError as exc:
        return {"type": "parse_error", "message": str(exc)}
    try:
        v = tree.eval(ads[0], ads[1])
    except Exception as exc:  # an evaluation must not stop the stream
        return {"type": "error", "value": "error", "message": f"internal error: {exc!r}"}
    return {"type": type_name(v), "value": unparse_value(v)}


def run_jsonl(inp: Any, out: Any) -> int:
    for line in inp:
        out.write(json.dumps(eval_line(line)) + "\n")
        out.flush()
    return 0

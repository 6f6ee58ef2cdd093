"""Which knobs htcd's code reads, found in its source: the param table's ``use`` column and
tests/config/test_knob_table.py rest on this scan (it is never imported at run time).

A knob is read where a config getter (``cfg.get_int("X")``, ``self.schedd.knob_int("X")``) names
it, where a string constant in the code is exactly its name (tables of knob names), and where
the default of a knob htcd reads refers to it (``COLLECTOR_HOST = $(CONDOR_HOST)``).  An
f-string name (``f"{subsys}_LOG"``) stands for the names its placeholders make with htcd's
subsystems.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GETTERS = {"get", "get_bool", "get_int", "get_list", "get_size", "get_expr", "get_float", "knob_int"}
#: Names a daemon is held under in the code: the daemon itself, or the one a collaborator serves
#: (``self.schedd.knob_int("X")`` in the schedd's concerns).
DAEMONS = {"self", "daemon", "self.daemon", "schedd", "self.schedd", "startd", "self.startd"}
#: Names a Config is held under in the code (``self.config.get_int("X")``, ``cfg.get("X")``).
RECEIVERS = {"config", "cfg", "self.cfg", *(f"{d}.config" for d in DAEMONS), *DAEMONS}
#: What an f-string placeholder in a knob name stands for: htcd's subsystems.
SUBSYSTEMS = ("MASTER", "COLLECTOR", "NEGOTIATOR", "SCHEDD", "STARTD", "SHADOW", "STARTER", "TOOL", "SUBMIT",
              "DEFRAG")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_REF = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_.]*)")


def _receiver(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_receiver(node.value)}.{node.attr}"
    return "?"


@functools.lru_cache(maxsize=1)
def _trees() -> list[tuple[Path, list[ast.AST]]]:
    """Every module of htcd/ and plugins/ with its nodes, parsed once per process."""
    out = []
    for path in [*(ROOT / "htcd").rglob("*.py"), *(ROOT / "plugins").rglob("*.py")]:
        out.append((path, list(ast.walk(ast.parse(path.read_text(encoding="utf-8"))))))
    return out


def knob_reads() -> list[tuple[str, str]]:
    """(file:line, pattern) of every knob name passed to a config getter; an f-string's
    placeholders become ``{}``."""
    out = []
    for path, nodes in _trees():
        for node in nodes:
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in GETTERS and node.args):
                continue
            recv = _receiver(node.func.value)
            if recv not in RECEIVERS or (recv in DAEMONS and node.func.attr != "knob_int"):
                continue
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                name = arg.value
            elif isinstance(arg, ast.JoinedStr):
                name = "".join(str(v.value) if isinstance(v, ast.Constant) else "{}" for v in arg.values)
            else:
                continue
            if re.fullmatch(r"[A-Za-z_{}][A-Za-z0-9_{}.]*", name):
                out.append((f"{path.relative_to(ROOT)}:{node.lineno}", name))
    return out


def string_constants() -> set[str]:
    """Every string constant of htcd's code that could be a knob name, upper-cased; a single word
    (``"MASTER"``, ``"VM"``) is a subsystem or universe far more often than a knob, so it needs an
    underscore."""
    out: set[str] = set()
    for _, nodes in _trees():
        for node in nodes:
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and "_" in node.value.strip("_")
                    and _NAME.fullmatch(node.value)):
                out.add(node.value.upper())
    return out


def read_names(names: Iterable[str], defaults: dict[str, str | None]) -> set[str]:
    """The names (upper case) among ``names`` that htcd's code reads, directly or through the
    default of a knob it reads; ``defaults`` maps an upper-case name to its raw default."""
    wanted = {n.upper() for n in names}
    direct: set[str] = set()
    patterns: list[re.Pattern[str]] = []
    for _, name in knob_reads():
        base = name.split(".")[-1].upper()
        if "{}" in base:
            alt = "(?:" + "|".join(SUBSYSTEMS) + ")"
            patterns.append(re.compile(alt.join(re.escape(part) for part in base.split("{}"))))
        else:
            direct.add(base)
    direct |= string_constants() & wanted
    direct |= {n for n in wanted if any(p.fullmatch(n) for p in patterns)}
    used: set[str] = set()
    todo = [n for n in direct if n in wanted or n in defaults]
    while todo:
        n = todo.pop()
        if n in used:
            continue
        used.add(n)
        todo += [r.split(".")[-1].upper() for r in _REF.findall(defaults.get(n) or "")]
    return used & wanted

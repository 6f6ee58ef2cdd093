"""A knob's default is written once, in the param table: a default written again where the code
reads the knob must say the same, or the code and docs/knobs.md tell two stories.

The config's value, then the table's (its default, or its ``-(V)`` read-as value), win over a
getter's ``default`` argument, so a disagreeing literal is dead code that misleads the reader.
This scans htcd/ and plugins/ for getter calls naming a table knob with a default that can be
read without running the code (a literal, or a module-level constant), and compares.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import Any

import pytest

from htcd.config import Config, table

ROOT = Path(__file__).resolve().parents[2]
GETTERS = {"get", "get_bool", "get_int", "get_float", "get_size", "get_expr", "get_list", "knob_int", "_knob"}
#: What each getter returns for a knob with neither a value nor a default anywhere.
BARE = {"get": None, "_knob": None, "get_expr": None, "get_bool": False, "get_int": 0, "knob_int": 0,
        "get_float": 0.0, "get_size": 0, "get_list": []}
#: Knobs the table leaves undefined on purpose, though the code reads them with a default: being
#: undefined means something else than any value would.
UNDEFINED_MEANS_MORE: dict[str, str] = {}


class Unreadable(Exception):
    """The default is computed at run time (an argument, an attribute of an object)."""


def _module_of(path: Path) -> str:
    rel = path.relative_to(ROOT / "plugins" if path.is_relative_to(ROOT / "plugins") else ROOT)
    return ".".join(rel.with_suffix("").parts)


def _imports(tree: ast.Module) -> dict[str, tuple[str, str]]:
    """Local name -> (module, name) for ``from M import N`` and (module, "") for ``import M``."""
    out: dict[str, tuple[str, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                out[a.asname or a.name] = (node.module, a.name)
        elif isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = (a.name, "")
    return out


def _resolve(node: ast.expr, module: str, imports: dict[str, tuple[str, str]]) -> Any:
    if isinstance(node, ast.Name) and node.id in imports and imports[node.id][1]:
        mod, name = imports[node.id]
        m = importlib.import_module(mod)
        if hasattr(m, name):
            return getattr(m, name)
        return importlib.import_module(f"{mod}.{name}")  # a submodule imported by name
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in imports:
        mod, name = imports[node.value.id]
        m = importlib.import_module(f"{mod}.{name}" if name else mod)
        if not hasattr(m, node.attr):
            raise Unreadable
        return getattr(m, node.attr)
    if isinstance(node, ast.Name):
        m = importlib.import_module(module)
        if not hasattr(m, node.id):
            raise Unreadable
        return getattr(m, node.id)
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_resolve(e, module, imports) for e in node.elts]
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_resolve(node.operand, module, imports)
    if isinstance(node, ast.BinOp):
        ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
               ast.Pow: lambda a, b: a ** b}
        op = ops.get(type(node.op))
        if op is None:
            raise Unreadable
        return op(_resolve(node.left, module, imports), _resolve(node.right, module, imports))
    raise Unreadable


def call_site_defaults() -> list[tuple[str, int, str, str, Any]]:
    """(file, line, getter, knob, default) of every getter call naming a table knob with a
    default readable from the source."""
    rows = table()
    out = []
    for path in sorted([*(ROOT / "htcd").rglob("*.py"), *(ROOT / "plugins").rglob("*.py")]):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imports = _imports(tree)
        module = _module_of(path)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in GETTERS and node.args):
                continue
            arg = node.args[0]
            # knob names are written upper-case; a lower-case key is a dict's or an ad's
            if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.isupper()
                    and arg.value.lower() in rows):
                continue
            given = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == "default"), None)
            if given is None:
                continue
            try:
                value = _resolve(given, module, imports)
            except Unreadable:
                continue
            out.append((str(path.relative_to(ROOT)), node.lineno, node.func.attr, arg.value, value))
    return out


def _same(getter: str, given: Any, table_value: Any) -> bool:
    if isinstance(given, (list, tuple)) or isinstance(table_value, (list, tuple)):
        return list(given or []) == list(table_value or [])
    if isinstance(given, bool) or isinstance(table_value, bool):
        return bool(given) == table_value
    if isinstance(given, (int, float)) and isinstance(table_value, (int, float)):
        return float(given) == float(table_value)
    return str(given).strip() == str(table_value).strip()


def disagreements() -> list[tuple[str, str, str]]:
    """(file, knob, what is wrong) for every call-site default the table contradicts."""
    rows = table()
    cfg = Config("TOOL", env={})
    out = []
    for path, line, getter, knob, given in call_site_defaults():
        p = rows[knob.lower()]
        written = p.default if p.default is not None else p.fallback
        where = f"{path}:{line} {getter}({knob!r}, {given!r})"
        if written is None:
            if given != BARE[getter] and given not in ("", None) and knob not in UNDEFINED_MEANS_MORE:
                out.append((path, knob, f"{where}: the table has no default (add '-({given})' or a default)"))
            continue
        if "$(" in written:
            out.append((path, knob, f"{where}: the table computes {written!r}; pass no default"))
            continue
        reader = getattr(cfg, {"knob_int": "get_int", "_knob": "get"}.get(getter, getter))
        table_value = reader(knob)
        if not _same(getter, given, table_value):
            out.append((path, knob, f"{where}: the table says {written!r}"))
    return out


def test_the_scan_finds_call_sites() -> None:
    """The scan sees the getters it is meant to see (a renamed getter would silence it)."""
    found = {(path, knob) for path, _, _, knob, _ in call_site_defaults()}
    assert ("htcd/master/daemon.py", "MASTER_CHECK_DISK_INTERVAL") in found
    assert ("htcd/daemon/keepalive.py", "NOT_RESPONDING_TIMEOUT") in found  # a module constant


def test_call_site_defaults_agree_with_the_param_table() -> None:
    wrong = [what for path, knob, what in disagreements()]
    assert not wrong, "call-site defaults the param table contradicts:\n" + "\n".join(wrong)


@pytest.mark.parametrize("knob,getter,expected", [
    ("NEGOTIATOR_CYCLE_DELAY", "get_int", 20), ("SCHEDD_INTERVAL", "get_int", 300),
    ("CLASSAD_LIFETIME", "get_int", 900), ("COLLECTOR_PORT", "get_int", 9618),
])
def test_read_as_values(knob: str, getter: str, expected: Any) -> None:
    """A ``-(V)`` knob stays undefined for $(...) and config_val, as in HTCondor, and reads as V."""
    cfg = Config("TOOL", env={})
    assert cfg.get(knob) is None and not cfg.is_defined(knob)
    assert getattr(cfg, getter)(knob) == expected
    assert getattr(cfg, getter)(knob, 1) == expected  # the table wins over a call site's default
    assert cfg.expand(f"[$({knob})]") == "[]"

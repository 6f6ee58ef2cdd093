"""Figures of the codebase's health, printed as a table and one JSON line.

    python scripts/codebase_metrics.py [--mypy] [--json]

Module and class sizes (lines), ``type: ignore`` count, import cycles among htcd's modules (every
import, function-level ones included, TYPE_CHECKING ones excluded: they cost nothing at run time)
and, with ``--mypy``, mypy's error count.  The layer rule itself is checked by tests/test_layers.py.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = [ROOT / "htcd", ROOT / "plugins" / "htcd_plugins"]


def modules() -> dict[str, Path]:
    found = {}
    for base in PACKAGES:
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(base.parent).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The htcd modules ``name`` imports (resolved to modules that exist)."""
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()

    def resolve(target: str) -> str | None:
        while target and target not in known:
            target = target.rpartition(".")[0]
        return target or None

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for sub in child.orelse:
                    visit(sub)
                continue
            if isinstance(child, ast.Import):
                for alias in child.names:
                    hit = resolve(alias.name)
                    if hit:
                        out.add(hit)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (child.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                for alias in child.names:
                    hit = resolve(f"{base}.{alias.name}") if base else None
                    if hit and hit != name:
                        out.add(hit)
                    else:
                        hit = resolve(base)
                        if hit:
                            out.add(hit)
            visit(child)

    visit(tree)
    out.discard(name)
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm).

    A package's ``__init__`` that re-exports its own submodules is not a cycle of any consequence
    (Python imports the package first, then the submodule), so edges from a package to its own
    submodules are left out."""
    edges = {m: {t for t in ts if not t.startswith(m + ".")} for m, ts in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(10000)

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in edges:
        if v not in index:
            strong(v)
    return found


def class_sizes(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text())
    return [((n.end_lineno or n.lineno) - n.lineno + 1, n.name) for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mypy", action="store_true", help="also run mypy and count its errors")
    parser.add_argument("--json", action="store_true", help="only the JSON line")
    args = parser.parse_args()
    mods = modules()
    known = set(mods)
    graph = {name: imports_of(name, path, known) for name, path in mods.items()}
    cyc = cycles(graph)
    sizes = sorted(((len(p.read_text().splitlines()), n) for n, p in mods.items()), reverse=True)
    classes = sorted(((size, f"{n}.{c}") for n, p in mods.items() for size, c in class_sizes(p)), reverse=True)
    ignores = sum(len(re.findall(r"#\s*type:\s*ignore", p.read_text())) for p in mods.values())
    figures: dict[str, object] = {
        "modules": len(mods),
        "lines": sum(s for s, _ in sizes),
        "largest_module": f"{sizes[0][1]} ({sizes[0][0]})",
        "largest_class": f"{classes[0][1]} ({classes[0][0]})",
        "type_ignore": ignores,
        "import_cycles": len(cyc),
        "modules_in_cycles": sum(len(c) for c in cyc),
    }
    if args.mypy:
        run = subprocess.run([sys.executable, "-m", "mypy", "htcd", "plugins"], cwd=ROOT,
                             capture_output=True, text=True)
        last = (run.stdout.strip().splitlines() or [""])[-1]
        m = re.search(r"Found (\d+) error", last)
        figures["mypy_errors"] = int(m.group(1)) if m else (0 if "Success" in last else last)
    if not args.json:
        for key, value in figures.items():
            print(f"{key:20} {value}")
        print("largest modules:", ", ".join(f"{n} {s}" for s, n in sizes[:5]))
        print("largest classes:", ", ".join(f"{n} {s}" for s, n in classes[:5]))
        for comp in cyc:
            print("cycle:", " <-> ".join(comp))
    print(json.dumps({"codebase": figures}))


if __name__ == "__main__":
    main()

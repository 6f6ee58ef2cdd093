"""Figures of the codebase's health, printed as a table and one JSON line.

    python scripts/codebase_metrics.py [--mypy] [--json]

Module and class sizes (lines), ``type: ignore`` count, layer violations and import cycles (as
tests/layering.py finds them, the checker tests/test_layers.py runs) and, with ``--mypy``, mypy's
error count.
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
sys.path.insert(0, str(ROOT / "tests"))
import layering  # noqa: E402 - the checker the suite runs, from the tests folder


def class_sizes(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text())
    return [((n.end_lineno or n.lineno) - n.lineno + 1, n.name) for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mypy", action="store_true", help="also run mypy and count its errors")
    parser.add_argument("--json", action="store_true", help="only the JSON line")
    args = parser.parse_args()
    mods = layering.module_files()
    cyc = {kind: layering.import_cycles(kind) for kind in layering.CYCLE_KINDS}
    sizes = sorted(((len(p.read_text().splitlines()), n) for n, p in mods.items()), reverse=True)
    classes = sorted(((size, f"{n}.{c}") for n, p in mods.items() for size, c in class_sizes(p)), reverse=True)
    ignores = sum(len(re.findall(r"#\s*type:\s*ignore", p.read_text())) for p in mods.values())
    figures: dict[str, object] = {
        "modules": len(mods),
        "lines": sum(s for s, _ in sizes),
        "largest_module": f"{sizes[0][1]} ({sizes[0][0]})",
        "largest_class": f"{classes[0][1]} ({classes[0][0]})",
        "type_ignore": ignores,
        "layer_violations": len(layering.violations()),
        "import_cycles_load": len(cyc["load"]),
        "import_cycles_run": len(cyc["run"]),
        "import_cycles_typing": len(cyc["typing"]),
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
        for comp in cyc["typing"]:
            print("cycle (TYPE_CHECKING):", " <-> ".join(comp))
    print(json.dumps({"codebase": figures}))


if __name__ == "__main__":
    main()

"""Harvest example scripts written for HTCondor's htcondor2 bindings from HTCondor's own docs and
tutorials into tests/api/examples/, changing only the import lines (``import htcondor2`` ->
``import htcd.api``, ``import classad2`` -> ``from htcd.api import classad``).

Reads the bare mirror of HTCondor's repository (``--repo``, default /work/.mirror/htcondor+htcondor/repo);
run it again to refresh the files: ``python scripts/harvest_api_examples.py``."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "api" / "examples"
DOCS = "docs/apis/python-bindings"

#: (output name, source path, which code blocks/cells: indexes among the code blocks, in order)
SOURCES = [
    ("eventlog_wait_forever.py", f"{DOCS}/api/version2/examples.rst", [0]),
    ("eventlog_deadline.py", f"{DOCS}/api/version2/examples.rst", [1]),
    # every cell of the introduction
    ("htcondor_introduction.py", f"{DOCS}/tutorials/HTCondor-Introduction.ipynb", None),
    # cell 8 raises KeyError on purpose (a missing attribute): the rest runs as a script
    ("classads_introduction.py", f"{DOCS}/tutorials/ClassAds-Introduction.ipynb", [0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12]),
    ("advanced_schedd_interactions.py", f"{DOCS}/tutorials/Advanced-Schedd-Interactions.ipynb", None),
    # the tutorial's own walk-through, without its three exercises (code cells 20-25 are left for
    # the reader to complete and fail as written)
    ("submitting_and_managing_jobs.py", f"{DOCS}/tutorials/Submitting-and-Managing-Jobs.ipynb", list(range(20))),
]

IMPORTS = [
    (re.compile(r"^import htcondor2 as (\w+)\b.*$", re.M), r"import htcd.api as \1"),
    (re.compile(r"^import htcondor2\s*$", re.M), "import htcd.api as htcondor2"),
    (re.compile(r"^import classad2 as (\w+)\b.*$", re.M), r"from htcd.api import classad as \1"),
    (re.compile(r"^import classad2\s*$", re.M), "from htcd.api import classad as classad2"),
]


def show(repo: str, path: str) -> tuple[str, str]:
    commit = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    text = subprocess.run(["git", "-C", repo, "show", f"HEAD:{path}"], capture_output=True, text=True,
                          check=True).stdout
    return commit, text


def rst_blocks(text: str) -> list[str]:
    """The ``.. code-block:: python`` blocks of a reStructuredText page, dedented."""
    blocks = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() == ".. code-block:: python":
            i += 1
            body = []
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith("    ")):
                body.append(lines[i][4:])
                i += 1
            blocks.append("\n".join(body).strip("\n") + "\n")
        else:
            i += 1
    return blocks


def notebook_cells(text: str) -> list[str]:
    return ["".join(c["source"]).rstrip("\n") + "\n" for c in json.loads(text)["cells"] if c["cell_type"] == "code"]


def port(code: str) -> str:
    for pattern, repl in IMPORTS:
        code = pattern.sub(repl, code)
    return code


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repo", default="/work/.mirror/htcondor+htcondor/repo")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    for name, path, pick in SOURCES:
        commit, text = show(args.repo, path)
        parts = rst_blocks(text) if path.endswith(".rst") else notebook_cells(text)
        chosen = parts if pick is None else [parts[i] for i in pick]
        which = "all code cells" if pick is None else "code blocks " + ", ".join(str(i) for i in pick)
        header = (f"# Harvested from HTCondor's {path} ({which}; commit {commit[:12]})\n"
                  "# by scripts/harvest_api_examples.py.  Only the import lines were changed, from htcondor2 /\n"
                  "# classad2 to htcd.api.  The code is HTCondor's (Apache License 2.0).\n")
        body = "\n".join(port(c).replace("#!/usr/bin/env python3\n", "") for c in chosen)
        (OUT / name).write_text(header + "# ruff: noqa\n# mypy: ignore-errors\n\n" + body)
        print(f"{OUT / name}: {len(chosen)} block(s) from {path}")


if __name__ == "__main__":
    main()

"""Harvest real submit files into tests/corpus/submit/: HTCondor's own test-suite submit files and
the submit examples of its manual, each under a name of its own, with its origin in SOURCES.

From a bare mirror of HTCondor's repository (default /work/.mirror/htcondor+htcondor/repo, or
HTCONDOR_REPO):

* src/condor_tests/**/*.sub, *.cmd, *.submit that hold a submit description (a DAG file, or a
  file with no command and no queue statement, is left out);
* submit descriptions written as plain triple-quoted strings in its Python tests (not
  f-strings or templates: those with ``{`` are left out) that hold a queue statement;
* the ``.. code-block:: condor-submit`` blocks of docs/**/*.rst that set an executable, shell,
  container or docker image (the rest are fragments of a description).

Run ``python scripts/harvest_submit_corpus.py`` and commit tests/corpus/submit/.  The files are
HTCondor's test inputs and documentation, kept as material (Apache License 2.0).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

REPO = os.environ.get("HTCONDOR_REPO", "/work/.mirror/htcondor+htcondor/repo")
OUT = Path(__file__).resolve().parents[1] / "tests" / "corpus" / "submit"

_QUEUE = re.compile(r"^\s*queue\b(?!\s*=)", re.IGNORECASE | re.MULTILINE)
_COMMAND = re.compile(r"^\s*[+A-Za-z_][A-Za-z0-9_.]*\s*=", re.MULTILINE)
_RUNS = re.compile(r"^\s*(executable|shell|container_image|docker_image)\s*=", re.IGNORECASE | re.MULTILINE)
_DAG = re.compile(r"^\s*(JOB|SUBDAG|PARENT|SPLICE)\s+\S+", re.MULTILINE)


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", REPO, *args], check=True, capture_output=True).stdout.decode(
        "utf-8", "replace")


def is_submit(text: str) -> bool:
    return bool(_COMMAND.search(text) and (_QUEUE.search(text) or _RUNS.search(text))) and not _DAG.search(text)


def safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_")


def test_files(paths: list[str]) -> dict[str, tuple[str, str]]:
    out = {}
    for path in paths:
        if not re.search(r"\.(sub|cmd|submit)$", path):
            continue
        text = git("show", f"HEAD:{path}")
        if is_submit(text):
            out[safe(path.removeprefix("src/condor_tests/"))] = (path, text)
    return out


def python_strings(paths: list[str]) -> dict[str, tuple[str, str]]:
    out = {}
    for path in paths:
        if not (path.startswith("src/condor_tests/") and path.endswith(".py")):
            continue
        source = git("show", f"HEAD:{path}")
        for n, m in enumerate(re.finditer(r'(?<![fFrRbB])("""|\'\'\')(.*?)\1', source, re.DOTALL), start=1):
            body = textwrap.dedent(m.group(2)).strip("\n") + "\n"
            if "{" in body or not _QUEUE.search(body) or not _RUNS.search(body) or _DAG.search(body):
                continue
            line = source.count("\n", 0, m.start()) + 1
            out[safe(path.removeprefix("src/condor_tests/")) + f".{n}.sub"] = (f"{path}:{line}", body)
    return out


def manual_blocks(paths: list[str]) -> dict[str, tuple[str, str]]:
    out = {}
    for path in paths:
        if not (path.startswith("docs/") and path.endswith(".rst")):
            continue
        lines = git("show", f"HEAD:{path}").split("\n")
        n = 0
        for i, line in enumerate(lines):
            m = re.match(r"^(\s*)\.\. code-block:: condor-submit\s*$", line)
            if not m:
                continue
            body: list[str] = []
            j = i + 1
            while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > len(m.group(1))):
                body.append(lines[j])
                j += 1
            while body and body[0].strip().startswith(":"):  # code-block options
                body.pop(0)
            text = textwrap.dedent("\n".join(body)).strip("\n") + "\n"
            n += 1
            if _RUNS.search(text) and _COMMAND.search(text) and not _DAG.search(text):
                out[safe(path.removeprefix("docs/").removesuffix(".rst")) + f".{n}.sub"] = (f"{path}:{i + 1}", text)
    return out


def main() -> None:
    commit = git("rev-parse", "HEAD").strip()
    paths = git("ls-tree", "-r", "--name-only", "HEAD").split("\n")
    found = {**test_files(paths), **python_strings(paths), **manual_blocks(paths)}
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    lines = [f"# file\tsource (HTCondor's repository at {commit}; Apache License 2.0)"]
    for name, (source, text) in sorted(found.items()):
        (OUT / name).write_text(text)
        lines.append(f"{name}\t{source}")
    (OUT / "SOURCES").write_text("\n".join(lines) + "\n")
    print(f"{len(found)} submit files in {OUT}")


if __name__ == "__main__":
    main()

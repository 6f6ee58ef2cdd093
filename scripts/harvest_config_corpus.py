"""Copy HTCondor's own configuration texts into tests/corpus/config/ (a standing corpus).

From a bare git mirror of HTCondor's repository: the example configs of src/condor_examples,
the config files of src/condor_tests, and every ``.. code-block:: condor-config`` snippet of
the manual (docs/**/*.rst).  tests/corpus/config/SOURCES records, for each stored file, the
path (and line, for a snippet) it came from and the commit.  tests/config/test_corpus.py
reads every file with htcd and with the htcondor wheel.

    python scripts/harvest_config_corpus.py /work/.mirror/htcondor+htcondor/repo [COMMIT]
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "tests", "corpus", "config")

#: src/condor_examples files in the config language (the rest are scripts, units, patches...).
EXAMPLES = re.compile(r"src/condor_examples/(00-[^/]+|condor_config\.(?!.*\.patch$)[^/]+|[^/]+\.config)$")
#: src/condor_tests files in the config language: DAGMan and daemon configs, the auth tests'
#: configs, the status test configs.
TESTS = re.compile(r"src/condor_tests/([^/]+\.(config|cfg|localpostsrc)|StatusConfigs/[^/]+|"
                   r"lib_auth_config_tests/[^/]+_config|x_ganglia_config)$")
BLOCK = re.compile(r"^(\s*)\.\. code-block:: condor-config\s*$")


def git(mirror: str, *args: str) -> str:
    return subprocess.run(["git", "-C", mirror, *args], check=True, capture_output=True, text=True,
                          errors="surrogateescape").stdout


def snippets(text: str) -> list[tuple[int, str]]:
    """(line, text) of each condor-config code block of an .rst file, dedented."""
    lines = text.split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = BLOCK.match(lines[i])
        i += 1
        if not m:
            continue
        indent = len(m.group(1))
        while i < len(lines) and lines[i].strip().startswith(":"):  # block options
            i += 1
        body: list[str] = []
        start = i + 1
        while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
            body.append(lines[i])
            i += 1
        while body and not body[-1].strip():
            body.pop()
        while body and not body[0].strip():
            body.pop(0)
            start += 1
        if body:
            cut = min(len(b) - len(b.lstrip()) for b in body if b.strip())
            out.append((start, "\n".join(b[cut:] for b in body) + "\n"))
    return out


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    mirror = sys.argv[1]
    commit = git(mirror, "rev-parse", sys.argv[2] if len(sys.argv) > 2 else "HEAD").strip()
    paths = git(mirror, "ls-tree", "-r", "--name-only", commit).split("\n")
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    rows = []
    seen: set[str] = set()

    def store(sub: str, name: str, text: str, source: str, line: int) -> None:
        digest = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()
        if digest in seen:  # the same text twice (a snippet repeated in the manual) is one case
            return
        seen.add(digest)
        os.makedirs(os.path.join(OUT, sub), exist_ok=True)
        with open(os.path.join(OUT, sub, name), "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(text)
        rows.append(f"{sub}/{name}\t{source}\t{line}\t{commit}")

    for path in paths:
        if EXAMPLES.search(path):
            store("examples", os.path.basename(path), git(mirror, "show", f"{commit}:{path}"), path, 0)
        elif TESTS.search(path):
            name = path.removeprefix("src/condor_tests/").replace("/", "__")
            store("tests", name, git(mirror, "show", f"{commit}:{path}"), path, 0)
        elif path.startswith("docs/") and path.endswith(".rst"):
            text = git(mirror, "show", f"{commit}:{path}")
            stem = path.removeprefix("docs/").removesuffix(".rst").replace("/", "__")
            for line, body in snippets(text):
                store("manual", f"{stem}-{line}.conf", body, path, line)
    with open(os.path.join(OUT, "SOURCES"), "w", encoding="utf-8") as f:
        f.write("# corpus file\tpath in github.com/htcondor/htcondor\tline (0: whole file)\tcommit\n")
        f.write("\n".join(sorted(rows)) + "\n")
    print(f"{len(rows)} files from {commit}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Copy HTCondor's DAG files into this corpus: every ``*.dag`` of its repository, the files
they name (submit files, INCLUDEs, SPLICEs, SUBDAGs, CONFIGs) where the repository has them,
and the ``condor-dagman`` examples of the manual, each keeping its source path.

    python tests/corpus/dag/harvest.py [/work/.mirror/htcondor+htcondor/repo]

Files land under ``htcondor/<path in HTCondor's repository>`` and ``manual/<page>-<n>.dag``
(a header comment names the page and line); SOURCES records the commit and every file.
"""

from __future__ import annotations

import os
import posixpath
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_REPO = "/work/.mirror/htcondor+htcondor/repo"
NAMING = re.compile(r"^\s*(JOB|FINAL|SERVICE|PROVISIONER|SUBDAG\s+EXTERNAL|SPLICE|INCLUDE|CONFIG)"
                    r"\s+(.*)$", re.IGNORECASE)


def git(repo: str, *args: str) -> bytes:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True).stdout


def named_files(text: str) -> list[str]:
    """Relative names a DAG file refers to (DIR applied), read loosely: only to copy them."""
    out = []
    for line in text.splitlines():
        m = NAMING.match(line)
        if not m:
            continue
        keyword = m[1].split()[0].upper()
        words = m[2].split()
        if keyword in ("INCLUDE", "CONFIG"):
            if words:
                out.append(words[0])
            continue
        if len(words) < 2 or words[1].startswith(("{", "@=")):
            continue
        directory = ""
        upper = [w.upper() for w in words]
        if "DIR" in upper[2:]:
            i = upper.index("DIR", 2)
            directory = words[i + 1] if i + 1 < len(words) else ""
        out.append(posixpath.join(directory, words[1].strip('"')))
    return out


def harvest(repo: str) -> None:
    commit = git(repo, "rev-parse", "HEAD").decode().strip()
    tree = set(git(repo, "ls-tree", "-r", "--name-only", "HEAD").decode().splitlines())
    wanted = sorted(p for p in tree if p.lower().endswith(".dag"))
    copied: dict[str, str] = {}
    queue = list(wanted)
    while queue:
        path = queue.pop(0)
        if path in copied or path not in tree:
            continue
        data = git(repo, "show", f"HEAD:{path}")
        dest = os.path.join(HERE, "htcondor", path)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "wb") as f:
            f.write(data)
        copied[path] = "repo"
        if path.lower().endswith((".dag", ".inc", ".splice")) or path in wanted:
            # a name is relative to where DAGMan runs: the top DAG's directory, which for a
            # spliced or included file may be one of its file's parents
            bases = [posixpath.dirname(path)]
            while bases[-1]:
                bases.append(posixpath.dirname(bases[-1]))
            for name in named_files(data.decode("utf-8", "replace")):
                for base in bases:
                    candidate = posixpath.normpath(posixpath.join(base, name))
                    if candidate in tree:
                        queue.append(candidate)
                        break
    manual = []
    docs = sorted(p for p in tree if p.startswith("docs/") and p.endswith(".rst"))
    for path in docs:
        text = git(repo, "show", f"HEAD:{path}").decode("utf-8", "replace").splitlines()
        n = 0
        i = 0
        while i < len(text):
            if text[i].strip() == ".. code-block:: condor-dagman":
                indent = len(text[i]) - len(text[i].lstrip())
                start = i + 1
                j = start
                block = []
                while j < len(text) and (not text[j].strip() or
                                         len(text[j]) - len(text[j].lstrip()) > indent):
                    block.append(text[j])
                    j += 1
                body = [b for b in block if not b.strip().startswith(":")]
                width = min((len(b) - len(b.lstrip()) for b in body if b.strip()), default=0)
                lines = [b[width:] for b in body]
                while lines and not lines[0].strip():
                    lines.pop(0)
                n += 1
                name = f"{posixpath.basename(path)[:-4]}-{n:02d}.dag"
                dest = os.path.join(HERE, "manual", name)
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                with open(dest, "w") as f:
                    f.write(f"# corpus source: {path}:{start} (HTCondor {commit[:12]})\n")
                    f.write("\n".join(lines).rstrip() + "\n")
                manual.append(f"manual/{name} {path}:{start}")
                i = j
            else:
                i += 1
    with open(os.path.join(HERE, "SOURCES"), "w") as f:
        f.write(f"# HTCondor repository commit {commit}; made by harvest.py\n")
        for path in sorted(copied):
            f.write(f"htcondor/{path} {path}\n")
        for line in manual:
            f.write(line + "\n")
    print(f"{len(wanted)} .dag files, {len(copied)} files in all, {len(manual)} manual examples")


if __name__ == "__main__":
    harvest(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_REPO)

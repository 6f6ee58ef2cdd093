#!/usr/bin/env python3
"""Harvest ClassAd expressions and ads from HTCondor's public repository into
tests/corpus/classad/ (expressions.jsonl, ads.jsonl, SOURCES).

The repository is read from a bare git mirror (default /work/.mirror/htcondor+htcondor/repo, or
$HTCONDOR_MIRROR) with ``git show``; nothing of it is kept but the ClassAd text found and where
it was found (path:line).  What is taken:

- src/classad/functional_tests.txt: the expressions of ``eval``, ``same`` and ``diff`` commands
  (``$name`` replaced by the text last evaluated into it);
- src/classad/tests.txt: the ads between ``begin-classad`` and ``end-classad``, and the
  expressions of ``evaluate AD EXPR`` (evaluated with that ad as MY);
- the manual (docs/**/*.rst): ``condor-classad`` and ``condor-classad-expr`` code blocks (each
  block an ad in the old format, each ``Name = expr`` line an expression), ClassAd expressions of
  policy knobs in ``condor-config`` blocks (START, RANK, PREEMPT ... without ``$(`` macros),
  ``requirements``/``rank`` of ``condor-submit`` blocks, and the inline examples of function calls
  in docs/classads/classad-builtin-functions.rst and both sides of its ``RESULT = expression``
  examples;
- src/condor_tests/*.py: string literals passed to ``classad.ExprTree(...)``;
- src/condor_tests/**/*.ad, *.ads: the machine and job ads HTCondor's tests read;
- functions.txt: the name of every function docs/classads/classad-builtin-functions.rst defines.

Run again after the mirror moves: the output is sorted and de-duplicated, so a diff shows what
changed.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator

MIRROR = os.environ.get("HTCONDOR_MIRROR", "/work/.mirror/htcondor+htcondor/repo")
OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "corpus", "classad")

POLICY_KNOBS = re.compile(
    r"^(START|SUSPEND|CONTINUE|PREEMPT|KILL|RANK|WANT_SUSPEND|WANT_VACATE|WANT_HOLD|IS_OWNER|"
    r"PERIODIC_(HOLD|RELEASE|REMOVE)|SYSTEM_PERIODIC_(HOLD|RELEASE|REMOVE)|NEGOTIATOR_PRE_JOB_RANK|"
    r"NEGOTIATOR_POST_JOB_RANK|PREEMPTION_REQUIREMENTS|PREEMPTION_RANK|MaxJobRetirementTime|"
    r"[A-Z_]*REQUIREMENTS|[A-Z_]*_EXPR|DEFRAG_[A-Z_]*|CLAIM_WORKLIFE|NEGOTIATOR_SLOT_CONSTRAINT|"
    r"SLOT_TYPE_\d+_START|START_[A-Z_]+)\s*=\s*(.+)$")
SUBMIT_KEYS = re.compile(r"^\s*(requirements|rank|periodic_\w+|on_exit_\w+)\s*=\s*(.+)$", re.IGNORECASE)
ATTR_LINE = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*=\s*(.*?)\s*;?\s*$")


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", MIRROR, *args], check=True, capture_output=True, text=True,
                          errors="surrogateescape").stdout


def show(path: str) -> str:
    return git("show", f"HEAD:{path}")


def balanced(text: str) -> bool:
    """Brackets outside quotes are closed (an expression spanning lines is complete)."""
    depth = 0
    quote = ""
    esc = False
    for ch in text:
        if quote:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
    return depth <= 0 and not quote


def split_top(text: str, sep: str = ",") -> list[str]:
    """``text`` split at ``sep`` outside brackets and quotes."""
    parts, cur, depth, quote, esc = [], [], 0, "", False
    for ch in text:
        if quote:
            cur.append(ch)
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == quote:
                quote = ""
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return parts


def functional_tests(path: str = "src/classad/functional_tests.txt") -> Iterator[dict[str, object]]:
    lines = show(path).splitlines()
    env: dict[str, str] = {}
    i = 0
    while i < len(lines):
        start = i
        line = lines[i].split("//")[0].rstrip() if not lines[i].lstrip().startswith("same") else lines[i].rstrip()
        i += 1
        words = line.split(None, 1)
        if not words or words[0] not in ("eval", "same", "diff"):
            continue
        body = words[1] if len(words) > 1 else ""
        while not balanced(body) and i < len(lines):
            body += "\n" + lines[i]
            i += 1
        body = body.strip().rstrip(";")
        src = f"{path}:{start + 1}"

        def subst(text: str) -> str:
            return re.sub(r"\$(\w+)", lambda m: "(" + env.get(m.group(1), "undefined") + ")", text)

        if words[0] == "eval":
            name, _, expr = body.partition("=")
            expr = subst(expr.strip())
            env[name.strip()] = expr
            yield {"expr": expr, "source": src}
        else:
            for part in split_top(body):
                if part.strip():
                    yield {"expr": subst(part.strip().rstrip(";")), "source": src}


def classad_tests(path: str = "src/classad/tests.txt") -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    ads, exprs = [], []
    lines = show(path).splitlines()
    i = 0
    names: dict[str, str] = {}
    while i < len(lines):
        line = lines[i]
        if line.startswith("begin-classad"):
            name = line.split()[1]
            start = i
            body = []
            i += 1
            while i < len(lines) and not lines[i].startswith("end-classad"):
                body.append(lines[i])
                i += 1
            text = "\n".join(body).strip()
            names[name] = text
            ads.append({"ad": text, "format": "new", "source": f"{path}:{start + 1}"})
        elif line.startswith("evaluate "):
            _, name, expr = line.split(None, 2)
            if name in names:
                exprs.append({"expr": expr.strip(), "my": names[name], "source": f"{path}:{i + 1}"})
        i += 1
    return ads, exprs


def rst_blocks(text: str) -> Iterator[tuple[str, int, list[str]]]:
    """(language, line number, lines) of each ``.. code-block::`` in reStructuredText."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)\.\. code-block::\s*(\S+)", lines[i])
        i += 1
        if not m:
            continue
        indent = len(m.group(1))
        lang = m.group(2)
        while i < len(lines) and (not lines[i].strip() or lines[i].lstrip().startswith(":")):
            i += 1
        start = i
        body = []
        while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
            body.append(lines[i])
            i += 1
        while body and not body[-1].strip():
            body.pop()
        if body:
            pad = min(len(x) - len(x.lstrip()) for x in body if x.strip())
            yield lang, start + 1, [x[pad:] for x in body]


def joined(lines: list[str], start: int) -> Iterator[tuple[int, str]]:
    """Logical lines: ``\\`` continuations joined, and a line continued while brackets are open."""
    i = 0
    while i < len(lines):
        n = i
        text = lines[i].rstrip()
        i += 1
        while (text.endswith("\\") or not balanced(text)) and i < len(lines):
            text = text.rstrip("\\") + " " + lines[i].strip()
            i += 1
        yield start + n, text


def manual() -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    ads, exprs = [], []
    paths = [p for p in git("ls-tree", "-r", "--name-only", "HEAD", "docs").splitlines() if p.endswith(".rst")]
    for path in paths:
        text = show(path)
        for lang, line, body in rst_blocks(text):
            if lang in ("condor-classad", "condor-classad-expr"):
                attr_lines = [(n, t) for n, t in joined(body, line) if ATTR_LINE.match(t)]
                if lang == "condor-classad" and len(attr_lines) >= 2 and len(attr_lines) == len(
                        [t for t in body if t.strip() and not t.lstrip().startswith("#")]):
                    ads.append({"ad": "\n".join(t for _, t in attr_lines), "format": "old",
                                "source": f"{path}:{line}"})
                if lang == "condor-classad-expr" and not attr_lines:
                    exprs.append({"expr": " ".join(x.strip() for x in body), "source": f"{path}:{line}"})
                for n, t in attr_lines:
                    m = ATTR_LINE.match(t)
                    assert m
                    if m.group(2):
                        exprs.append({"expr": m.group(2), "source": f"{path}:{n}"})
            elif lang == "text" and path.startswith("docs/classads/"):
                for n, t in joined(body, line):  # "RESULT = expression" examples: both sides
                    parts = [x.strip() for x in split_top(t, "=")]
                    if len(parts) == 2 and all(parts):
                        for part in parts:
                            exprs.append({"expr": part, "source": f"{path}:{n}"})
            elif lang == "condor-config":
                for n, t in joined(body, line):
                    m = POLICY_KNOBS.match(t.strip())
                    if m and "$(" not in m.group(m.lastindex or 0) and "$" not in t:
                        exprs.append({"expr": m.groups()[-1].strip(), "source": f"{path}:{n}"})
            elif lang == "condor-submit":
                for n, t in joined(body, line):
                    m = SUBMIT_KEYS.match(t)
                    if m and "$" not in m.group(2):
                        exprs.append({"expr": m.group(2).strip(), "source": f"{path}:{n}"})
        if path.endswith("classad-builtin-functions.rst"):
            for n, t in enumerate(text.splitlines(), 1):
                for lit in re.findall(r"``([^`]+)``", t):
                    if re.match(r"^[A-Za-z_]\w*\(.*\)$", lit) and not re.search(r"\b(String|Integer|Real|"
                                                                                 r"Boolean|AnyType|Expr)\b", lit):
                        exprs.append({"expr": lit, "source": f"{path}:{n}"})
    return ads, exprs


def python_tests() -> list[dict[str, object]]:
    exprs = []
    paths = [p for p in git("ls-tree", "-r", "--name-only", "HEAD", "src/condor_tests").splitlines()
             if p.endswith(".py") and "classad" in p.lower()]
    for path in paths:
        for n, t in enumerate(show(path).splitlines(), 1):
            for lit in re.findall(r"ExprTree\(\s*(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')\s*\)", t):
                try:
                    value = ast.literal_eval(lit)
                except (ValueError, SyntaxError):
                    continue
                if isinstance(value, str) and value.strip():
                    exprs.append({"expr": value, "source": f"{path}:{n}"})
    return exprs


def new_ads(text: str) -> Iterator[tuple[int, str]]:
    """(line, text) of each top-level ``[ ... ]`` in a file of new-format ads (comments between
    them dropped)."""
    depth, quote, esc, start = 0, "", False, -1
    for i, ch in enumerate(text):
        if quote:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'" and depth:
            quote = ch
        elif ch == "[":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "]" and depth:
            depth -= 1
            if depth == 0:
                yield text.count("\n", 0, start) + 1, text[start:i + 1]


def test_ad_files() -> list[dict[str, object]]:
    """The ads HTCondor's own tests read: machine and job ads in the old format (several in a
    file, separated by blank lines) or in the new one."""
    ads: list[dict[str, object]] = []
    paths = [p for p in git("ls-tree", "-r", "--name-only", "HEAD", "src/condor_tests").splitlines()
             if p.endswith((".ad", ".ads"))]
    for path in paths:
        text = show(path)
        if text.lstrip().startswith("["):
            for n, chunk in new_ads(text):
                ads.append({"ad": chunk, "format": "new", "source": f"{path}:{n}"})
            continue
        lines = text.splitlines()
        start, body = 0, []
        for n, t in enumerate([*lines, ""]):
            if t.strip():
                if not body:
                    start = n
                body.append(t)
            elif body:
                ads.append({"ad": "\n".join(body), "format": "old", "source": f"{path}:{start + 1}"})
                body = []
    return ads


def main() -> int:
    ads: list[dict[str, object]] = []
    exprs: list[dict[str, object]] = list(functional_tests())
    a, e = classad_tests()
    ads += a
    exprs += e
    a, e = manual()
    ads += a
    exprs += e
    exprs += python_tests()
    ads += test_ad_files()

    def dedup(items: list[dict[str, object]], key: str) -> list[dict[str, object]]:
        seen: set[tuple[object, ...]] = set()
        out = []
        for it in items:
            k = (it[key], it.get("my"), it.get("format"))
            if k not in seen:
                seen.add(k)
                out.append(it)
        return sorted(out, key=lambda it: (str(it["source"]).rsplit(":", 1)[0],
                                           int(str(it["source"]).rsplit(":", 1)[1]), str(it[key])))

    exprs, ads = dedup(exprs, "expr"), dedup(ads, "ad")
    os.makedirs(OUT, exist_ok=True)
    functions = sorted(set(re.findall(r":classad-function-def:`[A-Za-z]+ ([A-Za-z_0-9]+)\(",
                                      show("docs/classads/classad-builtin-functions.rst"))), key=str.lower)
    with open(os.path.join(OUT, "functions.txt"), "w") as f:
        f.write("".join(name + "\n" for name in functions))
    with open(os.path.join(OUT, "expressions.jsonl"), "w") as f:
        for it in exprs:
            f.write(json.dumps(it, sort_keys=True) + "\n")
    with open(os.path.join(OUT, "ads.jsonl"), "w") as f:
        for it in ads:
            f.write(json.dumps(it, sort_keys=True) + "\n")
    counts: dict[str, int] = {}
    for it in exprs + ads:
        p = str(it["source"]).rsplit(":", 1)[0]
        counts[p] = counts.get(p, 0) + 1
    with open(os.path.join(OUT, "SOURCES"), "w") as f:
        f.write("ClassAd text harvested by scripts/harvest_classad_corpus.py from HTCondor's public\n"
                "repository (https://github.com/htcondor/htcondor), commit "
                f"{git('rev-parse', 'HEAD').strip()}.\n"
                "Each entry of expressions.jsonl and ads.jsonl names its file and line; functions.txt\n"
                "lists the functions docs/classads/classad-builtin-functions.rst defines.\n"
                f"{len(exprs)} expressions, {len(ads)} ads, from:\n\n")
        for p in sorted(counts):
            f.write(f"{counts[p]:5d}  {p}\n")
    print(f"{len(exprs)} expressions, {len(ads)} ads", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

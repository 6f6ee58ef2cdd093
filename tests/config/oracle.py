"""HTCondor's own config code (the ``htcondor`` wheel) run over many configs in one subprocess.

A config error makes the library print and exit, so the child announces each case before it
reads it: when the child dies, the case it was on is run again alone (to tell its own exit from
a state an earlier case left behind) and the rest go to a fresh child.  A case that exits alone
is ``"ERROR"``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

TEMPLATES = Path(__file__).resolve().parents[2] / "htcd" / "config" / "templates"
_ASSIGN = re.compile(r"^[ \t]*([A-Za-z_][A-Za-z0-9_.]*)[ \t]*(?:[-+?*!|&/%^~<>.]?=|@=)", re.M)
_USE = re.compile(r"^[ \t]*@?use[ \t]+(\w+)[ \t]*:(.*)$", re.M | re.I)

_CHILD = r"""
import json, os, sys
os.environ["CONDOR_CONFIG"] = "/dev/null"
import htcondor2
p = htcondor2.param
base_env = dict(os.environ)

def value(k):
    try:
        p["__P"] = "$(" + k + ")"
        return p["__P"]
    except KeyError:
        return None

for line in sys.stdin:
    case = json.loads(line)
    print("BEGIN " + case["id"], flush=True)
    os.environ.clear()
    os.environ.update(base_env)
    os.environ.update(case["env"])
    os.environ["CONDOR_CONFIG"] = case["config"]
    os.chdir(case["cwd"])
    htcondor2.set_subsystem(case["subsystem"])
    htcondor2.reload_config()
    keys = case["keys"]
    if keys is None:
        keys = [k for k in p.keys() if k != "__P"]
    out = {k: value(k) for k in keys}
    print("RESULT " + json.dumps(out), flush=True)
"""


@dataclass
class Case:
    """One config to read: its top file, the subsystem, the knobs to look up (None: every knob
    the library has a value for), extra environment and the working directory."""

    id: str
    config: str
    subsystem: str = "TOOL"
    keys: list[str] | None = None
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = "/"


def _env() -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.upper().startswith(("_CONDOR_", "_HTCD_"))}
    keep.update({"TZ": "UTC", "CONDOR_CONFIG": "/dev/null"})
    keep.pop("HTCD_CONFIG", None)
    return keep


def _run(cases: list[Case], timeout: float) -> tuple[dict[str, dict | str], str | None]:
    """Run ``cases`` in one child; returns the results and the id of the case it died on."""
    payload = "".join(json.dumps(c.__dict__) + "\n" for c in cases)
    proc = subprocess.run([sys.executable, "-c", _CHILD], input=payload, capture_output=True, text=True,
                          env=_env(), timeout=timeout)
    results: dict[str, dict | str] = {}
    current = None
    for line in proc.stdout.splitlines():
        if line.startswith("BEGIN "):
            current = line[6:]
        elif line.startswith("RESULT ") and current is not None:
            results[current] = json.loads(line[7:])
            current = None
    if current is None and len(results) < len(cases):
        raise RuntimeError(f"the HTCondor oracle stopped before its first case: {proc.stderr[-2000:]}")
    if current is not None and not results:  # died on its first case: that one alone
        results[current] = "ERROR"
        return results, ""
    return results, current


def run_all(cases: list[Case], timeout: float = 600) -> dict[str, dict | str]:
    """Every case's {knob: expanded value or None}, or ``"ERROR"`` when the library rejects it."""
    results: dict[str, dict | str] = {}
    todo = list(cases)
    while todo:
        got, died = _run(todo, timeout)
        results.update(got)
        if died is None:
            break
        if died == "":  # the first case was the culprit, read with nothing before it
            todo = todo[1:]
            continue
        index = next(i for i, c in enumerate(todo) if c.id == died)
        alone, again = _run([todo[index]], timeout)
        results.update(alone)
        if again is not None:
            results[died] = "ERROR"
        todo = todo[index + 1:]
    return results


def assigned_names(text: str, args: str = "", depth: int = 0) -> set[str]:
    """The knob names (lower case) a config text assigns, with those of the templates its
    ``use`` lines name: a plain reading (argument macros in names filled in naively), to
    pick the knobs to compare without counting on the reader under test."""
    values = [a.strip() for a in args.split(",") if a.strip()]

    def arg(m: re.Match[str]) -> str:
        k = int(m.group(1))
        return values[k - 1] if 0 < k <= len(values) else (m.group(2) or "")

    if args or depth:
        text = re.sub(r"\$\((\d+)[?#+]?(?::([^()]*))?\)", arg, text)
    out = {m.group(1).lower() for m in _ASSIGN.finditer(text)}
    out.discard("use")
    if re.search(r"^\s*warning\s*:", text, re.M | re.I) and depth:
        out.add("warning")  # HTCondor's template reader stores it (test_templates.DEVIATIONS)
    if depth > 5:
        return out
    for m in _USE.finditer(text):
        for item, inner in re.findall(r"(\w+)\s*(?:\(([^)]*)\))?", m.group(2)):
            path = TEMPLATES / m.group(1).lower() / f"{item.lower()}.conf"
            if path.exists():
                out |= assigned_names(path.read_text(), inner, depth + 1)
    return out

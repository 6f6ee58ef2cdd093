"""HTCondor's own config code (the ``htcondor`` wheel) run over many configs in one subprocess.

A config error makes the library print and exit, so the child announces each case before it
reads it: when the child dies, the case it was on is run again alone (to tell its own exit from
a state an earlier case left behind) and the rest go to a fresh child.  A case that exits alone
is ``"ERROR"``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field

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
        index = next(i for i, c in enumerate(todo) if c.id == died)
        alone, again = _run([todo[index]], timeout)
        results.update(alone)
        if again is not None:
            results[died] = "ERROR"
        todo = todo[index + 1:]
    return results

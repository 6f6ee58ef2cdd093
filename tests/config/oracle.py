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
#: Config lines the differential tests put first: the install directories (host-dependent in
#: HTCondor: RELEASE_DIR is where the binaries are) and HTCondor's defaults of knobs that
#: templates and example configs build on which htcd's param table does not hold (or holds
#: otherwise, for htcd's own reasons).  The param table is compared with HTCondor's elsewhere;
#: these tests are about the language.
PINS = "".join(f"{k} = {v}\n" for k, v in {
    "RELEASE_DIR": "/rel",
    "LOCAL_DIR": "/loc",
    "COLLECTOR": "$(SBIN)/condor_collector",
    "SCHEDD": "$(SBIN)/condor_schedd",
    "SHARED_PORT_PORT": "9618",
    "COLLECTOR_PORT": "9618",
    "GPU_MONITOR": "$(LIBEXEC)/condor_gpu_utilization",
    "SYSTEM_JOB_MACHINE_ATTRS": "Cpus,SlotWeight",
    "SEC_DEFAULT_AUTHENTICATION_METHODS": "FS,IDTOKENS,KERBEROS,SCITOKENS,SSL",
    "SEC_TOKEN_AP_SIGNING_KEY_NAME": "AP",
    "PROMETHEUS_HTTP_PORT": "$(SHARED_PORT_PORT)",
    "CHECKPOINT_DESTINATION_MAPFILE": "$(LOCAL_DIR)/checkpoint-destination-mapfile",
    "ETC": "$(LOCAL_DIR)",
    "LIBRARIAN_DATABASE": "$(SPOOL)/library.db",
    "LIBRARIAN_MAX_DATABASE_SIZE": "2 * 1024 * 1024 * 1024",
}.items())

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
    """Run ``cases`` in one child; returns the results and the id of the case it died on
    (``""`` when that was its first case, so it was read alone).  A case that takes longer
    than ``timeout`` seconds (the library loops forever on some mutual recursions) is ended
    like one that exits, and reads ``"HANG"``."""
    import selectors
    import time

    proc = subprocess.Popen([sys.executable, "-c", _CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=_env())
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write("".join(json.dumps(c.__dict__) + "\n" for c in cases).encode())
        proc.stdin.close()
    except BrokenPipeError:
        pass
    results: dict[str, dict | str] = {}
    current = None
    hung = False
    fd = proc.stdout.fileno()
    pending = b""
    sel = selectors.DefaultSelector()
    sel.register(fd, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                hung = True
                break
            if not sel.select(left):
                continue
            chunk = os.read(fd, 1 << 16)  # unbuffered: select() sees every byte not read yet
            if not chunk:
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for raw in lines:
                line = raw.decode("utf-8", "replace")
                if line.startswith("BEGIN "):
                    current = line[6:]
                    deadline = time.monotonic() + timeout
                elif line.startswith("RESULT ") and current is not None:
                    results[current] = json.loads(line[7:])
                    current = None
    finally:
        sel.close()
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()
    if current is None and len(results) < len(cases) and not hung:
        raise RuntimeError("the HTCondor oracle stopped before its first case")
    if current is not None and (hung or not results):
        results[current] = "HANG" if hung else "ERROR"
        return results, ""
    return results, current


def run_all(cases: list[Case], timeout: float = 20) -> dict[str, dict | str]:
    """Every case's {knob: expanded value or None}, ``"ERROR"`` when the library rejects it,
    or ``"HANG"`` when it does not finish within ``timeout`` seconds."""
    results: dict[str, dict | str] = {}
    todo = list(cases)
    while todo:
        got, died = _run(todo, timeout)
        results.update(got)
        if died:  # it died on a case after others: read that one alone
            alone, _ = _run([next(c for c in todo if c.id == died)], timeout)
            results.update(alone)
        left = [c for c in todo if c.id not in results]
        if len(left) == len(todo):
            raise RuntimeError(f"the HTCondor oracle read none of {len(todo)} cases")
        todo = left
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

"""Submit-side job building: ``SubmitDescription.make_jobs`` for ``queue N``.

A 5,000 jobs/s submission needs building 100,000 proc ads to take well under the 20 s the
schedd spends on them (goal 2 s).  Two files: one where every job differs only in ProcId,
one with per-job arguments and output (the common case).  The anchor is HTCondor 24's
``htcondor.Submit(text).jobs()`` on the same text, from ``.venv/htcondor24`` when installed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from htcd.submit import parse_submit  # noqa: E402

TEXTS = {
    "make_jobs_static": "executable = /bin/true\nrequest_memory = 1G\nrequest_cpus = 1\nqueue {n}\n",
    "make_jobs_per_proc": "executable = /bin/true\narguments = -i $(Process)\noutput = out.$(Cluster).$(Process)\n"
                          "error = err.$(Cluster).$(Process)\nrequest_memory = 1G\nqueue {n}\n",
}
GOAL_SECONDS = 2.0
ORACLE = """
import os, sys, time
os.environ["CONDOR_CONFIG"] = "/dev/null"
import htcondor
sub = htcondor.Submit(sys.stdin.read())
t = time.perf_counter()
n = sum(1 for _ in sub.jobs(clusterid=1, qdate=1))
print(time.perf_counter() - t, n)
"""


def htcd_seconds(text: str, n: int) -> float:
    desc = parse_submit(text)
    t = time.perf_counter()
    _, procs = desc.make_jobs(1, submit_dir=tempfile.gettempdir(), owner="bench", qdate=1, env={})
    elapsed = time.perf_counter() - t
    assert len(procs) == n
    return elapsed


def htcondor_seconds(text: str) -> float | None:
    path = ROOT / ".venv" / "htcondor24"
    if not (path / "htcondor").is_dir():
        return None
    proc = subprocess.run([sys.executable, "-c", ORACLE], input=text, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(path)}, cwd=tempfile.gettempdir(), check=True)
    return float(proc.stdout.split()[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="20,000 procs instead of 100,000, scaled")
    args = ap.parse_args()
    n = 20_000 if args.quick else 100_000
    scale = 100_000 / n
    src = "HTCondor 24.12.24 htcondor.Submit.jobs(), same text, same machine"
    figures: dict[str, dict[str, object]] = {}
    print(f"{'figure (s per 100k procs)':<28}{'htcd':>10}{'HTCondor':>10}{'goal':>8}")
    for name, template in TEXTS.items():
        text = template.format(n=n)
        mine = min(htcd_seconds(text, n) for _ in range(1 if args.quick else 2)) * scale
        theirs = htcondor_seconds(text)
        anchor = theirs * scale if theirs is not None else None
        print(f"{name:<28}{mine:>10.2f}{(f'{anchor:.2f}' if anchor else 'n/a'):>10}{GOAL_SECONDS:>8.1f}")
        figures[name] = {"value": round(mine, 3), "unit": "seconds_per_100k_procs",
                         "anchor": round(anchor, 3) if anchor else None, "anchor_source": src,
                         "goal": GOAL_SECONDS, "better": "lower"}
    print(json.dumps({"bench": "submit_bench", "figures": figures}))


if __name__ == "__main__":
    main()

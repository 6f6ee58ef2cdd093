"""End-to-end throughput of a personal pool: submit N trivial jobs, time to the last completion.

Runs a real pool (master + every daemon) in a temp dir with NUM_CPUS=8 and submits N jobs of
``/bin/true`` in one cluster; the clock starts before ``htcd submit`` and stops when the event log
holds N terminated events.  Anchor: one HTCondor schedd starts ~50 jobs/s.

    python bench/e2e_bench.py [--quick] [--jobs N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ANCHOR = 50.0


def run(jobs: int, cpus: int) -> dict[str, float]:
    root = Path(tempfile.mkdtemp(prefix="htcd-bench-"))
    cfg = root / "htcd_config"
    cfg.write_text("\n".join([
        "use ROLE : Personal", "CONDOR_HOST = 127.0.0.1", "COLLECTOR_HOST = $(CONDOR_HOST):0",
        f"LOCAL_DIR = {root / 'local'}", f"NUM_CPUS = {cpus}", "NEGOTIATOR_CYCLE_DELAY = 0",
        "NEGOTIATOR_INTERVAL = 5", "UPDATE_INTERVAL = 5"]) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("_CONDOR_", "_HTCD_", "CONDOR_CONFIG"))}
    env["HTCD_CONFIG"] = str(cfg)
    htcd = [sys.executable, "-m", "htcd"]
    master = subprocess.Popen([*htcd, "master", "-f"], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            out = subprocess.run([*htcd, "status", "-af", "Name"], env=env, capture_output=True, text=True)
            if out.returncode == 0 and len(out.stdout.split()) >= cpus:
                break
            if time.monotonic() > deadline:
                raise SystemExit("the pool did not come up")
            time.sleep(0.1)
        (root / "b.sub").write_text(f"executable = /bin/true\ntransfer_executable = false\nlog = b.log\n"
                                    f"queue {jobs}\n")
        log = root / "b.log"
        t0 = time.monotonic()
        subprocess.run([*htcd, "submit", "b.sub"], env=env, cwd=root, check=True, capture_output=True)
        t_submit = time.monotonic() - t0
        deadline = time.monotonic() + 600
        while not (log.exists() and log.read_text().count("\n005 (") + log.read_text().startswith("005 (")
                   >= jobs):
            if time.monotonic() > deadline:
                raise SystemExit("jobs did not finish in 600 s")
            time.sleep(0.02)
        wall = time.monotonic() - t0
        return {"wall_s": wall, "submit_s": t_submit, "jobs_per_s": jobs / wall}
    finally:
        master.send_signal(signal.SIGTERM)
        master.wait(60)
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--cpus", type=int, default=8)
    args = ap.parse_args()
    jobs = args.jobs or (50 if args.quick else 100)
    r = run(jobs, args.cpus)
    print(f"e2e: {jobs} jobs of /bin/true on a personal pool with NUM_CPUS={args.cpus}")
    print(f"  submit took        {r['submit_s']:.3f} s")
    print(f"  submit -> last end {r['wall_s']:.2f} s")
    print(f"  throughput         {r['jobs_per_s']:.1f} jobs/s   (anchor: HTCondor schedd ~{ANCHOR:.0f} job starts/s)")
    print(json.dumps({"bench": "e2e_bench", "figures": {
        "jobs_per_s": {"value": round(r["jobs_per_s"], 2), "unit": "jobs/s", "anchor": ANCHOR,
                       "anchor_source": "HTCondor: one schedd starts ~50 jobs/s", "goal": None,
                       "better": "higher"},
        "wall_s": {"value": round(r["wall_s"], 3), "unit": "s", "anchor": None, "anchor_source": "",
                   "goal": None, "better": "lower"}}}))


if __name__ == "__main__":
    main()

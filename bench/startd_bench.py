"""The startd's costs: one policy pass over many claimed slots (in-process), and job throughput
through one partitionable slot against the same machine cut into static slots (real pools).

The policy pass is what the startd does every POLLING_INTERVAL and after every event: build each
slot's policy ad and decide its next state.  The throughput runs submit N jobs of /bin/true
(request_cpus = 1) and time submit -> last terminated event.

    python bench/startd_bench.py [--quick] [--slots N] [--jobs N]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _pool import HTCD, start_pool, stop_pool

from htcd.classad import ClassAd
from htcd.config import load


def policy_pass(slots: int, rounds: int) -> tuple[float, float]:
    """Microseconds per slot for one policy pass: (unclaimed slots, claimed busy slots)."""
    from htcd.startd.daemon import Startd
    from htcd.startd.slot import BUSY, CLAIMED, Claim

    root = Path(tempfile.mkdtemp(prefix="htcd-bench-"))
    try:
        cfg = root / "cfg"
        cfg.write_text(f"LOCAL_DIR = {root}\nLOG = {root}\nEXECUTE = {root}\nNUM_CPUS = {slots}\nMEMORY = {slots * 1024}\n"
                       "PREEMPT = LoadAvg > 10\nWANT_SUSPEND = False\nMAXJOBRETIREMENTTIME = 3600\n")
        startd = Startd(load("STARTD", env={"HTCD_CONFIG": str(cfg)}))
        startd.slots = startd._make_slots()
        startd.evaluate_all()  # Owner -> Unclaimed
        t0 = time.perf_counter()
        for _ in range(rounds):
            startd.evaluate_all()
        idle = (time.perf_counter() - t0) / rounds / slots * 1e6
        job = ClassAd({"ClusterId": 1, "ProcId": 0, "Owner": "u", "JobUniverse": 5, "RequestCpus": 1})
        for slot in startd.slots:
            slot.claim = Claim("id", job, "u", "u@x", "x", 0.0)
            slot.starter = object()  # type: ignore[assignment]  # a job runs (no process needed)
            slot.job_start = time.time()
            slot.set_state(CLAIMED, BUSY)
        t0 = time.perf_counter()
        for _ in range(rounds):
            startd.evaluate_all()
        busy = (time.perf_counter() - t0) / rounds / slots * 1e6
        return idle, busy
    finally:
        shutil.rmtree(root, ignore_errors=True)


def throughput(jobs: int, cpus: int, partitionable: bool) -> float:
    root = Path(tempfile.mkdtemp(prefix="htcd-bench-"))
    knobs = [f"NUM_CPUS = {cpus}", f"MEMORY = {cpus * 512}", "NEGOTIATOR_CYCLE_DELAY = 0",
             "NEGOTIATOR_INTERVAL = 5", "UPDATE_INTERVAL = 5"]
    if partitionable:
        knobs.append("use FEATURE : PartitionableSlot")
    master, env = start_pool(root, knobs, ["status", "-af", "Name"], "pool")
    try:
        deadline = time.monotonic() + 60
        want = 1 if partitionable else cpus
        while len(subprocess.run([*HTCD, "status", "-af", "Name"], env=env, capture_output=True,
                                 text=True).stdout.split()) < want:
            if time.monotonic() > deadline:
                raise SystemExit("the slots did not come up")
            time.sleep(0.1)
        (root / "b.sub").write_text("executable = /bin/true\ntransfer_executable = false\nlog = b.log\n"
                                    f"request_cpus = 1\nrequest_memory = 64\nqueue {jobs}\n")
        log = root / "b.log"
        t0 = time.monotonic()
        subprocess.run([*HTCD, "submit", "b.sub"], env=env, cwd=root, check=True, capture_output=True)
        deadline = time.monotonic() + 600
        while not log.exists() or log.read_text().count("005 (") < jobs:
            if time.monotonic() > deadline:
                raise SystemExit("jobs did not finish in 600 s")
            time.sleep(0.02)
        return jobs / (time.monotonic() - t0)
    finally:
        stop_pool(master, root)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--slots", type=int, default=64)
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--cpus", type=int, default=8)
    args = ap.parse_args()
    jobs = args.jobs or (100 if args.quick else 500)
    idle_us, busy_us = policy_pass(args.slots, 5 if args.quick else 20)
    static = throughput(jobs, args.cpus, partitionable=False)
    pslot = throughput(jobs, args.cpus, partitionable=True)
    print(f"startd: policy pass over {args.slots} slots")
    print(f"  unclaimed slots     {idle_us:8.1f} us per slot")
    print(f"  claimed busy slots  {busy_us:8.1f} us per slot")
    print(f"throughput, {jobs} jobs of /bin/true, request_cpus = 1, NUM_CPUS = {args.cpus}")
    print(f"  {args.cpus} static slots      {static:8.1f} jobs/s")
    print(f"  1 partitionable slot {pslot:8.1f} jobs/s   (dynamic slot carved and returned per claim)")
    print(json.dumps({"bench": "startd_bench", "figures": {
        "policy_pass_idle_us_per_slot": {"value": round(idle_us, 1), "unit": "us", "anchor": None,
                                         "anchor_source": "", "goal": None, "better": "lower"},
        "policy_pass_busy_us_per_slot": {"value": round(busy_us, 1), "unit": "us", "anchor": None,
                                         "anchor_source": "", "goal": None, "better": "lower"},
        "pslot_jobs_per_s": {"value": round(pslot, 1), "unit": "jobs/s", "anchor": round(static, 1),
                             "anchor_source": f"{args.cpus} static slots, same run", "goal": 100.0,
                             "better": "higher"}}}))


if __name__ == "__main__":
    main()

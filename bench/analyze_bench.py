"""-better-analyze cost: one job's Requirements analysed against 10,000 slot ads.

A realistic job (HTCondor's default Requirements plus one user clause that no slot meets, so the
suggestions pass runs too), and the same job without that clause (every slot goes through the
symmetric match), against slots of varied sizes, states and START expressions.  Prints
the best of several runs in seconds, then one JSON line.  There is no anchor: HTCondor's
condor_q does this analysis in C++ inside the tool, and no wheel ships it.
"""

from __future__ import annotations

import argparse
import json
import time

from htcd.classad import parse_ad
from htcd.classad.analyze import analyze

JOB = """[ Owner = "alice"; User = "alice@pool"; DiskUsage = 10; RequestDisk = DiskUsage; RequestCpus = 1;
  RequestMemory = ifThenElse(MemoryUsage =!= undefined, MemoryUsage, 2048); FileSystemDomain = "pool";
  Requirements = (Memory > 999999) && (TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX")
    && (TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) && (TARGET.Cpus >= RequestCpus)
    && ((TARGET.FileSystemDomain == MY.FileSystemDomain) || (TARGET.HasFileTransfer)) ]"""


def slot(i: int) -> str:
    state = ("Unclaimed", "Claimed", "Claimed")[i % 3]
    owner = ("alice", "bob")[i % 2]
    start = "true" if i % 7 else 'TARGET.Owner =!= "alice"'
    return (f'[ Name = "slot{i % 32 + 1}@node{i // 32}"; Arch = "X86_64"; OpSys = "LINUX"; Disk = {100000 + i}; '
            f'Memory = {(1024, 2048, 4096, 8192)[i % 4]}; Cpus = {1 + i % 4}; State = "{state}"; '
            f'RemoteOwner = "{owner}"; HasFileTransfer = true; FileSystemDomain = "node{i // 32}"; '
            f"START = {start}; Requirements = START ]")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer runs")
    args = ap.parse_args()
    idle = parse_ad(JOB)
    runnable = parse_ad(JOB.replace("(Memory > 999999) &&", ""))
    slots = [parse_ad(slot(i)) for i in range(10_000)]
    print(f"{'figure':<36}{'value':>10}{'anchor':>10}{'goal':>10}")
    figures = {}
    for name, job in (("analyze_10k_slots", idle), ("analyze_10k_slots_runnable", runnable)):
        best = float("inf")
        for _ in range(2 if args.quick else 5):
            t = time.perf_counter()
            a = analyze(job, slots)
            best = min(best, time.perf_counter() - t)
        assert a.summary.slots == 10_000
        assert (a.best_removal is a.conditions[0]) if job is idle else a.summary.available > 0
        print(f"{name + ' (s)':<36}{best:>10.3f}{'n/a':>10}{1.0:>10.1f}")
        figures[name] = {"value": round(best, 4), "unit": "seconds", "anchor": None,
                         "anchor_source": "none: HTCondor's analysis lives in condor_q (C++), not in any wheel",
                         "goal": 1.0, "better": "lower"}
    print(json.dumps({"bench": "analyze_bench", "figures": figures}))


if __name__ == "__main__":
    main()

"""The daemon runtime's event loop: what measuring it costs, and how long the schedd holds it
during its heavy operations.

1. Monitor overhead: an asyncio loop doing nothing but cycling (``await asyncio.sleep(0)``), with
   and without ``DaemonStats`` attached (the wrapped selector and the timed ready queue), as
   microseconds per loop iteration.
2. The schedd under heavy operations (a real pool: master and schedd): a submit of N procs
   (``queue N``), ``htcd q`` over them, ``htcd reconfig``, ``htcd rm -all``.  While each runs, one
   connection pings the schedd as fast as it answers and another samples its statistics every
   half second over a 4 s window.  Figures: the longest loop iteration in the loop thread's CPU
   time (goal: under 100 ms), in wall time, and the slowest ping.

    python bench/daemon_loop_bench.py [--quick] [--jobs N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import _pool

HTCD = _pool.HTCD
WINDOW = 4


def monitor_overhead(iterations: int) -> tuple[float, float]:
    """(µs per iteration without the monitor, with it)."""
    from htcd.daemon.stats import DaemonStats

    async def cycle(attach: bool) -> float:
        if attach:
            DaemonStats().attach(asyncio.get_running_loop())
        t = time.perf_counter()
        for _ in range(iterations):
            await asyncio.sleep(0)
        return (time.perf_counter() - t) / iterations * 1e6

    bare = min(asyncio.run(cycle(False)) for _ in range(3))
    watched = min(asyncio.run(cycle(True)) for _ in range(3))
    return bare, watched


def watch(address: str, cmd: list[str], env: dict[str, str]) -> dict[str, Any]:
    from htcd.wire.client import Connection

    stop = threading.Event()
    pings: list[float] = []
    samples: list[tuple[float, float]] = []
    errors: list[str] = []

    def ping() -> None:
        try:
            with Connection(address, timeout=120) as conn:
                while not stop.is_set():
                    t = time.monotonic()
                    conn.call("PING")
                    pings.append(time.monotonic() - t)
                    stop.wait(0.005)
        except Exception as exc:
            errors.append(repr(exc))

    def sample() -> None:
        with Connection(address, timeout=120) as conn:
            while not stop.is_set():
                ad = conn.call("DC_QUERY_SELF", statistics="DC:1")[0]
                samples.append((float(ad["RecentDaemonCoreMaxBlockCpuMs"]), float(ad["RecentDaemonCoreMaxBlockMs"])))
                stop.wait(0.5)

    threads = [threading.Thread(target=ping), threading.Thread(target=sample)]
    for t in threads:
        t.start()
    time.sleep(WINDOW + 1)  # the window forgets what ran before
    start = len(samples)
    t0 = time.monotonic()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    seconds = time.monotonic() - t0
    n = len(samples)
    while len(samples) < n + 2:
        time.sleep(0.1)
    stop.set()
    for t in threads:
        t.join()
    if errors:
        raise SystemExit(f"the schedd stopped answering: {errors}")
    during = samples[max(0, start - 1):]
    return {"seconds": seconds, "cpu_ms": max(s[0] for s in during), "wall_ms": max(s[1] for s in during),
            "ping_ms": 1000 * max(pings)}


def schedd_ops(jobs: int) -> dict[str, dict[str, Any]]:
    root = Path(tempfile.mkdtemp(prefix="htcd-loop-bench-"))
    master = None
    try:
        master, env = _pool.start_pool(root, ["DAEMON_LIST = MASTER SCHEDD", f"STATISTICS_WINDOW_SECONDS = {WINDOW}",
                                              "STATISTICS_WINDOW_QUANTUM = 1", "MAX_JOBS_PER_OWNER = 10000000",
                                              "MAX_JOBS_SUBMITTED = 10000000"], ["q", "-totals"], "schedd")
        address = (root / "local" / "spool" / ".schedd_address").read_text().splitlines()[0]
        sub = root / "big.sub"
        sub.write_text(f"executable = /bin/true\ntransfer_executable = false\narguments = $(Process)\nqueue {jobs}\n")
        out = {}
        for name, args in (("submit", ["submit", str(sub)]), ("q", ["q"]), ("reconfig", ["reconfig"]),
                           ("rm_all", ["rm", "-all"])):
            out[name] = watch(address, [*HTCD, *args], env)
        return out
    finally:
        if master is not None:
            master.terminate()
            master.wait(120)
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--jobs", type=int)
    args = ap.parse_args()
    jobs = args.jobs or (20_000 if args.quick else 100_000)
    bare, watched = monitor_overhead(20_000 if args.quick else 200_000)
    ops = schedd_ops(jobs)
    print("daemon event loop (2-core shared machine: wall figures are noisy, CPU figures less so)")
    print(f"  loop iteration, bare          {bare:8.2f} us")
    print(f"  loop iteration, monitored     {watched:8.2f} us   (+{watched - bare:.2f} us for the statistics)")
    print(f"  schedd with {jobs} procs: longest loop iteration (loop-thread CPU / wall), slowest ping")
    for name, r in ops.items():
        print(f"  {name:10s} {r['seconds']:7.2f} s   {r['cpu_ms']:7.1f} ms CPU  {r['wall_ms']:7.1f} ms wall"
              f"   ping {r['ping_ms']:7.1f} ms   goal: CPU < 100 ms")

    def fig(v: float, unit: str, goal: float | None, better: str = "lower") -> dict:
        return {"value": round(v, 3), "unit": unit, "anchor": None, "anchor_source": "", "goal": goal,
                "better": better}

    figures = {"loop_iteration_us": fig(bare, "us", None),
               "monitor_overhead_us": fig(watched - bare, "us", 2.0)}
    for name, r in ops.items():
        figures[f"{name}_max_block_cpu_ms"] = fig(r["cpu_ms"], "ms", 100.0)
        figures[f"{name}_max_block_wall_ms"] = fig(r["wall_ms"], "ms", None)
        figures[f"{name}_max_ping_ms"] = fig(r["ping_ms"], "ms", None)
    print(json.dumps({"bench": "daemon_loop_bench", "figures": figures}))


if __name__ == "__main__":
    main()

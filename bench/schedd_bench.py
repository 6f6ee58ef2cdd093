"""The schedd as a job database: durable submit rate, ``htcd q`` speed, memory per queued job, and
how long ``q -totals`` waits while a large submit is being committed.

Runs a real pool (master, collector and schedd: no negotiator or startd, so jobs stay queued) in
a temp dir.  Submits go through ``htcd.client.schedd`` exactly as ``htcd submit`` does (the
submit library builds the ads); queries run the real ``htcd q`` as a subprocess.

    python bench/schedd_bench.py [--quick] [--jobs N]
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
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).parent))
import _pool

HTCD = _pool.HTCD
SUBMIT = "executable = /bin/true\ntransfer_executable = false\narguments = $(Process)\n"


def start_pool(root: Path) -> tuple[subprocess.Popen[bytes], dict[str, str]]:
    return _pool.start_pool(root, ["DAEMON_LIST = MASTER COLLECTOR SCHEDD", "UPDATE_INTERVAL = 5",
                       "MAX_JOBS_PER_OWNER = 10000000", "MAX_JOBS_SUBMITTED = 10000000"], ["q", "-totals"], "schedd")


def schedd_pid(master: subprocess.Popen[bytes]) -> int:
    return _pool.daemon_pid(master, "schedd")


def timed(env: dict[str, str], *args: str) -> float:
    t = time.monotonic()
    subprocess.run([*HTCD, *args], env=env, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - t


def submit(addr: str, procs: int, clusters: int) -> tuple[float, float]:
    """(wall seconds for ``clusters`` clusters of ``procs`` procs, seconds spent building ads)."""
    from htcd.client.schedd import ScheddClient
    from htcd.config import load
    from htcd.submit import parse_submit

    desc = parse_submit(SUBMIT + f"queue {procs}\n", "bench.sub")
    cfg = load("SUBMIT")
    building = 0.0

    def build(cid: int) -> tuple[dict[str, str], list[dict[str, str]]]:
        nonlocal building
        t = time.monotonic()
        ads = desc.make_jobs(cid, submit_dir="/tmp", owner="bench", qdate=int(time.time()), config_get=cfg.get)
        building += time.monotonic() - t
        return ads

    t0 = time.monotonic()
    with ScheddClient(addr) as schedd:
        for _ in range(clusters):
            schedd.submit(build)
    return time.monotonic() - t0, building


def poll_totals(addr: str, stop: threading.Event, worst: list[float]) -> None:
    """Ask for totals on its own connection, as fast as answers come, recording the slowest."""
    from htcd.client.schedd import ScheddClient

    with ScheddClient(addr) as schedd:
        while not stop.is_set():
            t = time.monotonic()
            schedd.totals()
            worst[0] = max(worst[0], time.monotonic() - t)
            time.sleep(0.02)


def run(jobs: int) -> dict[str, float]:
    root = Path(tempfile.mkdtemp(prefix="htcd-bench-"))
    master, env = start_pool(root)
    os.environ["HTCD_CONFIG"] = env["HTCD_CONFIG"]
    try:
        from htcd.cli import common
        from htcd.client import schedd

        addr = str(schedd.address(common.config())[0])
        pid = schedd_pid(master)
        rss0 = psutil.Process(pid).memory_info().rss
        # one cluster of `jobs` procs, with totals polled from a separate process meanwhile
        poller = subprocess.Popen([sys.executable, __file__, "--poll", addr], env=env,
                                  stdout=subprocess.PIPE, text=True)
        time.sleep(0.5)  # let the poller connect before the submit starts
        one_s, one_build = submit(addr, jobs, 1)
        poller.send_signal(signal.SIGINT)
        worst = float(poller.communicate(timeout=60)[0].strip() or "nan")
        totals_s = min(timed(env, "q", "-totals") for _ in range(3))
        af_s = timed(env, "q", "-af", "ClusterId", "ProcId", "Owner", "JobStatus")
        # the same number of jobs as clusters of 100
        many_s, many_build = submit(addr, 100, max(1, jobs // 100))
        queued = jobs + max(1, jobs // 100) * 100
        rss1 = psutil.Process(pid).memory_info().rss
        startup = min(timed(env, "version") for _ in range(3))
        return {"one_cluster_jobs_per_s": jobs / one_s, "one_cluster_s": one_s, "one_cluster_build_s": one_build,
                "clusters_jobs_per_s": jobs / many_s, "clusters_s": many_s, "clusters_build_s": many_build,
                "q_totals_s": totals_s, "q_af_s": af_s, "tool_startup_s": startup, "queued": queued,
                "rss_per_job_kb": (rss1 - rss0) / queued / 1024, "totals_worst_during_submit_s": worst}
    finally:
        master.send_signal(signal.SIGTERM)
        master.wait(60)
        shutil.rmtree(root, ignore_errors=True)


def poll_main(addr: str) -> None:
    stop = threading.Event()
    worst = [0.0]
    signal.signal(signal.SIGINT, lambda *a: stop.set())
    poll_totals(addr, stop, worst)
    print(worst[0])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--poll", metavar="ADDRESS", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.poll:
        poll_main(args.poll)
        return
    jobs = args.jobs or (10_000 if args.quick else 100_000)
    r = run(jobs)
    print(f"schedd: {jobs} jobs as one cluster, then {jobs} as clusters of 100 ({r['queued']} queued); "
          "2-core shared machine, figures are noisy")
    print(f"  submit, one cluster     {r['one_cluster_jobs_per_s']:9.0f} jobs/s  ({r['one_cluster_s']:.2f} s, "
          f"{r['one_cluster_build_s']:.2f} s of it building ads in the submit library)   goal >= 5000")
    print(f"  submit, clusters of 100 {r['clusters_jobs_per_s']:9.0f} jobs/s  ({r['clusters_s']:.2f} s, "
          f"{r['clusters_build_s']:.2f} s building ads)   goal >= 5000")
    print(f"  (queries with {jobs} jobs queued)")
    print(f"  q -totals               {r['q_totals_s']:9.3f} s   (tool start-up alone {r['tool_startup_s']:.3f} s)"
          "   goal <= 0.3")
    print(f"  q -af 4 attributes      {r['q_af_s']:9.3f} s   goal <= 3; anchor HTCondor 8.3: 22 s for 100k")
    print(f"  schedd RSS per job      {r['rss_per_job_kb']:9.2f} KB   goal <= 5; anchor HTCondor ~10 KB")
    print(f"  worst q -totals while submitting {r['totals_worst_during_submit_s']:.3f} s")

    def fig(v: float, unit: str, anchor: float | None, src: str, goal: float | None, better: str) -> dict:
        return {"value": round(v, 3), "unit": unit, "anchor": anchor, "anchor_source": src, "goal": goal,
                "better": better}

    print(json.dumps({"bench": "schedd_bench", "figures": {
        "submit_one_cluster_jobs_per_s": fig(r["one_cluster_jobs_per_s"], "jobs/s", None, "", 5000, "higher"),
        "submit_clusters_of_100_jobs_per_s": fig(r["clusters_jobs_per_s"], "jobs/s", None, "", 5000, "higher"),
        "submit_library_build_s": fig(r["one_cluster_build_s"] + r["clusters_build_s"], "s", None, "", None,
                                      "lower"),
        "q_totals_s": fig(r["q_totals_s"], "s", None, "", 0.3, "lower"),
        "q_af_s": fig(r["q_af_s"], "s", 22.0 * jobs / 100_000,
                      "HTCondor 8.3: condor_q of 100k jobs in 22 s (scaled to the jobs queued)",
                      3.0 * jobs / 100_000, "lower"),
        "schedd_rss_per_job_kb": fig(r["rss_per_job_kb"], "KB", 10.0, "HTCondor: ~10 KB per queued job", 5.0,
                                     "lower"),
        "q_totals_worst_during_submit_s": fig(r["totals_worst_during_submit_s"], "s", None, "", None, "lower"),
    }}))


if __name__ == "__main__":
    main()

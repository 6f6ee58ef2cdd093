"""htcd.api's Schedd.query: a script asking the schedd for a projection of 4 attributes of every job.

Runs a real pool (master, collector and schedd: no negotiator or startd) in a temp dir, submits
one cluster of held jobs through ``htcd.api`` (``Schedd().submit(Submit({... "hold": "true"}),
count=N)``), then times ``Schedd().query(projection=[4 attributes])`` (the list of ClassAds, as
htcondor2 returns it) and the same with every value read (``ad["JobStatus"]`` ...), against
``htcd q -af`` of the same attributes.

    python bench/api_query_bench.py [--quick] [--jobs N]
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

sys.path.insert(0, str(Path(__file__).parent))
import _pool

ATTRS = ["ClusterId", "ProcId", "Owner", "JobStatus"]
GOAL_S = 2.0  # for 100,000 jobs


def best(fn, runs: int = 3) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def run(jobs: int) -> dict[str, float]:
    root = Path(tempfile.mkdtemp(prefix="htcd-bench-"))
    master, env = _pool.start_pool(root, ["DAEMON_LIST = MASTER COLLECTOR SCHEDD", "UPDATE_INTERVAL = 5",
                                          "MAX_JOBS_PER_OWNER = 10000000", "MAX_JOBS_SUBMITTED = 10000000"],
                                   ["q", "-totals"], "schedd")
    os.environ["HTCD_CONFIG"] = env["HTCD_CONFIG"]
    cwd = os.getcwd()
    os.chdir(root)
    try:
        import htcd.api as htcondor2

        htcondor2.reload_config()
        schedd = htcondor2.Schedd()
        t = time.perf_counter()
        result = schedd.submit(htcondor2.Submit({"executable": "/bin/true", "arguments": "$(ProcId)",
                                                 "hold": "true"}), count=jobs)
        submit_s = time.perf_counter() - t
        assert result.num_procs() == jobs

        def query() -> None:
            ads = schedd.query(projection=ATTRS)
            assert len(ads) == jobs

        def query_and_read() -> None:
            held = 0
            for ad in schedd.query(projection=ATTRS):
                held += ad["JobStatus"] == 5 and ad["ProcId"] >= 0 and bool(ad["Owner"]) and ad["ClusterId"] > 0
            assert held == jobs

        query_s = best(query)
        read_s = best(query_and_read)

        def q_af() -> None:
            subprocess.run([*_pool.HTCD, "q", "-af", *ATTRS], env=env, check=True, stdout=subprocess.DEVNULL)

        q_af_s = best(q_af, 2)
        return {"submit_s": submit_s, "query_s": query_s, "query_read_s": read_s, "q_af_s": q_af_s}
    finally:
        os.chdir(cwd)
        _pool.stop_pool(master, root)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--jobs", type=int, default=None)
    args = ap.parse_args()
    jobs = args.jobs or (10_000 if args.quick else 100_000)
    r = run(jobs)
    scale = jobs / 100_000
    print(f"htcd.api: Schedd().query(projection={ATTRS}) with {jobs} held jobs queued (one cluster); best of 3; "
          "2-core shared machine, figures are noisy")
    print(f"  submit through htcd.api       {r['submit_s']:8.2f} s  ({jobs / r['submit_s']:.0f} jobs/s)")
    print(f"  query -> list of ClassAds     {r['query_s']:8.3f} s   goal <= {GOAL_S * scale:.2f}; "
          f"anchor HTCondor 8.3: condor_q of 100k jobs in 22 s")
    print(f"  query and read the 4 values   {r['query_read_s']:8.3f} s")
    print(f"  htcd q -af (same attributes)  {r['q_af_s']:8.3f} s   (a separate process, start-up included)")

    def fig(v: float, unit: str, anchor: float | None, src: str, goal: float | None, better: str) -> dict:
        return {"value": round(v, 3), "unit": unit, "anchor": anchor, "anchor_source": src, "goal": goal,
                "better": better}

    anchor_src = "HTCondor 8.3: condor_q of 100k jobs in 22 s (scaled to the jobs queued)"
    print(json.dumps({"bench": "api_query_bench", "figures": {
        "api_query_4_attrs_s": fig(r["query_s"], "s", 22.0 * scale, anchor_src, GOAL_S * scale, "lower"),
        "api_query_read_4_attrs_s": fig(r["query_read_s"], "s", 22.0 * scale, anchor_src, None, "lower"),
        "htcd_q_af_4_attrs_s": fig(r["q_af_s"], "s", 22.0 * scale, anchor_src, None, "lower"),
        "api_submit_jobs_per_s": fig(jobs / r["submit_s"], "jobs/s", None, "", None, "higher"),
        "jobs": fig(jobs, "jobs", None, "", None, "higher"),
    }}))


if __name__ == "__main__":
    main()

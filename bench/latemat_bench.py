"""Late materialization at scale: ``queue 1000000`` with ``max_idle = 1000`` submitted to a real
personal pool (master, collector and schedd; no startd, so jobs stay idle) through ``htcd submit``.

Figures: the submit's wall time (the real CLI, a subprocess: Python start-up included), the
schedd's RSS after it (only the materialized jobs should cost memory), the procs materialized,
and the bytes of the SUBMIT message (the cluster ad, the submit digest and the item data, encoded
as the wire does) beside what sending every proc would take (estimated from 1,000 procs).
Anchor: HTCondor's manual -- a factory sends "a single ClassAd ... as well as instructions".

    python bench/latemat_bench.py [--quick] [--procs N]
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).parent))
import _pool  # noqa: E402

from htcd.submit import parse_submit  # noqa: E402
from htcd.submit.digest import make_factory  # noqa: E402
from htcd.wire.framing import encode  # noqa: E402

SUBMIT = ("executable = /bin/true\ntransfer_executable = false\narguments = -i $(Process)\n"
          "output = out.$(Cluster).$(Process)\nerror = err.$(Cluster).$(Process)\nlog = bench.log\n"
          "max_idle = {idle}\nqueue {n}\n")
GOAL_SUBMIT_S, GOAL_RSS_MB = 10.0, 200.0


def wire_bytes(text: str, n: int, jobs_dir: Path) -> tuple[int, int]:
    """(bytes of the factory's SUBMIT message, bytes a SUBMIT of every proc would take, estimated
    from the first 1,000 procs)."""
    owner = pwd.getpwuid(os.geteuid()).pw_name
    args = dict(submit_dir=str(jobs_dir), owner=owner, qdate=int(time.time()), env={})
    factory = make_factory(parse_submit(text), 1, **args)
    assert factory is not None
    digest_msg = encode({"command": "SUBMIT", "args": {"cluster_id": 1, "cluster_ad": factory.cluster_ad,
                                                       "digest": factory.digest, "items": factory.items,
                                                       "total": factory.total}})
    sample = min(n, 1000)
    common, procs = parse_submit(text.replace(f"queue {n}", f"queue {sample}")).make_jobs(1, **args)
    plain_msg = encode({"command": "SUBMIT", "args": {"cluster_id": 1, "cluster_ad": common, "proc_ads": procs}})
    per_proc = (len(plain_msg) - len(encode({"command": "SUBMIT", "args": {"cluster_id": 1, "cluster_ad": common,
                                                                           "proc_ads": []}}))) / sample
    return len(digest_msg), int(len(plain_msg) + per_proc * (n - sample))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="100,000 procs instead of 1,000,000")
    ap.add_argument("--procs", type=int, default=None, help="procs in the cluster (default 1,000,000)")
    ap.add_argument("--max-idle", type=int, default=1000)
    a = ap.parse_args()
    n = a.procs or (100_000 if a.quick else 1_000_000)
    root = Path(tempfile.mkdtemp(prefix="htcd-latemat-bench-"))
    master, env = _pool.start_pool(root, ["DAEMON_LIST = MASTER COLLECTOR SCHEDD", "UPDATE_INTERVAL = 5"],
                                   ["q", "-totals"], "schedd")
    try:
        schedd = psutil.Process(_pool.daemon_pid(master, "schedd"))
        rss_before = schedd.memory_info().rss / 2**20
        jobs_dir = root / "jobs"
        jobs_dir.mkdir()
        text = SUBMIT.format(idle=a.max_idle, n=n)
        (jobs_dir / "job.sub").write_text(text)
        t = time.perf_counter()
        out = subprocess.run([*_pool.HTCD, "submit", "job.sub"], env=env, cwd=jobs_dir, capture_output=True,
                             text=True, timeout=600)
        submit_s = time.perf_counter() - t
        if out.returncode != 0:
            raise SystemExit(f"htcd submit failed: {out.stderr}")
        totals = subprocess.run([*_pool.HTCD, "q", "-totals"], env=env, capture_output=True, text=True).stdout
        materialized = sum(1 for line in subprocess.run(
            [*_pool.HTCD, "q", "-af", "ProcId"], env=env, capture_output=True, text=True).stdout.split("\n") if line)
        rss_after = schedd.memory_info().rss / 2**20
        digest_b, plain_b = wire_bytes(text, n, jobs_dir)
    finally:
        _pool.stop_pool(master, root)
    print(f"late materialization: queue {n:,} with max_idle = {a.max_idle} (personal pool, no startd)")
    print(f"  htcd submit wall time   {submit_s:9.2f} s    goal < {GOAL_SUBMIT_S:g} s")
    print(f"  procs materialized      {materialized:9d}      (max_idle {a.max_idle}); htcd q -totals: "
          f"{totals.strip().splitlines()[-1] if totals.strip() else '?'}")
    print(f"  schedd RSS              {rss_before:9.1f} MB before, {rss_after:.1f} MB after; goal < {GOAL_RSS_MB:g} MB")
    print(f"  SUBMIT message          {digest_b:9d} B     (every proc sent: ~{plain_b / 2**20:,.0f} MB)")
    print(f"  {out.stdout.strip().splitlines()[-1]}")

    def fig(v: float, unit: str, anchor: float | None, src: str, goal: float | None, better: str) -> dict:
        return {"value": round(v, 3), "unit": unit, "anchor": anchor, "anchor_source": src, "goal": goal,
                "better": better}

    print(json.dumps({"bench": "latemat_bench", "figures": {
        "submit_wall_s": fig(submit_s, "s", None, f"queue {n} with max_idle {a.max_idle}", GOAL_SUBMIT_S, "lower"),
        "schedd_rss_mb": fig(rss_after, "MB", None, "after the submit", GOAL_RSS_MB, "lower"),
        "materialized_procs": fig(materialized, "procs", a.max_idle, "max_idle", a.max_idle, "lower"),
        "submit_wire_bytes": fig(digest_b, "bytes", plain_b, "every proc sent (estimated)", None, "lower"),
    }}))


if __name__ == "__main__":
    main()

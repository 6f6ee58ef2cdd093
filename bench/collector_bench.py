"""The collector at pool scale: memory per machine ad, update ingest rate, query rate while updates
pour in, and a full ``htcd status -af Name``.

Runs a real collector (master + collector only) in a temp dir.  Load generators are separate
processes sending ``UPDATE_AD`` for synthetic slot ads of ~100 attributes each, over the local
socket (the only transport today; UDP updates and loss counting are not built yet, so the loss
figure is not measured here).

    python bench/collector_bench.py [--quick] [--ads N]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).parent))
import _pool  # noqa: E402

HTCD = _pool.HTCD
GROUP = 100  # ads per HostGroup value: a constrained query returns this many


def slot_ad(i: int, seq: int = 0) -> dict[str, str]:
    """A realistic slot ad: ~100 attributes of the kinds a startd publishes."""
    host = f"node{i // 8:05d}.cluster.example.org"
    ad = {
        "MyType": '"Machine"', "Name": f'"slot{i % 8 + 1}@{host}"', "Machine": f'"{host}"',
        "HostGroup": str(i // GROUP), "State": '"Unclaimed"' if i % 3 else '"Claimed"',
        "Activity": '"Idle"' if i % 3 else '"Busy"', "Arch": '"X86_64"', "OpSys": '"LINUX"',
        "OpSysAndVer": '"Debian12"', "Cpus": "1", "TotalCpus": "8", "Memory": str(2048 + i % 7),
        "TotalMemory": "16384", "Disk": str(10_000_000 + i), "LoadAvg": f"{(i % 100) / 100:.2f}",
        "CondorLoadAvg": "0.0", "KeyboardIdle": str(1000 + i), "StartdIpAddr": f'"<10.0.{i // 250 % 256}.{i % 250}:9618>"',
        "MyAddress": f'"<10.0.{i // 250 % 256}.{i % 250}:9618>"', "UpdateSequenceNumber": str(seq),
        "Requirements": "START", "START": "true", "Rank": "0.0", "SlotID": str(i % 8 + 1),
        "HasFileTransfer": "true", "FileSystemDomain": '"cluster.example.org"', "UidDomain": '"example.org"',
        "EnteredCurrentState": str(1_790_000_000 + i), "EnteredCurrentActivity": str(1_790_000_000 + i),
    }
    for k in range(100 - len(ad)):
        ad[f"Custom{k:02d}"] = f'"value-{k}-{i % 13}"' if k % 2 else str(k * i % 9973)
    return ad


def start_pool(root: Path) -> tuple[subprocess.Popen[bytes], dict[str, str]]:
    return _pool.start_pool(root, ["DAEMON_LIST = MASTER COLLECTOR"], ["status", "-collector", "-af", "Name"], "collector")


def collector_pid(master: subprocess.Popen[bytes]) -> int:
    return _pool.daemon_pid(master, "collector")


def inject(addr: str, first: int, count: int, rate: float, seconds: float, out: mp.Queue) -> None:
    """Send updates for ads first..first+count-1 (round robin); at most ``rate``/s if rate > 0;
    for ``seconds`` if given, else one pass.  Puts the number sent on ``out``."""
    from htcd.wire.client import Connection

    sent = 0
    start = time.monotonic()
    ads = [slot_ad(first + i) for i in range(count)]
    with Connection(addr, timeout=120) as conn:
        while True:
            for ad in ads:
                ad["UpdateSequenceNumber"] = str(sent)
                conn.call("UPDATE_AD", ad_type="Machine", ad=ad)
                sent += 1
                if rate > 0:
                    ahead = sent / rate - (time.monotonic() - start)
                    if ahead > 0:
                        time.sleep(ahead)
                if seconds and time.monotonic() - start >= seconds:
                    out.put(sent)
                    return
            if not seconds:
                out.put(sent)
                return


def run(n: int, workers: int) -> dict[str, float]:
    root = Path(tempfile.mkdtemp(prefix="htcd-bench-"))
    master, env = start_pool(root)
    os.environ["HTCD_CONFIG"] = env["HTCD_CONFIG"]
    try:
        from htcd.config import load
        from htcd.daemon import locate
        from htcd.wire.client import Connection

        addr = str(locate.collector(load("TOOL")))
        pid = collector_pid(master)
        rss0 = psutil.Process(pid).memory_info().rss
        ctx = mp.get_context("fork")
        q: mp.Queue = ctx.Queue()
        per = n // workers
        t = time.monotonic()
        procs = [ctx.Process(target=inject, args=(addr, w * per, per, 0, 0, q)) for w in range(workers)]
        for p in procs:
            p.start()
        sent = sum(q.get(timeout=600) for _ in procs)
        ingest_s = time.monotonic() - t
        for p in procs:
            p.join()
        rss1 = psutil.Process(pid).memory_info().rss

        # constrained, projected queries (~GROUP ads each) while updates run at 2,000/s
        loader = ctx.Process(target=inject, args=(addr, 0, min(n, 20_000), 2000.0, 8.0, q))
        loader.start()
        time.sleep(1.0)  # let the update stream settle before timing queries
        queries, t = 0, time.monotonic()
        returned = 0
        with Connection(addr, timeout=120) as conn:
            while time.monotonic() - t < 5.0:
                g = queries % max(1, n // GROUP)
                ads = conn.call("QUERY_ADS", ad_type="Machine", constraint=f"HostGroup == {g}",
                                projection=["Name", "Memory", "State"], limit=0)
                returned += len(ads)
                queries += 1
        q_s = time.monotonic() - t
        updates_during = q.get(timeout=60)
        loader.join()

        t = time.monotonic()
        out = subprocess.run([*HTCD, "status", "-af", "Name"], env=env, capture_output=True, text=True,
                             check=True).stdout
        status_s = time.monotonic() - t
        return {"ads": n, "sent": sent, "ingest_per_s": sent / ingest_s,
                "rss_per_ad_kb": (rss1 - rss0) / n / 1024, "queries_per_s": queries / q_s,
                "ads_per_query": returned / max(1, queries), "updates_per_s_during_queries": updates_during / 8.0,
                "status_af_name_s": status_s, "status_lines": len(out.splitlines())}
    finally:
        master.send_signal(signal.SIGTERM)
        master.wait(60)
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="10,000 ads instead of 100,000")
    ap.add_argument("--ads", type=int, help="how many slot ads")
    ap.add_argument("--workers", type=int, default=2, help="load generator processes")
    args = ap.parse_args()
    n = args.ads or (10_000 if args.quick else 100_000)
    r = run(n, args.workers)
    print(f"collector: {r['ads']} slot ads of ~100 attributes, {args.workers} load generators; "
          "2-core shared machine, figures are noisy")
    print(f"  ingest                  {r['ingest_per_s']:9.0f} updates/s   goal >= 10000")
    print(f"  RSS per ad              {r['rss_per_ad_kb']:9.2f} KB         goal <= 10; anchor HTCondor ~10 KB per slot")
    print(f"  queries (~{r['ads_per_query']:.0f} ads each) {r['queries_per_s']:9.1f} /s while "
          f"{r['updates_per_s_during_queries']:.0f} updates/s   goal >= 100; anchor HTCondor 8.3: 24.4/s at 100k ads")
    print(f"  status -af Name         {r['status_af_name_s']:9.2f} s ({r['status_lines']} lines)   goal <= 5")
    print("  update loss             not measured: UDP updates are not built yet")

    def fig(v: float, unit: str, anchor: float | None, src: str, goal: float | None, better: str) -> dict:
        return {"value": round(v, 3), "unit": unit, "anchor": anchor, "anchor_source": src, "goal": goal,
                "better": better}

    print(json.dumps({"bench": "collector_bench", "figures": {
        "ingest_updates_per_s": fig(r["ingest_per_s"], "updates/s", None, "", 10000, "higher"),
        "rss_per_ad_kb": fig(r["rss_per_ad_kb"], "KB", 10, "HTCondor collector ~10 KB per slot", 10, "lower"),
        "queries_per_s_under_updates": fig(r["queries_per_s"], "queries/s", 24.4,
                                           "HTCondor 8.3, 100k ads", 100, "higher"),
        "status_af_name_s": fig(r["status_af_name_s"], "s", None, "", 5, "lower"),
    }}))


if __name__ == "__main__":
    main()

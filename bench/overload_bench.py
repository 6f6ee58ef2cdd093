"""Overload (issue 21, "Large pools", point 5): a collector flooded beyond its ingest rate and a
schedd at MAX_JOBS_RUNNING, on real daemons over loopback.

1. collector: N slot ads (~40 attributes) loaded over the local socket; then UDP load generators
   (``tests/overload/flood.py``) send signed datagrams as fast as they can for a while: the
   collector's ingest rate (datagrams it read and stored per second), and the loss it counts
   against what was sent -- the kernel's drops on its socket (``DatagramsDroppedReceiveBuffer``)
   and, after one closing update per ad over the connection, the gaps in the ads' sequence
   numbers (``UpdatesLost``);
2. queries/s (``HostGroup == g``, ~50 ads, projected) back to back on one connection while a
   generator sends 5,000 updates/s (the issue's anchor condition), and again while the
   generators flood unpaced;
3. schedd: MAX_JOBS_RUNNING = 50 with 50 more idle jobs and 54 real slots running ``sleep``:
   ``QUERY_JOBS`` of every job through the client library, round trip p50/p99, and the loop's
   longest iteration.

    python bench/overload_bench.py [--quick] [--ads N] [--senders K]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "tests" / "overload"))
import _pool
from flood import GROUP, Flooders, slot_ad

HTCD = _pool.HTCD


def call(addr: str, command: str, **args: Any) -> Any:
    from htcd.wire.client import Connection

    with Connection(addr, timeout=300) as conn:
        return conn.call(command, **args)


def own(addr: str) -> dict[str, str]:
    return call(addr, "DC_QUERY_SELF")[0]


def drained(addr: str) -> dict[str, str]:
    """The collector's ad once its UDP receive queue is empty and stays so for a second."""
    quiet_since = None
    while True:
        ad = own(addr)
        if int(ad.get("DCUdpQueueDepth", "0")) == 0:
            quiet_since = quiet_since or time.monotonic()
            if time.monotonic() - quiet_since >= 1.0:
                return ad
        else:
            quiet_since = None
        time.sleep(0.1)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def queries_while(addr: str, flooders: Flooders, groups: int) -> tuple[float, float, int]:
    """Queries back to back while ``flooders`` run: (queries/s, p99 seconds, count)."""
    from htcd.wire.client import Connection

    lat = []
    with Connection(addr, timeout=300) as conn:
        flooders.go()
        t0 = time.monotonic()
        while flooders.running():
            t = time.perf_counter()
            conn.call("QUERY_ADS", ad_type="Machine", constraint=f"HostGroup == {len(lat) * 7919 % groups}",
                      projection=["Name", "Memory", "State"])
            lat.append(time.perf_counter() - t)
        wall = time.monotonic() - t0
    return len(lat) / wall, percentile(lat, 0.99), len(lat)


def collector_phase(n: int, senders: int, seconds: float) -> dict[str, float]:
    root = Path(tempfile.mkdtemp(prefix="htcd-bench-overload-"))
    master, env = _pool.start_pool(root, ["DAEMON_LIST = MASTER COLLECTOR", "UPDATE_INTERVAL = 300"],
                                   ["status", "-collector", "-af", "Name"], "collector")
    os.environ["HTCD_CONFIG"] = env["HTCD_CONFIG"]
    try:
        from htcd.config import load
        from htcd.wire import locate, udp

        addr = str(locate.collector(load("TOOL")))
        proc = psutil.Process(_pool.daemon_pid(master, "collector"))
        # the ads: the flood's senders own the first part, the paced sender the rest
        flood_ads = n * 3 // 4 // senders
        paced_first = flood_ads * senders
        t = time.monotonic()
        floods = Flooders(env, addr, [("udp", k * flood_ads, flood_ads, seconds, 10_000_000, 0.0)
                                      for k in range(senders)])
        paced = Flooders(env, addr, [("udp", paced_first, n - paced_first, seconds, 10_000_000, 5000.0)])
        load_s = time.monotonic() - t
        groups = n // GROUP
        call(addr, "QUERY_ADS", ad_type="Machine", constraint="HostGroup == 0", projection=["Name"])  # the index
        time.sleep(1.0)  # let the index build before timing queries
        rss = proc.memory_info().rss

        # queries under the anchor's 5,000 updates/s
        before = own(addr)
        qps_paced, p99_paced, _ = queries_while(addr, paced, groups)
        paced_res = paced.results()
        after = drained(addr)
        paced_rate = (int(after["DatagramsReceived"]) - int(before["DatagramsReceived"])) / paced_res[0]["seconds"]

        # the flood: ingest, loss, and queries meanwhile
        before = after
        cpu0 = sum(proc.cpu_times()[:2])
        t = time.monotonic()
        qps_flood, p99_flood, _ = queries_while(addr, floods, groups)
        res = floods.results()
        after = drained(addr)
        wall = time.monotonic() - t - 1.0  # less drained()'s quiet second
        cpu = sum(proc.cpu_times()[:2]) - cpu0
        sent = sum(r["sent"] for r in res)
        received = int(after["DatagramsReceived"]) - int(before["DatagramsReceived"])
        kernel = int(after["DatagramsDroppedReceiveBuffer"]) - int(before["DatagramsDroppedReceiveBuffer"])
        closing = [{"ad_type": "Machine", **udp.compact(slot_ad(int(i), s + 1))} for r in res
                   for i, s in r["last"].items()]
        for k in range(0, len(closing), 500):
            call(addr, "UPDATE_AD", updates=closing[k:k + 500])
        final = own(addr)
        lost = int(final["UpdatesLost"]) - int(before["UpdatesLost"])
        return {"ads": n, "load_s": load_s, "rss_mb": rss / 2**20, "sent": sent, "received": received,
                "kernel_drops": kernel, "updates_lost": lost, "ingest_per_s": received / wall,
                "send_per_s": sent / res[0]["seconds"], "collector_cpu_share": cpu / wall,
                "qps_paced": qps_paced, "p99_paced": p99_paced, "paced_rate": paced_rate,
                "qps_flood": qps_flood, "p99_flood": p99_flood,
                "max_block_cpu_ms": float(final.get("DaemonCoreMaxBlockCpuMs", "nan"))}
    finally:
        for f in ("floods", "paced"):
            if f in locals():
                locals()[f].kill()
        _pool.stop_pool(master, root)


def schedd_phase(running: int, idle: int, queries: int) -> dict[str, float]:
    root = Path(tempfile.mkdtemp(prefix="htcd-bench-overload-"))
    slots = running + 4
    master, env = _pool.start_pool(root, [f"NUM_CPUS = {slots}", f"MAX_JOBS_RUNNING = {running}",
                                          "UPDATE_INTERVAL = 5", "NEGOTIATOR_INTERVAL = 5",
                                          "NEGOTIATOR_CYCLE_DELAY = 0", "STATISTICS_WINDOW_SECONDS = 10",
                                          "STATISTICS_WINDOW_QUANTUM = 1"], ["q", "-totals"], "schedd")
    os.environ["HTCD_CONFIG"] = env["HTCD_CONFIG"]
    try:
        import subprocess

        from htcd.client.schedd import ScheddClient

        (root / "sleep.sub").write_text("executable = /bin/sleep\narguments = 600\ntransfer_executable = false\n"
                                        f"request_memory = 1\nqueue {running + idle}\n")
        subprocess.run([*HTCD, "submit", "sleep.sub"], env=env, cwd=root, check=True, capture_output=True)
        address = (root / "local" / "spool" / ".schedd_address").read_text().splitlines()[0]
        deadline = time.monotonic() + 600
        with ScheddClient(address, timeout=60) as schedd:
            while sum(len(c) for c in schedd.query("JobStatus == 2", ["ClusterId"])) < running:
                if time.monotonic() > deadline:
                    raise SystemExit(f"{running} jobs did not start within 10 minutes")
                time.sleep(0.5)
            lat = []
            for _ in range(queries):
                t = time.perf_counter()
                n = sum(len(c) for c in schedd.query(None, ["ClusterId", "ProcId", "JobStatus", "Owner", "QDate",
                                                            "RemoteUserCpu", "ImageSize", "Cmd", "Args"]))
                lat.append(time.perf_counter() - t)
                assert n == running + idle
        t = time.perf_counter()
        subprocess.run([*HTCD, "q"], env=env, check=True, capture_output=True)
        tool = time.perf_counter() - t
        ad = call(address, "DC_QUERY_SELF", statistics="DC:2")[0]
        return {"running": int(ad["TotalRunningJobs"]), "idle": int(ad["TotalIdleJobs"]),
                "q_p50_ms": 1000 * percentile(lat, 0.5), "q_p99_ms": 1000 * percentile(lat, 0.99),
                "q_tool_s": tool, "block_ms": float(ad["RecentDaemonCoreMaxBlockMs"]),
                "block_cpu_ms": float(ad["RecentDaemonCoreMaxBlockCpuMs"])}
    finally:
        _pool.stop_pool(master, root)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="20,000 ads, short phases, 20 running jobs")
    ap.add_argument("--ads", type=int, help="slot ads in the collector (default 200,000; --quick 20,000)")
    ap.add_argument("--senders", type=int, default=3, help="UDP flood generator processes")
    args = ap.parse_args()
    n = args.ads or (20_000 if args.quick else 200_000)
    c = collector_phase(n, args.senders, 4.0 if args.quick else 10.0)
    s = schedd_phase(20 if args.quick else 50, 20 if args.quick else 50, 50 if args.quick else 200)
    counted = c["kernel_drops"] + c["received"]
    print(f"overload: 2-core machine shared with other work; figures are noisy (load average "
          f"{os.getloadavg()[0]:.1f})")
    print(f"collector: {c['ads']} slot ads of ~40 attributes, loaded in {c['load_s']:.1f} s, RSS {c['rss_mb']:.0f} MB")
    print(f"  flood: {args.senders} senders, {c['sent']} datagrams ({c['send_per_s']:.0f}/s asked)")
    print(f"    ingest {c['ingest_per_s']:9.0f} updates/s (read and stored; the collector had "
          f"{c['collector_cpu_share']:.0%} of a core)")
    print(f"    loss: kernel drops {c['kernel_drops']} + read {c['received']} = {counted} of {c['sent']} sent; "
          f"UpdatesLost (sequence gaps) {c['updates_lost']}")
    print(f"    queries {c['qps_flood']:7.1f}/s meanwhile, p99 {c['p99_flood'] * 1000:.0f} ms")
    print(f"  queries at ~{c['paced_rate']:.0f} updates/s: {c['qps_paced']:.1f}/s, p99 {c['p99_paced'] * 1000:.0f} ms  "
          f"(anchor HTCondor 8.3: 24.4/s at 100k ads; goal >= 200/s at 200k ads under 5,000 updates/s)")
    print(f"  longest loop iteration {c['max_block_cpu_ms']:.1f} ms CPU")
    print(f"schedd at MAX_JOBS_RUNNING = {s['running']} ({s['idle']} idle): q round trip p50 {s['q_p50_ms']:.1f} ms, "
          f"p99 {s['q_p99_ms']:.1f} ms (goal < 100); `htcd q` {s['q_tool_s']:.2f} s with start-up; loop "
          f"{s['block_ms']:.1f} ms wall / {s['block_cpu_ms']:.1f} ms CPU longest")

    def fig(v: float, unit: str, anchor: float | None, src: str, goal: float | None, better: str) -> dict[str, Any]:
        return {"value": round(v, 3), "unit": unit, "anchor": anchor, "anchor_source": src, "goal": goal,
                "better": better}

    print(json.dumps({"bench": "overload_bench", "figures": {
        "collector_ads": fig(c["ads"], "ads", None, "", 200_000, "higher"),
        "collector_ingest_updates_per_s_flooded": fig(c["ingest_per_s"], "updates/s", None, "", None, "higher"),
        "collector_queries_per_s_at_5000_updates_per_s": fig(c["qps_paced"], "queries/s", 24.4,
                                                               "HTCondor 8.3, 100k ads", 200, "higher"),
        "collector_queries_per_s_flooded": fig(c["qps_flood"], "queries/s", None, "", None, "higher"),
        "collector_query_p99_ms_flooded": fig(1000 * c["p99_flood"], "ms", None, "", 1000, "lower"),
        "flood_datagrams_sent": fig(c["sent"], "datagrams", None, "", None, "higher"),
        "flood_datagrams_unaccounted": fig(c["sent"] - counted, "datagrams", None, "", 0, "lower"),
        "flood_loss_counted_pct": fig(100 * c["kernel_drops"] / max(1, c["sent"]), "%", None, "", None, "lower"),
        "schedd_q_p99_ms_at_max_jobs_running": fig(s["q_p99_ms"], "ms", None, "", 100, "lower"),
        "schedd_longest_loop_iteration_cpu_ms": fig(s["block_cpu_ms"], "ms", None, "", 100, "lower"),
    }}))


if __name__ == "__main__":
    main()

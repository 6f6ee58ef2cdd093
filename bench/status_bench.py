"""What `htcd status` costs on the tool's side, and the collector's /metrics at pool scale.

1. The CLI side alone, in this process, on N synthetic slot ads of ~100 attributes (the shape of
   bench/collector_bench.py's), handed over as the collector hands them (projected wire texts):
   ``-af Name`` (ClassAds built from the wire, sorted by Machine/Name, printed through the literal
   fast path), the default table with totals, and ``-compact``.  Reported per ad.
2. End to end on a real collector (master + collector) holding N ads sent as UPDATE_AD: the wall
   time of ``htcd status -af Name``, ``htcd status`` and ``htcd status -total``, and of one
   ``GET /metrics`` (COLLECTOR_METRICS_PORT set).  These include the collector's query time,
   which is the collector's work, not the formatting's.

    python bench/status_bench.py [--quick] [--ads N] [--no-pool]
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import _pool

HTCD = _pool.HTCD


def slot_ad(i: int) -> dict[str, str]:
    """A slot ad of ~100 attributes as a startd publishes it (8 slots per machine)."""
    host = f"node{i // 8:05d}.cluster.example.org"
    now = 1_790_000_000
    ad = {
        "MyType": '"Machine"', "Name": f'"slot{i % 8 + 1}@{host}"', "Machine": f'"{host}"',
        "State": '"Unclaimed"' if i % 3 else '"Claimed"', "Activity": '"Idle"' if i % 3 else '"Busy"',
        "Arch": '"X86_64"', "OpSys": '"LINUX"', "OpSysAndVer": '"Debian12"', "Cpus": "1", "TotalCpus": "8",
        "Memory": str(2048 + i % 7), "TotalMemory": "16384", "Disk": str(10_000_000 + i),
        "LoadAvg": f"{(i % 100) / 100:.2f}", "CondorLoadAvg": "0.0", "TotalLoadAvg": "1.5",
        "KeyboardIdle": str(1000 + i), "MyAddress": f'"<10.0.{i // 250 % 256}.{i % 250}:9618>"',
        "Requirements": "START", "START": "true", "Rank": "0.0", "SlotID": str(i % 8 + 1),
        "SlotType": '"Static"', "TotalSlotCpus": "1", "TotalSlotMemory": str(2048 + i % 7),
        "EnteredCurrentState": str(now - i), "EnteredCurrentActivity": str(now - i), "MyCurrentTime": str(now),
    }
    for k in range(100 - len(ad)):
        ad[f"Custom{k:02d}"] = f'"value-{k}-{i % 13}"' if k % 2 else str(k * i % 9973)
    return ad


def projected(wires: list[dict[str, str]], attrs: list[str] | None) -> list[dict[str, str]]:
    if attrs is None:
        return wires
    wanted = {a.lower() for a in attrs}
    return [{k: v for k, v in w.items() if k.lower() in wanted} for w in wires]


def status_args(argv: list[str]) -> argparse.Namespace:
    from htcd.cli.main import Parser
    from htcd.cli.status import configure

    p = Parser(prog="htcd status")
    configure("status", p)
    return p.parse_args(argv)


def cli_side(n: int, runs: int) -> dict[str, float]:
    """Seconds (best of ``runs``) for the tool's part of each output over n ads."""
    from htcd.classad import ClassAd
    from htcd.cli import output
    from htcd.cli.status import projection, sort_ads
    from htcd.cli.status_tables import SLOTS, compact

    wires = [slot_ad(i) for i in range(n)]
    out: dict[str, float] = {}
    for label, argv in (("af_name", ["-af", "Name"]), ("table", []), ("compact", ["-compact"])):
        args = status_args(argv)
        data = projected(wires, projection(args, "Machine"))
        best = float("inf")
        for _ in range(runs):
            t = time.perf_counter()
            ads = sort_ads([ClassAd.from_wire(w) for w in data])
            if label == "af_name":
                text = output.autoformat(ads, ["Name"])
            elif label == "table":
                text = SLOTS.render(ads)
            else:
                text = compact(ads)
            best = min(best, time.perf_counter() - t)
            assert text.count("\n") >= (n if label != "compact" else n // 8)
        out[label] = best
    return out


def inject(addr: str, first: int, count: int, q: mp.Queue) -> None:
    from htcd.wire.client import Connection

    with Connection(addr, timeout=300) as conn:
        for i in range(first, first + count):
            conn.call("UPDATE_AD", ad_type="Machine", ad=slot_ad(i))
    q.put(count)


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    t = time.monotonic()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return time.monotonic() - t, proc.stdout


def end_to_end(n: int, workers: int) -> dict[str, float]:
    root = Path(tempfile.mkdtemp(prefix="htcd-status-bench-"))
    master, env = _pool.start_pool(root, ["DAEMON_LIST = MASTER COLLECTOR", "COLLECTOR_METRICS_PORT = 0"],
                                   ["status", "-collector", "-af", "Name"], "collector")
    try:
        os.environ["HTCD_CONFIG"] = env["HTCD_CONFIG"]
        from htcd.config import load
        from htcd.wire import locate

        addr = str(locate.collector(load("TOOL")))
        ctx = mp.get_context("fork")
        q: mp.Queue = ctx.Queue()
        per = n // workers
        procs = [ctx.Process(target=inject, args=(addr, w * per, per, q)) for w in range(workers)]
        for p in procs:
            p.start()
        sent = sum(q.get(timeout=1800) for _ in procs)
        for p in procs:
            p.join()
        out: dict[str, float] = {"ads": sent}
        out["af_name_s"], text = timed([*HTCD, "status", "-af", "Name"], env)
        assert text.count("\n") == sent, "every slot listed"
        out["table_s"], _ = timed([*HTCD, "status"], env)
        out["total_s"], _ = timed([*HTCD, "status", "-total"], env)
        log = (root / "local" / "log" / "CollectorLog").read_text()
        found = re.search(r"metrics endpoint listening at http://([\d.]+):(\d+)/metrics", log)
        assert found, "the metrics endpoint did not start"
        # the scrape, while another thread PINGs the collector to see how long its loop is held
        import threading

        from htcd.wire.client import Connection

        done = threading.Event()
        pings: list[float] = []

        def ping() -> None:
            with Connection(addr, timeout=120) as c:
                while not done.is_set():
                    t0 = time.monotonic()
                    c.call("PING")
                    pings.append(time.monotonic() - t0)
                    time.sleep(0.005)

        pinger = threading.Thread(target=ping)
        pinger.start()
        conn = http.client.HTTPConnection(found.group(1), int(found.group(2)), timeout=600)
        t = time.monotonic()
        conn.request("GET", "/metrics")
        body = conn.getresponse().read()
        out["metrics_s"] = time.monotonic() - t
        done.set()
        pinger.join()
        conn.close()
        out["ping_max_during_metrics_s"] = max(pings, default=0.0)
        out["pings_during_metrics"] = len(pings)
        assert b"htcd_slots" in body and body.endswith(b"# EOF\n")
        return out
    finally:
        master.send_signal(signal.SIGTERM)
        master.wait(120)
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="10,000 ads instead of 100,000")
    ap.add_argument("--ads", type=int, help="how many slot ads")
    ap.add_argument("--workers", type=int, default=2, help="processes sending the ads")
    ap.add_argument("--no-pool", action="store_true", help="only the in-process CLI figures")
    args = ap.parse_args()
    n = args.ads or (10_000 if args.quick else 100_000)
    cli = cli_side(n, 1 if args.quick else 3)
    print(f"htcd status, tool side only: {n} slot ads of ~100 attributes as the collector hands them "
          "(2-core shared machine, figures are noisy)")
    for label, what in (("af_name", "-af Name"), ("table", "default table + totals"), ("compact", "-compact")):
        print(f"  {what:24} {cli[label]:7.2f} s   {cli[label] / n * 1e6:6.1f} us/ad")
    e2e: dict[str, float] = {}
    if not args.no_pool:
        e2e = end_to_end(n, args.workers)
        print(f"end to end on a real collector holding {int(e2e['ads'])} ads (includes the collector's query):")
        print(f"  htcd status -af Name     {e2e['af_name_s']:7.2f} s   goal <= 5")
        print(f"  htcd status              {e2e['table_s']:7.2f} s")
        print(f"  htcd status -total       {e2e['total_s']:7.2f} s")
        print(f"  GET /metrics             {e2e['metrics_s']:7.2f} s   (collector PING answered "
              f"{int(e2e['pings_during_metrics'])} times meanwhile, slowest {e2e['ping_max_during_metrics_s'] * 1000:.0f} ms)")

    def fig(v: float, unit: str, goal: float | None = None) -> dict:
        return {"value": round(v, 3), "unit": unit, "anchor": None, "anchor_source": "", "goal": goal,
                "better": "lower"}

    figures = {f"cli_{k}_us_per_ad": fig(v / n * 1e6, "us/ad") for k, v in cli.items()}
    if e2e:
        figures.update({"status_af_name_s": fig(e2e["af_name_s"], "s", 5), "status_table_s": fig(e2e["table_s"], "s"),
                        "status_total_s": fig(e2e["total_s"], "s"), "metrics_scrape_s": fig(e2e["metrics_s"], "s"),
                        "ping_max_during_metrics_ms": fig(e2e["ping_max_during_metrics_s"] * 1000, "ms", 100)})
    print(json.dumps({"bench": "status_bench", "figures": figures}))


if __name__ == "__main__":
    main()

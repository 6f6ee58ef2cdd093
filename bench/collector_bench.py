"""The collector at pool scale: memory per machine ad, update ingest (TCP and signed UDP, with the
losses the collector counts), constrained queries while updates pour in, and a full
``htcd status -af Name``.

Runs a real collector (master + collector only) in a temp dir.  Load generators are separate
processes sending synthetic slot ads of ~100 attributes each, as a startd would:

1. load: every ad once over the local socket, one ``UPDATE_AD`` round trip per ad (TCP ingest);
2. UDP ingest: generators send signed datagrams (``UPDATE_SESSION`` first) at ``--rate`` in
   total, cycling over a subset of the ads, each with the next UpdateSequenceNumber; then one
   closing update per ad over the connection, so that every datagram lost on the way shows as
   a gap the collector counts.  Reported: datagrams sent, received, and updates the collector
   counted lost (UpdatesLost), beside the ingest rate;
3. queries: ``HostGroup == g`` (~100 ads), projected to Name/Memory/State, back to back on one
   connection while generators send ``--query-rate`` UDP updates/s (5,000 by default, the large-pool
   issue's figure);
4. ``htcd status -af Name`` over every ad, timed from the shell's point of view.

RSS per ad is the collector's resident memory after phases 1-2, less its RSS before any ad,
divided by the number of ads.

``--profile`` starts the collector with a ``sitecustomize.py`` (on its PYTHONPATH only; nothing of
it is in htcd) whose thread samples the main thread's stack every 5 ms while a flag file exists:
the bench creates it for phase 3 only, and prints where the loop spent the queries' time.

    python bench/collector_bench.py [--quick] [--ads N] [--rate R] [--query-rate R] [--profile]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).parent))
import _pool
import _sampler

HTCD = _pool.HTCD
GROUP = 100  # ads per HostGroup value: a constrained query returns this many
START_TIME = 1_790_000_000  # the generators' DaemonStartTime




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
        "DaemonStartTime": str(START_TIME), "Requirements": "START", "START": "true", "Rank": "0.0",
        "SlotID": str(i % 8 + 1), "HasFileTransfer": "true", "FileSystemDomain": '"cluster.example.org"',
        "UidDomain": '"example.org"', "EnteredCurrentState": str(1_790_000_000 + i),
        "EnteredCurrentActivity": str(1_790_000_000 + i),
    }
    for k in range(100 - len(ad)):
        ad[f"Custom{k:02d}"] = f'"value-{k}-{i % 13}"' if k % 2 else str(k * i % 9973)
    return ad


def start_pool(root: Path, profile: Path | None = None) -> tuple[subprocess.Popen[bytes], dict[str, str]]:
    """The pool; with ``profile``, the collector runs with the sampler writing there."""
    saved = {k: os.environ.get(k) for k in ("PYTHONPATH", "HTCD_BENCH_PROFILE_DIR")}
    if profile is not None:
        site = profile / "site"
        site.mkdir(parents=True)
        (site / "sitecustomize.py").write_text(_sampler.sitecustomize(("collector",), only_when_on=True))
        os.environ["PYTHONPATH"] = str(site)
        os.environ["HTCD_BENCH_PROFILE_DIR"] = str(profile)
    try:
        return _pool.start_pool(root, ["DAEMON_LIST = MASTER COLLECTOR"], ["status", "-collector", "-af", "Name"],
                                "collector")
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def print_profile(profile: Path) -> None:
    """The sampler's counts: the loop's busy share and where its samples fell."""
    found = sorted(profile.glob("collector.*.json"))
    if not found:
        print("  (no profile written)")
        return
    d = json.loads(found[0].read_text())
    busy = max(1, d["busy"])
    print(f"  collector's loop during the queries: {d['busy']} busy samples, {d['idle']} idle "
          f"({100 * d['busy'] / max(1, d['busy'] + d['idle']):.0f}% busy)")
    print("  self (innermost frame):")
    for k, v in list(d["self"].items())[:20]:
        print(f"    {100 * v / busy:5.1f}%  {k}")
    print("  cumulative:")
    for k, v in list(d["cum"].items())[:35]:
        print(f"    {100 * v / busy:5.1f}%  {k}")


def tcp_load(addr: str, first: int, count: int, seq: int, out: Any) -> None:
    """One UPDATE_AD round trip per ad, for ads first..first+count-1."""
    from htcd.wire.client import Connection
    from htcd.wire.udp import compact

    ads = [slot_ad(first + i, seq) for i in range(count)]
    with Connection(addr, timeout=120) as conn:
        for ad in ads:
            conn.call("UPDATE_AD", ad_type="Machine", **compact(ad))
    out.put(count)


def udp_load(addr: str, first: int, count: int, seq: int, rate: float, seconds: float, out: Any) -> None:
    """Signed datagrams for ads first..first+count-1, round robin, each with the next sequence
    number after ``seq``, at ``rate``/s for ``seconds``.  Puts (sent, {ad: last seq sent})."""
    from htcd.wire import udp
    from htcd.wire.client import Connection

    with Connection(addr, timeout=120) as conn:
        session = conn.call("UPDATE_SESSION")
    sid, key = session["id"], session["key"]
    ads = [slot_ad(first + i) for i in range(count)]
    last = dict.fromkeys(range(first, first + count), seq)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.connect(tuple(session["udp"]))
    sent = 0
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        for i, ad in enumerate(ads):
            n = last[first + i] + 1
            ad["UpdateSequenceNumber"] = str(n)
            sock.send(udp.encode(sid, key, {"cmd": "UPDATE_AD", "args": {"ad_type": "Machine", **udp.compact(ad)}}))
            last[first + i] = n
            sent += 1
            ahead = sent / rate - (time.monotonic() - start)
            if ahead > 0:
                time.sleep(ahead)
            if time.monotonic() - start >= seconds:
                break
    sock.close()
    out.put((sent, last))


def collector_self(addr: str) -> dict[str, str]:
    from htcd.wire.client import Connection

    with Connection(addr, timeout=120) as conn:
        return conn.call("DC_QUERY_SELF")[0]


def wait_quiet(addr: str, key: str = "DatagramsReceived", settle: float = 1.5) -> tuple[dict[str, str], float]:
    """The collector's own ad once ``key`` has stopped growing for ``settle`` seconds (the socket
    buffer is drained), and the time it last grew."""
    ad = collector_self(addr)
    value, changed = int(ad[key]), time.monotonic()
    while time.monotonic() - changed < settle:
        time.sleep(0.1)
        ad = collector_self(addr)
        if int(ad[key]) != value:
            value, changed = int(ad[key]), time.monotonic()
    return ad, changed


def run(n: int, workers: int, rate: float, udp_seconds: float, query_seconds: float, query_rate: float,
        keep: bool = False, profile: bool = False) -> dict[str, float]:
    root = Path(tempfile.mkdtemp(prefix="htcd-bench-"))
    prof = root / "profile" if profile else None
    master, env = start_pool(root, prof)
    os.environ["HTCD_CONFIG"] = env["HTCD_CONFIG"]
    try:
        from htcd.config import load
        from htcd.wire import locate
        from htcd.wire.client import Connection

        addr = str(locate.collector(load("TOOL")))
        proc = psutil.Process(_pool.daemon_pid(master, "collector"))
        rss0 = proc.memory_info().rss
        ctx = mp.get_context("fork")
        q: Any = ctx.Queue()

        # 1. every ad once, one round trip per update
        per = n // workers
        t = time.monotonic()
        procs = [ctx.Process(target=tcp_load, args=(addr, w * per, per, 1, q)) for w in range(workers)]
        for p in procs:
            p.start()
        loaded = sum(q.get(timeout=1800) for _ in procs)
        tcp_s = time.monotonic() - t
        for p in procs:
            p.join()

        # 2. UDP ingest over a subset, then one closing update per ad over the connection
        subset = min(n, max(workers, int(rate * udp_seconds / 5)))  # each ad updated ~5 times
        before = collector_self(addr)
        per = subset // workers
        t = time.monotonic()
        procs = [ctx.Process(target=udp_load, args=(addr, w * per, per, 1, rate / workers, udp_seconds, q))
                 for w in range(workers)]
        for p in procs:
            p.start()
        results = [q.get(timeout=600) for _ in procs]
        for p in procs:
            p.join()
        after, last_change = wait_quiet(addr)
        udp_wall = last_change - t
        sent = sum(r[0] for r in results)
        received = int(after["DatagramsReceived"]) - int(before["DatagramsReceived"])
        accepted = int(after["UpdatesAccepted"]) - int(before["UpdatesAccepted"])
        last: dict[int, int] = {}
        for r in results:
            last.update(r[1])
        from htcd.wire.udp import compact

        closing = [{"ad_type": "Machine", **compact(slot_ad(i, s + 1))} for i, s in sorted(last.items())]
        with Connection(addr, timeout=600) as conn:
            for k in range(0, len(closing), 200):  # small batches: no big transient in the collector
                conn.call("UPDATE_AD", updates=closing[k:k + 200])
        final = collector_self(addr)
        lost = int(final["UpdatesLost_Start"]) - int(before["UpdatesLost_Start"])
        rss1 = proc.memory_info().rss

        # 3. constrained, projected queries (~GROUP ads each) while query_rate updates/s arrive
        groups = max(1, n // GROUP)
        with Connection(addr, timeout=120) as conn:
            for g in range(3):  # the first query asks for the HostGroup index; it is built meanwhile
                conn.call("QUERY_ADS", ad_type="Machine", constraint=f"HostGroup == {g}",
                          projection=["Name", "Memory", "State"])
            time.sleep(1.0)
        per = min(n, 20_000) // workers
        loaders = [ctx.Process(target=udp_load, args=(addr, w * per, per, 10_000, query_rate / workers,
                                                      query_seconds + 2.0, q)) for w in range(workers)]
        for p in loaders:
            p.start()
        time.sleep(1.0)  # let the update stream settle before timing queries
        if prof is not None:
            (prof / "on").touch()
        queries, returned = 0, 0
        with Connection(addr, timeout=120) as conn:
            t = time.monotonic()
            d0 = int(collector_self(addr)["DatagramsReceived"])
            while time.monotonic() - t < query_seconds:
                g = queries * 7919 % groups
                ads = conn.call("QUERY_ADS", ad_type="Machine", constraint=f"HostGroup == {g}",
                                projection=["Name", "Memory", "State"])
                returned += len(ads)
                queries += 1
            q_s = time.monotonic() - t
            d1 = int(collector_self(addr)["DatagramsReceived"])
        if prof is not None:
            (prof / "on").unlink()
        for _ in loaders:
            q.get(timeout=120)
        for p in loaders:
            p.join()

        # 4. the whole pool through the tool
        t = time.monotonic()
        out = subprocess.run([*HTCD, "status", "-af", "Name"], env=env, capture_output=True, text=True,
                             check=True).stdout
        status_s = time.monotonic() - t
        end = collector_self(addr)
        return {"ads": n, "loaded": loaded, "tcp_per_s": loaded / tcp_s, "rss_per_ad_kb": (rss1 - rss0) / n / 1024,
                "udp_rate_asked": rate, "udp_sent": sent, "udp_received": received, "udp_accepted": accepted,
                "udp_lost_counted": lost, "udp_wall_s": udp_wall,
                "udp_per_s": accepted / udp_wall, "queries_per_s": queries / q_s,
                "ads_per_query": returned / max(1, queries), "updates_per_s_during_queries": (d1 - d0) / q_s,
                "status_af_name_s": status_s, "status_lines": len(out.splitlines()),
                "max_block_ms": float(end.get("DaemonCoreMaxBlockMs", "nan")),
                "max_block_cpu_ms": float(end.get("DaemonCoreMaxBlockCpuMs", "nan"))}
    finally:
        master.send_signal(signal.SIGTERM)
        master.wait(120)
        if prof is not None:
            print_profile(prof)
        if keep:
            print(f"kept the pool in {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="10,000 ads and short phases (under a minute)")
    ap.add_argument("--ads", type=int, help="how many slot ads")
    ap.add_argument("--workers", type=int, default=2, help="load generator processes")
    ap.add_argument("--rate", type=float, default=12_000.0, help="UDP updates/s asked of the generators in total")
    ap.add_argument("--query-rate", type=float, default=5_000.0,
                    help="UDP updates/s sent while the queries are timed (phase 3)")
    ap.add_argument("--profile", action="store_true", help="sample the collector's stack during phase 3")
    ap.add_argument("--keep", action="store_true", help="keep the pool's directory (logs) afterwards")
    args = ap.parse_args()
    n = args.ads or (10_000 if args.quick else 100_000)
    r = run(n, args.workers, args.rate, 4.0 if args.quick else 10.0, 3.0 if args.quick else 5.0, args.query_rate,
            args.keep, args.profile)
    loss = r["udp_lost_counted"] / max(1, r["udp_sent"])
    print(f"collector: {r['ads']} slot ads of ~100 attributes, {args.workers} load generators; "
          "2-core shared machine, figures are noisy")
    print(f"  RSS per ad              {r['rss_per_ad_kb']:9.2f} KB         goal <= 10; anchor HTCondor ~10 KB per slot")
    print(f"  ingest, TCP round trips {r['tcp_per_s']:9.0f} updates/s   (one UPDATE_AD per ad, {args.workers} senders)")
    print(f"  ingest, signed UDP      {r['udp_per_s']:9.0f} updates/s   goal >= 10000; asked {r['udp_rate_asked']:.0f}/s")
    print(f"    datagrams sent {r['udp_sent']}, received {r['udp_received']}, stored {r['udp_accepted']}; "
          f"lost as counted by the collector {r['udp_lost_counted']} ({100 * loss:.2f}%)")
    print(f"  queries (~{r['ads_per_query']:.0f} ads each) {r['queries_per_s']:9.1f} /s while "
          f"{r['updates_per_s_during_queries']:.0f} updates/s   goal >= 200; anchor HTCondor 8.3: 24.4/s at 100k ads")
    print(f"  status -af Name         {r['status_af_name_s']:9.2f} s ({r['status_lines']} lines)   goal <= 5")
    print(f"  longest loop iteration {r['max_block_ms']:.1f} ms wall, {r['max_block_cpu_ms']:.1f} ms CPU (goal <= 100)")

    def fig(v: float, unit: str, anchor: float | None, src: str, goal: float | None, better: str) -> dict:
        return {"value": round(v, 3), "unit": unit, "anchor": anchor, "anchor_source": src, "goal": goal,
                "better": better}

    print(json.dumps({"bench": "collector_bench", "figures": {
        "rss_per_ad_kb": fig(r["rss_per_ad_kb"], "KB", 10, "HTCondor collector ~10 KB per slot", 10, "lower"),
        "ingest_udp_updates_per_s": fig(r["udp_per_s"], "updates/s", None, "", 10000, "higher"),
        "udp_update_loss_pct": fig(100 * loss, "%", None, "", None, "lower"),
        "ingest_tcp_updates_per_s": fig(r["tcp_per_s"], "updates/s", None, "", None, "higher"),
        "queries_per_s_under_updates": fig(r["queries_per_s"], "queries/s", 24.4,
                                           "HTCondor 8.3, 100k ads", 200, "higher"),
        "status_af_name_s": fig(r["status_af_name_s"], "s", None, "", 5, "lower"),
        "longest_loop_iteration_ms": fig(r["max_block_ms"], "ms", None, "", 100, "lower"),
    }}))


if __name__ == "__main__":
    main()

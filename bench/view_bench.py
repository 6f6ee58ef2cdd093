"""The pool view's history at scale (issue 23's performance goals):

1. a simulated year: a history written through the real store code (``HistoryStore.record_many``)
   with fake timestamps ending now, for a pool of ``--users`` users on ``--schedds`` schedds
   (every series the view keeps, ``keys`` below).  A year leaves raw samples for the last 2 days,
   5-minute buckets for 10 days, hourly ones for 40 and daily ones for the year; so the bench
   samples every 60 s for the last 2 days, and older periods at twice their finest kept
   resolution (two values per bucket make its average a fraction, stored as SQLite stores a real
   number, as a real pool's would be).  The rows it leaves are the rows a year at 60 s leaves;
   the figure is the file's size on disk (database + WAL), after which the collector keeps it.
   (A bucket keeps the sum of its values: 2 values make smaller sums than a real hour's 60, so
   the sums of counts in hourly and daily rows may take up to 2 bytes more in a real pool:
   (960 + 366) rows x keys x 2 bytes, under 1 MB at 351 keys.)
2. a real collector (master + collector) on that file, KEEP_POOL_HISTORY on and sampling every
   5 s: ``--slots`` slot ads (~100 attributes each, as collector_bench's) are sent to it with
   batched UPDATE_AD; once a sample holds them all, ``/view/api/series_list`` says what that
   sample cost: CPU seconds reducing the ads on the loop and CPU seconds writing on the worker.
3. the series JSON for a week at 5-minute resolution (``range=week``), fetched over HTTP from the
   collector's endpoint ``--requests`` times: slots_by_state (the machine graph) and, as a larger
   case, jobs_by_user (3 keys a user), whole and for one user (``&keys=``).

The HTTP times are wall-clock and depend on the machine's load (the bench prints the load
average); beside them, the collector's CPU time per request (user + system, including whatever
sampling ran meanwhile) does not.

    python bench/view_bench.py [--quick] [--slots N] [--users N] [--schedds N]
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).parent))
import _pool
from collector_bench import slot_ad

from htcd.collector.view import sampler
from htcd.collector.view.store import LEVELS, RAW_KEEP, HistoryStore

DAY = 86400
GOAL_SAMPLE_CPU = 1.0
GOAL_WEEK_MS = 200.0
GOAL_YEAR_BYTES = 100_000_000


def keys(users: int, schedds: int) -> dict[str, list[str]]:
    """The series of a pool with ``users`` users and ``schedds`` schedds, 2 platforms."""
    plats = ["X86_64/LINUX", "AARCH64/LINUX"]
    names = [f"user{u:03d}@example.org" for u in range(users)]
    return {"slots_by_state": list(sampler.SLOT_STATES), "slots_by_activity": list(sampler.ACTIVITIES),
            "slots_by_arch": plats, "claimed_by_arch": plats, "cpus_by_state": list(sampler.SLOT_STATES),
            "jobs_by_user": [f"{n}/{s}" for n in names for s in sampler.JOB_STATES],
            "jobs_by_schedd": [f"schedd{s}@example.org/{st}" for s in range(schedds) for st in sampler.JOB_STATES],
            "user_priority": names, "user_usage": names + [f"{n}/accumulated" for n in names],
            "negotiation_cycle": ["duration", "matches", "rejections", "submitters"],
            "duty_cycle": ["collector@cm/Collector", "negotiator@cm/Negotiator",
                           *(f"schedd{s}@example.org/Scheduler" for s in range(schedds))]}


def fake_sample(series: dict[str, list[str]], t: int, rng: random.Random) -> dict[str, dict[str, float]]:
    """Values of the kinds a pool shows: slot and job counts (integers that move through the
    day), priorities and usage (reals), cycle times and duty cycles (fractions)."""
    wave = 0.5 + 0.5 * math.sin(t / DAY * 2 * math.pi)
    out: dict[str, dict[str, float]] = {}
    for name, ks in series.items():
        if name in ("user_priority", "user_usage", "negotiation_cycle", "duty_cycle"):
            out[name] = {k: round(rng.uniform(0, 1000) * wave, 3) for k in ks}
        else:
            out[name] = {k: int(rng.uniform(0, 5000) * wave) for k in ks}
    return out


def simulate_year(directory: str, series: dict[str, list[str]], now: int) -> tuple[int, int, float, dict[str, int]]:
    """(bytes on disk, samples written, seconds, rows per table) of a year ending at ``now``."""
    h = HistoryStore(directory, 10**12, 60)
    rng = random.Random(23)
    start = now - 366 * DAY
    periods = [(start, now - LEVELS[1][1], LEVELS[2][0] // 2),  # daily rows only: 2 per day
               (now - LEVELS[1][1], now - LEVELS[0][1], LEVELS[1][0] // 2),  # + hourly: 2 per hour
               (now - LEVELS[0][1], now - RAW_KEEP, LEVELS[0][0] // 2),  # + 5-minute: 2 per bucket
               (now - RAW_KEEP, now + 1, 60)]  # raw: every sample
    written = 0
    started = time.perf_counter()
    for lo, hi, step in periods:
        batch = []
        for t in range(lo - lo % step, hi, step):
            if t < lo:
                continue
            batch.append((t, fake_sample(series, t, rng)))
            if len(batch) >= 200:
                h.record_many(batch)
                written += len(batch)
                batch = []
        h.record_many(batch)
        written += len(batch)
    took = time.perf_counter() - started
    h.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    rows = h.count_rows()
    size = h.size()
    h.close()
    return size, written, took, rows


def get(url: tuple[str, int], path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(*url, timeout=60)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def load_slots(addr: str, count: int) -> float:
    """Send ``count`` slot ads in batches of 500 (UPDATE_AD with updates=[...]); seconds taken."""
    from htcd.wire.client import Connection
    from htcd.wire.udp import compact

    started = time.perf_counter()
    states = [('"Claimed"', '"Busy"'), ('"Unclaimed"', '"Idle"'), ('"Claimed"', '"Busy"'), ('"Owner"', '"Idle"'),
              ('"Matched"', '"Idle"'), ('"Claimed"', '"Retiring"'), ('"Drained"', '"Idle"')]
    with Connection(addr, timeout=300) as conn:
        for first in range(0, count, 500):
            batch = []
            for i in range(first, min(count, first + 500)):
                ad = slot_ad(i, 1)
                ad["State"], ad["Activity"] = states[i % len(states)]
                if i % 2:
                    ad["Arch"] = '"AARCH64"'
                batch.append({"ad_type": "Machine", **compact(ad)})
            reply = conn.call("UPDATE_AD", updates=batch)
            if reply["errors"]:
                raise SystemExit(f"the collector refused slot ads: {reply['errors'][:3]}")
    return time.perf_counter() - started


def figure(value: float, unit: str, goal: float | None, better: str = "lower") -> dict[str, Any]:
    return {"value": value, "unit": unit, "anchor": None, "anchor_source": "", "goal": goal, "better": better}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smaller sizes, well under a minute")
    ap.add_argument("--slots", type=int, default=None, help="slot ads in the pool (default 100,000)")
    ap.add_argument("--users", type=int, default=None, help="users of the simulated year (default 50)")
    ap.add_argument("--schedds", type=int, default=5)
    ap.add_argument("--requests", type=int, default=None, help="timed fetches of each week series (default 20)")
    args = ap.parse_args()
    slots = args.slots or (10_000 if args.quick else 100_000)
    args.requests = args.requests or (5 if args.quick else 20)
    users = args.users or (2 if args.quick else 50)
    series = keys(users, args.schedds)
    nkeys = sum(len(v) for v in series.values())
    root = Path(tempfile.mkdtemp(prefix="view-bench-"))
    hist = root / "hist"
    now = int(time.time())

    print(f"pool view bench: {slots:,} slots; a year of {nkeys} keys ({users} users, {args.schedds} schedds); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    size, written, took, rows = simulate_year(str(hist), series, now)
    print(f"  simulated year: {written:,} samples written in {took:.1f} s; rows kept {rows}")
    print(f"  bytes on disk after a year: {size / 1e6:8.1f} MB   (goal < {GOAL_YEAR_BYTES / 1e6:.0f} MB)")

    master, _ = _pool.start_pool(root, ["DAEMON_LIST = MASTER COLLECTOR", "COLLECTOR_METRICS_PORT = 0",
                                          "KEEP_POOL_HISTORY = true", f"POOL_HISTORY_DIR = {hist}",
                                          "POOL_HISTORY_SAMPLING_INTERVAL = 5",
                                          f"POOL_HISTORY_MAX_STORAGE = {10**9}"],
                                   ["status", "-collector", "-af", "Name"], "collector")
    try:
        log = root / "local" / "log" / "CollectorLog"
        deadline = time.monotonic() + 60
        while not (m := re.search(r"listening at http://([\d.]+):(\d+)/metrics", log.read_text())):
            if time.monotonic() > deadline:
                raise SystemExit("the collector's metrics endpoint did not come up")
            time.sleep(0.2)
        url = (m.group(1), int(m.group(2)))
        from htcd.wire.locate import read_address_file

        addr = read_address_file(str(root / "local" / "log" / ".collector_address"))
        load = load_slots(str(addr), slots)
        print(f"  {slots:,} slot ads sent in {load:.1f} s")
        deadline = time.monotonic() + 120
        while True:
            status, body = get(url, "/view/api/series_list")
            last = json.loads(body).get("last_sample") if status == 200 else None
            if last and last["ads"] >= slots:
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"no sample of {slots} ads within 120 s: {body[:300]!r}")
            time.sleep(0.5)
        sample_cpu = last["reduce_cpu_seconds"] + last["write_cpu_seconds"]
        print(f"  one sample of {last['ads']:,} ads: {last['reduce_cpu_seconds']:.3f} s CPU reducing on the loop + "
              f"{last['write_cpu_seconds']:.3f} s CPU writing = {sample_cpu:.3f} s   (goal < {GOAL_SAMPLE_CPU:.0f} s)")

        timings: dict[str, tuple[float, int, int]] = {}
        cpu: dict[str, float] = {}
        collector = psutil.Process(_pool.daemon_pid(master, "collector"))
        one_user = ",".join(f"user000@example.org/{st}" for st in sampler.JOB_STATES)
        for name, extra in (("slots_by_state", ""), ("jobs_by_user", ""), ("jobs_by_user", f"&keys={one_user}")):
            ms = []
            cpu_before = sum(collector.cpu_times()[:2])
            for _ in range(args.requests):
                started = time.perf_counter()
                status, body = get(url, f"/view/api/series?name={name}&range=week{extra}")
                ms.append((time.perf_counter() - started) * 1000)
                if status != 200:
                    raise SystemExit(f"series {name}: HTTP {status} {body[:300]!r}")
            cpu_ms = (sum(collector.cpu_times()[:2]) - cpu_before) / args.requests * 1000
            doc = json.loads(body)
            if doc["step"] != 300:
                raise SystemExit(f"series {name} for a week came at step {doc['step']}, not 300")
            timings[name + ("_one_user" if extra else "")] = (statistics.median(ms), len(doc["t"]), len(body))
            cpu[name + ("_one_user" if extra else "")] = cpu_ms
            print(f"  week of {name} ({len(doc['columns'])} keys x {len(doc['t'])} points, {len(body):,} bytes) "
                  f"over HTTP: median {statistics.median(ms):.1f} ms, max {max(ms):.1f} ms, "
                  f"collector CPU {cpu_ms:.1f} ms a request"
                  + (f"   (goal < {GOAL_WEEK_MS:.0f} ms)" if name == "slots_by_state" else ""))
    finally:
        _pool.stop_pool(master, root)

    figures = {"sample_cpu_100k_slots": figure(round(sample_cpu, 3), "s", GOAL_SAMPLE_CPU),
               "week_series_http": figure(round(timings["slots_by_state"][0], 1), "ms", GOAL_WEEK_MS),
               "week_series_collector_cpu": figure(round(cpu["slots_by_state"], 1), "ms", None),
               "week_series_http_jobs_by_user": figure(round(timings["jobs_by_user"][0], 1), "ms", None),
               "week_series_http_one_user": figure(round(timings["jobs_by_user_one_user"][0], 1), "ms", None),
               "year_bytes": figure(size, "bytes", GOAL_YEAR_BYTES)}
    if slots != 100_000:
        figures = {k.replace("100k", f"{slots // 1000}k"): v for k, v in figures.items()}
    if args.quick:  # a smaller pool and fewer keys: the goals are for the full run
        for f in figures.values():
            f["goal"] = None
    print(json.dumps({"bench": "view_bench", "figures": figures}))


if __name__ == "__main__":
    main()

"""Negotiation cycle time: synthetic slot ads injected into a real collector (UPDATE_AD, with their
private claim ids) and jobs in many autoclusters (distinct request_memory values) in a real
schedd; the figure is the negotiator's own LastNegotiationCycleDuration0 for the cycle the submit
triggers (read from the negotiator with DC_QUERY_SELF).

Cases: 1,000 slots x 1,000 autoclusters (2 jobs each: 1,000 matched, the rest rejected) and
10,000 slots x 100 autoclusters (20 jobs each: 2,000 matches among 10,000 slots).  The slots'
startd addresses lead nowhere, so the schedd's claims fail at once and the jobs stay idle.
Anchor: HTCondor 8.2/8.3 scalability charts of a 1,000-slot pool show tens of seconds per cycle
with many autoclusters.  Goal: <= 2 s for each case.

The large-pool case: 20,000 slots x 1,000 autoclusters (20 jobs each: up to 20,000 matches).
Anchor: HTCondor's large-pool guide calls a cycle over 5 minutes slow; goal < 10 s.  ``--only
SUBSTRING`` runs the cases whose figure name holds it (e.g. ``--only 20000``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import _pool

HTCD = _pool.HTCD
ANCHOR = 20.0  # seconds per cycle, 1,000 slots with many autoclusters (HTCondor 8.2/8.3 charts)
GOAL = 2.0
LARGE_ANCHOR = 300.0  # seconds: "slow" in HTCondor's large-pool guide
LARGE_GOAL = 10.0


def slot_ad(i: int) -> dict[str, str]:
    host = f"node{i // 8:05d}.bench.example.org"
    return {"MyType": '"Machine"', "Name": f'"slot{i % 8 + 1}@{host}"', "Machine": f'"{host}"',
            "State": '"Unclaimed"', "Activity": '"Idle"', "Arch": '"X86_64"', "OpSys": '"LINUX"',
            "Cpus": "1", "Memory": str(2048 * (1 + i % 4)), "Disk": "100000000", "SlotWeight": "1",
            "SlotID": str(i % 8 + 1), "SlotType": '"Static"', "START": "true", "Rank": "0.0",
            "WithinResourceLimits": "(MY.Cpus > 0 && (TARGET.RequestCpus ?: 1) <= MY.Cpus && "
                                    "(TARGET.RequestMemory ?: 0) <= MY.Memory && (TARGET.RequestDisk ?: 0) <= MY.Disk)",
            "Requirements": "START && WithinResourceLimits", "HasFileTransfer": "true",
            "StartdIpAddr": '"<127.0.0.1:1?unix=/nonexistent/bench-startd.sock>"',
            "MyAddress": '"<127.0.0.1:1?unix=/nonexistent/bench-startd.sock>"',
            "FileSystemDomain": '"bench.example.org"', "UidDomain": '"bench.example.org"',
            "CurrentRank": "0.0", "DaemonStartTime": "1790000000", "UpdateSequenceNumber": "1"}


def inject(env: dict[str, str], n: int) -> None:
    from htcd.config import load
    from htcd.wire import locate
    from htcd.wire.client import Connection
    old = os.environ.get("HTCD_CONFIG")
    os.environ["HTCD_CONFIG"] = env["HTCD_CONFIG"]
    try:
        addr = locate.collector(load("TOOL"))
    finally:
        if old is None:
            os.environ.pop("HTCD_CONFIG", None)
        else:
            os.environ["HTCD_CONFIG"] = old
    with Connection(addr, timeout=600) as conn:
        batch = []
        for i in range(n):
            ad = slot_ad(i)
            batch.append({"ad_type": "Machine", "ad": ad, "private": {"Name": ad["Name"].strip('"'),
                                                                      "ClaimId": f"bench-claim-{i}"}})
            if len(batch) == 500:
                conn.call("UPDATE_AD", updates=batch)
                batch = []
        if batch:
            conn.call("UPDATE_AD", updates=batch)


def negotiator_ad(root: Path) -> dict[str, str]:
    from htcd.wire.address import Address
    from htcd.wire.client import Connection

    text = (root / "local" / "log" / ".negotiator_address").read_text().split("\n")[0].strip()
    with Connection(Address.parse(text), timeout=60) as conn:
        ads = conn.call("DC_QUERY_SELF")
    ad = ads[0] if isinstance(ads, list) else ads
    return ad.get("ad", ad) if isinstance(ad, dict) else {}


def run_case(slots: int, clusters: int, per: int) -> dict[str, float]:
    root = Path(tempfile.mkdtemp(prefix="negbench-"))
    master = None
    try:
        master, env = _pool.start_pool(root, ["DAEMON_LIST = MASTER COLLECTOR SCHEDD NEGOTIATOR",
                                              "NEGOTIATOR_INTERVAL = 3600", "NEGOTIATOR_CYCLE_DELAY = 30",
                                              "UPDATE_INTERVAL = 300", "CLASSAD_LIFETIME = 3600"],
                                       ["q"], "schedd and negotiator")
        deadline = time.monotonic() + 60
        while not (root / "local" / "log" / ".negotiator_address").exists():
            if time.monotonic() > deadline:
                raise SystemExit("the negotiator did not come up")
            time.sleep(0.2)
        first = int(negotiator_ad(root).get("NegotiationCycles", "0") or 0)
        inject(env, slots)
        items = ", ".join(str(m) for m in range(1, clusters + 1))
        sub = root / "bench.sub"
        sub.write_text(f"executable = /bin/true\nrequest_cpus = 1\nrequest_disk = 1\nrequest_memory = $(mem)\n"
                       f"queue {per} mem in ({items})\n")
        subprocess.run([*HTCD, "submit", str(sub)], env=env, cwd=root, check=True, capture_output=True)
        deadline = time.monotonic() + 300
        while True:
            ad = negotiator_ad(root)
            if int(ad.get("NegotiationCycles", "0") or 0) > first and int(ad.get("LastNegotiationCycleMatches0", "0")
                                                                           or 0) > 0:
                break
            if time.monotonic() > deadline:
                raise SystemExit("no negotiation cycle with matches")
            time.sleep(0.2)
        return {"duration": float(ad["LastNegotiationCycleDuration0"]),
                "matches": float(ad["LastNegotiationCycleMatches0"]),
                "rejections": float(ad.get("LastNegotiationCycleRejections0", "0")),
                "evaluations": float(ad.get("LastNegotiationCycleMatchEvaluations0", "0"))}
    finally:
        if master is not None:
            master.terminate()
            try:
                master.wait(120)
            except subprocess.TimeoutExpired:
                master.kill()
        if os.environ.get("NEGBENCH_SHOW_LOG"):
            print((root / "local" / "log" / "NegotiatorLog").read_text()[-6000:])
            print((root / "local" / "log" / "SchedLog").read_text()[-3000:])
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="smaller cases (a smoke run)")
    p.add_argument("--only", help="run only the cases whose figure name contains this")
    args = p.parse_args()
    small = (ANCHOR, "HTCondor 8.2/8.3 negotiator scalability charts, 1,000-slot pool, many autoclusters: "
             "tens of seconds per cycle", GOAL)
    large = (LARGE_ANCHOR, "HTCondor large-pool guide: a negotiation cycle over 5 minutes is slow", LARGE_GOAL)
    cases = [("cycle_1000_slots_1000_autoclusters", 1000, 1000, 2, small),
             ("cycle_10000_slots_100_autoclusters", 10000, 100, 20, small),
             ("cycle_20000_slots_1000_autoclusters", 20000, 1000, 20, large)]
    if args.quick:
        cases = [("cycle_100_slots_100_autoclusters", 100, 100, 2, small)]
    if args.only:
        cases = [c for c in cases if args.only in c[0]]
    figures = {}
    print("negotiation cycle, synthetic slots in a real collector, jobs in a real schedd")
    for name, slots, clusters, per, (anchor, source, goal) in cases:
        r = run_case(slots, clusters, per)
        print(f"  {slots:6d} slots x {clusters:5d} autoclusters ({per} jobs each): {r['duration']:6.2f} s per cycle, "
              f"{int(r['matches'])} matches, {int(r['rejections'])} rejections, "
              f"{int(r['evaluations'])} match evaluations   (anchor ~{anchor:.0f} s, goal <= {goal:.0f} s)")
        figures[name] = {"value": round(r["duration"], 3), "unit": "s", "anchor": anchor,
                         "anchor_source": source, "goal": goal, "better": "lower"}
    print(json.dumps({"bench": "negotiator", "figures": figures}))


if __name__ == "__main__":
    main()

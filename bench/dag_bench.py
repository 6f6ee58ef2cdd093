"""DAGMan throughput: ``htcd dagman`` running a fan-out and a chain of ``/bin/true`` nodes on a
personal pool, beside plain ``htcd submit`` of the same jobs in the same run.

1. Plain: N jobs of ``/bin/true`` in one cluster; the clock starts before ``htcd submit`` and
   stops when the event log holds N terminated events.
2. Fan-out: a DAG of one root and N-1 children (each its own cluster, as DAGMan submits a node);
   the clock runs from the start of ``htcd dagman`` to its exit.  ``-MaxIdle`` is lifted, with
   the pool's DAGMAN_MAX_JOBS_IDLE (which caps it, as HTCondor's admin throttle) and
   DAGMAN_MAX_SUBMITS_PER_INTERVAL, so that, as with plain submit, every job may wait in the queue.  Goal: >= 80 % of plain's jobs/s;
   anchor: HTCondor's DAGMan, ~20 nodes/s (its default 5 s log scan and 100 submits per cycle).
3. Chain: ``--chain`` nodes, each the child of the one before (latency-bound: one node at a time).
4. The dagman's peak RSS during the fan-out, per node; and ``htcd dagman -no_submit`` (parse and
   set up only) on a 100,000-node fan-out: its seconds and RSS per node.
5. CPU per job, which the machine's other load moves less than the rates: the pool's daemons
   (with the starters they reaped) during plain and during the fan-out, and the dagman's own.

    python bench/dag_bench.py [--quick] [--nodes N] [--chain N] [--parse-nodes N]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _pool import HTCD, start_pool, stop_pool

from htcd.eventlog import TERMINATED, LogFollower

ANCHOR_NODES_PER_S = 20.0
GOAL_RATIO = 0.8
GOAL_KB_PER_NODE = 2.0  # the goal: dagman memory per node at 100,000 nodes
# the pool's limits too (DAGMAN_MAX_JOBS_IDLE is also an admin cap on -MaxIdle): every node may wait queued
NO_THROTTLE = {"_HTCD_DAGMAN_MAX_SUBMITS_PER_INTERVAL": "100000", "_HTCD_DAGMAN_MAX_JOBS_IDLE": "100000"}
JOB = "executable = /bin/true\nlog = {log}\nqueue {n}\n"


def pool_knobs(cpus: int) -> list[str]:
    return [f"NUM_CPUS = {cpus}", f"MEMORY = {cpus * 256}", "NUM_SLOTS = 1", "NUM_SLOTS_TYPE_1 = 1",
            "SLOT_TYPE_1 = 100%", "SLOT_TYPE_1_PARTITIONABLE = True", "NEGOTIATOR_CYCLE_DELAY = 0",
            "NEGOTIATOR_INTERVAL = 2", "UPDATE_INTERVAL = 5", "MAX_JOBS_RUNNING = 10000"]


def pool_cpu(master: subprocess.Popen[bytes]) -> float:
    """CPU seconds the pool's processes have used so far, with the children they reaped."""
    total = 0.0
    for p in [psutil.Process(master.pid), *psutil.Process(master.pid).children(recursive=True)]:
        try:
            t = p.cpu_times()
        except psutil.Error:
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


def children_cpu() -> float:
    """CPU seconds of this process's reaped children (the dagman, once it has exited)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def plain(work: Path, env: dict[str, str], n: int) -> float:
    (work / "plain.sub").write_text(JOB.format(log="plain.log", n=n))
    follower = LogFollower(str(work / "plain.log"))
    start = time.perf_counter()
    subprocess.run([*HTCD, "submit", "-terse", "plain.sub"], cwd=work, env=env, check=True, capture_output=True)
    done = 0
    while done < n:
        done += sum(1 for ev in follower.poll() if ev.type == TERMINATED)
        time.sleep(0.05)
    return time.perf_counter() - start


def run_dag(work: Path, env: dict[str, str], name: str, text: str) -> tuple[float, int]:
    """(seconds, peak RSS in bytes) of ``htcd dagman`` on this DAG."""
    (work / f"{name}.sub").write_text(JOB.format(log=f"{name}.log", n=1))
    (work / f"{name}.dag").write_text(text.replace("SUBMIT", f"{name}.sub"))
    start = time.perf_counter()
    proc = subprocess.Popen([*HTCD, "dagman", "-f", "-Dag", f"{name}.dag", "-MaxIdle", "100000",
                             "-MaxJobs", "0"], cwd=work, env={**env, **NO_THROTTLE},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        p = psutil.Process(proc.pid)
        while not stop.is_set():
            try:
                peak = max(peak, p.memory_info().rss)
            except psutil.Error:
                return
            time.sleep(0.1)

    sampler = threading.Thread(target=sample)
    sampler.start()
    _, err = proc.communicate()
    seconds = time.perf_counter() - start
    stop.set()
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"htcd dagman on {name}.dag exited {proc.returncode}: {err.decode()[-2000:]}")
    return seconds, peak


def fan_out(n: int) -> str:
    return "JOB root SUBMIT\n" + "".join(f"JOB n{i} SUBMIT\n" for i in range(1, n)) + \
        "PARENT root CHILD " + " ".join(f"n{i}" for i in range(1, n)) + "\n"


def chain(n: int) -> str:
    return "".join(f"JOB n{i} SUBMIT\n" for i in range(n)) + \
        "".join(f"PARENT n{i} CHILD n{i + 1}\n" for i in range(n - 1))


def parse_only(work: Path, env: dict[str, str], n: int) -> tuple[float, float]:
    """(seconds, RSS bytes per node) of ``htcd dagman -no_submit`` on an n-node fan-out."""
    (work / "big.sub").write_text(JOB.format(log="big.log", n=1))
    (work / "big.dag").write_text(fan_out(n).replace("SUBMIT", "big.sub"))
    out = subprocess.run([*HTCD, "dagman", "-f", "-no_submit", "-Dag", "big.dag"], cwd=work, env=env,
                         check=True, capture_output=True, text=True).stdout
    m = re.search(r"parsed in ([\d.]+) s; max RSS (\d+) KB", out)
    if m is None:
        raise SystemExit(f"unexpected output of htcd dagman -no_submit: {out}")
    return float(m[1]), int(m[2]) * 1024 / n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--nodes", type=int)
    ap.add_argument("--chain", type=int)
    ap.add_argument("--parse-nodes", type=int)
    args = ap.parse_args()
    n = args.nodes or (500 if args.quick else 10_000)
    chain_n = args.chain or (50 if args.quick else n)
    parse_n = args.parse_nodes or (10_000 if args.quick else 100_000)
    with tempfile.TemporaryDirectory(prefix="dagb-") as tmp:
        root = Path(tmp)
        work = root / "work"
        work.mkdir()
        (root / "pool").mkdir()
        master, env = start_pool(root / "pool", pool_knobs(32), ["status", "-af", "Name"], "pool")
        try:
            while subprocess.run([*HTCD, "q", "-totals"], env=env, capture_output=True).returncode != 0:
                time.sleep(0.2)
            cpu0 = pool_cpu(master)
            plain_s = plain(work, env, n)
            cpu1, load_plain = pool_cpu(master), os.getloadavg()[0]
            dag0 = children_cpu()
            fan_s, fan_rss = run_dag(work, env, "fan", fan_out(n))
            cpu2, dagman_cpu, load_fan = pool_cpu(master), children_cpu() - dag0, os.getloadavg()[0]
            chain_s, _ = run_dag(work, env, "chain", chain(chain_n))
            parse_s, parse_rss = parse_only(work, env, parse_n)
            (work / "one").mkdir()
            _, base_rss = parse_only(work / "one", env, 2)  # a two-node DAG's process: interpreter and code
            base_rss *= 2  # (parse_only answers per node)
        finally:
            stop_pool(master, root / "pool")
    plain_rate, fan_rate, chain_rate = n / plain_s, n / fan_s, chain_n / chain_s
    print(f"plain htcd submit: {n} jobs in {plain_s:.1f} s = {plain_rate:.1f} jobs/s")
    print(f"DAG fan-out:       {n} nodes in {fan_s:.1f} s = {fan_rate:.1f} nodes/s "
          f"({fan_rate / plain_rate:.0%} of plain; goal {GOAL_RATIO:.0%}; HTCondor ~{ANCHOR_NODES_PER_S:.0f} nodes/s)")
    print(f"CPU per job: pool {(cpu1 - cpu0) / n * 1000:.1f} ms plain, {(cpu2 - cpu1) / n * 1000:.1f} ms fan-out; "
          f"dagman {dagman_cpu / n * 1000:.2f} ms/node (load average {load_plain:.1f} after plain, "
          f"{load_fan:.1f} after the fan-out, {os.cpu_count()} cores)")
    print(f"DAG chain:         {chain_n} nodes in {chain_s:.1f} s = {chain_rate:.2f} nodes/s")
    print(f"dagman peak RSS during the fan-out: {fan_rss / 2**20:.1f} MB = {fan_rss / n / 1024:.1f} KB/node")
    print(f"-no_submit on {parse_n} nodes: {parse_s:.2f} s, {parse_rss / 1024:.2f} KB/node (whole RSS / nodes)")
    # what each node adds: the RSS above the two-node DAG's, over the nodes (the goal's "per node")
    marginal = max(0.0, parse_rss * parse_n - base_rss) / max(1, parse_n - 2)
    print(f"  of which the nodes: {marginal / 1024:.2f} KB/node above a two-node DAG's "
          f"{base_rss / 2**20:.1f} MB (goal < {GOAL_KB_PER_NODE} KB)")
    figures = {
        "plain_jobs_per_s": {"value": round(plain_rate, 2), "unit": "jobs/s", "anchor": None,
                             "anchor_source": "htcd submit of the same jobs, same run", "goal": None,
                             "better": "higher"},
        "fanout_nodes_per_s": {"value": round(fan_rate, 2), "unit": "nodes/s", "anchor": ANCHOR_NODES_PER_S,
                               "anchor_source": "HTCondor DAGMan ~20 nodes/s (5 s log scan, 100 submits per cycle)",
                               "goal": round(GOAL_RATIO * plain_rate, 2), "better": "higher",
                               "ratio_to_plain": round(fan_rate / plain_rate, 3)},
        "pool_cpu_ms_per_job_plain": {"value": round((cpu1 - cpu0) / n * 1000, 2), "unit": "ms", "anchor": None,
                                      "anchor_source": "", "goal": None, "better": "lower"},
        "pool_cpu_ms_per_job_fanout": {"value": round((cpu2 - cpu1) / n * 1000, 2), "unit": "ms", "anchor": None,
                                       "anchor_source": "", "goal": None, "better": "lower"},
        "dagman_cpu_ms_per_node": {"value": round(dagman_cpu / n * 1000, 3), "unit": "ms", "anchor": None,
                                   "anchor_source": "", "goal": None, "better": "lower"},
        "chain_nodes_per_s": {"value": round(chain_rate, 3), "unit": "nodes/s", "anchor": None,
                              "anchor_source": "", "goal": None, "better": "higher"},
        "dagman_rss_per_node": {"value": round(fan_rss / n / 1024, 2), "unit": "KB", "anchor": None,
                                "anchor_source": "", "goal": None, "better": "lower"},
        "parse_only_seconds": {"value": round(parse_s, 2), "unit": "s", "anchor": None,
                               "anchor_source": f"{parse_n}-node fan-out, htcd dagman -no_submit", "goal": 10.0,
                               "better": "lower"},
        "parse_only_rss_per_node": {"value": round(parse_rss / 1024, 2), "unit": "KB", "anchor": None,
                                    "anchor_source": f"{parse_n}-node fan-out, whole process RSS / nodes",
                                    "goal": None, "better": "lower"},
        "parse_only_kb_per_node": {"value": round(marginal / 1024, 2), "unit": "KB", "anchor": None,
                                   "anchor_source": f"{parse_n}-node fan-out, RSS above a two-node DAG / nodes",
                                   "goal": GOAL_KB_PER_NODE, "better": "lower"},
    }
    print(json.dumps({"bench": "dag_bench", "figures": figures, "sizes": {"nodes": n, "chain": chain_n,
                                                                          "parse_nodes": parse_n}}))


if __name__ == "__main__":
    main()

"""Throughput of trivial docker-universe jobs beside the same jobs in vanilla, on one execute point.

A private Docker engine (scripts/dockerd.sh: its own socket and state in a temp dir, the tiny
busybox image built without a registry) and one personal pool whose startd has 8 static slots of
1 CPU.  Two clusters of N jobs of ``/bin/true`` (200; ``--quick`` 40), run one after the other in
the same pool: vanilla, then ``universe = docker`` with ``docker_image =
localhost/htcd-busybox:latest``.  The clock of each starts before ``htcd submit`` and stops when
its event log holds N terminated events.  One job of each universe runs first, untimed (the
first container of an engine is slower).

Figures: jobs/s of each; the overhead the container adds per job, in seconds of slot time
(8 slots x the difference of the two walls / N: how much longer each job holds its slot);
anchors: vanilla measured in the same run, and ``docker run`` of a trivial command, 0.2-0.4 s.
Also printed: create+start+wait+remove of one container straight through the plugin's engine
client, one at a time (the engine's own share of the overhead).

If the engine cannot be installed or started, the bench says why and exits 1.

    python bench/docker_bench.py [--quick] [--jobs N] [--slots N]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _pool import HTCD, start_pool
from throughput_bench import count_terminated, stop

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "dockerd.sh"
IMAGE = "localhost/htcd-busybox:latest"
DOCKER_RUN_ANCHOR_S = 0.3  # the middle of 0.2-0.4 s
ANCHOR_SOURCE = "docker run of a trivial command, 0.2-0.4 s (notes: containers.md)"


def start_engine(directory: Path) -> str:
    """Install (when missing) and start a private dockerd; its endpoint.  Exits 1 saying why
    when it cannot."""
    install = subprocess.run(["bash", str(SCRIPT), "install"], capture_output=True, text=True, timeout=900)
    if install.returncode != 0:
        raise SystemExit(f"docker_bench: no Docker engine: {install.stderr.strip() or 'dockerd.sh install failed'}")
    start = subprocess.run(["bash", str(SCRIPT), "start", str(directory)], capture_output=True, text=True,
                           timeout=300)
    if start.returncode != 0:
        stop_engine(directory)
        raise SystemExit(f"docker_bench: dockerd cannot start: {start.stderr.strip()[-800:]}")
    return start.stdout.strip().splitlines()[-1]


def stop_engine(directory: Path) -> None:
    subprocess.run(["bash", str(SCRIPT), "stop", str(directory)], capture_output=True, timeout=120, check=False)


def engine_round_trip(endpoint: str, n: int) -> float:
    """Seconds for one container of /bin/true through the plugin's client: create, start, wait,
    read its state, remove (what the docker universe does per job, without htcd around it)."""
    from htcd_plugins.docker.engine import Engine

    engine = Engine(endpoint)
    body = {"Image": IMAGE, "Cmd": ["/bin/true"], "User": "65534:65534", "HostConfig": {"Init": True}}
    times = []
    for _ in range(n):
        t0 = time.monotonic()
        cid = engine.json("POST", "/containers/create", body)["Id"]
        engine.call("POST", f"/containers/{cid}/start")
        engine.json("POST", f"/containers/{cid}/wait", timeout=None)
        engine.json("GET", f"/containers/{cid}/json")
        engine.call("DELETE", f"/containers/{cid}", query={"force": 1})
        times.append(time.monotonic() - t0)
    times.sort()
    return times[len(times) // 2]


def run_cluster(root: Path, env: dict[str, str], name: str, head: str, jobs: int) -> float:
    """Submit ``jobs`` jobs; the seconds from submit to the last terminated event."""
    (root / f"{name}.sub").write_text(f"{head}executable = /bin/true\ntransfer_executable = false\n"
                                      f"log = {name}.log\nrequest_memory = 1\nqueue {jobs}\n")
    t0 = time.monotonic()
    sub = subprocess.run([*HTCD, "submit", f"{name}.sub"], env=env, cwd=root, capture_output=True, text=True)
    if sub.returncode != 0:
        raise SystemExit(f"docker_bench: htcd submit {name}.sub failed: {sub.stdout}{sub.stderr}")
    count_terminated(root / f"{name}.log", jobs, 1800)
    return time.monotonic() - t0


def held(env: dict[str, str]) -> str:
    out = subprocess.run([*HTCD, "q", "-hold", "-af", "HoldReason"], env=env, capture_output=True, text=True)
    return out.stdout.strip()


def measure(jobs: int, slots: int, endpoint: str) -> dict[str, float]:
    root = Path(tempfile.mkdtemp(prefix="htcd-dbench-"))
    knobs = [f"NUM_CPUS = {slots}", f"MEMORY = {slots * 256}", f"NUM_SLOTS = {slots}",
             "NEGOTIATOR_CYCLE_DELAY = 0", "NEGOTIATOR_INTERVAL = 5", "UPDATE_INTERVAL = 5",
             "MAX_JOBS_RUNNING = 10000", f"DOCKER_HOST = {endpoint}"]
    docker_head = f"universe = docker\ndocker_image = {IMAGE}\n"
    try:
        master, env = start_pool(root, knobs, ["status", "-af", "Name"], "pool")
        try:
            deadline = time.monotonic() + 60
            while "true" not in subprocess.run([*HTCD, "status", "-af", "HasDocker"], env=env, capture_output=True,
                                               text=True).stdout:
                if time.monotonic() > deadline:
                    raise SystemExit("docker_bench: the startd does not advertise HasDocker")
                time.sleep(0.2)
            for name, head in (("warm-vanilla", ""), ("warm-docker", docker_head)):
                try:
                    run_cluster(root, env, name, head, 1)
                except SystemExit as exc:
                    raise SystemExit(f"{exc}; held: {held(env) or 'none'}") from None
            vanilla = run_cluster(root, env, "vanilla", "", jobs)
            docker = run_cluster(root, env, "docker", docker_head, jobs)
        finally:
            stop(master)
        return {"vanilla_s": vanilla, "docker_s": docker}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--slots", type=int, default=8)
    args = ap.parse_args()
    jobs = args.jobs or (40 if args.quick else 200)
    engine_dir = Path(tempfile.mkdtemp(prefix="htcd-dockerd-", dir="/tmp"))
    try:
        endpoint = start_engine(engine_dir)
        direct = engine_round_trip(endpoint, 5 if args.quick else 10)
        m = measure(jobs, args.slots, endpoint)
    finally:
        stop_engine(engine_dir)
        shutil.rmtree(engine_dir, ignore_errors=True)
    v_rate, d_rate = jobs / m["vanilla_s"], jobs / m["docker_s"]
    overhead = args.slots * (m["docker_s"] - m["vanilla_s"]) / jobs
    print(f"docker universe throughput: {jobs} jobs of /bin/true per universe, one execute point with "
          f"{args.slots} slots, private dockerd, image {IMAGE}")
    print(f"  vanilla   {m['vanilla_s']:7.2f} s   {v_rate:6.2f} jobs/s")
    print(f"  docker    {m['docker_s']:7.2f} s   {d_rate:6.2f} jobs/s   ({100 * d_rate / v_rate:.0f}% of vanilla)")
    print(f"  container overhead per job: {overhead:.3f} s of slot time "
          f"({args.slots} slots x {m['docker_s'] - m['vanilla_s']:.2f} s / {jobs} jobs; "
          f"anchor: docker run ~{DOCKER_RUN_ANCHOR_S} s)")
    print(f"  one container straight through the engine client (create, start, wait, rm), median: {direct:.3f} s")
    figures = {
        "docker_jobs_per_s": {"value": round(d_rate, 2), "unit": "jobs/s", "anchor": round(v_rate, 2),
                              "anchor_source": "vanilla jobs/s, same pool, same run", "goal": None,
                              "better": "higher"},
        "vanilla_jobs_per_s": {"value": round(v_rate, 2), "unit": "jobs/s", "anchor": None, "anchor_source": "",
                               "goal": None, "better": "higher"},
        "container_overhead_s_per_job_per_slot": {"value": round(overhead, 3), "unit": "s",
                                                  "anchor": DOCKER_RUN_ANCHOR_S, "anchor_source": ANCHOR_SOURCE,
                                                  "goal": None, "better": "lower"},
        "engine_round_trip_s": {"value": round(direct, 3), "unit": "s", "anchor": DOCKER_RUN_ANCHOR_S,
                                "anchor_source": ANCHOR_SOURCE, "goal": None, "better": "lower"},
    }
    print(json.dumps({"bench": "docker_bench", "figures": figures}))


if __name__ == "__main__":
    main()

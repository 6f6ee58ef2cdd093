"""Throughput and per-job memory of one personal pool, with a profile of where the time goes.

1. Throughput: a pool with NUM_CPUS=32 as one partitionable slot; N jobs of ``/bin/true`` in one
   cluster (2,000; ``--quick`` 500).  The clock starts before ``htcd submit`` and stops when the
   event log holds N terminated events.  Goal >= 200 jobs/s with EXECUTE on disk, even a disk
   that does only ~1,000 create+rename per second, and >= 500 jobs/s with EXECUTE on a tmpfs
   (``--execute-tmpfs``: a tmpfs mounted for the run as root, else a directory in /dev/shm);
   anchor: one HTCondor schedd starts ~50 jobs/s.  The EXECUTE directory's file system is
   measured in the same run, before and after the jobs (disks here vary by the minute): N small
   files created and renamed, per second.  The load average is printed beside the figures (other
   work on the machine lowers the absolute rates); the startd's CPU seconds per job and the share
   of its loop's time in each sandbox step do not depend on it.  Meanwhile every daemon runs a sampling profiler (below) and afterwards each is
   asked for its DaemonCore statistics (``DC:2``: duty cycle, per-command runtimes); the CPU
   seconds each daemon spent per job come from /proc, and the schedd's count of job-queue
   commits from the line it logs when it stops (SchedLog).
2. Memory per running job: a pool with NUM_CPUS=200 (``--quick`` 50); N ``sleep`` jobs submitted
   with Requirements no slot meets, the schedd's and the startd's RSS measured, the Requirements
   edited (qedit) so that they match, and RSS measured again
   once all N run.  AP memory per running job = schedd RSS delta / N (goal <= 100 KB; anchor:
   ~386 KB per HTCondor 8.4 shadow process); EP overhead per running job = startd RSS delta / N, in
   MB (the job's own processes not counted).

The profiler: the bench puts a ``sitecustomize.py`` on the daemons' PYTHONPATH which, in a process
that is an htcd daemon and only when ``HTCD_BENCH_PROFILE_DIR`` is set, starts a thread sampling
the main thread's stack (``sys._current_frames``) every 5 ms and writes the counts when the daemon
exits.  Samples where the loop waits in ``select`` are counted as idle.  Nothing of it is in htcd.

    python bench/throughput_bench.py [--quick] [--jobs N] [--running N] [--no-memory] [--no-profile]
                                     [--execute-tmpfs]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _sampler
from _pool import HTCD, daemon_pid, start_pool

THROUGHPUT_ANCHOR = 50.0
GOAL_DISK, GOAL_TMPFS = 200.0, 500.0  # jobs/s with EXECUTE on a slow disk / on a tmpfs
CREATE_RENAME_FILES = 1000
# the startd's sandbox steps, as the sampler names them: the share of its loop's samples in each
STEPS = {"prepare": ("htcd/starter/starter.py:_prepare", "htcd/starter/starter.py:_make_files"),
         "write_state": ("htcd/starter/sandbox.py:write_state",),
         "spawn": ("subprocess.py:_execute_child",),
         "cleanup": ("htcd/starter/starter.py:cleanup",)}
SHADOW_ANCHOR_KB = 386.0
DAEMONS = ("schedd", "startd", "negotiator", "collector")



def pool_knobs(cpus: int) -> list[str]:
    return [f"NUM_CPUS = {cpus}", f"MEMORY = {cpus * 256}", "NUM_SLOTS = 1", "NUM_SLOTS_TYPE_1 = 1",
            "SLOT_TYPE_1 = 100%", "SLOT_TYPE_1_PARTITIONABLE = True", "NEGOTIATOR_CYCLE_DELAY = 0",
            "NEGOTIATOR_INTERVAL = 5", "UPDATE_INTERVAL = 5", "MAX_JOBS_RUNNING = 10000"]


def stop(master: subprocess.Popen[bytes]) -> None:
    master.send_signal(signal.SIGTERM)
    try:
        master.wait(120)
    except subprocess.TimeoutExpired:
        for p in psutil.Process(master.pid).children(recursive=True):
            p.kill()
        master.kill()
        master.wait()


def schedd_ready(env: dict[str, str]) -> None:
    """The slots are advertised (start_pool waited for them); wait for the schedd too, so the
    first submit does not race its start-up."""
    deadline = time.monotonic() + 60
    while subprocess.run([*HTCD, "q", "-totals"], env=env, capture_output=True).returncode != 0:
        if time.monotonic() > deadline:
            raise SystemExit("the schedd did not come up")
        time.sleep(0.2)


def submit(env: dict[str, str], cwd: Path, name: str) -> None:
    done = subprocess.run([*HTCD, "submit", name], env=env, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"htcd submit {name} failed: {done.stdout}{done.stderr}")


def count_terminated(log: Path, jobs: int, deadline_s: float) -> None:
    """Wait until the event log holds ``jobs`` terminated events, reading only what is new."""
    seen, offset, tail = 0, 0, ""
    deadline = time.monotonic() + deadline_s
    while seen < jobs:
        if log.exists():
            with open(log) as f:
                f.seek(offset)
                chunk = f.read()
                offset = f.tell()
            text = tail + chunk
            cut = text.rfind("\n")
            whole, tail = (text[:cut + 1], text[cut + 1:]) if cut >= 0 else ("", text)
            seen += len(re.findall(r"^005 \(", whole, re.MULTILINE))
        if time.monotonic() > deadline:
            raise SystemExit(f"only {seen} of {jobs} jobs finished in {deadline_s:.0f} s")
        time.sleep(0.05)


def dc_statistics(env: dict[str, str], kind: str, name: str) -> dict[str, object]:
    out = subprocess.run([*HTCD, "status", kind, "-direct", name, "-statistics", "DC:2", "-json"], env=env,
                         capture_output=True, text=True)
    if out.returncode != 0:
        return {}
    try:
        ads = json.loads(out.stdout)
    except ValueError:
        return {}
    return ads[0] if ads else {}


def create_rename_rate(directory: Path, files: int = CREATE_RENAME_FILES) -> float:
    """Small files created (written, closed) and renamed per second in ``directory``: the
    file operations a sandbox and its state file cost, as this file system does them now."""
    work = Path(tempfile.mkdtemp(prefix="rate-", dir=directory))
    try:
        t0 = time.perf_counter()
        for i in range(files):
            tmp = work / f"f{i}.new"
            with open(tmp, "w") as f:
                f.write("x" * 100)
            tmp.rename(work / f"f{i}")
        return files / (time.perf_counter() - t0)
    finally:
        shutil.rmtree(work, ignore_errors=True)


class Execute:
    """The EXECUTE directory: in the pool's directory (on its disk), or on a tmpfs mounted for the
    run (as root; else a directory in /dev/shm), unmounted and removed afterwards."""

    def __init__(self, root: Path, tmpfs: bool) -> None:
        self.path, self.mounted, self.shm = root / "execute", False, False
        self.kind = "disk"
        if not tmpfs:
            return
        self.path.mkdir()
        if os.geteuid() == 0 and subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1g,mode=0755", "htcd-execute",
                                                 str(self.path)], capture_output=True).returncode == 0:
            self.mounted, self.kind = True, "tmpfs (mounted for the run)"
            return
        self.path.rmdir()
        self.path, self.shm, self.kind = Path(tempfile.mkdtemp(prefix="htcd-execute-", dir="/dev/shm")), True, \
            "tmpfs (/dev/shm)"

    def ready(self) -> Path:
        self.path.mkdir(exist_ok=True)
        return self.path

    def close(self) -> None:
        if self.mounted:
            subprocess.run(["umount", str(self.path)], capture_output=True)
        if self.shm or self.mounted:
            shutil.rmtree(self.path, ignore_errors=True)


def throughput(jobs: int, cpus: int, profile: bool, tmpfs: bool = False) -> dict[str, object]:
    root = Path(tempfile.mkdtemp(prefix="htcd-tput-"))
    prof = root / "profile"
    prof.mkdir()
    site = root / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_sampler.sitecustomize(DAEMONS))
    execute = Execute(root, tmpfs)
    knobs = [*pool_knobs(cpus), f"EXECUTE = {execute.path}"]
    try:
        master, env = start_pool(root, knobs, ["status", "-af", "Name"], "pool")
        if profile:  # the daemons must be started with the sampler: restart the pool with it
            stop(master)
            shutil.rmtree(root / "local", ignore_errors=True)
            os.environ["PYTHONPATH"] = str(site)
            os.environ["HTCD_BENCH_PROFILE_DIR"] = str(prof)
            try:
                master, env = start_pool(root, knobs, ["status", "-af", "Name"], "pool")
            finally:
                del os.environ["PYTHONPATH"], os.environ["HTCD_BENCH_PROFILE_DIR"]
        schedd_ready(env)
        try:
            pids = {d: daemon_pid(master, d) for d in DAEMONS}
            cpu0 = {d: sum(psutil.Process(p).cpu_times()[:2]) for d, p in pids.items()}
            (root / "b.sub").write_text(f"executable = /bin/true\ntransfer_executable = false\nlog = b.log\n"
                                        f"request_memory = 1\nqueue {jobs}\n")
            rate_before = create_rename_rate(execute.ready())
            load_before = os.getloadavg()
            t0 = time.monotonic()
            submit(env, root, "b.sub")
            t_submit = time.monotonic() - t0
            count_terminated(root / "b.log", jobs, 1800)
            wall = time.monotonic() - t0
            cpu = {d: sum(psutil.Process(p).cpu_times()[:2]) - cpu0[d] for d, p in pids.items()}
            load_after = os.getloadavg()
            rate_after = create_rename_rate(execute.ready())
            hostname = subprocess.run([*HTCD, "status", "-schedd", "-af", "Name"], env=env, capture_output=True,
                                      text=True).stdout.split()[0]
            slot = subprocess.run([*HTCD, "status", "-af", "Name"], env=env, capture_output=True,
                                  text=True).stdout.split()[0]
            stats = {"schedd": dc_statistics(env, "-schedd", hostname), "startd": dc_statistics(env, "-startd", slot)}
        finally:
            stop(master)
        profiles = [json.loads(p.read_text()) for p in prof.glob("*.json")]
        return {"jobs": jobs, "wall_s": wall, "submit_s": t_submit, "jobs_per_s": jobs / wall, "cpu_s": cpu,
                "stats": stats, "profiles": profiles, "commits": queue_commits(root / "local" / "log" / "SchedLog"),
                "execute": execute.kind, "rate": (rate_before, rate_after), "load": (load_before, load_after)}
    finally:
        execute.close()
        shutil.rmtree(root, ignore_errors=True)


def queue_commits(log: Path) -> dict[str, int]:
    """The schedd's last "job queue: N commits of M job changes (K on the loop ...)" line."""
    found = re.findall(r"job queue: (\d+) commits of (\d+) job changes \((\d+) on the loop", log.read_text()
                       if log.exists() else "")
    if not found:
        return {}
    commits, changes, on_loop = map(int, found[-1])
    return {"commits": commits, "changes": changes, "on_loop": on_loop}


def rss(pid: int) -> int:
    return psutil.Process(pid).memory_info().rss


def memory(running: int) -> dict[str, float]:
    root = Path(tempfile.mkdtemp(prefix="htcd-mem-"))
    try:
        master, env = start_pool(root, pool_knobs(running), ["status", "-af", "Name"], "pool")
        schedd_ready(env)
        try:
            schedd, startd = daemon_pid(master, "schedd"), daemon_pid(master, "startd")
            (root / "s.sub").write_text("executable = /bin/sleep\narguments = 600\ntransfer_executable = false\n"
                                        f"request_memory = 1\nrequirements = TARGET.BenchGo =?= True\nqueue {running}\n")
            submit(env, root, "s.sub")
            time.sleep(3)  # let the queue settle (a benchmark, not a test)
            idle = {"schedd": rss(schedd), "startd": rss(startd)}
            t0 = time.monotonic()
            go = subprocess.run([*HTCD, "qedit", "-constraint", "true", "Requirements", "TARGET.Cpus > 0"], env=env,
                                capture_output=True, text=True)  # the jobs waited for a slot attribute: now they match
            if go.returncode != 0:
                raise SystemExit(f"htcd qedit failed: {go.stdout}{go.stderr}")
            deadline = time.monotonic() + 600
            while True:
                out = subprocess.run([*HTCD, "q", "-totals"], env=env, capture_output=True, text=True).stdout
                m = re.search(r"(\d+) running", out)
                if m and int(m.group(1)) >= running:
                    break
                if time.monotonic() > deadline:
                    raise SystemExit(f"the {running} jobs did not all start: {out}")
                time.sleep(0.5)
            ramp = time.monotonic() - t0
            time.sleep(3)
            busy = {"schedd": rss(schedd), "startd": rss(startd)}
        finally:
            stop(master)
        return {"running": running, "ramp_s": ramp,
                "schedd_idle_mb": idle["schedd"] / 2**20, "schedd_busy_mb": busy["schedd"] / 2**20,
                "startd_idle_mb": idle["startd"] / 2**20, "startd_busy_mb": busy["startd"] / 2**20,
                "ap_kb_per_job": (busy["schedd"] - idle["schedd"]) / 1024 / running,
                "ep_mb_per_job": (busy["startd"] - idle["startd"]) / 2**20 / running}
    finally:
        shutil.rmtree(root, ignore_errors=True)


# frames on every stack of a daemon's main thread: no news in a profile
_FRAME = (":<module>", "cli/main.py:main", "cli/daemons.py:run", "core.py:run_daemon", "core.py:guarded")


def print_profile(t: dict[str, object]) -> None:
    cpu = t["cpu_s"]
    jobs = t["jobs"]
    print("  CPU seconds per daemon over the run (and per 1,000 jobs):")
    for d, s in sorted(cpu.items(), key=lambda kv: -kv[1]):  # type: ignore[union-attr]
        print(f"    {d:<11} {s:7.2f} s   {1000 * s / jobs:6.2f} s/1000 jobs")
    for d, ad in t["stats"].items():  # type: ignore[union-attr]
        if not ad:
            continue
        print(f"  {d} DaemonCore: duty cycle {ad.get('DaemonCoreDutyCycle')}, longest block "
              f"{ad.get('DaemonCoreMaxBlockMs')} ms ({ad.get('DaemonCoreMaxBlockWhat', '')})")
        runtimes = sorted(((k.split("_", 1)[1][:-len("Runtime")], k.split("_", 1)[0][2:], v) for k, v in ad.items()
                           if k.startswith(("DCCommand_", "DCTimer_")) and k.endswith("Runtime")),
                          key=lambda kv: -float(kv[2]))
        for name, kind, v in runtimes[:6]:
            note = "  (a command that lasts as long as its job)" if name == "ACTIVATE_CLAIM" else ""
            print(f"      {kind.lower():<8}{name:<32} {float(v):8.2f} s{note}")
    for p in sorted(t["profiles"], key=lambda p: -p["busy"]):  # type: ignore[union-attr]
        total = max(1, p["busy"] + p["idle"])
        print(f"  {p['daemon']}: busy in {100 * p['busy'] / total:.0f}% of {total} samples; "
              "top functions by own time / with callees:")
        busy = max(1, p["busy"])
        for k, n in list(p["self"].items())[:8]:
            print(f"      self {100 * n / busy:5.1f}%  {k}")
        for k, n in [kv for kv in p["cum"].items() if "htcd/" in kv[0] and not kv[0].endswith(_FRAME)][:8]:
            print(f"      cum  {100 * n / busy:5.1f}%  {k}")


def step_shares(profiles: list[dict[str, object]]) -> dict[str, float]:
    """The share of the startd loop's busy samples in each sandbox step (with callees)."""
    for p in profiles:
        if p["daemon"] != "startd":
            continue
        busy = max(1, int(p["busy"]))  # type: ignore[call-overload]
        cum: dict[str, int] = p["cum"]  # type: ignore[assignment]
        return {step: sum(n for k, n in cum.items() if k.endswith(names)) / busy for step, names in STEPS.items()}
    return {}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--cpus", type=int, default=32)
    ap.add_argument("--running", type=int, default=None)
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--execute-tmpfs", action="store_true", help="EXECUTE on a tmpfs (mounted as root, else /dev/shm)")
    args = ap.parse_args()
    jobs = args.jobs or (500 if args.quick else 2000)
    running = args.running or (50 if args.quick else 200)
    t = throughput(jobs, args.cpus, not args.no_profile, args.execute_tmpfs)
    goal = GOAL_TMPFS if args.execute_tmpfs else GOAL_DISK
    rates: tuple[float, float] = t["rate"]  # type: ignore[assignment]
    loads: tuple[tuple[float, ...], tuple[float, ...]] = t["load"]  # type: ignore[assignment]
    rate = sum(rates) / 2
    print(f"throughput: {jobs} jobs of /bin/true, one cluster, personal pool with NUM_CPUS={args.cpus} "
          f"(one partitionable slot), EXECUTE on {t['execute']}")
    print(f"  submit took        {t['submit_s']:.2f} s")
    print(f"  submit -> last end {t['wall_s']:.2f} s")
    print(f"  throughput         {t['jobs_per_s']:.1f} jobs/s   (goal >= {goal:.0f} on {t['execute']}; anchor: "
          f"HTCondor schedd ~{THROUGHPUT_ANCHOR:.0f} job starts/s)")
    print(f"  EXECUTE's file system: {rates[0]:.0f} create+rename/s before the jobs, {rates[1]:.0f} after "
          f"({CREATE_RENAME_FILES} files each)")
    print(f"  load average       {loads[0][0]:.2f} before, {loads[1][0]:.2f} at the end (1 min; "
          f"{os.cpu_count()} CPUs)")
    startd_ms = 1000 * float(t["cpu_s"]["startd"]) / jobs  # type: ignore[index]
    print(f"  startd CPU         {startd_ms:.2f} ms per job")
    shares = step_shares(t["profiles"])  # type: ignore[arg-type]
    if shares:
        print("  startd loop time in the sandbox steps: " +
              ", ".join(f"{k} {100 * v:.1f}%" for k, v in shares.items()))
    print_profile(t)
    figures: dict[str, dict[str, object]] = {
        "jobs_per_s": {"value": round(float(t["jobs_per_s"]), 2), "unit": "jobs/s", "anchor": THROUGHPUT_ANCHOR,
                       "anchor_source": "HTCondor: one schedd starts ~50 jobs/s", "goal": goal,
                       "better": "higher"},
        "execute_create_rename_per_s": {"value": round(rate), "unit": "files/s", "anchor": None,
                                        "anchor_source": "", "goal": None, "better": "higher"},
        "load_average": {"value": round(loads[1][0], 2), "unit": "runnable", "anchor": None, "anchor_source": "",
                         "goal": None, "better": "lower"},
    }
    for k, v in shares.items():
        figures[f"startd_loop_share_{k}"] = {"value": round(v, 4), "unit": "fraction", "anchor": None,
                                             "anchor_source": "", "goal": None, "better": "lower"}
    commits: dict[str, int] = t["commits"]  # type: ignore[assignment]
    if commits:
        print(f"  schedd job queue: {commits['commits']} commits of {commits['changes']} job changes "
              f"({commits['on_loop']} on the loop, before a claim ran its next job): "
              f"{commits['commits'] / jobs:.2f} commits per job")
        figures["schedd_commits_per_job"] = {"value": round(commits["commits"] / jobs, 3), "unit": "commits",
                                             "anchor": None, "anchor_source": "", "goal": None, "better": "lower"}
    duty = t["stats"].get("schedd", {}).get("DaemonCoreDutyCycle")  # type: ignore[union-attr]
    if duty is not None:
        figures["schedd_duty_cycle"] = {"value": round(float(duty), 3), "unit": "fraction", "anchor": None,
                                        "anchor_source": "", "goal": None, "better": "lower"}
    for d, s in t["cpu_s"].items():  # type: ignore[union-attr]
        figures[f"{d}_cpu_ms_per_job"] = {"value": round(1000 * s / jobs, 3), "unit": "ms", "anchor": None,
                                          "anchor_source": "", "goal": None, "better": "lower"}
    if not args.no_memory:
        m = memory(running)
        print(f"memory: {running} running sleep jobs on NUM_CPUS={running} (all started in {m['ramp_s']:.1f} s)")
        print(f"  schedd RSS {m['schedd_idle_mb']:.1f} MB -> {m['schedd_busy_mb']:.1f} MB: "
              f"{m['ap_kb_per_job']:.1f} KB per running job (goal <= 100 KB; anchor: HTCondor 8.4 shadow "
              f"~{SHADOW_ANCHOR_KB:.0f} KB)")
        print(f"  startd RSS {m['startd_idle_mb']:.1f} MB -> {m['startd_busy_mb']:.1f} MB: "
              f"{m['ep_mb_per_job']:.3f} MB per running job (the starter and the claim, not the job)")
        figures["ap_kb_per_running_job"] = {"value": round(m["ap_kb_per_job"], 1), "unit": "KB",
                                            "anchor": SHADOW_ANCHOR_KB,
                                            "anchor_source": "HTCondor 8.4: ~386 KB per shadow process",
                                            "goal": 100.0, "better": "lower"}
        figures["ep_mb_per_running_job"] = {"value": round(m["ep_mb_per_job"], 3), "unit": "MB", "anchor": None,
                                            "anchor_source": "", "goal": None, "better": "lower"}
    print(json.dumps({"bench": "throughput_bench", "figures": figures}))


if __name__ == "__main__":
    main()

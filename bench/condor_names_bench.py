"""What a ``condor_*`` name costs: the wall time of a one-job ``condor_q`` through the installed
wrapper (interpreter start-up included) beside ``htcd q`` run as the console script, and the bare
interpreter's start-up as the floor.  The goal is 150 ms per call on this machine.

A personal pool (bench/_pool.py) holds one idle job; each command runs N times, the median is
reported.  ``python -X importtime`` of the condor_q path lists the heaviest imports.

    python bench/condor_names_bench.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import _pool

GOAL_MS = 150.0


def median_ms(cmd: list[str], env: dict[str, str], n: int, cwd: Path) -> tuple[float, float]:
    """(median wall ms, median CPU ms of the command itself): on a shared machine the wall time
    includes waiting for a core, the CPU time does not."""
    walls, cpus = [], []
    for _ in range(n):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        r = subprocess.run(cmd, env=env, capture_output=True, cwd=cwd)
        walls.append((time.perf_counter() - t0) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
        if r.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed: {r.stderr.decode()}")
    return statistics.median(walls), statistics.median(cpus)


def heaviest_imports(cmd: list[str], env: dict[str, str], cwd: Path, top: int = 8) -> list[tuple[int, str]]:
    shebang = Path(cmd[0]).read_text().splitlines()[0][2:].split()  # the wrapper's interpreter and flags
    r = subprocess.run([*shebang, "-X", "importtime", *cmd], env=env, capture_output=True, text=True, cwd=cwd)
    rows = []
    for line in r.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            _, cumulative, name = (p.strip() for p in line[len("import time:"):].split("|"))
            if cumulative.isdigit():
                rows.append((int(cumulative), name))
    return sorted(rows, reverse=True)[:top]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    opts = ap.parse_args()
    n = 7 if opts.quick else 25
    # what an install does (pip compiles the wheel's modules): with PYTHONDONTWRITEBYTECODE set,
    # an editable checkout would otherwise compile htcd anew at every call
    import htcd_plugins

    import htcd
    for pkg in (htcd, htcd_plugins):
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(pkg.__file__).parent)],
                       check=True, capture_output=True)
    root = Path(tempfile.mkdtemp(prefix="condor-names-bench-"))
    master, env = _pool.start_pool(root, [], ["q", "-totals"], "schedd")
    try:
        prefix = root / "prefix"
        subprocess.run([*_pool.HTCD, "install-condor-names", "--prefix", str(prefix), "--force"],
                       env=env, check=True, capture_output=True)
        env = dict(env, PATH=f"{prefix / 'bin'}{os.pathsep}{env.get('PATH', '')}")
        jobs = root / "jobs"
        jobs.mkdir()
        (jobs / "job.sub").write_text("executable = /bin/true\nrequirements = false\nqueue\n")
        subprocess.run([str(prefix / "bin" / "condor_submit"), "job.sub"], env=env, cwd=jobs, check=True,
                       capture_output=True)
        htcd_script = str(Path(sys.executable).with_name("htcd"))
        cases = {
            "python_startup_ms": [sys.executable, "-c", "pass"],
            "python_nosite_ms": [sys.executable, "-S", "-c", "pass"],
            "htcd_q_ms": [htcd_script, "q"],
            "condor_q_ms": [str(prefix / "bin" / "condor_q")],
            "condor_q_af_ms": [str(prefix / "bin" / "condor_q"), "-af", "ClusterId", "ProcId"],
            "condor_version_ms": [str(prefix / "bin" / "condor_version")],
        }
        figures: dict[str, dict[str, object]] = {}
        print(f"median of {n} runs, one job in the queue (goal {GOAL_MS:.0f} ms wall per condor_q); "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        print(f"  {'':22s} {'wall':>9s} {'cpu':>9s}")
        for name, cmd in cases.items():
            wall, cpu = median_ms(cmd, env, n, jobs)
            shown = " ".join(Path(c).name if i == 0 else c for i, c in enumerate(cmd))
            print(f"  {name:22s} {wall:6.1f} ms {cpu:6.1f} ms   {shown}")
            anchor = figures["htcd_q_ms"]["value"] if name.startswith("condor_q") else None
            figures[name] = {"value": round(wall, 1), "unit": "ms", "anchor": anchor,
                             "anchor_source": "htcd q (console script) in the same run" if anchor else "",
                             "goal": GOAL_MS if name.startswith("condor_q") else None, "better": "lower"}
            figures[name.replace("_ms", "_cpu_ms")] = {
                "value": round(cpu, 1), "unit": "ms", "anchor": None, "anchor_source": "",
                "goal": GOAL_MS if name.startswith("condor_q") else None, "better": "lower"}
        print("heaviest imports of condor_q (cumulative us):")
        for us, mod in heaviest_imports([str(prefix / "bin" / "condor_q")], env, jobs):
            print(f"  {us:8d}  {mod}")
    finally:
        _pool.stop_pool(master, root)
    print(json.dumps({"bench": "condor_names", "figures": figures}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

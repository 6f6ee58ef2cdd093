"""Config loading: htcd.config beside HTCondor's own config code (the htcondor2 wheel), same run.

The workload is a generated site config: a 2,000-line top file and 50 files in LOCAL_CONFIG_DIR
with long ``$(X)`` chains, self-appends (``L = $(L) x``), ``if``/``elif``/``else``, ``use``
templates and subsystem prefixes.  One "load" is a full read of every source plus a lookup of
every knob the files define (expanded).  HTCondor's side runs in a subprocess (a config error
there exits the process) and does ``htcondor2.reload_config()`` plus ``param[knob]`` per knob.
Both sides' expanded values are compared first, so the two do the same work.

Also measured: wall time of ``htcd config_val LOG`` (a fresh interpreter each run), with a
typical pool config and with the big one; and the cost of the param table, which holds every
knob of HTCondor's (over 1,300 rows, parsed on every start): the cold parse in-process, and
``htcd config_val COLLECTOR_HOST`` with no config beside the same lookup through HTCondor's own
code (``import htcondor2; param[...]`` in a fresh interpreter) and a bare interpreter start.
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
import textwrap
import time

from htcd.config import load

TOP_LINES = 2000
LOCAL_FILES = 50
LOAD_GOAL_RATIO = 1.0  # htcd at least as fast as HTCondor
CONFIG_VAL_GOAL_MS = 150.0


def _block(prefix: str, i: int) -> list[str]:
    """About 20 lines of site-config shapes, numbered by ``i`` so every knob is distinct."""
    p = f"{prefix}{i}"
    return [
        f"# block {p}",
        f"{p}_BASE = /srv/{prefix.lower()}/{i}",
        f"{p}_A = $({p}_BASE)/a",
        f"{p}_B = $({p}_A)/b",
        f"{p}_C = $({p}_B)/c:$({p}_A)",
        f"{p}_D = $({p}_C)/d $(LOCAL_DIR)",
        f"{p}_LIST = first",
        f"{p}_LIST = $({p}_LIST) second_{i}",
        f"{p}_LIST = $({p}_LIST), $({p}_D)",
        f"{p}_N = $INT({i} * 2 + 1)",
        f"if defined {p}_BASE",
        f"  {p}_FLAG = true",
        "elif version >= 9.0",
        f"  {p}_FLAG = maybe",
        "else",
        f"  {p}_FLAG = false",
        "endif",
        f"SCHEDD.{p}_A = $({p}_BASE)/schedd",
        f"STARTD.{p}_EXPR = (TARGET.Memory > $({p}_N)) && $(START)",
        f"{p}_DEFAULTED = $({p}_MISSING:fallback_{i})",
    ]


def write_site(root: str) -> tuple[str, list[str]]:
    """Write the site config under ``root``; (top file, every knob name the files define)."""
    confd = os.path.join(root, "config.d")
    os.makedirs(confd, exist_ok=True)
    top = [f"LOCAL_DIR = {root}/local", f"LOCAL_CONFIG_DIR = {confd}", "use ROLE : Personal",
           "use POLICY : Always_Run_Jobs", "CONDOR_HOST = 127.0.0.1", "MY_PATH = $(LOCAL_DIR)"]
    i = 0
    while len(top) < TOP_LINES:
        top += _block("T", i)
        top.append(f"MY_PATH = $(MY_PATH):$(T{i}_A)")
        i += 1
    with open(os.path.join(root, "top.conf"), "w") as f:
        f.write("\n".join(top) + "\n")
    for n in range(LOCAL_FILES):
        lines = [f"# local file {n}"]
        for k in range(2):
            lines += _block(f"L{n}_", k)
        lines += [f"T{n}_LIST = $(T{n}_LIST), from_local_{n}", f"MY_PATH = $(MY_PATH):/local/{n}"]
        with open(os.path.join(confd, f"{n:02d}-site.conf"), "w") as f:
            f.write("\n".join(lines) + "\n")
    env = {"HTCD_CONFIG": os.path.join(root, "top.conf"), "HOME": root}
    cfg = load("SCHEDD", env=env)
    names = sorted({e.name for e in cfg.definitions() if "." not in e.name and e.source.startswith(root)})
    return os.path.join(root, "top.conf"), names


def bench_htcd(top: str, names: list[str], seconds: float) -> tuple[float, dict[str, str]]:
    env = {"HTCD_CONFIG": top, "HOME": os.path.dirname(top)}
    values: dict[str, str] = {}
    n = 0
    start = time.perf_counter()
    while True:
        cfg = load("SCHEDD", env=env)
        values = {k: cfg.get(k) or "" for k in names}
        n += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds and n >= 3:
            return n / elapsed, values


_CONDOR_SIDE = textwrap.dedent("""\
    import json, os, sys, time
    os.environ["CONDOR_CONFIG"] = "/dev/null"
    import htcondor2
    names = json.load(sys.stdin)
    os.environ["CONDOR_CONFIG"] = sys.argv[1]
    htcondor2.set_subsystem("SCHEDD")
    seconds = float(sys.argv[2])

    def lookups():
        out = {}
        for k in names:
            try:
                out[k] = str(htcondor2.param[k])
            except KeyError:
                out[k] = ""
        return out

    htcondor2.reload_config()
    values = lookups()
    n = 0
    start = time.perf_counter()
    while True:
        htcondor2.reload_config()
        lookups()
        n += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds and n >= 3:
            break
    print(json.dumps({"rate": n / elapsed, "values": values}))
""")


def bench_htcondor(top: str, names: list[str], seconds: float) -> tuple[float, dict[str, str]] | None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("_CONDOR_", "_HTCD_"))}
    env.update({"TZ": "UTC", "HOME": os.path.dirname(top)})
    try:
        proc = subprocess.run([sys.executable, "-c", _CONDOR_SIDE, top, str(seconds)], input=json.dumps(names),
                              capture_output=True, text=True, env=env, timeout=600)
    except subprocess.TimeoutExpired:
        print("htcondor2 side: timed out", file=sys.stderr)
        return None
    if proc.returncode != 0:
        print(f"htcondor2 side failed ({proc.returncode}): {proc.stderr.strip()[-500:]}", file=sys.stderr)
        return None
    out = json.loads(proc.stdout)
    return out["rate"], out["values"]


def config_val_ms(top: str | None, runs: int) -> float:
    """Median wall time of ``htcd config_val LOG`` in a fresh interpreter."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("_CONDOR_", "_HTCD_"))}
    env.pop("CONDOR_CONFIG", None)
    with tempfile.TemporaryDirectory() as home:
        if top is None:
            top = os.path.join(home, "pool.conf")
            with open(top, "w") as f:
                f.write(f"use ROLE : Personal\nCONDOR_HOST = 127.0.0.1\nCOLLECTOR_HOST = $(CONDOR_HOST):0\n"
                        f"LOCAL_DIR = {home}/local\nNUM_CPUS = 2\n")
        env.update({"HTCD_CONFIG": top, "HOME": home})
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "htcd", "config_val", "LOG"], env=env, check=True,
                           capture_output=True)
            times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def table_parse_ms(rounds: int) -> tuple[float, int]:
    """Median cold parse of the whole param table (every row made a Param, as -dump or a daemon's
    reconfig needs it), and its row count."""
    from htcd.config import _table

    times = []
    for _ in range(rounds):
        _table._reset()
        t = time.perf_counter()
        rows = len(_table.table()) + len(_table.subsystem_rows())
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), rows


def _run_ms(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall ms, CPU ms: user + system) of one run; CPU time shows the cost when the machine is busy."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(argv, env=env, capture_output=True, check=False)
    wall = (time.perf_counter() - t) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000


def lookup_ms(rounds: int) -> float:
    """Median cold read of the table plus one row, as ``config_val KNOB`` needs it."""
    from htcd.config import _table

    times = []
    for _ in range(rounds):
        _table._reset()
        t = time.perf_counter()
        _table.lookup("collector_host", "TOOL")
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def one_knob_ms(runs: int) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) ms of one knob with no config: htcd config_val ("htcd"), HTCondor's param
    through the wheel ("htcondor", absent without it), a bare interpreter ("python"); runs
    interleaved so load hits all alike."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("_CONDOR_", "_HTCD_"))}
    env.update({"HTCD_CONFIG": os.devnull, "CONDOR_CONFIG": os.devnull, "TZ": "UTC"})
    condor = [sys.executable, "-c", "import htcondor2; htcondor2.param.get('COLLECTOR_HOST')"]
    has_wheel = subprocess.run(condor, env=env, capture_output=True, check=False).returncode == 0
    argvs = {"htcd": [sys.executable, "-m", "htcd", "config_val", "COLLECTOR_HOST"],
             "python": [sys.executable, "-c", "pass"]}
    if has_wheel:
        argvs["htcondor"] = condor
    samples: dict[str, list[tuple[float, float]]] = {k: [] for k in argvs}
    for _ in range(runs):
        for k, argv in argvs.items():
            samples[k].append(_run_ms(argv, env))
    return {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in samples.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="shorter timing windows, fewer config_val runs")
    args = ap.parse_args()
    seconds = 3.0 if args.quick else 10.0
    runs = 8 if args.quick else 20
    figures: dict[str, dict[str, object]] = {}
    src = "htcondor2 25.14.1 (HTCondor's C++ config code via Python bindings), same run"
    with tempfile.TemporaryDirectory() as root:
        top, names = write_site(root)
        with open(top) as f:
            top_lines = sum(1 for _ in f)
        print(f"site config: {top_lines} lines in the top file, {LOCAL_FILES} files in config.d, "
              f"{len(names)} knobs looked up per load")
        mine, my_values = bench_htcd(top, names, seconds)
        theirs = bench_htcondor(top, names, seconds)
        if theirs is not None:
            differ = [k for k in names if my_values[k] != theirs[1].get(k, "")]
            print(f"values agree on {len(names) - len(differ)}/{len(names)} knobs"
                  + (f" (differ: {', '.join(differ[:5])}...)" if differ else ""))
        big_ms = config_val_ms(top, runs)
        small_ms = config_val_ms(None, runs)
    parse_ms, table_rows = table_parse_ms(20 if args.quick else 100)
    row_ms = lookup_ms(20 if args.quick else 100)
    one = one_knob_ms(runs)
    knob_ms, knob_cpu = one["htcd"]
    condor_knob_ms, condor_cpu = one.get("htcondor", (None, None))
    bare_ms, bare_cpu = one["python"]
    anchor = theirs[0] if theirs else None
    print(f"{'figure':<22}{'htcd':>12}{'HTCondor':>12}{'goal':>12}")
    print(f"{'loads_per_s':<22}{mine:>12.2f}{(f'{anchor:.2f}' if anchor else 'n/a'):>12}{'>= HTCondor':>12}")
    ratio = mine / anchor if anchor else None
    print(f"{'load_ratio':<22}{(f'{ratio:.2f}' if ratio else 'n/a'):>12}{'1.00':>12}{'>= 1.00':>12}")
    print(f"{'config_val_ms':<22}{small_ms:>12.1f}{'':>12}{'< 150':>12}   (typical pool config, median of {runs})")
    print(f"{'config_val_big_ms':<22}{big_ms:>12.1f}{'':>12}{'':>12}   (the big site config, median of {runs})")
    print(f"{'table_parse_ms':<22}{parse_ms:>12.2f}{'':>12}{'':>12}   (cold parse of the param table, "
          f"{table_rows} rows)")
    print(f"{'table_lookup_ms':<22}{row_ms:>12.2f}{'':>12}{'':>12}   (cold read of the table and one row, "
          f"as config_val KNOB needs)")
    print(f"{'one_knob_ms':<22}{knob_ms:>12.1f}{(f'{condor_knob_ms:.1f}' if condor_knob_ms else 'n/a'):>12}"
          f"{'< 150':>12}   (config_val COLLECTOR_HOST, no config; HTCondor: import htcondor2 + param)")
    print(f"{'one_knob_cpu_ms':<22}{knob_cpu:>12.1f}{(f'{condor_cpu:.1f}' if condor_cpu else 'n/a'):>12}{'':>12}"
          f"   (the same, user + system CPU: what a busy machine does not inflate)")
    print(f"{'python_start_ms':<22}{bare_ms:>12.1f}{bare_ms:>12.1f}{'':>12}   (python -c pass, the floor of both; "
          f"CPU {bare_cpu:.1f})")
    figures["loads_per_s"] = {"value": round(mine, 2), "unit": "loads_per_second",
                              "anchor": round(anchor, 2) if anchor else None, "anchor_source": src,
                              "goal": round(anchor, 2) if anchor else None, "better": "higher"}
    figures["load_ratio"] = {"value": round(ratio, 3) if ratio else None, "unit": "ratio", "anchor": 1.0,
                             "anchor_source": src, "goal": LOAD_GOAL_RATIO, "better": "higher"}
    figures["config_val_ms"] = {"value": round(small_ms, 1), "unit": "ms", "anchor": None,
                                "anchor_source": "htcd config_val LOG, typical pool config, median wall time",
                                "goal": CONFIG_VAL_GOAL_MS, "better": "lower"}
    figures["config_val_big_ms"] = {"value": round(big_ms, 1), "unit": "ms", "anchor": None,
                                    "anchor_source": "htcd config_val LOG, the bench's big site config",
                                    "goal": None, "better": "lower"}
    figures["table_parse_ms"] = {"value": round(parse_ms, 2), "unit": "ms", "anchor": None,
                                 "anchor_source": f"cold parse of htcd's param table ({table_rows} rows: HTCondor's "
                                                  "knobs and htcd's), median", "goal": None, "better": "lower"}
    figures["table_lookup_ms"] = {"value": round(row_ms, 2), "unit": "ms", "anchor": None,
                                  "anchor_source": "cold read of the param table and one row, median", "goal": None,
                                  "better": "lower"}
    wheel_src = "import htcondor2 + param['COLLECTOR_HOST'] in a fresh interpreter, no config, same run"
    figures["one_knob_ms"] = {"value": round(knob_ms, 1), "unit": "ms",
                              "anchor": round(condor_knob_ms, 1) if condor_knob_ms else None,
                              "anchor_source": wheel_src, "goal": CONFIG_VAL_GOAL_MS, "better": "lower"}
    figures["one_knob_ratio"] = {"value": round(knob_ms / condor_knob_ms, 3) if condor_knob_ms else None,
                                 "unit": "ratio", "anchor": 1.0, "anchor_source": wheel_src, "goal": None,
                                 "better": "lower"}
    figures["one_knob_cpu_ms"] = {"value": round(knob_cpu, 1), "unit": "ms",
                                  "anchor": round(condor_cpu, 1) if condor_cpu else None,
                                  "anchor_source": wheel_src + " (user + system CPU)", "goal": None,
                                  "better": "lower"}
    figures["python_start_ms"] = {"value": round(bare_ms, 1), "unit": "ms", "anchor": None,
                                  "anchor_source": "python -c pass, the same interpreter", "goal": None,
                                  "better": "lower"}
    print(json.dumps({"bench": "config_bench", "figures": figures}))


if __name__ == "__main__":
    main()

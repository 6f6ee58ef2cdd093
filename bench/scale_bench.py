"""A large pool on one machine: the scheduling plane at full size, with simulated jobs.

One central manager (a master with the collector and the negotiator), N access points (a master
and a schedd each) and K execute points (a master and a startd each, with S static slots, or one
partitionable slot of S cores with ``--partitionable``), all on loopback with their own
LOCAL_DIR.  The startds run ``universe = simulated`` jobs (``STARTD_SIMULATED_JOBS = true``,
plugins/htcd_plugins/simulated.py): a job "runs" for its SimulatedRuntime inside the starter
with no process, so 20,000 running jobs cost no 20,000 processes, while the collector, the
negotiator, the schedds, their shadows and the claims (one TCP connection each), the durable
job queues, the event log and the accounting do all their real work over the real protocol.

The bench submits K x S jobs (one cluster per schedd), each running ``--runtime`` seconds, and
measures:

- slots advertised in the collector; matched (Claimed) and running at the peak;
- time to fill the pool (submit -> every job running) and to drain it (-> every job terminated);
- the negotiator's cycle time (``LastNegotiationCycleDuration0``) at that size;
- per running job at the AP: the schedd's RSS growth from its idle queue to the full pool, its
  open descriptors and TCP connections; the same per claimed slot at the EP;
- the collector's RSS per ad;
- CPU seconds per job of each daemon over the run.

Anchors (HTCondor): "slots in one pool: 10s of thousands; 8.4's goal 200k" (goal here 20,000
slots running simulated jobs) and "running jobs per AP: ~14,000, limited by ports; 500 KB per
shadow" (goal 20,000 at <= 50 KB each).  Start small and grow: the machine is shared.

    python bench/scale_bench.py [--quick] [--startds K] [--slots S] [--schedds N] [--runtime SEC]
                                [--partitionable] [--keep]
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

HTCD = [sys.executable, "-m", "htcd"]
SLOTS_ANCHOR = 20000  # "10s of thousands" in one pool (HTCondor); the goal is 20,000 running
AP_JOBS_ANCHOR = 14000  # HTCondor: ~14,000 running jobs per AP, limited by ports
SHADOW_KB_ANCHOR = 500.0  # HTCondor: ~500 KB per shadow process
AP_KB_GOAL = 50.0
AP_JOBS_GOAL = 20000


class Node:
    """One master with some daemons, its own LOCAL_DIR and config file."""

    def __init__(self, root: Path, name: str, knobs: list[str]) -> None:
        self.dir = root / name
        self.dir.mkdir(parents=True)
        self.name = name
        self.config = self.dir / "htcd_config"
        self.config.write_text("\n".join([f"LOCAL_DIR = {self.dir / 'local'}", *knobs]) + "\n")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("_CONDOR_", "_HTCD_", "CONDOR_CONFIG"))}
        self.env["HTCD_CONFIG"] = str(self.config)
        self.master: subprocess.Popen[bytes] | None = None

    def start(self) -> Node:
        self.master = subprocess.Popen([*HTCD, "master", "-f"], env=self.env, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return self

    def htcd(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*HTCD, *args], env=self.env, capture_output=True, text=True, cwd=cwd, timeout=300)

    def pid(self, daemon: str) -> int | None:
        if self.master is None:
            return None
        for child in psutil.Process(self.master.pid).children():
            try:
                if child.cmdline()[1:4] == ["-m", "htcd", daemon]:
                    return child.pid
            except psutil.Error:
                continue
        return None

    def signal_stop(self) -> None:
        """Ask the master to stop (graceful); ``stop`` then waits for it."""
        if self.master is not None and self.master.poll() is None:
            self.master.send_signal(signal.SIGTERM)

    def stop(self) -> None:
        if self.master is None or self.master.poll() is not None:
            return
        self.master.send_signal(signal.SIGTERM)
        try:
            self.master.wait(180)
        except subprocess.TimeoutExpired:
            for p in psutil.Process(self.master.pid).children(recursive=True):
                p.kill()
            self.master.kill()
            self.master.wait()


def wait(what: str, check, deadline_s: float, every: float = 0.5):  # type: ignore[no-untyped-def]
    """``check()`` until it returns something true; exits with ``what`` after ``deadline_s``."""
    deadline = time.monotonic() + deadline_s
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out after {deadline_s:.0f} s waiting for {what}")
        time.sleep(every)


def progress(what: str, n: int) -> int:
    print(f"  {what}: {n}", flush=True)
    return n


def collector_port(cm: Node) -> int:
    path = cm.dir / "local" / "log" / ".collector_address"

    def port() -> int | None:
        m = re.search(r"127\.0\.0\.1:(\d+)", path.read_text()) if path.exists() else None
        return int(m.group(1)) if m else None

    return int(wait("the collector's address file", port, 60, 0.2))


def count_slots(cm: Node) -> dict[str, int]:
    """Slot ads in the collector by State (Claimed, Unclaimed...)."""
    out = cm.htcd("status", "-af", "State")
    counts: dict[str, int] = {}
    for line in out.stdout.split():
        counts[line] = counts.get(line, 0) + 1
    return counts


def schedd_totals(ap: Node, name: str) -> dict[str, int]:
    out = ap.htcd("q", "-totals", "-name", name).stdout
    return {k: int(v) for v, k in re.findall(r"(\d+) (jobs|idle|running|completed|held|removed)", out)}


def negotiator_ad(cm: Node) -> dict[str, object]:
    out = cm.htcd("status", "-negotiator", "-json")
    try:
        ads = json.loads(out.stdout)
    except ValueError:
        return {}
    return ads[0] if ads else {}


def terminated(log: Path) -> int:
    if not log.exists():
        return 0
    with open(log, "rb") as f:
        return len(re.findall(rb"^005 \(", f.read(), re.MULTILINE))


def proc_figures(pid: int) -> dict[str, float]:
    p = psutil.Process(pid)
    return {"rss": float(p.memory_info().rss), "fds": float(p.num_fds()),
            "tcp": float(len([c for c in p.net_connections(kind="tcp") if c.status == psutil.CONN_ESTABLISHED])),
            "cpu": float(sum(p.cpu_times()[:2]))}


def run(args: argparse.Namespace) -> dict[str, object]:
    root = Path(tempfile.mkdtemp(prefix="htcd-scale-"))
    nodes: list[Node] = []
    slots = args.startds * args.slots
    jobs = args.jobs or slots
    try:
        common = ["CONDOR_HOST = 127.0.0.1", "UPDATE_INTERVAL = 300", "NEGOTIATOR_INTERVAL = 5",
                  "NEGOTIATOR_CYCLE_DELAY = 0", "MASTER_UPDATE_INTERVAL = 300", "TRUST_DOMAIN = htcd-scale-bench"]
        cm = Node(root, "cm", [*common, "COLLECTOR_HOST = $(CONDOR_HOST):0",
                               "DAEMON_LIST = MASTER COLLECTOR NEGOTIATOR", "FULL_HOSTNAME = cm.scale"]).start()
        nodes.append(cm)
        port = collector_port(cm)
        collector = wait("the collector", lambda: cm.pid("collector"), 60)
        wait("the collector's answer", lambda: cm.htcd("status", "-collector", "-af", "Name").returncode == 0, 60)
        collector_idle = proc_figures(collector)
        # every host of the pool shares the central manager's pool secrets, CA and host certificate
        # (what the Ansible roles distribute between real hosts)
        cml = cm.dir / "local"
        tokens = root / "tokens.d"
        tokens.mkdir(mode=0o700)
        made = cm.htcd("token", "create", "-identity", "condor@htcd-scale-bench", "-token", str(tokens / "pool"))
        if made.returncode != 0:
            raise SystemExit(f"htcd token create failed: {made.stdout}{made.stderr}")
        pool = [*common, f"COLLECTOR_HOST = 127.0.0.1:{port}", f"SEC_PASSWORD_DIRECTORY = {cml / 'passwords.d'}",
                f"SEC_TOKEN_SYSTEM_DIRECTORY = {tokens}",
                f"TRUST_DOMAIN_CAFILE = {cml / 'ssl' / 'trust_domain_ca.pem'}",
                f"AUTH_SSL_SERVER_CERTFILE = {cml / 'ssl' / 'hostcert.pem'}",
                f"AUTH_SSL_SERVER_KEYFILE = {cml / 'ssl' / 'hostkey.pem'}"]
        aps = []
        for i in range(args.schedds):
            aps.append(Node(root, f"ap{i}", [*pool, "DAEMON_LIST = MASTER SCHEDD", f"FULL_HOSTNAME = ap{i}.scale",
                                             f"SCHEDD_NAME = ap{i}.scale", "MAX_JOBS_RUNNING = 100000",
                                             "MAX_JOBS_PER_OWNER = 100000", "MAX_JOBS_PER_SUBMISSION = 100000"]).start())
        nodes.extend(aps)
        slot_knobs = ([f"NUM_CPUS = {args.slots}", f"MEMORY = {args.slots * 16}", "NUM_SLOTS_TYPE_1 = 1",
                       "SLOT_TYPE_1 = 100%", "SLOT_TYPE_1_PARTITIONABLE = True"] if args.partitionable else
                      [f"NUM_CPUS = {args.slots}", f"MEMORY = {args.slots * 16}"])
        eps = []
        t_start = time.monotonic()
        for i in range(args.startds):
            eps.append(Node(root, f"ep{i}", [*pool, "DAEMON_LIST = MASTER STARTD", f"FULL_HOSTNAME = ep{i}.scale",
                                             "STARTD_SIMULATED_JOBS = true",
                                             # a policy pass over 2,000 slots takes ~1.3 s of CPU: every
                                             # 5 s (the default) 10 startds would need more than 2 cores
                                             f"POLLING_INTERVAL = {args.polling}", *slot_knobs]).start())
        nodes.extend(eps)
        want_ads = args.startds if args.partitionable else slots
        wait(f"{want_ads} slot ads in the collector",
             lambda: progress("slot ads", sum(count_slots(cm).values())) >= want_ads, 300 + slots / 20, 5)
        advertised_s = time.monotonic() - t_start
        advertised = sum(count_slots(cm).values())
        collector_full = proc_figures(collector)
        for ap in aps:
            wait(f"the schedd of {ap.name}", lambda ap=ap: schedd_totals(ap, f"{ap.name}.scale") != {} or
                 ap.htcd("q", "-totals", "-name", f"{ap.name}.scale").returncode == 0, 120)
        schedds = {ap.name: int(wait(f"{ap.name}'s schedd", lambda ap=ap: ap.pid("schedd"), 60)) for ap in aps}
        startds = {ep.name: int(wait(f"{ep.name}'s startd", lambda ep=ep: ep.pid("startd"), 60)) for ep in eps}
        negotiator = int(wait("the negotiator", lambda: cm.pid("negotiator"), 60))

        # the queues first, held back by a Requirements no slot meets: the schedd's RSS with its
        # idle queue is the baseline of the per-running-job figure
        per_ap = [jobs // len(aps) + (1 if i < jobs % len(aps) else 0) for i in range(len(aps))]
        for ap, n in zip(aps, per_ap, strict=True):
            (ap.dir / "sim.sub").write_text(
                "universe = simulated\nexecutable = /bin/sleep\ntransfer_executable = false\n"
                f"+SimulatedRuntime = {args.runtime}\nrequest_memory = 1\nrequest_cpus = 1\nlog = sim.log\n"
                f"requirements = TARGET.ScaleBenchGo =?= True\nqueue {n}\n")
            done = ap.htcd("submit", "-name", f"{ap.name}.scale", "sim.sub", cwd=ap.dir)
            if done.returncode != 0:
                raise SystemExit(f"htcd submit at {ap.name} failed: {done.stdout}{done.stderr}")
        wait("the queues", lambda: all(schedd_totals(ap, f"{ap.name}.scale").get("idle") == n
                                       for ap, n in zip(aps, per_ap, strict=True)), 600, 1)
        time.sleep(5)  # let the queues settle before the baseline (a benchmark, not a test)
        base = {d: proc_figures(p) for d, p in {**{f"schedd@{k}": v for k, v in schedds.items()},
                                                 **{f"startd@{k}": v for k, v in startds.items()},
                                                 "negotiator": negotiator, "collector": collector}.items()}
        t0 = time.monotonic()
        for ap in aps:
            go = ap.htcd("qedit", "-name", f"{ap.name}.scale", "-constraint", "true", "Requirements",
                         'stringListIMember("simulated", TARGET.StarterAbilityList) && TARGET.Cpus > 0')
            if go.returncode != 0:
                raise SystemExit(f"htcd qedit at {ap.name} failed: {go.stdout}{go.stderr}")
        peak_running, peak_claimed, cycles = 0, 0, []
        peak: dict[str, dict[str, float]] = {}
        filled_s = None
        deadline = time.monotonic() + args.runtime + 900
        unfinished = None
        while True:
            running = sum(schedd_totals(ap, f"{ap.name}.scale").get("running", 0) for ap in aps)
            neg = negotiator_ad(cm)
            cycle = neg.get("LastNegotiationCycleDuration0")
            if cycle is not None and (not cycles or cycles[-1] != cycle):
                cycles.append(float(cycle))  # type: ignore[arg-type]
            if running > peak_running:
                peak_running = running
                claimed = count_slots(cm).get("Claimed", 0)
                peak_claimed = max(peak_claimed, claimed)
                peak = {d: proc_figures(p) for d, p in {**{f"schedd@{k}": v for k, v in schedds.items()},
                                                         **{f"startd@{k}": v for k, v in startds.items()}}.items()}
                ap0 = peak[f"schedd@{aps[0].name}"]
                print(f"  {time.monotonic() - t0:7.1f} s: {running} running, {claimed} slots claimed; "
                      f"{aps[0].name}'s schedd RSS {ap0['rss'] / 2**20:.0f} MB, {ap0['fds']:.0f} fds", flush=True)
            if running >= jobs and filled_s is None:
                filled_s = time.monotonic() - t0
                peak_claimed = max(peak_claimed, count_slots(cm).get("Claimed", 0))
            done = sum(terminated(ap.dir / "sim.log") for ap in aps)
            if done >= jobs:
                break
            if time.monotonic() > deadline:  # report what was reached: the figures say the pool did not fill
                unfinished = f"only {done} of {jobs} jobs ended by the deadline (peak running {peak_running})"
                print(f"  {unfinished}", flush=True)
                break
            time.sleep(3)
        drained_s = time.monotonic() - t0
        end = {d: proc_figures(p) for d, p in {**{f"schedd@{k}": v for k, v in schedds.items()},
                                                **{f"startd@{k}": v for k, v in startds.items()},
                                                "negotiator": negotiator, "collector": collector}.items()}
        return {"slots": slots, "jobs": jobs, "advertised": advertised, "advertised_s": advertised_s,
                "peak_running": peak_running, "peak_claimed": peak_claimed, "filled_s": filled_s,
                "drained_s": drained_s, "cycles": cycles, "base": base, "peak": peak, "end": end,
                "collector_idle": collector_idle, "collector_full": collector_full, "load": os.getloadavg(),
                "unfinished": unfinished,
                "machine_rss": psutil.virtual_memory().used}
    finally:
        for node in nodes:  # every host stops at once; then each is waited for (and killed if it hangs)
            node.signal_stop()
        for node in reversed(nodes):
            node.stop()
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


def fig(value: float | None, unit: str, better: str, anchor: float | None = None, source: str = "",
        goal: float | None = None) -> dict[str, object]:
    return {"value": value, "unit": unit, "anchor": anchor, "anchor_source": source, "goal": goal, "better": better}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="2 startds x 1,000 slots, 60 s jobs")
    ap.add_argument("--startds", type=int, default=None)
    ap.add_argument("--slots", type=int, default=None, help="slots (cores) per startd")
    ap.add_argument("--schedds", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=None, help="default: one per slot")
    ap.add_argument("--runtime", type=int, default=None, help="each job's SimulatedRuntime (s)")
    ap.add_argument("--partitionable", action="store_true")
    ap.add_argument("--polling", type=int, default=60, help="the startds' POLLING_INTERVAL (s)")
    ap.add_argument("--keep", action="store_true", help="keep the pool's directory (logs)")
    args = ap.parse_args()
    # SIGTERM (and SIGINT, which a shell's background job ignores) unwinds: every master is stopped
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.signal(signal.SIGINT, signal.default_int_handler)
    args.startds = args.startds or (2 if args.quick else 10)
    args.slots = args.slots or (1000 if args.quick else 2000)
    args.runtime = args.runtime or (60 if args.quick else 600)
    r = run(args)
    jobs = int(r["jobs"])  # type: ignore[call-overload]
    base, peak, end = r["base"], r["peak"], r["end"]
    assert isinstance(base, dict) and isinstance(peak, dict) and isinstance(end, dict)
    running = int(r["peak_running"])  # type: ignore[call-overload]
    cycles: list[float] = r["cycles"]  # type: ignore[assignment]
    kind = "partitionable" if args.partitionable else "static"
    print(f"scale: {args.startds} startds x {args.slots} {kind} slots, {args.schedds} schedd(s), {jobs} simulated "
          f"jobs of {args.runtime} s; {os.cpu_count()} CPUs, load {r['load'][0]:.2f} at the end")  # type: ignore[index]
    print(f"  slots advertised   {r['advertised']} in {r['advertised_s']:.0f} s   (anchor: HTCondor 10s of thousands "
          f"of slots in one pool, 8.4's goal 200k; goal {SLOTS_ANCHOR} running simulated jobs)")
    print(f"  matched (Claimed)  {r['peak_claimed']} at the peak; running at the peak {running}")
    filled = r["filled_s"]
    print(f"  time to fill       {filled:.0f} s" if filled is not None else "  time to fill       (never full)")
    if r.get("unfinished"):
        print(f"  time to drain      (not drained: {r['unfinished']})")
    else:
        print(f"  time to drain      {r['drained_s']:.0f} s (submit -> every job terminated)")
    if cycles:
        print(f"  negotiation cycle  {max(cycles):.2f} s longest, {cycles[-1]:.2f} s last "
              f"({len(cycles)} cycles seen)")
    figures: dict[str, dict[str, object]] = {
        "slots_advertised": fig(r["advertised"], "slots", "higher", SLOTS_ANCHOR,  # type: ignore[arg-type]
                                "HTCondor: 10s of thousands of slots in one pool; 8.4 goal 200k", SLOTS_ANCHOR),
        "running_at_peak": fig(running, "jobs", "higher", SLOTS_ANCHOR, "HTCondor: 10s of thousands", SLOTS_ANCHOR),
        "time_to_fill_s": fig(round(filled, 1) if filled is not None else None, "s", "lower"),  # type: ignore[arg-type]
        "negotiation_cycle_s": fig(round(max(cycles), 3) if cycles else None, "s", "lower"),
    }
    per_ap = running / max(1, args.schedds)
    for d in sorted(peak):
        if not d.startswith("schedd@"):
            continue
        n = per_ap
        kb = (peak[d]["rss"] - base[d]["rss"]) / 1024 / max(1.0, n)
        print(f"  {d}: RSS {base[d]['rss'] / 2**20:.0f} MB idle queue -> {peak[d]['rss'] / 2**20:.0f} MB at "
              f"{n:.0f} running: {kb:.1f} KB per running job (goal <= {AP_KB_GOAL:.0f}; anchor HTCondor "
              f"~{SHADOW_KB_ANCHOR:.0f} KB per shadow)")
        print(f"      fds {base[d]['fds']:.0f} -> {peak[d]['fds']:.0f} ({(peak[d]['fds'] - base[d]['fds']) / max(1, n):.2f}"
              f" per running job), TCP connections {base[d]['tcp']:.0f} -> {peak[d]['tcp']:.0f} "
              f"({(peak[d]['tcp'] - base[d]['tcp']) / max(1, n):.2f} per running job)")
        figures.setdefault("ap_kb_per_running_job", fig(round(kb, 1), "KB", "lower", SHADOW_KB_ANCHOR,
                                                        "HTCondor: ~500 KB per shadow", AP_KB_GOAL))
        figures.setdefault("ap_tcp_per_running_job", fig(round((peak[d]["tcp"] - base[d]["tcp"]) / max(1, n), 3),
                                                         "connections", "lower"))
        figures.setdefault("ap_fds_per_running_job", fig(round((peak[d]["fds"] - base[d]["fds"]) / max(1, n), 3),
                                                         "fds", "lower"))
    figures["running_per_ap"] = fig(round(per_ap), "jobs", "higher", AP_JOBS_ANCHOR,
                                    "HTCondor: ~14,000 running jobs per AP, limited by ports", AP_JOBS_GOAL)
    ep = [d for d in sorted(peak) if d.startswith("startd@")]
    if ep:
        per_ep = running / len(ep)
        kb = sum(peak[d]["rss"] - base[d]["rss"] for d in ep) / len(ep) / 1024 / max(1.0, per_ep)
        tcp = sum(peak[d]["tcp"] - base[d]["tcp"] for d in ep) / len(ep) / max(1.0, per_ep)
        print(f"  startds: {kb:.1f} KB and {tcp:.2f} TCP connections per running job (mean of {len(ep)})")
        figures["ep_kb_per_running_job"] = fig(round(kb, 1), "KB", "lower")
    ci, cf = r["collector_idle"], r["collector_full"]
    assert isinstance(ci, dict) and isinstance(cf, dict)
    per_ad = (cf["rss"] - ci["rss"]) / 1024 / max(1, int(r["advertised"]))  # type: ignore[call-overload]
    print(f"  collector: RSS {ci['rss'] / 2**20:.0f} MB -> {cf['rss'] / 2**20:.0f} MB with {r['advertised']} slot ads: "
          f"{per_ad:.1f} KB per ad")
    figures["collector_kb_per_ad"] = fig(round(per_ad, 2), "KB", "lower")
    print("  CPU seconds per job (submit -> drained):")
    for d in sorted(end, key=lambda d: -(end[d]["cpu"] - base[d]["cpu"])):
        ms = 1000 * (end[d]["cpu"] - base[d]["cpu"]) / jobs
        print(f"    {d:<22} {ms:8.2f} ms")
        key = d.split("@")[0]
        if key not in ("schedd", "startd") or f"{key}_cpu_ms_per_job" not in figures:
            figures[f"{key}_cpu_ms_per_job"] = fig(round(ms, 3), "ms", "lower")
    print(json.dumps({"bench": "scale_bench", "figures": figures}))


if __name__ == "__main__":
    main()

"""Spooled transfer: ``htcd submit -spool`` of a big input (chunk stream to the schedd), the job
run (the same file streamed shadow -> starter), and ``htcd transfer_data`` of its output, on a
real personal pool; the schedd's peak memory shows that no file is held whole.  Anchor: ``cp``
of the same file on the same disk in the same run."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from _pool import HTCD, daemon_pid, start_pool, stop_pool


def make_file(path: Path, mib: int) -> None:
    block = os.urandom(1 << 20)
    with open(path, "wb") as f:
        for _ in range(mib):
            f.write(block)


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def run(mib: int, out_mib: int) -> dict[str, float]:
    root = Path(tempfile.mkdtemp(prefix="htcd-bench-"))
    master, env = start_pool(root, ["NUM_CPUS = 1", "NEGOTIATOR_INTERVAL = 2", "NEGOTIATOR_CYCLE_DELAY = 0",
                                    "UPDATE_INTERVAL = 2"], ["q"], "pool")
    try:
        make_file(root / "big.bin", mib)
        t0 = time.monotonic()
        shutil.copyfile(root / "big.bin", root / "copy.bin")
        os.sync()
        cp_s = time.monotonic() - t0
        (root / "copy.bin").unlink()
        (root / "b.sh").write_text(f"#!/bin/sh\nhead -c {out_mib * 1048576} big.bin > out.bin\nwc -c < big.bin\n")
        os.chmod(root / "b.sh", 0o755)
        (root / "b.sub").write_text("executable = b.sh\noutput = b.out\nlog = b.log\n"
                                    "transfer_input_files = big.bin\ntransfer_output_files = out.bin\nqueue\n")
        t0 = time.monotonic()
        subprocess.run([*HTCD, "submit", "-spool", "b.sub"], env=env, cwd=root, check=True, capture_output=True)
        upload_s = time.monotonic() - t0
        deadline = time.monotonic() + 600
        while "005 (" not in ((root / "b.log").read_text() if (root / "b.log").exists() else ""):
            if time.monotonic() > deadline:
                raise SystemExit("the job did not finish in 600 s")
            time.sleep(0.05)
        run_s = time.monotonic() - t0 - upload_s
        t0 = time.monotonic()
        subprocess.run([*HTCD, "transfer_data", "-all"], env=env, cwd=root, check=True, capture_output=True)
        fetch_s = time.monotonic() - t0
        if (root / "out.bin").stat().st_size != out_mib << 20:
            raise SystemExit("the fetched output has the wrong size")
        return {"cp_mb_s": mib / cp_s, "upload_mb_s": mib / upload_s, "run_s": run_s,
                "fetch_mb_s": out_mib / fetch_s, "schedd_peak_mb": peak_rss_mb(daemon_pid(master, "schedd")),
                "startd_peak_mb": peak_rss_mb(daemon_pid(master, "startd"))}
    finally:
        stop_pool(master, root)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--mib", type=int, default=None, help="input size in MiB")
    args = ap.parse_args()
    mib = args.mib or (64 if args.quick else 300)
    out_mib = min(32, mib)
    f = run(mib, out_mib)
    print(f"spooled transfer of a {mib} MiB input ({out_mib} MiB output), chunks of 4 MiB")
    print(f"  cp of the same file        {f['cp_mb_s']:8.1f} MiB/s")
    print(f"  submit -spool (upload)     {f['upload_mb_s']:8.1f} MiB/s")
    print(f"  job run (stream to EP)     {f['run_s']:8.2f} s   (negotiation, shadow -> starter stream, job, output)")
    print(f"  transfer_data (download)   {f['fetch_mb_s']:8.1f} MiB/s")
    print(f"  schedd peak RSS            {f['schedd_peak_mb']:8.1f} MB")
    print(f"  startd peak RSS            {f['startd_peak_mb']:8.1f} MB")
    print(json.dumps({"bench": "spool_bench", "figures": {
        "spool_upload_mib_s": {"value": round(f["upload_mb_s"], 1), "unit": "MiB/s", "anchor": round(f["cp_mb_s"], 1),
                               "anchor_source": "cp of the same file, same disk, same run", "goal": None,
                               "better": "higher"},
        "transfer_data_mib_s": {"value": round(f["fetch_mb_s"], 1), "unit": "MiB/s", "anchor": round(f["cp_mb_s"], 1),
                                "anchor_source": "cp of the same file, same disk, same run", "goal": None,
                                "better": "higher"},
        "schedd_peak_rss_mb": {"value": round(f["schedd_peak_mb"], 1), "unit": "MB", "anchor": mib,
                               "anchor_source": "the input's size in MiB (what a whole-file read would hold)",
                               "goal": None, "better": "lower"}}}))


if __name__ == "__main__":
    main()

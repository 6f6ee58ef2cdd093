"""Job output bigger than a chunk in a real pool: it stays at the execute point and comes back as
a chunk stream (``FETCH_OUTPUT``) -- 300 MiB with both daemons' memory bounded, a directory, a
remap, a big stdout, output kept from an eviction -- and the failures (a staged file that
vanishes, the startd killed half way through the stream) hold the job with code 12, leave no
file that looks complete and no dead schedd."""

from __future__ import annotations

import hashlib
import os
import signal
from pathlib import Path

import psutil
from pooltools import Pool, peak_rss_mb, wait_for

ONE_SLOT = {"NUM_CPUS": "1"}
RSET = {"ENABLE_RUNTIME_CONFIG": "TRUE", "SETTABLE_ATTRS_CONFIG": "PREEMPT"}
MIB = 1024 * 1024
BIG = 300 * MIB
# a sparse 300 MiB file with known bytes at both ends
WRITE_BIG = """printf HEAD > big.bin
truncate -s {size} big.bin
printf TAIL | dd of=big.bin bs=1 seek=$(({size} - 4)) conv=notrunc status=none
"""


def events(log: Path) -> list[str]:
    text = log.read_text() if log.exists() else ""
    return [line[:3] for line in text.splitlines() if line[:3].isdigit() and " (" in line]


def submit(pool: Pool, name: str, body: str, submit: str) -> str:
    path = pool.jobs_dir / f"{name}.sh"
    path.write_text(body)
    os.chmod(path, 0o755)
    cluster = pool.submit(f"executable = {name}.sh\nlog = {name}.log\nshould_transfer_files = YES\n{submit}\nqueue\n",
                          name=f"{name}.sub")
    return f"{cluster}.0"


def wait_event(pool: Pool, name: str, code: str, timeout: float = 240) -> None:
    log = pool.jobs_dir / f"{name}.log"
    wait_for(lambda: code in events(log), timeout, f"event {code} in {log.name}: {events(log)}\n"
             f"{pool.log('ShadowLog')[-3000:]}\n{pool.log('StartLog')[-3000:]}")


def log_figure(pool: Pool, name: str, what: str) -> int:
    lines = [line for line in (pool.jobs_dir / f"{name}.log").read_text().splitlines() if what in line]
    assert lines, f"no {what!r} in the event log"
    return int(lines[0].split()[0])


def parts(d: Path) -> list[Path]:
    """Files being received (never presented as the output itself)."""
    return [p for p in d.rglob("*") if ".htcd-part-" in p.name]


def staging(pool: Pool) -> list[Path]:
    execute = pool.local / "execute"
    return [p for p in execute.iterdir() if p.name.startswith(".outgoing_")] if execute.exists() else []


def check_big(path: Path, size: int = BIG) -> None:
    assert path.stat().st_size == size
    with open(path, "rb") as f:
        assert f.read(4) == b"HEAD"
        f.seek(size // 2)
        assert f.read(8) == b"\0" * 8
        f.seek(size - 4)
        assert f.read() == b"TAIL"


def test_a_300_mib_output_streams_back_with_bounded_memory(make_pool) -> None:
    pool = make_pool(ONE_SLOT, slots=1)
    body = "#!/bin/sh\n" + WRITE_BIG.format(size=BIG) + "echo to stdout\necho to stderr >&2\n"
    job = submit(pool, "big", body, "output = big.out\nerror = big.err\ntransfer_output_files = big.bin\n"
                                    "request_disk = 1")
    wait_event(pool, "big", "005")
    d = pool.jobs_dir
    check_big(d / "big.bin")
    assert (d / "big.out").read_text() == "to stdout\n" and (d / "big.err").read_text() == "to stderr\n"
    assert not parts(d) and not staging(pool)
    sent = BIG + len("to stdout\n") + len("to stderr\n")
    assert log_figure(pool, "big", "Run Bytes Sent By Job") == sent
    assert log_figure(pool, "big", "Run Bytes Received By Job") == len(body)
    assert f"received {BIG} bytes of output as a chunk stream" in pool.log("ShadowLog")
    assert "as a chunk stream" in pool.log("StartLog")
    pids = pool.daemon_pids()
    for daemon in ("SCHEDD", "STARTD"):
        assert peak_rss_mb(pids[daemon]) < 200, f"{daemon} peaked at {peak_rss_mb(pids[daemon]):.0f} MB"
    wait_for(lambda: pool.htcd("history", job, "-af", "JobStatus", "BytesSent", "BytesRecvd").stdout.split(), 30,
             "the job in the history")
    status, bytes_sent, bytes_recvd = pool.htcd("history", job, "-af", "JobStatus", "BytesSent",
                                                "BytesRecvd").stdout.split()
    assert (int(status), float(bytes_sent), float(bytes_recvd)) == (4, sent, len(body))


def test_a_directory_a_remap_and_a_big_stdout_stream_back(make_pool) -> None:
    pool = make_pool(ONE_SLOT, slots=1)
    body = """#!/bin/sh
set -e
mkdir -p results/inner
head -c 9000000 /dev/urandom > results/inner/blob.bin
echo small > results/small.txt
head -c 6000000 /dev/urandom > big.dat
sha256sum results/inner/blob.bin big.dat > sums.txt
head -c 5000000 /dev/zero | tr '\\0' x
"""
    (pool.jobs_dir / "out").mkdir()
    submit(pool, "dir", body, "output = dir.out\ntransfer_output_files = results, big.dat, sums.txt\n"
                              'transfer_output_remaps = "big.dat = out/renamed.dat"')
    wait_event(pool, "dir", "005")
    d = pool.jobs_dir
    sums = dict(reversed(line.split()) for line in (d / "sums.txt").read_text().splitlines())
    assert hashlib.sha256((d / "results/inner/blob.bin").read_bytes()).hexdigest() == sums["results/inner/blob.bin"]
    assert hashlib.sha256((d / "out/renamed.dat").read_bytes()).hexdigest() == sums["big.dat"]
    assert not (d / "big.dat").exists(), "the remapped file lands only where the remap says"
    assert (d / "results/small.txt").read_text() == "small\n"
    assert (d / "dir.out").read_bytes() == b"x" * 5000000
    assert not parts(d) and not staging(pool)
    assert log_figure(pool, "dir", "Run Bytes Sent By Job") == 9000000 + 6 + 6000000 + len((d / "sums.txt").read_text()) \
        + 5000000
    assert "received 20000000 bytes of output as a chunk stream" in pool.log("ShadowLog")


def test_big_output_kept_from_an_eviction_comes_back_as_input(make_pool) -> None:
    pool = make_pool({**ONE_SLOT, **RSET, "PREEMPT": "False"}, slots=1)
    started = pool.jobs_dir / "started"
    body = f"""#!/bin/sh
if [ -e progress.bin ]; then sha256sum progress.bin > result.txt; wc -c < progress.bin >> result.txt; exit 0; fi
head -c 7000000 /dev/urandom > progress.bin
sha256sum progress.bin > first.txt
cp first.txt {pool.jobs_dir}/first-run.txt
touch {started}
while true; do sleep 0.1; done
"""
    os.chmod(pool.jobs_dir, 0o777)  # the job (run as nobody) leaves its marks here
    submit(pool, "e", body, "when_to_transfer_output = ON_EXIT_OR_EVICT\ntransfer_output_files = progress.bin, "
                            "result.txt")
    wait_for(started.exists, 120, "the job's first run")
    pool.htcd("config_val", "-daemon", "startd", "-rset", "PREEMPT = True")
    pool.htcd("reconfig", "-daemon", "startd")
    wait_event(pool, "e", "004", 120)
    pool.htcd("config_val", "-daemon", "startd", "-rset", "PREEMPT = False")
    pool.htcd("reconfig", "-daemon", "startd")
    wait_event(pool, "e", "005")
    first = (pool.jobs_dir / "first-run.txt").read_text().split()[0]
    assert (pool.jobs_dir / "result.txt").read_text().split() == [first, "progress.bin", "7000000"]
    assert hashlib.sha256((pool.jobs_dir / "progress.bin").read_bytes()).hexdigest() == first
    assert "received 7000000 bytes of output as a chunk stream" in pool.log("ShadowLog")
    assert not parts(pool.local / "spool") and not staging(pool)


# -- failures ------------------------------------------------------------------------------
GATED = """#!/bin/sh
while [ ! -e go ]; do sleep 0.1; done
"""


def let_it_end(pool: Pool) -> None:
    """The gated job (waiting in its sandbox for ``go``) may end now."""
    def sandbox() -> Path | None:
        for d in (pool.local / "execute").glob("dir_*"):
            if (d / "g.sh").exists():
                return d
        return None

    box = wait_for(sandbox, 120, "the job's sandbox")
    (box / "go").touch()


def test_a_staged_file_that_vanishes_holds_the_job(make_pool) -> None:
    pool = make_pool(ONE_SLOT, slots=1)
    job = submit(pool, "g", GATED + "head -c 6000000 /dev/zero > big.bin\necho done\n",
                 "output = g.out\ntransfer_output_files = big.bin")
    pids = pool.daemon_pids()
    schedd = psutil.Process(pids["SCHEDD"])
    wait_event(pool, "g", "001", 120)
    schedd.suspend()  # the shadow reads the job's end only once the staged file is gone
    try:
        let_it_end(pool)
        staged = wait_for(lambda: [p / "out" / "big.bin" for p in staging(pool) if (p / "out" / "big.bin").exists()],
                          120, "the output staged at the execute point")
        staged[0].unlink()
    finally:
        schedd.resume()
    wait_event(pool, "g", "012")
    code, sub, reason = (pool.job_attr(job, a) for a in ("HoldReasonCode", "HoldReasonSubCode", "HoldReason"))
    assert (code, sub) == ("12", "2") and "big.bin" in reason and "No such file or directory" in reason, reason
    d = pool.jobs_dir
    assert not (d / "big.bin").exists() and not parts(d)
    assert not (d / "g.out").exists(), "a failed output transfer writes nothing"
    wait_for(lambda: not staging(pool), 30, "the staging directory removed")
    assert pool.daemon_pids() == pids, "no daemon died"


def test_a_startd_killed_mid_stream_holds_the_job_and_the_pool_recovers(make_pool) -> None:
    pool = make_pool(ONE_SLOT, slots=1)
    job = submit(pool, "g", GATED + WRITE_BIG.format(size=BIG), "transfer_output_files = big.bin")
    pids = pool.daemon_pids()
    schedd = psutil.Process(pids["SCHEDD"])
    d = pool.jobs_dir
    wait_event(pool, "g", "001", 120)
    schedd.suspend()
    try:
        let_it_end(pool)
        wait_for(lambda: staging(pool), 120, "the output staged at the execute point")
    finally:
        schedd.resume()
    # the shadow fetches: stop it as soon as the first file is being received
    wait_for(lambda: parts(d), 120, "the output arriving", interval=0.002)
    schedd.suspend()
    try:
        assert parts(d) and not (d / "big.bin").exists(), "caught half way through the stream"
        os.kill(pids["STARTD"], signal.SIGKILL)
        wait_for(lambda: not psutil.pid_exists(pids["STARTD"]) or
                 psutil.Process(pids["STARTD"]).status() == psutil.STATUS_ZOMBIE, 30, "the startd gone")
    finally:
        schedd.resume()
    wait_event(pool, "g", "012")
    code, reason = pool.job_attr(job, "HoldReasonCode"), pool.job_attr(job, "HoldReason")
    assert code == "12" and "Transfer output files failure" in reason, reason
    assert not (d / "big.bin").exists() and not parts(d), "nothing half written is left as output"
    assert pool.daemon_pids()["SCHEDD"] == pids["SCHEDD"], "the schedd lives on"
    # the master starts a new startd, which removes what the old one staged; the job runs again
    wait_for(lambda: pool.daemon_pids().get("STARTD") not in (None, pids["STARTD"]), 60, "a new startd")
    wait_for(lambda: not staging(pool), 60, "the old staging directory removed")
    pool.htcd("release", job)
    let_it_end(pool)
    wait_event(pool, "g", "005", 240)
    check_big(d / "big.bin")
    assert not parts(d)


# -- the other places output goes ------------------------------------------------------------
def test_big_output_waits_at_the_startd_for_a_restarted_schedd(make_pool) -> None:
    pool = make_pool({**ONE_SLOT, "MASTER_SCHEDD_BACKOFF_CONSTANT": "5"}, slots=1)
    submit(pool, "g", GATED + "head -c 9000000 /dev/urandom > big.bin\nsha256sum big.bin > sum.txt\n",
           "transfer_output_files = big.bin, sum.txt\njob_lease_duration = 120")
    wait_event(pool, "g", "001", 120)
    old = pool.daemon_pids()["SCHEDD"]
    os.kill(old, signal.SIGKILL)
    let_it_end(pool)
    wait_for(lambda: "ended while its shadow is away" in pool.log("StartLog"), 60, "the job's end with no shadow")
    assert staging(pool), "its big output waits at the execute point"
    wait_event(pool, "g", "005")
    d = pool.jobs_dir
    assert hashlib.sha256((d / "big.bin").read_bytes()).hexdigest() == (d / "sum.txt").read_text().split()[0]
    assert "received 9000000 bytes of output as a chunk stream" in pool.log("ShadowLog")
    assert not staging(pool) and not parts(d)


def test_a_spooled_jobs_big_output_waits_in_the_spool_for_transfer_data(make_pool) -> None:
    pool = make_pool(ONE_SLOT, slots=1)
    d = pool.jobs_dir
    (d / "s.sh").write_text("#!/bin/sh\nhead -c 9000000 /dev/urandom > big.bin\nsha256sum big.bin > sum.txt\n")
    os.chmod(d / "s.sh", 0o755)
    (d / "s.sub").write_text("executable = s.sh\nlog = s.log\ntransfer_output_files = big.bin, sum.txt\nqueue\n")
    cid = int(pool.htcd("submit", "-spool", "-terse", "s.sub").stdout.strip().split(".")[0])
    wait_for(lambda: pool.job_attr(f"{cid}.0", "JobStatus") in ("4", "5"), 240,
             f"the job's end\n{pool.log('ShadowLog')}")
    assert pool.job_attr(f"{cid}.0", "JobStatus") == "4", pool.job_attr(f"{cid}.0", "HoldReason")
    spooled = pool.local / "spool" / str(cid) / "0" / f"cluster{cid}.proc0.subproc0"
    assert (spooled / "big.bin").stat().st_size == 9000000 and not (d / "big.bin").exists()
    assert not parts(spooled)
    pool.htcd("transfer_data", str(cid))
    assert hashlib.sha256((d / "big.bin").read_bytes()).hexdigest() == (d / "sum.txt").read_text().split()[0]

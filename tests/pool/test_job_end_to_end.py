"""One vanilla job through every daemon of a real personal pool, and the tools around it."""

from __future__ import annotations

import getpass
import os
import signal
import sys

import psutil
import pytest
from pooltools import wait_for

JOB = """\
executable     = job.sh
arguments      = "alpha 'beta gamma' $(Cluster).$(Process)"
output         = out.$(Process)
error          = err.$(Process)
log            = job.log
request_cpus   = 1
request_memory = 64M
+Owner         = "mallory"
queue
"""

SCRIPT = """#!/bin/sh
echo "args: $1|$2|$3"
echo "scratch: $_CONDOR_SCRATCH_DIR"
echo "to stderr" >&2
echo made > result.txt
exit 3
"""


def events(log_text: str) -> list[str]:
    return [line[:3] for line in log_text.splitlines() if line[:3].isdigit() and " (" in line]


def test_vanilla_job_end_to_end(pool) -> None:
    (pool.jobs_dir / "job.sh").write_text(SCRIPT)
    os.chmod(pool.jobs_dir / "job.sh", 0o755)
    cluster = pool.submit(JOB)
    log = pool.jobs_dir / "job.log"
    wait_for(lambda: "005 (" in (log.read_text() if log.exists() else ""), 60, "the terminated event")

    out = (pool.jobs_dir / "out.0").read_text()
    assert f"args: alpha|beta gamma|{cluster}.0" in out
    scratch = out.split("scratch: ")[1].split()[0]
    assert scratch.startswith(str(pool.local / "execute"))
    assert not os.path.exists(scratch), "the sandbox must be removed after the job"
    assert (pool.jobs_dir / "err.0").read_text() == "to stderr\n"
    assert (pool.jobs_dir / "result.txt").read_text() == "made\n", "new files come back to the submit dir"

    text = log.read_text()
    assert events(text) == ["000", "001", "006", "005"]  # 006: the image size, from the peak RSS
    assert "(1) Normal termination (return value 3)" in text
    wait_for(lambda: pool.job_ids() == [], 20, "the job to leave the queue")
    history = (pool.local / "spool" / "history").read_text()
    assert "ExitCode = 3" in history
    assert f'Owner = "{getpass.getuser()}"' in history, "Owner comes from the authenticated identity"
    assert "mallory" not in history


def test_event_log_reads_with_htcondor(pool) -> None:
    htcondor2 = pytest.importorskip("htcondor2")
    (pool.jobs_dir / "t.sh").write_text("#!/bin/sh\nexit 0\n")
    os.chmod(pool.jobs_dir / "t.sh", 0o755)
    pool.submit("executable = t.sh\nlog = t.log\nqueue 2\n")
    log = pool.jobs_dir / "t.log"
    wait_for(lambda: log.exists() and log.read_text().count("005 (") == 2, 60, "two terminated events")
    read = list(htcondor2.JobEventLog(str(log)).events(stop_after=0))
    written = events(log.read_text())
    assert len(read) == len(written) == 8
    assert sorted(int(e.type) for e in read) == [0, 0, 1, 1, 5, 5, 6, 6]
    term = [e for e in read if int(e.type) == 5]
    assert all(e["ReturnValue"] == 0 and e["TerminatedNormally"] for e in term)


def test_q_and_status_tables(make_pool) -> None:
    pool = make_pool(knobs={"START": "FALSE"})  # nothing may start, so the job stays idle
    status = pool.htcd("status").stdout
    assert "Name" in status and "OpSys" in status and "Unclaimed" in status and "LINUX" in status
    assert "Total" in status
    cluster = pool.submit("executable = /bin/sleep\narguments = 60\nqueue\n")
    q = pool.htcd("q", "-nobatch").stdout
    header = next(line for line in q.splitlines() if "OWNER" in line)
    assert header.split() == ["ID", "OWNER", "SUBMITTED", "RUN_TIME", "ST", "PRI", "SIZE", "CMD"]
    row = next(line for line in q.splitlines() if line.strip().startswith(f"{cluster}.0"))
    assert row.split()[1] == getpass.getuser() and " I " in row and row.endswith("sleep 60")
    assert "1 jobs; 0 completed, 0 removed, 1 idle, 0 running, 0 held" in q
    batch = pool.htcd("q").stdout
    assert "BATCH_NAME" in batch and f"ID: {cluster}" in batch


def test_idle_job_survives_schedd_restart(make_pool) -> None:
    pool = make_pool(knobs={"START": "FALSE"})
    cluster = pool.submit("executable = /bin/true\nqueue 3\n")
    pids = pool.daemon_pids()
    os.kill(pids["SCHEDD"], signal.SIGKILL)  # no chance to flush anything
    wait_for(lambda: pool.daemon_pids().get("SCHEDD") not in (None, pids["SCHEDD"]), 30, "a new schedd")
    wait_for(lambda: pool.htcd("q", check=False).returncode == 0, 30, "the new schedd to answer")
    assert pool.job_ids() == [f"{cluster}.{p}" for p in range(3)]
    assert "died due to signal 9 (Killed)" in pool.log("MasterLog")


def test_queue_survives_whole_pool_restart(make_pool) -> None:
    pool = make_pool(knobs={"START": "FALSE"})
    cluster = pool.submit("executable = /bin/true\nqueue\n")
    pool.stop()
    pool.start()
    assert pool.job_ids() == [f"{cluster}.0"]


def test_rm_kills_a_running_job(pool) -> None:
    marker = pool.jobs_dir / "started"
    (pool.jobs_dir / "long.sh").write_text(f"#!/bin/sh\ntouch {marker}\nexec sleep 300\n")
    os.chmod(pool.jobs_dir / "long.sh", 0o755)
    cluster = pool.submit("executable = long.sh\nlog = long.log\nqueue\n")
    wait_for(marker.exists, 60, "the job to start")
    wait_for(lambda: pool.job_attr(f"{cluster}.0", "JobStatus") == "2", 20, "JobStatus running")
    sleepers = [p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] == ["sleep", "300"]
                and str(pool.dir) in (p.cwd() or "")]  # its Iwd on the shared file system, or a sandbox
    assert len(sleepers) == 1
    out = pool.htcd("rm", f"{cluster}.0").stdout
    assert f"Job {cluster}.0 marked for removal" in out
    wait_for(lambda: pool.job_ids() == [], 30, "the removed job to leave the queue")
    psutil.wait_procs(sleepers, timeout=10)
    assert not sleepers[0].is_running()
    log = (pool.jobs_dir / "long.log").read_text()
    assert events(log) == ["000", "001", "009"]
    assert "Job was aborted" in log


def test_rm_idle_job_and_unknown_job(make_pool) -> None:
    pool = make_pool(knobs={"START": "FALSE"})
    cluster = pool.submit("executable = /bin/true\nqueue 2\n")
    out = pool.htcd("rm", str(cluster)).stdout
    assert out == f"All jobs in cluster {cluster} have been marked for removal\n"  # condor_rm's words
    assert pool.job_ids() == []
    bad = pool.htcd("rm", "999.0", check=False)
    assert bad.returncode == 1 and "Traceback" not in bad.stderr and "999.0" in bad.stderr


def test_master_restarts_a_crashed_daemon_and_stops_cleanly(pool) -> None:
    pids = pool.daemon_pids()
    assert set(pids) == {"COLLECTOR", "NEGOTIATOR", "SCHEDD", "STARTD"}
    old = pids["NEGOTIATOR"]
    for attempt in (1, 2):
        os.kill(old, signal.SIGKILL)
        old = wait_for(lambda gone=old: pool.daemon_pids().get("NEGOTIATOR") not in (None, gone)
                       and pool.daemon_pids()["NEGOTIATOR"], 30, f"negotiator restart {attempt}")
    log = pool.log("MasterLog")
    # HTCondor's delay: MASTER_BACKOFF_CONSTANT + ceil(MASTER_BACKOFF_FACTOR ** n); 0.2 + 1, then 0.2 + 2
    assert "restarting htcd negotiator in 1.2 seconds" in log
    assert "restarting htcd negotiator in 2.2 seconds" in log
    everyone = [pool.master.pid, *pool.daemon_pids().values()]
    assert pool.stop() == 0
    assert not [p for p in everyone if psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"]


def test_submit_error_names_the_line_and_queues_nothing(make_pool) -> None:
    pool = make_pool(knobs={"START": "FALSE"})
    (pool.jobs_dir / "bad.sub").write_text("executable = /bin/true\nrequirements = Memory >\nqueue\n")
    proc = pool.htcd("submit", "bad.sub", check=False)
    assert proc.returncode != 0
    assert "bad.sub" in proc.stderr and ":2" in proc.stderr and "Traceback" not in proc.stderr
    assert pool.job_ids() == []


def test_tools_without_a_pool_say_so(pool_dir) -> None:
    from pooltools import Pool

    idle = Pool(pool_dir / "nopool")
    proc = idle.htcd("q", check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "schedd" in proc.stderr or "collector" in proc.stderr


def test_python_m_htcd_runs_the_cli() -> None:
    import subprocess

    out = subprocess.run([sys.executable, "-m", "htcd", "version"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("$CondorVersion: ")


def test_hold_and_release_an_idle_job(make_pool) -> None:
    pool = make_pool(knobs={"START": "FALSE"})
    cluster = pool.submit("executable = /bin/true\nlog = h.log\nqueue\n")
    out = pool.htcd("hold", f"{cluster}.0", "-reason", "checking inputs").stdout
    assert f"Job {cluster}.0 held" in out
    assert pool.job_attr(f"{cluster}.0", "JobStatus") == "5"
    assert pool.job_attr(f"{cluster}.0", "HoldReason") == "checking inputs"
    again = pool.htcd("hold", f"{cluster}.0", check=False)
    assert again.returncode == 1 and again.stderr == f"Job {cluster}.0 already held\n"
    assert f"Job {cluster}.0 released" in pool.htcd("release", f"{cluster}.0").stdout
    assert pool.job_attr(f"{cluster}.0", "JobStatus") == "1"
    assert events((pool.jobs_dir / "h.log").read_text()) == ["000", "012", "013"]


def test_ping_shows_the_authenticated_identity(pool) -> None:
    for daemon in ("MASTER", "SCHEDD", "COLLECTOR"):
        out = pool.htcd("ping", daemon).stdout
        assert f"succeeded as {getpass.getuser()}@" in out and "and FS)" in out

"""`htcd q` views beyond the default table: -run, -hold, -idle, -format, -af:OPTS, -userlog."""

from __future__ import annotations

import os
from pathlib import Path

from pooltools import wait_for

from htcd.classad import ClassAd
from htcd.cli import output
from htcd.schedd import userlog


def test_format_items_like_printf() -> None:
    ad = ClassAd({"ClusterId": 12, "ProcId": 3, "Owner": "alice", "Memory": 2048.5, "Flag": True})
    assert output.format_one(ad, "%d.", "ClusterId") == "12."
    assert output.format_one(ad, "%-7s|", "Owner") == "alice  |"
    assert output.format_one(ad, "%V\\n", "Owner") == '"alice"\n'
    assert output.format_one(ad, "%.1f", "Memory") == "2048.5"
    assert output.format_one(ad, "%d", "Missing") == ""  # a number that is not there prints nothing
    assert output.format_one(ad, "%v", "Missing") == "undefined"
    assert output.format_one(ad, "100%%", "Flag") == "100%"
    assert output.formatted([ad, ad], [["%d.", "ClusterId"], ["%d\\n", "ProcId"]]) == "12.3\n12.3\n"


def test_autoformat_options() -> None:
    ad = ClassAd({"ClusterId": 5, "ProcId": 0, "Cmd": "/bin/sleep", "Mem": "2 * 1024"})
    ad.set_expr("Mem", "2 * 1024")
    assert output.autoformat([ad], ["Cmd", "Mem"]) == "/bin/sleep 2048\n"
    assert output.autoformat([ad], ["Cmd", "Mem"], "j") == "5.0 /bin/sleep 2048\n"
    assert output.autoformat([ad], ["Cmd", "Mem"], "lt") == "Cmd = /bin/sleep\tMem = 2048\n"
    assert output.autoformat([ad], ["Mem"], "r") == "2 * 1024\n"
    assert output.autoformat([ad], ["Cmd", "Mem"], ",h") == "Cmd,Mem\n/bin/sleep,2048\n"
    assert output.split_af_option(["q", "-af:jh", "Cmd"]) == ["q", "-af-options", "jh", "-af", "Cmd"]


def test_q_views_on_a_real_pool(make_pool) -> None:
    pool = make_pool(knobs={"NUM_CPUS": "1"}, slots=1)
    script = pool.jobs_dir / "long.sh"
    script.write_text("#!/bin/sh\nsleep 120\n")
    os.chmod(script, 0o755)
    running = pool.submit("executable = long.sh\nlog = v.log\nqueue\n", "run.sub")
    idle = pool.submit("executable = long.sh\nrequirements = false\nlog = v.log\nqueue 2\n", "idle.sub")
    wait_for(lambda: pool.job_attr(f"{running}.0", "JobStatus") == "2", 60, "the first job to run")
    pool.htcd("hold", f"{idle}.1", "-reason", "waiting for data")

    run = pool.htcd("q", "-run").stdout
    assert "HOST(S)" in run and f"{running}.0" in run and "slot1@" in run and f"{idle}.0" not in run
    hold = pool.htcd("q", "-hold").stdout
    assert "HOLD_REASON" in hold and f"{idle}.1" in hold and "waiting for data" in hold
    assert f"{running}.0" not in hold
    idle_view = pool.htcd("q", "-idle").stdout
    assert f"{idle}.0" in idle_view and f"{idle}.1" not in idle_view and f"{running}.0" not in idle_view
    fmt = pool.htcd("q", "-format", "%d.", "ClusterId", "-format", "%d\\n", "ProcId").stdout
    assert sorted(fmt.split()) == sorted([f"{running}.0", f"{idle}.0", f"{idle}.1"])
    af = pool.htcd("q", f"{idle}", "-af:jh", "JobStatus").stdout.splitlines()
    assert af == ["ID JobStatus", f"{idle}.0 1", f"{idle}.1 5"]

    # the event log alone tells the same story
    log = pool.htcd("q", "-userlog", "v.log", "-nobatch").stdout
    assert "-- Event log: v.log" in log and " 1 idle, 1 running, 1 held" in log
    held = pool.htcd("q", "-userlog", "v.log", "-hold").stdout
    assert f"{idle}.1" in held and "waiting for data" in held
    pool.htcd("rm", f"{running}", f"{idle}")


def test_q_userlog_reads_completed_jobs_and_refuses_bad_files(tmp_path: Path, pool_dir: Path) -> None:
    import subprocess
    import sys

    from pooltools import clean_env

    log = tmp_path / "done.log"
    log.write_text(userlog.submit(3, 0, "h") + userlog.execute(3, 0, "h", "slot1@h")
                   + userlog.terminated(3, 0, exit_code=7, signal=None))
    proc = subprocess.run([sys.executable, "-m", "htcd", "q", "-userlog", str(log), "-af", "ClusterId", "ExitCode"],
                          env=clean_env(), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout == "3 7\n"
    table = subprocess.run([sys.executable, "-m", "htcd", "q", "-userlog", str(log)], env=clean_env(),
                           capture_output=True, text=True, timeout=60).stdout
    assert "1 jobs; 1 completed" in table and "DONE" in table
    bad = subprocess.run([sys.executable, "-m", "htcd", "q", "-userlog", str(tmp_path / "nope.log")],
                         env=clean_env(), capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and "cannot read event log" in bad.stderr and "Traceback" not in bad.stderr

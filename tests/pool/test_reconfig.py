"""`htcd reconfig` on a running pool: applied knobs, pending restart-only knobs, broken configs."""

from __future__ import annotations

import os
import signal

from pooltools import wait_for


def test_reconfig_applies_start_and_reports_restart_only_knobs(make_pool) -> None:
    pool = make_pool(knobs={"START": "FALSE"})
    (pool.jobs_dir / "t.sh").write_text("#!/bin/sh\necho ran\n")
    os.chmod(pool.jobs_dir / "t.sh", 0o755)
    cluster = pool.submit("executable = t.sh\noutput = t.out\nlog = t.log\nqueue\n")
    assert pool.job_attr(f"{cluster}.0", "JobStatus") == "1"
    text = pool.config_file.read_text().replace("START = FALSE", "START = TRUE").replace("NUM_CPUS = 2", "NUM_CPUS = 3")
    pool.config_file.write_text(text)
    out = pool.htcd("reconfig").stdout
    assert 'Sent "Reconfig" command to local master' in out
    assert "NUM_CPUS changed" in out, "a restart-only knob is reported as pending"
    # (on the shared file system the job writes t.out itself: wait for its words, not the file)
    wait_for(lambda: "005" in (pool.jobs_dir / "t.log").read_text(), 60, "the job to run once START is true")
    assert (pool.jobs_dir / "t.out").read_text() == "ran\n"
    wait_for(lambda: "needs a restart of the startd" in pool.log("StartLog"), 20, "the startd to log it")
    assert len(pool.slot_names()) == 2, "NUM_CPUS stays as it was until a restart"


def test_broken_config_is_refused_and_the_pool_keeps_running(make_pool) -> None:
    pool = make_pool()
    good = pool.config_file.read_text()
    pool.config_file.write_text(good + "if defined NUM_CPUS\nSTART = TRUE\n")  # unterminated if
    proc = pool.htcd("reconfig", check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert f"{pool.config_file}:11: if on line 11 has no endif" in proc.stderr
    assert "nothing was sent" in proc.stderr
    pool.master.send_signal(signal.SIGHUP)  # the daemons' own refusal: they reread on SIGHUP too
    wait_for(lambda: "reconfig failed, keeping the running config" in pool.log("MasterLog"), 20,
             "the master to refuse the broken config")
    assert not [n for n, pid in pool.daemon_pids().items() if pid is None]
    pool.config_file.write_text(good)
    (pool.jobs_dir / "u.sh").write_text("#!/bin/sh\necho fine\n")
    os.chmod(pool.jobs_dir / "u.sh", 0o755)
    pool.submit("executable = u.sh\noutput = u.out\nqueue\n")
    wait_for(lambda: (pool.jobs_dir / "u.out").exists(), 60, "a job after the refused reconfig")


def test_reconfig_one_daemon(pool) -> None:
    out = pool.htcd("reconfig", "-daemon", "schedd").stdout
    assert "local schedd" in out
    wait_for(lambda: "reconfig requested by" in pool.log("SchedLog"), 20, "the schedd to reconfig")

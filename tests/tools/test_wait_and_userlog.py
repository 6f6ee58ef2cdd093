"""Reading event logs: the incremental reader, `htcd wait`, and HTCondor's own reader as oracle."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pooltools import clean_env, wait_for

from htcd.eventlog import LogFollower, job_states, parse_events, read_events
from htcd.schedd import userlog

WHEN = 1_790_000_000.0


def _log_of_three_jobs() -> str:
    return "".join([
        userlog.submit(7, 0, "<127.0.0.1:9618>", when=WHEN),
        userlog.submit(7, 1, "<127.0.0.1:9618>", when=WHEN),
        userlog.submit(8, 0, "<127.0.0.1:9618>", when=WHEN),
        userlog.execute(7, 0, "<127.0.0.1:9619>", "slot1@host", when=WHEN + 1),
        userlog.terminated(7, 0, exit_code=3, signal=None, when=WHEN + 2),
        userlog.held(7, 1, "Spooling input data files", 16, 2, when=WHEN + 3),
        userlog.aborted(8, 0, "via htcd rm (by user alice)", when=WHEN + 4),
    ])


def test_reader_follows_states_and_values() -> None:
    events, consumed, skipped = parse_events(_log_of_three_jobs())
    assert [e.type for e in events] == [0, 0, 0, 1, 5, 12, 9]
    assert skipped == 0 and consumed == len(_log_of_three_jobs())
    jobs = job_states(events)
    assert {jid: j.status for jid, j in jobs.items()} == {(7, 0): 4, (7, 1): 5, (8, 0): 3}
    assert jobs[(7, 0)].attrs["ReturnValue"] == 3
    assert jobs[(7, 1)].attrs["HoldReason"] == "Spooling input data files"
    assert (jobs[(7, 1)].attrs["HoldReasonCode"], jobs[(7, 1)].attrs["HoldReasonSubCode"]) == (16, 2)
    assert jobs[(8, 0)].attrs["Reason"] == "via htcd rm (by user alice)"
    assert events[0].timestamp == WHEN


def test_reader_never_hands_out_half_an_event(tmp_path: Path) -> None:
    text = _log_of_three_jobs()
    path = tmp_path / "job.log"
    path.write_bytes(b"")
    follower = LogFollower(str(path))
    got = []
    # append in awkward pieces: mid-line, mid-event, then the rest
    for piece in (text[:10], text[10:75], text[75:200], text[200:]):
        with open(path, "a") as f:
            f.write(piece)
        got += follower.poll()
        assert all(e.raw.endswith("...\n") for e in got)
    assert [(e.type, e.cluster, e.proc) for e in got] == [(e.type, e.cluster, e.proc) for e in parse_events(text)[0]]


def test_reader_skips_garbage_and_unfinished_events() -> None:
    text = ("not an event\n" + userlog.submit(1, 0, "h", when=WHEN)
            + "001 (001.000.000) 2026-11-22 20:30:00 Job executing on host: h\n"  # no "..." line
            + userlog.terminated(1, 0, exit_code=0, signal=None, when=WHEN))
    events, _, skipped = parse_events(text)
    assert [e.type for e in events] == [0, 5]
    assert skipped == 2


def test_reader_agrees_with_htcondors_reader(tmp_path: Path) -> None:
    htcondor2 = pytest.importorskip("htcondor2")
    path = tmp_path / "job.log"
    path.write_text(_log_of_three_jobs())
    theirs = [(int(e.type), e.cluster, e.proc) for e in htcondor2.JobEventLog(str(path)).events(stop_after=0)]
    mine = [(e.type, e.cluster, e.proc) for e in read_events(str(path))]
    assert mine == theirs and len(mine) == 7


def _wait(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "htcd", "wait", *args], env=clean_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_wait_returns_when_all_jobs_are_done(tmp_path: Path) -> None:
    path = tmp_path / "job.log"
    path.write_text(_log_of_three_jobs())
    proc = subprocess.run([sys.executable, "-m", "htcd", "wait", "-wait", "0.3", str(path)], env=clean_env(),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "Time expired." in proc.stdout  # 7.1 is held, not done
    done = subprocess.run([sys.executable, "-m", "htcd", "wait", str(path), "7.0"], env=clean_env(),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "All jobs done." in done.stdout
    proc = _wait(str(path), "7")
    try:
        with open(path, "a") as f:  # the held job is released and ends while wait watches
            f.write(userlog.released(7, 1, "via htcd release", when=WHEN + 5))
            f.write(userlog.terminated(7, 1, exit_code=0, signal=None, when=WHEN + 6))
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0 and out.strip() == "All jobs done.", err


def test_wait_num_echo_and_bad_input(tmp_path: Path) -> None:
    path = tmp_path / "job.log"
    path.write_text(_log_of_three_jobs())
    proc = subprocess.run([sys.executable, "-m", "htcd", "wait", "-num", "2", "-echo", str(path)],
                          env=clean_env(), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "Specified number of jobs (2) done." in proc.stdout
    assert proc.stdout.count("...\n") == 7
    for args, msg in ((["nope.log"], "Couldn't open"), ([str(path), "x.y"], "bad job id")):
        bad = subprocess.run([sys.executable, "-m", "htcd", "wait", *args], env=clean_env(),
                             capture_output=True, text=True, timeout=60)
        assert bad.returncode == 1 and msg in bad.stderr and "Traceback" not in bad.stderr


def test_wait_on_a_real_pool(pool) -> None:
    (pool.jobs_dir / "t.sh").write_text("#!/bin/sh\nexit 0\n")
    os.chmod(pool.jobs_dir / "t.sh", 0o755)
    (pool.jobs_dir / "t.sh").write_text("#!/bin/sh\nhead -c 3000000 /dev/zero | tail -c 1 >/dev/null\nexit 0\n")
    pool.submit("executable = t.sh\nlog = w.log\njob_ad_information_attrs = JobPrio, Owner\n"
                "request_memory = 64\nqueue 2\n")
    wait_for(lambda: (pool.jobs_dir / "w.log").exists(), 30, "the event log")
    proc = pool.htcd("wait", "-wait", "60", "w.log")
    assert "All jobs done." in proc.stdout
    text = (pool.jobs_dir / "w.log").read_text()
    assert text.count("005 (") == 2 and "Partitionable Resources" in text
    htcondor2 = pytest.importorskip("htcondor2")
    read = list(htcondor2.JobEventLog(str(pool.jobs_dir / "w.log")).events(stop_after=0))
    assert len(read) == text.count("\n...\n")  # not one event lost
    kinds = [int(e.type) for e in read]
    assert kinds.count(28) == kinds.count(0) + kinds.count(1) + kinds.count(5) + kinds.count(6)
    info = [e for e in read if int(e.type) == 28]
    assert all(e["JobPrio"] == 0 and e["Owner"] for e in info)
    ends = [e for e in read if int(e.type) == 5]
    assert all(e["ReturnValue"] == 0 and e["RequestMemory"] == 64 for e in ends)
    sizes = [e for e in read if int(e.type) == 6]
    assert len(sizes) == 2 and all(e["Size"] > 0 for e in sizes)


def test_job_ads_from_a_log(tmp_path: Path) -> None:
    from htcd.eventlog import job_ads

    path = tmp_path / "job.log"
    path.write_text(_log_of_three_jobs())
    ads = {(a.eval("ClusterId"), a.eval("ProcId")): a for a in job_ads(str(path))}
    assert {k: a.eval("JobStatus") for k, a in ads.items()} == {(7, 0): 4, (7, 1): 5, (8, 0): 3}
    assert ads[(7, 0)].eval("ExitCode") == 3 and ads[(7, 0)].eval("CompletionDate") == int(WHEN + 2)
    assert ads[(7, 1)].eval("HoldReasonCode") == 16
    assert ads[(8, 0)].eval("RemoveReason") == "via htcd rm (by user alice)"

"""The pool-wide EVENT_LOG, and picking a schedd by name with -name."""

from __future__ import annotations

import os

import pytest
from pooltools import wait_for


def test_event_log_gets_every_jobs_events_and_name_picks_the_schedd(make_pool) -> None:
    pool = make_pool(knobs={"EVENT_LOG": "$(LOG)/EventLog"})
    (pool.jobs_dir / "t.sh").write_text("#!/bin/sh\nexit 4\n")
    os.chmod(pool.jobs_dir / "t.sh", 0o755)
    name = pool.htcd("status", "-schedd", "-af", "Name").stdout.strip()
    assert name
    (pool.jobs_dir / "a.sub").write_text("executable = t.sh\nqueue 2\n")  # no log of its own
    out = pool.htcd("submit", "-name", name, "-terse", "a.sub").stdout
    cid = int(out.split(".")[0])
    pool.htcd("q", "-name", name, str(cid))
    event_log = pool.local / "log" / "EventLog"
    wait_for(lambda: event_log.exists() and event_log.read_text().count("005 (") == 2, 60,
             "both terminated events in the pool's event log")
    htcondor2 = pytest.importorskip("htcondor2")
    read = list(htcondor2.JobEventLog(str(event_log)).events(stop_after=0))
    assert len(read) == event_log.read_text().count("\n...\n")
    assert {(e.cluster, e.proc) for e in read} == {(cid, 0), (cid, 1)}
    assert [e["ReturnValue"] for e in read if int(e.type) == 5] == [4, 4]

    bad = pool.htcd("submit", "-name", "nosuch@nowhere", "a.sub", check=False)
    assert bad.returncode == 1 and "no schedd named 'nosuch@nowhere'" in bad.stderr
    assert "Traceback" not in bad.stderr

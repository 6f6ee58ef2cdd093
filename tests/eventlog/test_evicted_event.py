"""The evicted event (004) with its Partitionable Resources table after the reason, as HTCondor
writes it, read back by HTCondor's reader (``htcondor2.JobEventLog``) and by htcd's own."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from htcd.api.eventlog import JobEventLog
from htcd.schedd import userlog

os.environ.setdefault("CONDOR_CONFIG", "/dev/null")
htcondor2 = pytest.importorskip("htcondor2")

WHEN = 1_795_420_800.0
REASON = "evicted from slot1_1@host: the startd is shutting down"


def _text() -> str:
    return userlog.evicted(12, 0, REASON, user_cpu=61, sys_cpu=2, sent=10, received=20,
                           usage={"Cpus": 0.25, "Disk": 12, "Memory": 3}, request={"Cpus": 1, "Disk": 10, "Memory": 128},
                           allocated={"Cpus": 1, "Disk": 50000, "Memory": 2048}, when=WHEN)


def test_evicted_event_carries_the_resources_table(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    userlog.append(str(log), _text())
    userlog.append(str(log), userlog.evicted(12, 1, "plain", when=WHEN))  # no table: still read
    events = list(htcondor2.JobEventLog(str(log)).events(stop_after=0))
    assert len(events) == 2 and [int(e.type) for e in events] == [4, 4]
    first = events[0]
    assert first["Checkpointed"] is False and first["SentBytes"] == 10.0 and first["ReceivedBytes"] == 20.0
    # HTCondor's reader takes the table as the end of the reason and keeps no figures of it for 004
    assert first["Reason"] == REASON and events[1]["Reason"] == "plain"

def test_the_reason_is_not_taken_from_the_table(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    userlog.append(str(log), _text())
    ours = list(JobEventLog(str(log)).events(stop_after=0))
    assert len(ours) == 1 and ours[0]["Reason"] == REASON


def test_layout_matches_htcondor() -> None:
    lines = _text().splitlines()
    assert lines[0].endswith("Job was evicted.")
    assert lines[6:] == ["\t" + REASON, "\tPartitionable Resources :    Usage  Request Allocated ",
                         "\t   Cpus                 :     0.25        1         1 ",
                         "\t   Disk (KB)            :       12       10     50000 ",
                         "\t   Memory (MB)          :        3      128      2048 ", "..."]

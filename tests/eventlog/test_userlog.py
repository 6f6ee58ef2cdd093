"""Event-log text read back by HTCondor's own reader (``htcondor2.JobEventLog``)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from htcd.schedd import userlog

os.environ.setdefault("CONDOR_CONFIG", "/dev/null")
htcondor2 = pytest.importorskip("htcondor2")

WHEN = 1_795_420_800.0  # a fixed instant, so timestamps can be compared too


def _events(path: Path) -> list:
    return list(htcondor2.JobEventLog(str(path)).events(stop_after=0))


def _written() -> list[tuple[str, int, dict[str, object]]]:
    """(event text, expected type number, attributes the reader must report)."""
    return [
        (userlog.submit(12, 0, "<127.0.0.1:9618?addrs=127.0.0.1-9618>", when=WHEN), 0,
         {"SubmitHost": "<127.0.0.1:9618?addrs=127.0.0.1-9618>"}),
        (userlog.submit(12, 1, "<127.0.0.1:9618>", when=WHEN, notes="nightly run 7", user_notes="by hand"), 0,
         {"LogNotes": "nightly run 7", "UserNotes": "by hand"}),  # SubmitEventNotes, SubmitEventUserNotes
        (userlog.execute(12, 0, "<127.0.0.1:40000>", slot="slot1@host", when=WHEN), 1,
         {"ExecuteHost": "<127.0.0.1:40000>", "SlotName": "slot1@host"}),
        (userlog.image_size(12, 0, 2048, memory_usage_mb=3, rss_kb=2172, when=WHEN), 6,
         {"Size": 2048, "MemoryUsage": 3, "ResidentSetSize": 2172}),
        (userlog.evicted(12, 0, "the startd is shutting down", user_cpu=61, sys_cpu=2, sent=10, received=20,
                         when=WHEN), 4,
         {"Checkpointed": False, "SentBytes": 10.0, "ReceivedBytes": 20.0}),
        (userlog.held(12, 0, "Error from slot1: the executable\nwas not found", 6, 2, when=WHEN), 12,
         {"HoldReason": "Error from slot1: the executable was not found", "HoldReasonCode": 6,
          "HoldReasonSubCode": 2}),
        (userlog.released(12, 0, "via htcd release (by user bob)", when=WHEN), 13,
         {"Reason": "via htcd release (by user bob)"}),
        (userlog.terminated(12, 0, exit_code=3, signal=None, user_cpu=3725, sys_cpu=90061, sent=100, received=2000,
                            usage={"Cpus": 0.5, "Disk": 10, "Memory": 2}, request={"Cpus": 1, "Disk": 10,
                                                                                   "Memory": 128},
                            allocated={"Cpus": 1, "Disk": 50000, "Memory": 2048}, when=WHEN), 5,
         {"TerminatedNormally": True, "ReturnValue": 3, "RunRemoteUsage": "Usr 0 01:02:05, Sys 1 01:01:01",
          "SentBytes": 100.0, "ReceivedBytes": 2000.0, "TotalSentBytes": 100.0, "RequestMemory": 128,
          "Memory": 2048, "MemoryUsage": 2, "Cpus": 1, "DiskUsage": 10}),
        (userlog.terminated(12, 1, exit_code=None, signal=9, when=WHEN), 5,
         {"TerminatedNormally": False, "TerminatedBySignal": 9}),
        (userlog.aborted(12, 1, "via htcd rm (by user bob)", when=WHEN), 9,
         {"Reason": "via htcd rm (by user bob)"}),
        (userlog.job_ad_information(12, 0, userlog.information_attrs(
            {"JobAdInformationAttrs": '"Owner, ExitCode"', "Owner": '"bob"', "ExitCode": "3", "X": "1"}),
            when=WHEN), 28,
         {"Owner": "bob", "ExitCode": 3}),
    ]


def test_every_event_round_trips(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    written = _written()
    for text, _, _ in written:
        userlog.append(str(log), text)
    events = _events(log)
    assert len(events) == len(written)
    for event, (text, type_, attrs) in zip(events, written, strict=True):
        assert int(event.type) == type_, text
        assert (event.cluster, event.proc) == (12, 0 if "(012.000" in text else 1)
        assert event.timestamp == int(WHEN)
        for name, value in attrs.items():
            assert event[name] == value, (name, text)


def test_terminated_text_matches_htcondor_layout() -> None:
    text = userlog.terminated(1, 0, exit_code=0, signal=None, user_cpu=1, request={"Cpus": 1},
                              allocated={"Cpus": 1}, when=WHEN)
    lines = text.splitlines()
    assert lines[1:3] == ["\t(1) Normal termination (return value 0)",
                          "\t\tUsr 0 00:00:01, Sys 0 00:00:00  -  Run Remote Usage"]
    assert "\tPartitionable Resources :    Usage  Request Allocated " in lines
    assert lines[-1] == "..."


def test_concurrent_appends_never_interleave(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    per_thread = 200

    def writer(proc: int) -> None:
        for i in range(per_thread):
            userlog.append(str(log), userlog.held(7, proc, f"reason {i} " + "x" * 300, i, 0, when=WHEN))

    threads = [threading.Thread(target=writer, args=(p,)) for p in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    events = _events(log)
    assert len(events) == 4 * per_thread
    assert all(e["HoldReason"].startswith("reason ") for e in events)

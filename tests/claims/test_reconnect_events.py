"""The reconnection events (022, 023, 024) read back by HTCondor's own reader."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from htcd.schedd import userlog

os.environ.setdefault("CONDOR_CONFIG", "/dev/null")
htcondor2 = pytest.importorskip("htcondor2")

WHEN = 1_795_420_800.0


def test_reconnect_events_round_trip(tmp_path: Path) -> None:
    written = [
        (userlog.disconnected(7, 1, "Socket between submit and execute hosts\nclosed", "slot1@ep",
                              "<127.0.0.1:4000>", when=WHEN), 22,
         {"DisconnectReason": "Socket between submit and execute hosts closed", "StartdName": "slot1@ep",
          "StartdAddr": "<127.0.0.1:4000>"}),
        (userlog.reconnected(7, 1, "slot1@ep", "<127.0.0.1:4000>", "<127.0.0.1:4001>", when=WHEN), 23,
         {"StartdName": "slot1@ep", "StartdAddr": "<127.0.0.1:4000>", "StarterAddr": "<127.0.0.1:4001>"}),
        (userlog.reconnect_failed(7, 1, "Job lease expired", "slot1@ep", when=WHEN), 24,
         {"Reason": "Job lease expired", "StartdName": "slot1@ep"}),
    ]
    log = tmp_path / "r.log"
    for text, _, _ in written:
        userlog.append(str(log), text)
    events = list(htcondor2.JobEventLog(str(log)).events(stop_after=0))
    assert len(events) == len(written)
    for event, (_, type_, attrs) in zip(events, written, strict=True):
        assert int(event.type) == type_ and (event.cluster, event.proc) == (7, 1)
        assert event.timestamp == int(WHEN)
        for name, value in attrs.items():
            assert event[name] == value, name

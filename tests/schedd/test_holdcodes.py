"""Hold bookkeeping as HTCondor's schedd keeps it: NumHolds, NumHoldsByReason (labels from the
manual's hold reason table) and the Last* attributes a release, hold or removal leaves."""

from __future__ import annotations

from htcd.classad import ClassAd
from htcd.schedd.holdcodes import HOLD_REASON, counted, keep_as_last, label
from htcd.schedd.jobs import Cluster, Job


def test_labels_follow_the_manuals_table() -> None:
    assert (label(1), label(3), label(12), label(26), label(46)) == \
        ("UserRequest", "JobPolicy", "TransferOutputError", "SystemPolicy", "JobDurationExceeded")
    assert label(999) == "Code999"


def test_holds_are_counted_by_reason() -> None:
    proc: dict[str, str] = {}
    for code in (1, 12, 1):
        proc.update(counted(proc, code))
    assert proc["NumHolds"] == "3"
    by = ClassAd.from_wire({"X": proc["NumHoldsByReason"]}).get_value("X")
    assert isinstance(by, ClassAd)
    assert {k: by.get_value(k) for k in by} == {"UserRequest": 2, "TransferOutputError": 1}


def test_a_release_keeps_the_hold_reason_as_last() -> None:
    job = Job(Cluster(1, {"Owner": '"u"'}), 0, {"HoldReason": '"disk full"', "HoldReasonCode": "1",
                                                 "HoldReasonSubCode": "0"})
    keep_as_last(job, HOLD_REASON)
    assert job.proc == {"LastHoldReason": '"disk full"', "LastHoldReasonCode": "1", "LastHoldReasonSubCode": "0"}


def test_a_reason_from_the_cluster_is_masked_in_the_proc_only() -> None:
    cluster = Cluster(1, {"HoldReason": '"submitted on hold"', "HoldReasonCode": "15"})
    job = Job(cluster, 0, {})
    keep_as_last(job, HOLD_REASON)
    assert job.proc["LastHoldReason"] == '"submitted on hold"' and job.proc["LastHoldReasonCode"] == "15"
    assert job.proc["HoldReason"] == "undefined" and job.get("HoldReason") is None
    assert cluster.text("HoldReason") == '"submitted on hold"'
    keep_as_last(job, HOLD_REASON)  # nothing left to move: the Last* values stay
    assert job.proc["LastHoldReasonCode"] == "15"

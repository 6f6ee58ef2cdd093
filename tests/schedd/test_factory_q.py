"""``htcd q``'s batch view of clusters as condor_q counts them: TOTAL is TotalSubmitProcs, DONE the
procs that left the queue (of a factory: materialized ones less those queued)."""

from __future__ import annotations

from htcd.classad import ClassAd
from htcd.cli.q import batch


def _ad(cid: int, proc: int, status: int = 1, **extra: object) -> ClassAd:
    ad = ClassAd()
    for k, v in {"ClusterId": cid, "ProcId": proc, "Owner": "u", "QDate": 0, "JobStatus": status, **extra}.items():
        ad[k] = v
    return ad


def _row(ads: list[ClassAd]) -> list[str]:
    return batch(ads).splitlines()[1].split()


def test_factory_total_and_done() -> None:
    ads = [_ad(5, p, TotalSubmitProcs=1000000, JobMaterializeNextProcId=12, JobMaterializeMaxIdle=3)
           for p in (9, 10, 11)]
    row = _row(ads)
    assert row[-2:] == ["1000000", "5.9-11"] and row[5] == "9", row  # 12 made, 3 queued: 9 done


def test_plain_cluster_done_counts_procs_that_left() -> None:
    row = _row([_ad(7, 2, TotalSubmitProcs=3)])
    assert row[5] == "2" and row[-2] == "3", row


def test_held_back_procs_are_not_done() -> None:
    ads = [_ad(8, p, TotalSubmitProcs=50, JobMaterializeLimit=2) for p in (3, 4)]
    row = _row(ads)
    assert row[5] == "3" and row[-2] == "50", row  # procs 0-2 left; 5-49 still to come


def test_cluster_without_total_submit_procs() -> None:
    row = _row([_ad(9, 0, status=4), _ad(9, 1)])
    assert row[5] == "1" and row[-2] == "2", row

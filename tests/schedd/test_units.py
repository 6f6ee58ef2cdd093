"""The schedd's pure parts on real files: the queue file, the history reader, autocluster helpers."""

from __future__ import annotations

from pathlib import Path

from htcd.classad import ClassAd, parse_expr
from htcd.schedd import history
from htcd.schedd.autocluster import references, round_text, slot_references
from htcd.schedd.queue import JobQueue


def test_queue_stores_cluster_attributes_once(tmp_path: Path) -> None:
    q = JobQueue(str(tmp_path / "q.db"))
    q.submit(7, {"Cmd": '"/bin/true"', "Owner": '"u"'}, [{}, {"Args": '"1"'}, {}])
    q.set_proc_ads({(7, 2): {"JobStatus": "5"}})
    rows = q.db.execute("SELECT COUNT(*) FROM clusters").fetchone()[0]
    proc_texts = [r[0] for r in q.db.execute("SELECT ad FROM procs ORDER BY proc_id")]
    q.close()
    assert rows == 1 and all("Cmd" not in t for t in proc_texts)
    clusters, procs, next_cluster = JobQueue(str(tmp_path / "q.db")).load()
    assert clusters == {7: {"Cmd": '"/bin/true"', "Owner": '"u"'}} and next_cluster == 8
    assert list(procs) == [(7, 0, {}), (7, 1, {"Args": '"1"'}), (7, 2, {"JobStatus": "5"})]


def test_history_reads_backwards_across_blocks_and_rotations(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(history, "BLOCK", 97)  # records straddle many block boundaries
    path = str(tmp_path / "history")
    for i in range(60):
        history.append(path, [ClassAd({"Owner": "u", "ClusterId": i, "ProcId": 0, "Cmd": "x" * (i % 7)})],
                        max_size=1500, keep=2)
    assert len(history.rotated(path)) == 2
    got = [ad.get_value("ClusterId") for ad in history.read(path)]
    assert got == list(range(59, 59 - len(got), -1)) and len(got) > 20, "newest first, none skipped"
    with open(path, "a") as f:
        f.write("Owner = \"cut short")  # a write cut by a crash is not a record
    assert next(history.read(path)).get_value("ClusterId") == 59


def test_references_and_slot_references() -> None:
    mine, target = references(parse_expr("TARGET.Memory >= RequestMemory && MY.Disk > 0 && Foo"))
    assert mine == {"requestmemory", "disk", "foo"} and target == {"memory"}
    slot = ClassAd.from_wire({"Requirements": "START", "START": "TARGET.Owner != \"bad\" && KFlops > Need",
                              "KFlops": "100", "Rank": "TARGET.Prio"})
    assert slot_references(slot) == {"owner", "need", "prio"}


def test_round_text() -> None:
    assert round_text("110", "2") == "200"
    assert round_text("1234", "25%") == "1250"
    assert round_text('"text"', "2") == '"text"'

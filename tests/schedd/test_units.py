"""The schedd's pure parts on real files: the queue file, the history reader, autocluster helpers."""

from __future__ import annotations

from pathlib import Path

from htcd.classad import ClassAd, parse_expr
from htcd.config import Config, load
from htcd.schedd import history
from htcd.schedd.autocluster import AutoClusters, references, round_text, slot_references
from htcd.schedd.jobs import Cluster, Job
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


def _schedd_config(tmp_path: Path, text: str) -> Config:
    top = tmp_path / "htcd_config"
    top.write_text(text)
    return load("SCHEDD", env={"HTCD_CONFIG": str(top)})


def test_procs_of_one_cluster_get_autoclusters_by_their_own_values_and_a_reconfig_rounds_anew(
        tmp_path: Path) -> None:
    """The significant attributes cached per cluster and proc shape: procs with their own
    request_memory split by value, a proc with its own Requirements reads its own references,
    and SCHEDD_ROUND_ATTR_* from a new config applies once configure() is called (a reconfig)."""
    cluster = Cluster(1, {"Owner": '"alice"', "Requirements": "TARGET.Memory > 0", "RequestCpus": "1",
                          "RequestMemory": "100"})
    jobs = [Job(cluster, 0, {}), Job(cluster, 1, {"RequestMemory": "101"}), Job(cluster, 2, {"RequestMemory": "101"}),
            Job(cluster, 3, {"RequestMemory": "150"}),
            Job(cluster, 4, {"RequestMemory": "101", "Requirements": "MY.Flavour == \"x\"", "Flavour": '"x"'})]
    ac = AutoClusters(_schedd_config(tmp_path, ""))
    names = ("procid", "requestmemory", "requirements", "owner", "flavour", "missing")
    for j in jobs:
        assert ac._values(j, names) == tuple(j.text(a) for a in names)
    ids = [ac.id_of(j)[0] for j in jobs]
    assert ids[1] == ids[2] and len({ids[0], ids[1], ids[3], ids[4]}) == 4
    assert "flavour" in ac.id_of(jobs[4])[1] and "flavour" not in ac.id_of(jobs[1])[1]
    ac.configure(_schedd_config(tmp_path, "SCHEDD_ROUND_ATTR_RequestMemory = 2\n"))  # up to a multiple of 100
    again = [ac.id_of(j)[0] for j in jobs]
    assert again[1] == again[2] == again[3] != again[0]

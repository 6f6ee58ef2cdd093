"""The durable job queue: SQLite in WAL mode with synchronous=FULL.

Ads are stored as JSON maps of attribute -> ClassAd expression text; a cluster's shared
attributes are stored once, in ``clusters``, and each proc row holds only what differs (ProcId
is the row's key).  One connection serves every thread: commits run in a worker thread (so the
event loop keeps answering queries), and a lock keeps transactions from interleaving.

What is committed when (the schedd, ``htcd/schedd/groupcommit.py``, decides; this module stores):

* A change a client waits for (submit, rm, hold, release, qedit, spool, transfer_data) is
  committed -- in the same transaction as every job change made before it -- before the client
  hears it succeeded.  A submit is one transaction, so a crash leaves each cluster wholly present
  or wholly absent.
* A change nobody waits for (a shadow's: the job started, exited, was evicted, held by policy,
  reconnected; usage) joins the pending changes and is committed with the others of the same
  event-loop turn, in one transaction (group commit: while one commit runs, the next turns'
  changes gather for the next).  A SIGKILL loses at most the changes of the last such batch;
  a graceful shutdown or SIGTERM commits them first.
* Its event-log event is written when the change is made, before the commit; so a crash in
  between leaves the event and the previous state on disk.  The restarted schedd then finds the
  job as it was before the change: a job that had started is idle again (it runs again; its first
  run is dropped at the startd when its lease, ``JobLeaseDuration``, runs out); a job that had
  ended is RUNNING with its claim and is reconnected, or requeued when its startd no longer has
  it.  Its events may repeat; no job is lost.  Before a claim runs its next job, the change
  that took the claim off the previous job is committed (on the loop, at once, unless the shadow
  awaited ``claims_settled``), so a restarted schedd never reconnects a job to a run that
  is another job's.
* A job that leaves the queue (completed, removed) is not deleted in the commit that records it:
  its row is marked ``gone`` with its final ad, and deleted by a later commit once its record is
  in the history file.  A schedd that starts appends the records of ``gone`` rows the history
  does not have (it looks at the newest records) and deletes the rows.  So a job is in the queue
  or in the history, exactly once, whenever the schedd crashes.
"""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from htcd.classad import ClassAd
from htcd.schedd import history

JobId = tuple[int, int]
T = TypeVar("T")

SCHEMA = """
CREATE TABLE IF NOT EXISTS clusters (cluster_id INTEGER PRIMARY KEY, ad TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS procs (
    cluster_id INTEGER NOT NULL, proc_id INTEGER NOT NULL, ad TEXT NOT NULL, gone INTEGER,
    PRIMARY KEY (cluster_id, proc_id));
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS factories (
    cluster_id INTEGER PRIMARY KEY, digest TEXT NOT NULL, items TEXT NOT NULL, next_proc INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS pending (
    cluster_id INTEGER NOT NULL, proc_id INTEGER NOT NULL, ad TEXT NOT NULL,
    PRIMARY KEY (cluster_id, proc_id));
"""

EMPTY = "{}"
_DROP_CLUSTER = ("DELETE FROM clusters WHERE cluster_id=? AND NOT EXISTS (SELECT 1 FROM procs WHERE cluster_id=?) "
                 "AND NOT EXISTS (SELECT 1 FROM pending WHERE cluster_id=?) "
                 "AND NOT EXISTS (SELECT 1 FROM factories WHERE cluster_id=?)")


def dump(ad: dict[str, str]) -> str:
    return json.dumps(ad, separators=(",", ":")) if ad else EMPTY


class Writes:
    """One transaction's job changes: ads to store, jobs that left the queue (their final ads,
    marked ``gone`` until the history has them) and jobs whose history records are written
    (deleted for good).  ``procs`` holds copies taken on the event loop; ``gone`` holds the
    departed jobs' own ads, which the transaction copies in its thread (a dict copy holds the GIL,
    so a change on the loop cannot interleave with it); the transaction serializes them there."""

    __slots__ = ("forget", "frees_claim", "gone", "procs")

    def __init__(self) -> None:
        self.procs: dict[JobId, dict[str, str]] = {}
        self.gone: dict[JobId, dict[str, str]] = {}
        self.forget: list[JobId] = []
        self.frees_claim = False  # a job whose stored ad names a claim no longer has it (the schedd's note)

    def __len__(self) -> int:
        return len(self.procs) + len(self.gone) + len(self.forget)


class JobQueue:
    def __init__(self, path: str) -> None:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(SCHEMA)
        if "gone" not in {row[1] for row in self.db.execute("PRAGMA table_info(procs)")}:
            self.db.execute("ALTER TABLE procs ADD COLUMN gone INTEGER")  # a queue file of an older schedd
        self.lock = threading.Lock()

    def close(self) -> None:
        with self.lock:
            self.db.close()

    def load(self) -> tuple[dict[int, dict[str, str]], Iterator[tuple[int, int, dict[str, str]]], int]:
        """(clusters, procs in id order, next cluster id) as committed; jobs gone are not in it."""
        clusters = {cid: json.loads(ad) for cid, ad in self.db.execute("SELECT cluster_id, ad FROM clusters")}
        row = self.db.execute("SELECT value FROM meta WHERE key='next_cluster'").fetchone()
        next_cluster = max(int(row[0]) if row else 1, max(clusters, default=0) + 1)

        def procs() -> Iterator[tuple[int, int, dict[str, str]]]:
            cur = self.db.execute("SELECT cluster_id, proc_id, ad FROM procs WHERE gone IS NULL "
                                  "ORDER BY cluster_id, proc_id")
            for c, p, ad in cur:
                yield c, p, {} if ad == EMPTY else json.loads(ad)

        return clusters, procs(), next_cluster

    def recover_history(self, path: str | None, max_size: int = 0, keep: int = 1) -> int:
        """At start-up: append to the history the jobs marked gone that it does not have (a crash
        came between their commit and the history write), then delete them; how many were
        appended.  The history is looked at only as far back as there are such jobs: their
        records, if written, are the newest."""
        rows = self.db.execute("SELECT cluster_id, proc_id, ad FROM procs WHERE gone IS NOT NULL "
                               "ORDER BY cluster_id, proc_id").fetchall()
        if not rows:
            return 0
        missing: list[ClassAd] = []
        if path:
            have = {(ad.get_value("ClusterId"), ad.get_value("ProcId"))
                    for ad in itertools.islice(history.read(path), len(rows))}
            cids = sorted({c for c, _, _ in rows})
            clusters = {c: json.loads(ad) for c, ad in self.db.execute(
                f"SELECT cluster_id, ad FROM clusters WHERE cluster_id IN ({','.join('?' * len(cids))})", cids)}
            for c, p, ad in rows:
                if (c, p) not in have:
                    missing.append(ClassAd.from_wire({**clusters.get(c, {}), **json.loads(ad), "ProcId": str(p)}))
            history.append(path, missing, max_size, keep)
        self.write(_forget([(c, p) for c, p, _ in rows]))
        return len(missing)

    def write(self, writes: Writes, then: Callable[[sqlite3.Cursor], T] | None = None) -> T | None:
        """``writes`` and then whatever ``then`` adds, in one transaction."""
        with self._transaction() as cur:
            if writes.procs:
                update_procs(cur, writes.procs)
            if writes.gone:
                cur.executemany("UPDATE procs SET ad=?, gone=1 WHERE cluster_id=? AND proc_id=?",
                                [(dump(dict(ad)), c, p) for (c, p), ad in writes.gone.items()])
            if writes.forget:
                cur.executemany("DELETE FROM procs WHERE cluster_id=? AND proc_id=?", writes.forget)
                cur.executemany(_DROP_CLUSTER, [(c, c, c, c) for c in sorted({c for c, _ in writes.forget})])
            return then(cur) if then is not None else None

    # -- changes a client asks for: the pending writes go in the same transaction ----------
    def submit(self, cluster_id: int, cluster_ad: dict[str, str], proc_ads: list[dict[str, str]],
               materialize: int | None = None, writes: Writes | None = None) -> None:
        """Add a cluster and its procs (ProcId = position) in one transaction.  With
        ``materialize``, only that many procs enter the queue; the rest wait, just as durable, in
        ``pending`` until the schedd materializes them (late materialization)."""
        self.write(writes or Writes(), lambda cur: insert_cluster(cur, cluster_id, cluster_ad, proc_ads, materialize))

    def set_proc_ads(self, changed: dict[JobId, dict[str, str]], writes: Writes | None = None) -> None:
        """Replace the stored proc ads of several jobs in one transaction."""
        self.write(writes or Writes(), lambda cur: update_procs(cur, changed))

    def delete(self, job_ids: Iterable[JobId]) -> None:
        """Remove jobs, and clusters left without procs, in one transaction."""
        self.write(_forget(list(job_ids)))

    # -- late materialization -------------------------------------------------------------
    def pending_counts(self) -> dict[int, int]:
        """Procs not yet materialized, per cluster."""
        return dict(self.db.execute("SELECT cluster_id, COUNT(*) FROM pending GROUP BY cluster_id"))

    def materialize(self, cluster_id: int, count: int) -> list[tuple[int, dict[str, str]]]:
        """Move the next ``count`` pending procs of a cluster into the queue, in one transaction."""
        with self._transaction() as cur:
            rows = cur.execute("SELECT proc_id, ad FROM pending WHERE cluster_id=? ORDER BY proc_id LIMIT ?",
                               (cluster_id, count)).fetchall()
            cur.executemany("INSERT INTO procs (cluster_id, proc_id, ad) VALUES (?, ?, ?)",
                            [(cluster_id, p, ad) for p, ad in rows])
            cur.executemany("DELETE FROM pending WHERE cluster_id=? AND proc_id=?",
                            [(cluster_id, p) for p, _ in rows])
        return [(p, {} if ad == EMPTY else json.loads(ad)) for p, ad in rows]

    def factories(self) -> Iterator[tuple[int, dict[str, object], list[dict[str, str]], int]]:
        """(cluster, submit digest, item rows, next proc id) of every late-materialization factory."""
        for cid, digest, items, next_proc in self.db.execute(
                "SELECT cluster_id, digest, items, next_proc FROM factories ORDER BY cluster_id"):
            yield cid, json.loads(digest), json.loads(items), next_proc

    def materialize_factory(self, cluster_id: int, procs: list[tuple[int, dict[str, str]]], next_proc: int,
                            cluster_ad: dict[str, str], done: bool) -> None:
        """Add a factory's newly built procs and move its next proc id on, in one transaction; a
        factory with every proc built is dropped (its cluster goes with its last job)."""
        with self._transaction() as cur:
            cur.executemany("INSERT INTO procs (cluster_id, proc_id, ad) VALUES (?, ?, ?)",
                            [(cluster_id, p, dump(ad)) for p, ad in procs])
            if done:
                cur.execute("DELETE FROM factories WHERE cluster_id=?", (cluster_id,))
            else:
                cur.execute("UPDATE factories SET next_proc=? WHERE cluster_id=?", (next_proc, cluster_id))
            cur.execute("UPDATE clusters SET ad=? WHERE cluster_id=?", (dump(cluster_ad), cluster_id))

    def set_cluster_ad(self, cluster_id: int, cluster_ad: dict[str, str]) -> None:
        with self._transaction() as cur:
            cur.execute("UPDATE clusters SET ad=? WHERE cluster_id=?", (dump(cluster_ad), cluster_id))

    def drop_pending(self, cluster_id: int) -> None:
        """Forget a cluster's unmaterialized procs (the cluster was removed)."""
        with self._transaction() as cur:
            cur.execute("DELETE FROM pending WHERE cluster_id=?", (cluster_id,))
            cur.execute("DELETE FROM factories WHERE cluster_id=?", (cluster_id,))
            cur.execute("DELETE FROM clusters WHERE cluster_id=? AND NOT EXISTS "
                        "(SELECT 1 FROM procs WHERE cluster_id=?)", (cluster_id, cluster_id))

    def _transaction(self) -> _Tx:
        return _Tx(self.db, self.lock)


def insert_cluster(cur: sqlite3.Cursor, cluster_id: int, cluster_ad: dict[str, str], proc_ads: list[dict[str, str]],
                   materialize: int | None = None) -> None:
    n = len(proc_ads) if materialize is None else materialize
    cur.execute("INSERT INTO clusters VALUES (?, ?)", (cluster_id, dump(cluster_ad)))
    cur.executemany("INSERT INTO procs (cluster_id, proc_id, ad) VALUES (?, ?, ?)",
                    [(cluster_id, i, dump(p)) for i, p in enumerate(proc_ads[:n])])
    cur.executemany("INSERT INTO pending VALUES (?, ?, ?)",
                    [(cluster_id, n + i, dump(p)) for i, p in enumerate(proc_ads[n:])])
    cur.execute("INSERT OR REPLACE INTO meta VALUES ('next_cluster', ?)", (str(cluster_id + 1),))


def insert_factory(cur: sqlite3.Cursor, cluster_id: int, cluster_ad: dict[str, str], digest: dict[str, object],
                   items: list[dict[str, str]], procs: list[dict[str, str]]) -> None:
    """A late-materialization factory: its cluster ad, digest and items, and the procs built now."""
    cur.execute("INSERT INTO clusters VALUES (?, ?)", (cluster_id, dump(cluster_ad)))
    cur.execute("INSERT INTO factories VALUES (?, ?, ?, ?)",
                (cluster_id, json.dumps(digest, separators=(",", ":")), json.dumps(items, separators=(",", ":")),
                 len(procs)))
    cur.executemany("INSERT INTO procs (cluster_id, proc_id, ad) VALUES (?, ?, ?)",
                    [(cluster_id, i, dump(p)) for i, p in enumerate(procs)])
    cur.execute("INSERT OR REPLACE INTO meta VALUES ('next_cluster', ?)", (str(cluster_id + 1),))


def update_procs(cur: sqlite3.Cursor, changed: dict[JobId, dict[str, str]]) -> None:
    cur.executemany("UPDATE procs SET ad=? WHERE cluster_id=? AND proc_id=? AND gone IS NULL",
                    [(dump(ad), c, p) for (c, p), ad in changed.items()])


def _forget(ids: list[JobId]) -> Writes:
    w = Writes()
    w.forget = ids
    return w


class _Tx:
    def __init__(self, db: sqlite3.Connection, lock: threading.Lock) -> None:
        self.db = db
        self.lock = lock

    def __enter__(self) -> sqlite3.Cursor:
        self.lock.acquire()
        try:
            self.cur = self.db.cursor()
            self.cur.execute("BEGIN IMMEDIATE")
        except BaseException:
            self.lock.release()
            raise
        return self.cur

    def __exit__(self, exc_type: object, *rest: object) -> None:
        try:
            self.cur.execute("COMMIT" if exc_type is None else "ROLLBACK")
        finally:
            self.lock.release()

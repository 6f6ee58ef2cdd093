"""The durable job queue: SQLite in WAL mode with synchronous=FULL.

Every change is one transaction, committed (fsync'd) before the client hears it succeeded,
so a crash at any moment leaves each cluster wholly present or wholly absent.  Ads are stored
as JSON maps of attribute -> ClassAd expression text; a cluster's shared attributes are stored
once, in ``clusters``, and each proc row holds only what differs (ProcId is the row's key).

One connection serves every thread: a large submit commits from a worker thread (so the event
loop keeps answering queries), and a lock keeps transactions from interleaving.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator

JobId = tuple[int, int]

SCHEMA = """
CREATE TABLE IF NOT EXISTS clusters (cluster_id INTEGER PRIMARY KEY, ad TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS procs (
    cluster_id INTEGER NOT NULL, proc_id INTEGER NOT NULL, ad TEXT NOT NULL,
    PRIMARY KEY (cluster_id, proc_id));
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS pending (
    cluster_id INTEGER NOT NULL, proc_id INTEGER NOT NULL, ad TEXT NOT NULL,
    PRIMARY KEY (cluster_id, proc_id));
"""

EMPTY = "{}"


def _dump(ad: dict[str, str]) -> str:
    return json.dumps(ad, separators=(",", ":")) if ad else EMPTY


class JobQueue:
    def __init__(self, path: str) -> None:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(SCHEMA)
        self.lock = threading.Lock()

    def close(self) -> None:
        with self.lock:
            self.db.close()

    def load(self) -> tuple[dict[int, dict[str, str]], Iterator[tuple[int, int, dict[str, str]]], int]:
        """(clusters, procs in id order, next cluster id) as committed."""
        clusters = {cid: json.loads(ad) for cid, ad in self.db.execute("SELECT cluster_id, ad FROM clusters")}
        row = self.db.execute("SELECT value FROM meta WHERE key='next_cluster'").fetchone()
        next_cluster = max(int(row[0]) if row else 1, max(clusters, default=0) + 1)

        def procs() -> Iterator[tuple[int, int, dict[str, str]]]:
            cur = self.db.execute("SELECT cluster_id, proc_id, ad FROM procs ORDER BY cluster_id, proc_id")
            for c, p, ad in cur:
                yield c, p, {} if ad == EMPTY else json.loads(ad)

        return clusters, procs(), next_cluster

    def submit(self, cluster_id: int, cluster_ad: dict[str, str], proc_ads: list[dict[str, str]],
               materialize: int | None = None) -> None:
        """Add a cluster and its procs (ProcId = position) in one transaction.  With
        ``materialize``, only that many procs enter the queue; the rest wait, just as durable, in
        ``pending`` until the schedd materializes them (late materialization)."""
        n = len(proc_ads) if materialize is None else materialize
        with self._transaction() as cur:
            cur.execute("INSERT INTO clusters VALUES (?, ?)", (cluster_id, _dump(cluster_ad)))
            cur.executemany("INSERT INTO procs VALUES (?, ?, ?)",
                            [(cluster_id, i, _dump(p)) for i, p in enumerate(proc_ads[:n])])
            cur.executemany("INSERT INTO pending VALUES (?, ?, ?)",
                            [(cluster_id, n + i, _dump(p)) for i, p in enumerate(proc_ads[n:])])
            cur.execute("INSERT OR REPLACE INTO meta VALUES ('next_cluster', ?)", (str(cluster_id + 1),))

    def pending_counts(self) -> dict[int, int]:
        """Procs not yet materialized, per cluster."""
        return dict(self.db.execute("SELECT cluster_id, COUNT(*) FROM pending GROUP BY cluster_id"))

    def materialize(self, cluster_id: int, count: int) -> list[tuple[int, dict[str, str]]]:
        """Move the next ``count`` pending procs of a cluster into the queue, in one transaction."""
        with self._transaction() as cur:
            rows = cur.execute("SELECT proc_id, ad FROM pending WHERE cluster_id=? ORDER BY proc_id LIMIT ?",
                               (cluster_id, count)).fetchall()
            cur.executemany("INSERT INTO procs VALUES (?, ?, ?)", [(cluster_id, p, ad) for p, ad in rows])
            cur.executemany("DELETE FROM pending WHERE cluster_id=? AND proc_id=?",
                            [(cluster_id, p) for p, _ in rows])
        return [(p, {} if ad == EMPTY else json.loads(ad)) for p, ad in rows]

    def drop_pending(self, cluster_id: int) -> None:
        """Forget a cluster's unmaterialized procs (the cluster was removed)."""
        with self._transaction() as cur:
            cur.execute("DELETE FROM pending WHERE cluster_id=?", (cluster_id,))
            cur.execute("DELETE FROM clusters WHERE cluster_id=? AND NOT EXISTS "
                        "(SELECT 1 FROM procs WHERE cluster_id=?)", (cluster_id, cluster_id))

    def set_proc_ads(self, changed: dict[JobId, dict[str, str]]) -> None:
        """Replace the stored proc ads of several jobs in one transaction."""
        with self._transaction() as cur:
            cur.executemany("UPDATE procs SET ad=? WHERE cluster_id=? AND proc_id=?",
                            [(_dump(ad), c, p) for (c, p), ad in changed.items()])

    def delete(self, job_ids: Iterable[JobId]) -> None:
        """Remove jobs, and clusters left without procs, in one transaction."""
        ids = list(job_ids)
        with self._transaction() as cur:
            cur.executemany("DELETE FROM procs WHERE cluster_id=? AND proc_id=?", ids)
            for cid in {c for c, _ in ids}:
                cur.execute("DELETE FROM clusters WHERE cluster_id=? AND NOT EXISTS "
                            "(SELECT 1 FROM procs WHERE cluster_id=?) AND NOT EXISTS "
                            "(SELECT 1 FROM pending WHERE cluster_id=?)", (cid, cid, cid))

    def apply(self, changed: dict[JobId, dict[str, str]], deleted: list[JobId]) -> None:
        """Many jobs changed and removed at once (``htcd rm -all``) in one transaction; run from a
        worker thread, so the event loop keeps serving while it commits."""
        if not changed and not deleted:
            return
        gone = set(deleted)
        with self._transaction() as cur:
            cur.executemany("UPDATE procs SET ad=? WHERE cluster_id=? AND proc_id=?",
                            [(_dump(ad), c, p) for (c, p), ad in changed.items() if (c, p) not in gone])
            cur.executemany("DELETE FROM procs WHERE cluster_id=? AND proc_id=?", deleted)
            for cid in sorted({c for c, _ in deleted}):
                cur.execute("DELETE FROM clusters WHERE cluster_id=? AND NOT EXISTS "
                            "(SELECT 1 FROM procs WHERE cluster_id=?) AND NOT EXISTS "
                            "(SELECT 1 FROM pending WHERE cluster_id=?)", (cid, cid, cid))

    def _transaction(self) -> _Tx:
        return _Tx(self.db, self.lock)


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

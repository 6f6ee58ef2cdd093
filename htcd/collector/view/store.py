"""The pool's history on disk: one SQLite file (WAL) per view collector.

A sample is one row per (series, key) value at a time ``t``.  Each value also goes at once into
the rollup rows of its 5-minute, hourly and daily buckets (sum, max, min and count of its
values), updated by the same transaction, so a bucket on disk is always complete up to
the last sample and a restart (even ``kill -9``) loses nothing committed.  A bucket keeps the sum
of its values, not their average: sums of counts stay integers, which SQLite stores in a few bytes.

Raw samples are kept ``RAW_KEEP`` seconds and each rollup for its own window (``LEVELS``); past
that, rows are pruned.  The whole (database + WAL) is kept under ``max_bytes``
(POOL_HISTORY_MAX_STORAGE): once over it, until under 80 % of it, the oldest half of the finest
level that still holds more than a couple of its steps is deleted, then free pages are given
back to the file system.

Encoding, for size: rows live in WITHOUT ROWID tables keyed (series id, t), so a row is its
key and values only; a series id is a small integer naming (series name, key); values are
kept as given, in columns without a type: an integer (a count) takes 1-4 bytes, a real 8.
"""

from __future__ import annotations

import contextlib
import math
import os
import sqlite3
import threading
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

FILE_NAME = "pool_history.sqlite"
RAW_KEEP = 2 * 86400
#: (bucket seconds, seconds kept): the rollup levels, finest first.
LEVELS: tuple[tuple[int, int], ...] = ((300, 10 * 86400), (3600, 40 * 86400), (86400, 5 * 366 * 86400))
PRUNE_TO = 0.8  # pruning for the bound goes down to this share of it, so it runs seldom
MAX_POINTS = 3000  # the most points per column a series answer holds
SCHEMA_VERSION = 2

RANGES = {"day": 86400, "week": 7 * 86400, "month": 31 * 86400, "year": 366 * 86400}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS series (id INTEGER PRIMARY KEY, name TEXT NOT NULL, key TEXT NOT NULL,
                                   UNIQUE (name, key));
CREATE TABLE IF NOT EXISTS samples (t INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS raw (sid INTEGER NOT NULL, t INTEGER NOT NULL, v,
                                PRIMARY KEY (sid, t)) WITHOUT ROWID;
"""
_ROLLUP = """CREATE TABLE IF NOT EXISTS rollup{step} (sid INTEGER NOT NULL, t INTEGER NOT NULL, n INTEGER,
             sum, max, min, PRIMARY KEY (sid, t)) WITHOUT ROWID"""
_UPSERT = """INSERT INTO rollup{step} (sid, t, n, sum, max, min) VALUES (?, ?, 1, ?, ?, ?)
             ON CONFLICT (sid, t) DO UPDATE SET sum = sum + excluded.sum, n = n + 1,
             max = max(max, excluded.max), min = min(min, excluded.min)"""


def round4(v: float | None) -> float | int | None:
    """``v`` to 4 significant digits, an int when it is one (stored in fewer bytes)."""
    if v is None or v == 0 or not math.isfinite(v):
        return v
    r = round(v, 3 - math.floor(math.log10(abs(v))))
    return int(r) if r == int(r) and abs(r) < 2**53 else r


def _compact(v: float) -> float:
    """A whole number as an int: SQLite stores it in 1-4 bytes instead of 8."""
    return int(v) if isinstance(v, float) and v.is_integer() and abs(v) < 2**53 else v


class StoreError(Exception):
    """The history file cannot be opened or used (the message says which file and why)."""


@dataclass
class Series:
    """One series answer: times, a column per key (averages for rollups) and stats."""

    name: str
    start: int
    end: int
    step: int
    t: list[int]
    columns: dict[str, list[float | None]]
    peaks: dict[str, list[float | None]] | None
    stats: dict[str, dict[str, float | None]]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "start": self.start, "end": self.end, "step": self.step,
                               "t": self.t, "columns": self.columns, "stats": self.stats}
        if self.peaks is not None:
            out["max"] = self.peaks
        return out


class HistoryStore:
    """The SQLite file of one view collector.  Thread-safe by a lock: the collector writes and
    reads it from one worker thread, tests and the bench from theirs."""

    def __init__(self, directory: str, max_bytes: int = 10_000_000, interval: int = 60) -> None:
        self.directory = directory
        self.path = os.path.join(directory, FILE_NAME)
        self.max_bytes = max_bytes
        self.interval = max(1, interval)
        self._lock = threading.Lock()
        self._sids: dict[tuple[str, str], int] = {}
        self.pruned_rows = 0
        try:
            os.makedirs(directory, exist_ok=True)
            self.db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            fresh = self.db.execute("PRAGMA page_count").fetchone()[0] == 0
            if fresh:
                self.db.execute("PRAGMA auto_vacuum = INCREMENTAL")
            self.db.execute("PRAGMA journal_mode = WAL")
            self.db.execute("PRAGMA synchronous = NORMAL")
            self._wal_limit()
            self.db.executescript(_SCHEMA)
            for step, _ in LEVELS:
                self.db.execute(_ROLLUP.format(step=step))
            row = self.db.execute("SELECT v FROM meta WHERE k = 'version'").fetchone()
            if row is None:
                self.db.execute("INSERT INTO meta VALUES ('version', ?)", (SCHEMA_VERSION,))
            elif row[0] != SCHEMA_VERSION:
                raise StoreError(f"{self.path} holds pool history of format {row[0]}; this htcd writes format "
                                 f"{SCHEMA_VERSION}: move the file away to start a new history")
            for sid, name, key in self.db.execute("SELECT id, name, key FROM series"):
                self._sids[(name, key)] = sid
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the pool history {self.path}: {exc}") from None

    def _wal_limit(self) -> None:
        """The WAL counts in the bound: checkpoint it once it holds a tenth of max_bytes (at
        most SQLite's default, 1000 pages)."""
        page = self.db.execute("PRAGMA page_size").fetchone()[0]
        self.db.execute(f"PRAGMA wal_autocheckpoint = {min(1000, max(8, self.max_bytes // 10 // page))}")
        self.db.execute(f"PRAGMA journal_size_limit = {self.max_bytes // 10}")

    def set_limits(self, max_bytes: int, interval: int) -> None:
        with self._lock:
            self.max_bytes, self.interval = max_bytes, max(1, interval)
            self._wal_limit()

    def close(self) -> None:
        with self._lock:
            self.db.close()

    # -- writing -------------------------------------------------------------------------------
    def _sid(self, name: str, key: str) -> int:
        sid = self._sids.get((name, key))
        if sid is None:
            cur = self.db.execute("INSERT INTO series (name, key) VALUES (?, ?)", (name, key))
            sid = self._sids[(name, key)] = int(cur.lastrowid or 0)
        return sid

    def record(self, t: int, sample: Mapping[str, Mapping[str, float]]) -> int:
        """Write one sample taken at ``t``: {series name: {key: value}}.  Returns the raw rows
        written; a second sample at the same ``t`` is ignored (the first stays)."""
        return self.record_many([(t, sample)])

    def record_many(self, samples: Iterable[tuple[int, Mapping[str, Mapping[str, float]]]]) -> int:
        """Write samples in time order in one transaction (a restart's backlog, the bench)."""
        written = 0
        newest = None
        with self._lock:
            db = self.db
            db.execute("BEGIN IMMEDIATE")
            try:
                for t, sample in samples:
                    t = int(t)
                    if db.execute("INSERT OR IGNORE INTO samples VALUES (?)", (t,)).rowcount == 0:
                        continue
                    rows = [(self._sid(name, key), t, _compact(v)) for name, values in sample.items()
                            for key, v in values.items() if v is not None]
                    db.executemany("INSERT OR REPLACE INTO raw (sid, t, v) VALUES (?, ?, ?)", rows)
                    for step, _ in LEVELS:
                        b = t - t % step
                        db.executemany(_UPSERT.format(step=step), [(sid, b, v, v, v) for sid, _, v in rows])
                    written += len(rows)
                    newest = t if newest is None else max(newest, t)
                if newest is not None:
                    self._expire(newest)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            if newest is not None:
                self._bound()
        return written

    def _expire(self, now: int) -> None:
        """Delete rows past their level's window: per series, so each delete is a seek in the
        (sid, t) key, not a scan of the table."""
        db = self.db
        sids = list(self._sids.values())
        for table, cut in [("raw", now - RAW_KEEP)] + [(f"rollup{step}", now - keep) for step, keep in LEVELS]:
            before = db.total_changes
            db.executemany(f"DELETE FROM {table} WHERE sid = ? AND t < ?", [(sid, cut) for sid in sids])
            self.pruned_rows += db.total_changes - before
        db.execute("DELETE FROM samples WHERE t < ?", (now - RAW_KEEP,))

    def _oldest(self, table: str, sids: Iterable[int]) -> int | None:
        """The oldest time ``table`` holds for these series (a seek per series)."""
        found = None
        for sid in sids:
            row = self.db.execute(f"SELECT t FROM {table} WHERE sid = ? ORDER BY t LIMIT 1", (sid,)).fetchone()
            if row is not None and (found is None or row[0] < found):
                found = row[0]
        return found

    def _newest(self, table: str, sids: Iterable[int]) -> int | None:
        found = None
        for sid in sids:
            row = self.db.execute(f"SELECT t FROM {table} WHERE sid = ? ORDER BY t DESC LIMIT 1", (sid,)).fetchone()
            if row is not None and (found is None or row[0] > found):
                found = row[0]
        return found

    def size(self) -> int:
        """Bytes on disk: the database and its WAL."""
        total = 0
        for suffix in ("", "-wal"):
            with contextlib.suppress(OSError):
                total += os.path.getsize(self.path + suffix)
        return total

    def _bound(self) -> None:
        """Keep the file under max_bytes: prune the oldest half of the finest level that holds
        more than two of its steps, then of the next, until it fits."""
        if self.size() <= self.max_bytes:
            return
        db = self.db
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        for _ in range(64):
            if self._used() <= self.max_bytes * PRUNE_TO:
                break
            sids = list(self._sids.values())
            for table, step in [("raw", self.interval)] + [(f"rollup{s}", s) for s, _ in LEVELS]:
                lo, hi = self._oldest(table, sids), self._newest(table, sids)
                if lo is None or hi is None or (hi - lo <= 2 * step and table != f"rollup{LEVELS[-1][0]}"):
                    continue
                cut = lo + max(step, (hi - lo) // 2)
                db.execute("BEGIN IMMEDIATE")
                before = db.total_changes
                db.executemany(f"DELETE FROM {table} WHERE sid = ? AND t < ?", [(sid, cut) for sid in sids])
                self.pruned_rows += db.total_changes - before
                if table == "raw":
                    db.execute("DELETE FROM samples WHERE t < ?", (cut,))
                db.execute("COMMIT")
                break
            else:
                break
        db.execute("PRAGMA incremental_vacuum")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def _used(self) -> int:
        """Bytes the database would take with its free pages given back."""
        page = self.db.execute("PRAGMA page_size").fetchone()[0]
        count = self.db.execute("PRAGMA page_count").fetchone()[0]
        free = self.db.execute("PRAGMA freelist_count").fetchone()[0]
        return int(page * (count - free))

    # -- reading -------------------------------------------------------------------------------
    def names(self) -> dict[str, list[str]]:
        """Each series name with its keys, sorted."""
        with self._lock:
            rows = self.db.execute("SELECT name, key FROM series ORDER BY name, key").fetchall()
        out: dict[str, list[str]] = {}
        for name, key in rows:
            out.setdefault(name, []).append(key)
        return out

    def span(self) -> tuple[int | None, int | None]:
        """The oldest and newest time any level holds."""
        with self._lock:
            los, his = [], []
            sids = list(self._sids.values())
            for table in ["raw"] + [f"rollup{s}" for s, _ in LEVELS]:
                lo, hi = self._oldest(table, sids), self._newest(table, sids)
                if lo is not None and hi is not None:
                    los.append(lo)
                    his.append(hi)
        return (min(los) if los else None), (max(his) if his else None)

    def _level(self, start: int, end: int, sids: Iterable[int]) -> tuple[str, int]:
        """The finest level with at most MAX_POINTS points over the range that holds ``start``
        or, if it does not, reaches back as far as the coarser levels do (a coarse bucket's
        start says only that its data lies somewhere in it: a young history is served fine)."""
        found: list[tuple[str, int, int]] = []
        for table, step in [("raw", self.interval)] + [(f"rollup{s}", s) for s, _ in LEVELS]:
            if (end - start) / step > MAX_POINTS:
                continue
            lo = self._oldest(table, sids)
            if lo is not None:
                found.append((table, step, lo))
        for i, (table, step, lo) in enumerate(found):
            if lo <= start + step or all(lo < lo_c + step_c for _, step_c, lo_c in found[i + 1:]):
                return table, step
        step = LEVELS[-1][0]
        return f"rollup{step}", step

    def series(self, name: str, start: int, end: int, keys: Collection[str] | None = None) -> Series | None:
        """The series ``name`` between start and end, at the finest resolution kept, with all its
        keys or only ``keys`` (None: no such series, or none of those keys)."""
        with self._lock:
            sids = {sid: key for (n, key), sid in self._sids.items() if n == name and (keys is None or key in keys)}
            if not sids:
                return None
            table, step = self._level(start, end, list(sids))
            marks = ",".join("?" * len(sids))
            lo = start if table == "raw" else start - start % step
            if table == "raw":
                what, totals = "v, NULL", "sum(v), count(v), max(v), min(v)"
            else:
                what, totals = "round(sum * 1.0 / n, 3), max", "sum(sum), sum(n), max(max), min(min)"
            where = f"FROM {table} WHERE sid IN ({marks}) AND t >= ? AND t <= ?"
            rows = self.db.execute(f"SELECT sid, t, {what} {where} ORDER BY sid, t", (*sids, lo, end)).fetchall()
            sums = self.db.execute(f"SELECT sid, {totals} {where} GROUP BY sid", (*sids, lo, end)).fetchall()
        times = sorted({r[1] for r in rows})
        pos = {t: i for i, t in enumerate(times)}
        keys = sorted(sids.values())
        columns: dict[str, list[float | None]] = {k: [None] * len(times) for k in keys}
        peaks: dict[str, list[float | None]] = {k: [None] * len(times) for k in keys}
        for sid, t, avg, mx in rows:
            key = sids[sid]
            columns[key][pos[t]] = avg
            peaks[key][pos[t]] = mx
        stats: dict[str, dict[str, float | None]] = {k: {"avg": None, "peak": None, "min": None, "last": None}
                                                     for k in keys}
        for sid, total, n, mx, mn in sums:
            key = sids[sid]
            last = next((v for v in reversed(columns[key]) if v is not None), None)
            stats[key] = {"avg": round4(total / n) if n else None, "peak": mx, "min": mn, "last": last}
        return Series(name, start, end, step, times, columns, None if table == "raw" else peaks, stats)

    def count_rows(self) -> dict[str, int]:
        """Rows per table (tests and the bench)."""
        with self._lock:
            return {table: self.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                    for table in ["raw"] + [f"rollup{s}" for s, _ in LEVELS]}


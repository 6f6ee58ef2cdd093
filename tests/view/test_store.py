"""The pool history's SQLite store on its own (real files): rollups filled as samples arrive, the
resolution a range is served at, retention, the size bound, and reopening."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from htcd.collector.view import store as vstore
from htcd.collector.view.store import LEVELS, RAW_KEEP, HistoryStore, round4

T0 = 1_700_000_000 - 1_700_000_000 % 86400  # a midnight, so bucket edges are easy to name


def sample(i: int, users: int = 3) -> dict[str, dict[str, float]]:
    return {"slots_by_state": {"Claimed": i % 10, "Unclaimed": 10 - i % 10},
            "jobs_by_user": {f"u{u}@h/Idle": (i + u) % 7 for u in range(users)}}


def test_samples_fill_raw_rows_and_every_rollup(tmp_path: Path) -> None:
    h = HistoryStore(str(tmp_path), 10**9, 60)
    for i in range(10):  # 10 minutes: two 5-minute buckets
        assert h.record(T0 + 60 * i, sample(i)) == 5
    assert h.record(T0 + 60 * 9, sample(0)) == 0  # the same time twice: the first stays
    assert h.count_rows() == {"raw": 50, "rollup300": 10, "rollup3600": 5, "rollup86400": 5}
    db = sqlite3.connect(h.path)
    sid = db.execute("SELECT id FROM series WHERE name = 'slots_by_state' AND key = 'Claimed'").fetchone()[0]
    assert db.execute("SELECT t, n, sum, max, min FROM rollup300 WHERE sid = ? ORDER BY t", (sid,)).fetchall() == [
        (T0, 5, 10, 4, 0), (T0 + 300, 5, 35, 9, 5)]
    assert db.execute("SELECT n, sum, max, min FROM rollup3600 WHERE sid = ?", (sid,)).fetchone() == (10, 45, 9, 0)
    # sums of counts are stored as integers (a few bytes), not as 8-byte reals
    assert db.execute("SELECT typeof(sum) FROM rollup3600 WHERE sid = ?", (sid,)).fetchone() == ("integer",)
    db.close()
    s = h.series("slots_by_state", T0, T0 + 600)
    assert s is not None and s.step == 60 and s.t == [T0 + 60 * i for i in range(10)]
    assert s.columns["Claimed"] == list(range(10))
    assert s.stats["Claimed"] == {"avg": 4.5, "peak": 9, "min": 0, "last": 9}
    assert h.series("no_such_series", T0, T0 + 600) is None
    h.close()


def test_the_range_picks_the_resolution(tmp_path: Path) -> None:
    h = HistoryStore(str(tmp_path), 10**9, 60)
    now = T0 + 40 * 86400
    # 40 days of one sample an hour, then the last 3 hours a sample a minute
    for t in range(T0, now - 3 * 3600, 3600):
        h.record(t, sample(t // 3600))
    for t in range(now - 3 * 3600, now + 1, 60):
        h.record(t, sample(t // 60))
    steps = {name: h.series("slots_by_state", now - span, now) for name, span in vstore.RANGES.items()}
    assert {k: s.step for k, s in steps.items() if s} == {"day": 60, "week": 300, "month": 3600, "year": 86400}
    week = steps["week"]
    assert week is not None and len(week.t) <= vstore.MAX_POINTS and week.peaks is not None
    # a 5-minute bucket's average and peak of the minute samples
    i = week.t.index(now - 3600)
    minutes = [sample((now - 3600) // 60 + k)["slots_by_state"]["Claimed"] for k in range(5)]
    assert week.columns["Claimed"][i] == round(sum(minutes) / 5, 3) and week.peaks["Claimed"][i] == max(minutes)
    assert len(steps["year"].t) <= 41  # type: ignore[union-attr]
    h.close()


def test_a_young_history_is_served_at_the_finest_level_that_has_it(tmp_path: Path) -> None:
    h = HistoryStore(str(tmp_path), 10**9, 60)
    now = T0 + 12 * 3600
    for t in range(now - 7200, now + 1, 60):
        h.record(t, sample(t))
    week = h.series("slots_by_state", now - 7 * 86400, now)
    assert week is not None and week.step == 300 and len(week.t) == 25


def test_raw_rows_go_after_their_window_and_rollups_stay(tmp_path: Path) -> None:
    h = HistoryStore(str(tmp_path), 10**9, 60)
    for t in range(T0, T0 + RAW_KEEP + 3 * 3600, 600):
        h.record(t, sample(t))
    db = sqlite3.connect(h.path)
    newest = db.execute("SELECT max(t) FROM raw").fetchone()[0]
    assert db.execute("SELECT min(t) FROM raw").fetchone()[0] >= newest - RAW_KEEP
    assert db.execute("SELECT min(t) FROM rollup300").fetchone()[0] == T0
    db.close()
    h.close()


@pytest.mark.slow  # some 8 s: each sample is checkpointed (the WAL counts in the bound)
def test_the_file_stays_under_its_bound_pruning_raw_first(tmp_path: Path) -> None:
    limit = 300_000
    h = HistoryStore(str(tmp_path), limit, 60)
    t = T0
    for i in range(200):
        h.record(t, sample(i, users=200))
        t += 60
        assert h.size() <= limit, (i, h.size())
    assert h.pruned_rows > 0
    rows = h.count_rows()
    db = sqlite3.connect(h.path)
    oldest = {table: db.execute(f"SELECT min(t) FROM {table}").fetchone()[0] for table in rows}
    db.close()
    # the oldest raw went first: the coarser levels still reach further back
    assert oldest["raw"] > oldest["rollup300"] >= oldest["rollup3600"] >= oldest["rollup86400"] == T0
    # and what is kept is still served
    s = h.series("slots_by_state", t - 86400, t)
    assert s is not None and s.t[-1] == t - 60 - (t - 60) % s.step
    h.close()


def test_reopening_loses_nothing_and_buckets_continue(tmp_path: Path) -> None:
    h = HistoryStore(str(tmp_path), 10**9, 60)
    for i in range(3):
        h.record(T0 + 60 * i, {"s": {"k": i}})
    # not closed: the process dies with the file open
    del h
    again = HistoryStore(str(tmp_path), 10**9, 60)
    for i in range(3, 5):
        again.record(T0 + 60 * i, {"s": {"k": i}})
    s = again.series("s", T0, T0 + 300)
    assert s is not None and s.columns["k"] == [0, 1, 2, 3, 4]
    db = sqlite3.connect(again.path)
    assert db.execute(f"SELECT n, sum, max, min FROM rollup{LEVELS[0][0]}").fetchall() == [(5, 10, 4, 0)]
    db.close()
    again.close()


def test_a_file_of_another_format_is_refused_by_name(tmp_path: Path) -> None:
    h = HistoryStore(str(tmp_path), 10**9, 60)
    h.db.execute("UPDATE meta SET v = 99 WHERE k = 'version'")
    h.close()
    with pytest.raises(vstore.StoreError, match=r"pool_history.sqlite holds pool history of format 99"):
        HistoryStore(str(tmp_path), 10**9, 60)


@pytest.mark.parametrize(("v", "want"), [(0, 0), (12345.678, 12350), (0.000123456, 0.0001235), (2.5, 2.5),
                                         (-7.77777, -7.778), (3.0, 3)])
def test_round4_keeps_four_significant_digits(v: float, want: float) -> None:
    assert round4(v) == want
    assert type(round4(v)) is type(want)

"""The pool history's knobs as a collector reads them (a real config file): the default directory,
and every setting it cannot use refused in the log with the knob and the reason."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from htcd.collector.view.history import open_history
from htcd.config import load


class Host:
    """What open_history reads of a collector: its config and its log."""

    def __init__(self, tmp: Path, knobs: str) -> None:
        path = tmp / "htcd_config"
        path.write_text(f"LOCAL_DIR = {tmp / 'local'}\n{knobs}\n")
        self.config = load("COLLECTOR", env={"HTCD_CONFIG": str(path)})
        self.log = logging.getLogger("test.view.settings")


def test_off_by_default(tmp_path: Path) -> None:
    assert open_history(Host(tmp_path, "")) is None  # type: ignore[arg-type]
    assert not (tmp_path / "local" / "ViewHist").exists()


def test_on_it_opens_local_dir_viewhist_and_warns_when_nothing_serves_it(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, "test.view.settings"):
        h = open_history(Host(tmp_path, "KEEP_POOL_HISTORY = true"))  # type: ignore[arg-type]
    assert h is not None
    try:
        assert h.store.path == str(tmp_path / "local" / "ViewHist" / "pool_history.sqlite")
        assert (h.interval, h.store.max_bytes) == (60, 10_000_000)
        assert "COLLECTOR_METRICS_PORT is not set: the history is kept, but nothing serves /view/" in caplog.text
    finally:
        h.store.close()
        h.pool.shutdown()


@pytest.mark.parametrize(("knobs", "reason"), [
    ("POOL_HISTORY_SAMPLING_INTERVAL = 0", "POOL_HISTORY_SAMPLING_INTERVAL = 0 must be at least 1 second"),
    ("POOL_HISTORY_MAX_STORAGE = 1000", "POOL_HISTORY_MAX_STORAGE = 1000 bytes is too small"),
    ("POOL_HISTORY_DIR = /proc/no/such/dir", "cannot open the pool history /proc/no/such/dir/pool_history.sqlite"),
])
def test_a_setting_it_cannot_use_is_logged_with_the_reason(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                           knobs: str, reason: str) -> None:
    with caplog.at_level(logging.ERROR, "test.view.settings"):
        h = open_history(Host(tmp_path, f"KEEP_POOL_HISTORY = true\n{knobs}"))  # type: ignore[arg-type]
    assert h is None
    assert f"pool history not kept: {reason}" in caplog.text

"""Debian's chromium, headless, as the page's tests use it: the DOM after the page's scripts ran
(``--dump-dom``) and a screenshot, each from its own browser process with a profile in a temp dir
under the test root (removed after; the session's leak check sees any process left behind)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
BUDGET_MS = 20000  # virtual time: the page's fetches and drawing, not wall-clock waiting
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed "
                                    "(apt-get install chromium; .ci/run installs it)")


def artifacts() -> Path:
    """Where tests leave screenshots: $HTCD_TEST_ARTIFACTS, else tests/_artifacts (gitignored)."""
    path = Path(os.environ.get("HTCD_TEST_ARTIFACTS") or Path(__file__).parents[1] / "_artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


def _chromium(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    profile = Path(tempfile.mkdtemp(prefix="chromium-", dir=root))
    try:
        return subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--no-first-run", "--disable-extensions", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-proxy-server",
             f"--user-data-dir={profile}", f"--virtual-time-budget={BUDGET_MS}", *args],
            capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": str(profile)})
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def dump_dom(root: Path, url: str) -> str:
    """The page's DOM once its scripts have run (virtual time budget), as chromium serializes it."""
    proc = _chromium(root, "--dump-dom", url)
    assert proc.returncode == 0 and "<body" in proc.stdout, f"chromium failed ({proc.returncode}):\n{proc.stderr[-3000:]}"
    return proc.stdout


def screenshot(root: Path, url: str, out: Path, size: str = "1400,2000") -> Path:
    proc = _chromium(root, f"--screenshot={out}", f"--window-size={size}", "--hide-scrollbars", url)
    assert proc.returncode == 0 and out.exists() and out.stat().st_size > 0, \
        f"no screenshot ({proc.returncode}):\n{proc.stderr[-3000:]}"
    return out


class Dom(HTMLParser):
    """The attributes of every element with an id, and the text of tables' cells by table id:
    what the tests read of a dumped DOM."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.by_id: dict[str, dict[str, str]] = {}
        self.body: dict[str, str] = {}
        self.tables: dict[str, list[list[str]]] = {}
        self._table: str | None = None
        self._cell: list[str] | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if "id" in a:
            self.by_id[a["id"]] = a
        if tag == "body":
            self.body = a
        elif tag == "table" and "id" in a:
            self._table = a["id"]
            self.tables[self._table] = []
        elif tag == "tr" and self._table:
            self.tables[self._table].append([])
        elif tag in ("td", "th") and self._table:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._table and self._cell is not None:
            self.tables[self._table][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def points(self, chart: str) -> int:
        return int(self.by_id[chart].get("data-points", "0"))

    def rows(self, table: str) -> dict[str, list[str]]:
        """A table's rows by their first cell (the header row under its first heading)."""
        return {r[0]: r[1:] for r in self.tables.get(table, []) if r}

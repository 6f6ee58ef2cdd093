"""The page on its own: its files as the collector serves them, and the page drawn by a real
headless chromium from a real local HTTP server that answers /view/api with replies shaped as the
API's contract (docs/view.md), so the drawing is checked apart from the store."""

from __future__ import annotations

import json
import threading
import tomllib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

import pytest
from view.browser import Dom, artifacts, dump_dom, needs_chromium, screenshot

from htcd.collector.view import web

STATIC = Path(web.__file__).parent / "static"
T0 = 1_790_000_000
N = 48  # points per series in the replies below
STEP = 300
DAEMONS = 14


def series(name: str, columns: dict[str, list[float | None]]) -> dict[str, Any]:
    def st(v: list[float | None]) -> dict[str, float | None]:
        xs = [x for x in v if x is not None]
        return {"avg": sum(xs) / len(xs), "peak": max(xs), "min": min(xs), "last": xs[-1]}

    return {"name": name, "start": T0, "end": T0 + N * STEP, "step": STEP, "t": [T0 + i * STEP for i in range(N)],
            "columns": columns, "stats": {k: st(v) for k, v in columns.items()}}


def replies() -> dict[str, Any]:
    """The API's answers for a small two-arch pool: claimed slots ramp from 0 to 4 of 6."""
    claimed = [min(4, i // 6) for i in range(N)]
    gap: list[float | None] = [None if i == 10 else 1.0 for i in range(N)]  # a missed sample
    out = {
        "slots_by_state": series("slots_by_state", {
            "Claimed": list(map(float, claimed)), "Unclaimed": [6.0 - c for c in claimed], "Owner": [0.0] * N}),
        "cpus_by_state": series("cpus_by_state", {
            "Claimed": [4.0 * c for c in claimed], "Unclaimed": [24.0 - 4 * c for c in claimed]}),
        "slots_by_arch": series("slots_by_arch", {"X86_64/LINUX": [4.0] * N, "AARCH64/LINUX": [2.0] * N}),
        "claimed_by_arch": series("claimed_by_arch", {"X86_64/LINUX": [float(min(c, 4)) for c in claimed],
                                                      "AARCH64/LINUX": [0.0] * N}),
        "jobs_by_user": series("jobs_by_user", {
            "alice@pool/Running": list(map(float, claimed)), "alice@pool/Idle": [4.0 - c for c in claimed],
            "alice@pool/Held": [0.0] * N, "bob@pool/Running": [0.0] * N, "bob@pool/Idle": [1.0] * N,
            "bob@pool/Held": gap}),
        "user_priority": series("user_priority", {"alice@pool": [0.5 + i / 10 for i in range(N)],
                                                  "bob@pool": [0.5] * N}),
        "user_usage": series("user_usage", {"alice@pool": list(map(float, claimed)), "bob@pool": [0.0] * N,
                                            "alice@pool/accumulated": [i * 60.0 for i in range(N)]}),
        "negotiation_cycle": series("negotiation_cycle", {
            "duration": [0.01 * (i % 5) for i in range(N)], "matches": [float(i % 3) for i in range(N)],
            "rejections": [0.0] * N, "submitters": [2.0] * N}),
        # a daemon per machine: more than a chart draws
        "duty_cycle": series("duty_cycle", {f"ep{k:02}@host/Machine": [k / 100] * N for k in range(DAEMONS)}),
    }
    row = {"Owner": 0, "Claimed": 4, "Unclaimed": 0, "Matched": 0, "Preempting": 0, "Drained": 0, "Backfill": 0}
    out["now"] = {"time": T0 + N * STEP, "status_total": {
        "rows": [{"arch": "X86_64/LINUX", "Total": 4, **row},
                 {"arch": "AARCH64/LINUX", "Total": 2, **row, "Claimed": 0, "Unclaimed": 2}],
        "total": {"Total": 6, **row, "Unclaimed": 2}},
        "queue_totals": {"jobs": 6, "idle": 1, "running": 4, "held": 1, "completed": 0, "removed": 0,
                         "suspended": 0, "by_schedd": {"ap@host": {"jobs": 6, "idle": 1, "running": 4, "held": 1,
                                                                   "completed": 0, "removed": 0, "suspended": 0}}}}
    out["series_list"] = {"series": {k: sorted(v["columns"]) for k, v in out.items() if "columns" in v},
                          "interval": 60, "oldest": T0, "newest": T0 + N * STEP}
    return out


class Handler(BaseHTTPRequestHandler):
    answers: ClassVar[dict[str, Any]] = {}
    asked: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        self.asked.append(self.path)
        if url.path.startswith("/view/api/"):
            what = url.path.removeprefix("/view/api/")
            if what == "series":
                what = parse_qs(url.query)["name"][0]
            status, ctype = (200, "application/json") if what in self.answers else (400, "application/json")
            body = json.dumps(self.answers.get(what, {"error": f"no series named {what!r}"})).encode()
        else:
            status, ctype, body = web.serve(url.path)
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    Handler.answers = replies()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(10)


def test_static_files_are_served_and_nothing_else() -> None:
    status, ctype, body = web.serve("/view/")
    assert status == 200 and ctype.startswith("text/html") and b'id="chart-machines"' in body
    status, ctype, body = web.serve("/view/static/uPlot.iife.min.js")
    assert status == 200 and ctype.startswith("text/javascript") and b"uPlot (v1.6.32)" in body
    assert web.serve("/view/static/view.css")[1].startswith("text/css")
    assert web.serve("/view/static/uPlot.LICENSE")[2].startswith(b"The MIT License")
    for bad in ("/view/static/../web.py", "/view/static/%2e%2e/web.py", "/view/static/", "/view/nothing"):
        status, _, body = web.serve(bad)
        assert status == 404 and body.startswith(b"no such"), bad


def test_static_files_ship_in_the_package() -> None:
    """pyproject's package-data names the static directory, so a wheel install has the page."""
    data = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    globs = data["tool"]["setuptools"]["package-data"]["htcd"]
    htcd_dir = Path(web.__file__).parents[2]
    shipped = {p for g in globs for p in htcd_dir.glob(g) if p.is_file()}
    names = {"index.html", "view.js", "view.css", "uPlot.iife.min.js", "uPlot.min.css", "uPlot.LICENSE"}
    assert names <= {p.name for p in STATIC.iterdir()}
    assert {STATIC / n for n in names} <= shipped


@needs_chromium
@pytest.mark.slow
def test_page_draws_the_api_replies(server: str, leak_check: Path) -> None:
    Handler.asked.clear()
    dom = Dom(dump_dom(leak_check, server + "/view/"))
    assert dom.body.get("data-ready") == "1" and "data-error" not in dom.body, dom.body
    # every chart got the points of the columns it shows (nulls are not points)
    assert dom.points("chart-machines") == 2 * N    # states never seen (Owner: all 0) are left out
    assert dom.points("chart-jobs") == 3 * N        # summed over users; bob's missing Held sample is still alice's 0
    assert dom.points("chart-usage") == 2 * N       # ResourcesUsed; the accumulated column is in the table only
    assert dom.points("chart-priority") == 2 * N
    assert dom.points("chart-cycle") == N and dom.points("chart-matches") == 3 * N
    assert dom.points("chart-duty") == 12 * N and dom.by_id["chart-duty"]["data-hidden"] == str(DAEMONS - 12)
    stats = dom.rows("machines-stats")
    assert stats["Claimed"] == [f"{sum(min(4, i // 6) for i in range(N)) / N:.2f}", "4", "0", "4"]
    assert stats["Unclaimed"][1:] == ["6", "2", "2"] and "Owner" not in stats
    now = dom.rows("status-total")
    assert now["X86_64/LINUX"][:3] == ["4", "0", "4"] and now["Total"][0] == "6" and now["Total"][3] == "2"
    q = dom.rows("queue-totals")
    assert q["Total"] == ["6", "0", "0", "1", "4", "1", "0"] and q["ap@host"][0] == "6"
    users = dom.rows("users-stats")
    assert float(users["alice@pool"][0]) == round(0.5 + (N - 1) / 10, 2)
    assert float(users["alice@pool"][4].replace(",", "")) == (N - 1) * 60.0
    assert set(dom.rows("jobs-stats")) >= {"alice@pool", "bob@pool"}
    asked = " ".join(Handler.asked)
    assert "/view/api/series?name=slots_by_state&range=day" in asked and "/view/api/now" in asked


@needs_chromium
@pytest.mark.slow
def test_page_per_arch_and_range_from_the_address(server: str, leak_check: Path) -> None:
    Handler.asked.clear()
    dom = Dom(dump_dom(leak_check, server + "/view/?range=week&arch=X86_64/LINUX&user=bob@pool"))
    assert dom.body.get("data-ready") == "1"
    rows = dom.rows("machines-stats")
    assert set(rows) == {"State", "Total", "Claimed", "Not claimed"} and rows["Total"][1] == "4"
    assert dom.points("chart-machines") == 3 * N
    assert dom.points("chart-jobs") == 3 * N - 1   # bob's Held column misses one sample
    assert "range=week" in " ".join(Handler.asked)
    dom = Dom(dump_dom(leak_check, server + "/view/?count=cpus"))
    assert dom.rows("machines-stats")["Unclaimed"][1:] == ["24", "8", "8"] and dom.points("chart-machines") == 2 * N


@needs_chromium
@pytest.mark.slow
def test_page_says_what_failed(leak_check: Path, server: str) -> None:
    """A reply the page cannot use is shown, not swallowed: the error names the route and status."""
    saved = Handler.answers.pop("duty_cycle")
    try:
        dom = Dom(dump_dom(leak_check, server + "/view/"))
    finally:
        Handler.answers["duty_cycle"] = saved
    assert dom.body.get("data-ready") == "1"
    assert "/view/api/series?name=duty_cycle" in dom.body.get("data-error", "") and "400 no series named 'duty_cycle'" in dom.body["data-error"]


@needs_chromium
@pytest.mark.slow
def test_page_screenshot(server: str, leak_check: Path) -> None:
    out = screenshot(leak_check, server + "/view/", artifacts() / "view-page-recorded.png")
    assert out.stat().st_size > 20_000  # a drawn page, not a blank one

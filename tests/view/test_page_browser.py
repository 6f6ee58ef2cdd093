"""The pool view in a real browser on a real pool: a personal pool keeping its history
(KEEP_POOL_HISTORY, sampled every second) runs a few jobs; headless chromium loads /view/ from the
collector's HTTP endpoint, and the rendered page has points in its graphs and the pool's numbers in
its tables.  A screenshot is left in the test artifacts (docs/testing.md).  A host outside
COLLECTOR_METRICS_ALLOW_READ is refused the page and the API, with the reason."""

from __future__ import annotations

import http.client
import json
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from pooltools import Pool, wait_for
from view.browser import Dom, artifacts, dump_dom, needs_chromium, screenshot

KNOBS = {"COLLECTOR_METRICS_PORT": "0", "COLLECTOR_METRICS_ALLOW_READ": "127.0.0.1", "KEEP_POOL_HISTORY": "true",
         "POOL_HISTORY_SAMPLING_INTERVAL": "1"}
JOBS = "executable = /bin/sleep\narguments = 5\nqueue 3\n"


@pytest.fixture(scope="module")
def pool(module_pool: Callable[..., Pool]) -> Pool:
    return module_pool(KNOBS)


@pytest.fixture(scope="module")
def url(pool: Pool) -> str:
    found = wait_for(lambda: re.search(r"metrics endpoint listening at (http://[\d.]+:\d+)/metrics",
                                       pool.log("CollectorLog")), 30, "the metrics endpoint in the CollectorLog")
    return str(found.group(1))


def get(url: str, path: str, source: str = "127.0.0.1") -> tuple[int, str]:
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30, source_address=(source, 0))
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read().decode()
    finally:
        conn.close()


def series(url: str, name: str) -> dict:
    status, body = get(url, f"/view/api/series?name={name}&range=day")
    assert status == 200, body
    return dict(json.loads(body))


def samples(s: dict, key: str) -> list[float]:
    return [v for v in s["columns"].get(key, []) if v is not None]


@pytest.fixture(scope="module")
def ran(pool: Pool, url: str) -> Pool:
    """The pool has run three jobs, and its history holds samples of them running and of the end."""
    def running(s: dict) -> bool:
        return any(k.endswith("/Running") and max(samples(s, k), default=0) > 0 for k in s["columns"])

    cluster = pool.submit(JOBS)
    wait_for(lambda: max(samples(series(url, "slots_by_state"), "Claimed"), default=0) > 0, 90,
             "a sample with claimed slots", interval=0.5)
    wait_for(lambda: running(series(url, "jobs_by_user")), 60,
             lambda: f"a sample of the user's running jobs: {series(url, 'jobs_by_user')['columns']}", interval=0.5)
    wait_for(lambda: not pool.schedd_jobs(f"ClusterId == {cluster}", ["ClusterId"]), 120, "the jobs to finish")
    done = time.time()
    wait_for(lambda: json.loads(get(url, "/view/api/series_list")[1])["newest"] > done + 1, 60,
             "a sample after the jobs left", interval=0.5)
    return pool


@needs_chromium
def test_the_page_shows_the_pools_history(ran: Pool, url: str, leak_check: Path) -> None:
    dom = Dom(dump_dom(leak_check, url + "/view/"))
    assert dom.body.get("data-ready") == "1" and "data-error" not in dom.body, dom.body
    for chart in ("chart-machines", "chart-jobs", "chart-priority", "chart-cycle", "chart-duty"):
        assert dom.points(chart) > 0, (chart, dom.by_id[chart])
    # the table of averages and peaks says what the API says
    state = series(url, "slots_by_state")
    stats = dom.rows("machines-stats")
    assert stats["Claimed"][1] == "1" or int(stats["Claimed"][1]) == state["stats"]["Claimed"]["peak"]
    assert int(stats["Claimed"][1]) == state["stats"]["Claimed"]["peak"] >= 1
    # the pool at a glance: what `htcd status -total` counts
    slots = len(ran.slot_names())
    now = dom.rows("status-total")
    assert now["Total"][0] == str(slots)
    assert re.fullmatch(r"\S+/\S+", next(k for k in now if k not in ("Arch/OpSys", "Total")))
    q = dom.rows("queue-totals")
    assert q["Total"][0] == "0"  # the queue is empty again
    # the per-arch graph: the one arch of this machine, chosen in the address
    arch = next(iter(series(url, "slots_by_arch")["columns"]))
    dom = Dom(dump_dom(leak_check, f"{url}/view/?range=week&arch={arch}"))
    assert dom.body.get("data-ready") == "1" and dom.points("chart-machines") > 0
    assert dom.rows("machines-stats")["Total"][1] == str(slots)
    # the last ten minutes at full resolution (one sample a second), as an admin would zoom in
    end = int(time.time()) + 2
    dom = Dom(dump_dom(leak_check, f"{url}/view/?start={end - 600}&end={end}"))
    assert dom.points("chart-machines") >= 10 and dom.points("chart-jobs") >= 10
    out = screenshot(leak_check, f"{url}/view/?start={end - 600}&end={end}", artifacts() / "view-page-pool.png")
    assert out.stat().st_size > 20_000


def test_hosts_outside_allow_read_are_refused(url: str) -> None:
    for path in ("/view/", "/view/static/view.js", "/view/api/series_list", "/view/api/now",
                 "/view/api/series?name=slots_by_state"):
        status, body = get(url, path, source="127.0.0.2")
        assert status == 403, (path, status, body)
        assert "127.0.0.2 may not read the collector" in body and "COLLECTOR_METRICS_ALLOW_READ (127.0.0.1)" in body
    status, body = get(url, "/view/")
    assert status == 200 and 'id="chart-machines"' in body

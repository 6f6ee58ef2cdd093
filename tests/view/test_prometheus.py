"""Prometheus interop: Debian's real prometheus scrapes a real pool's /metrics and its own HTTP
API (/api/v1/query) answers with the pool's slot counts."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import tempfile
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pooltools import Pool, wait_for

PROMETHEUS = shutil.which("prometheus")
pytestmark = pytest.mark.skipif(PROMETHEUS is None, reason="Debian's prometheus is not installed "
                                "(apt-get install prometheus; .ci/run installs it)")


@pytest.fixture(scope="module")
def pool(module_pool: Callable[..., Pool]) -> Pool:
    return module_pool({"COLLECTOR_METRICS_PORT": "0"})


def metrics_address(pool: Pool) -> str:
    found = wait_for(lambda: re.search(r"metrics endpoint listening at http://([\d.]+:\d+)/metrics",
                                       pool.log("CollectorLog")), 30, "the metrics endpoint in the CollectorLog")
    return found.group(1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def prometheus(pool: Pool, leak_check: Path) -> Iterator[str]:
    """A prometheus on loopback scraping the pool's collector every second; its base URL."""
    assert PROMETHEUS is not None
    work = Path(tempfile.mkdtemp(prefix="prometheus-", dir=leak_check))
    (work / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        "scrape_configs:\n  - job_name: htcd\n    metrics_path: /metrics\n"
        f"    static_configs:\n      - targets: ['{metrics_address(pool)}']\n")
    port = free_port()
    log = (work / "prometheus.log").open("w")
    proc = subprocess.Popen([PROMETHEUS, f"--config.file={work / 'prometheus.yml'}",
                             f"--storage.tsdb.path={work / 'data'}", f"--web.listen-address=127.0.0.1:{port}",
                             "--log.level=info"], stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: proc.poll() is not None or _ready(url), 60,
                 f"prometheus ready at {url}\n{(work / 'prometheus.log').read_text()[-3000:]}")
        assert proc.poll() is None, f"prometheus exited {proc.returncode}:\n{(work / 'prometheus.log').read_text()}"
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        log.close()
        shutil.rmtree(work, ignore_errors=True)


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/-/ready", timeout=5) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


def api(url: str, path: str, **params: str) -> Any:
    with urllib.request.urlopen(f"{url}/api/v1/{path}?{urllib.parse.urlencode(params)}", timeout=10) as resp:
        body = json.load(resp)
    assert body["status"] == "success", body
    return body["data"]


def test_prometheus_scrapes_the_pool_and_answers_its_slot_counts(pool: Pool, prometheus: str) -> None:
    def target_up() -> dict | None:
        targets = api(prometheus, "targets")["activeTargets"]
        return targets[0] if targets and targets[0]["health"] == "up" else None

    target = wait_for(target_up, 60, "the pool's collector as an up target of prometheus")
    assert target["scrapeUrl"].endswith("/metrics") and target["lastError"] == ""
    slots = len(pool.slot_names())
    assert slots > 0

    def slot_count() -> float | None:
        result = api(prometheus, "query", query="sum(htcd_slots)")["result"]
        return float(result[0]["value"][1]) if result else None

    assert wait_for(lambda: slot_count() == slots, 30, f"sum(htcd_slots) == {slots} through prometheus")
    by_state = {r["metric"]["state"]: float(r["value"][1])
                for r in api(prometheus, "query", query="sum by (state) (htcd_slots)")["result"]}
    assert sum(by_state.values()) == slots and by_state.get("Unclaimed", 0) + by_state.get("Claimed", 0) == slots
    # and it keeps them over time: the last 30 s as a range vector
    rng = api(prometheus, "query", query="htcd_slots[30s]")["result"]
    assert rng and all(len(r["values"]) >= 1 for r in rng)

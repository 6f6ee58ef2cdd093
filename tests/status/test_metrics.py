"""The collector's metrics endpoint in a real pool: OpenMetrics that Prometheus' own parser reads,
values that follow a job, JSON ads, and READ access by host."""

from __future__ import annotations

import http.client
import json
import re
import urllib.parse
from collections.abc import Callable

import pytest
from pooltools import Pool, wait_for
from prometheus_client.openmetrics.parser import text_string_to_metric_families

KNOBS = {"COLLECTOR_METRICS_PORT": "0", "COLLECTOR_METRICS_ALLOW_READ": "127.0.0.1"}


@pytest.fixture(scope="module")
def pool(module_pool: Callable[..., Pool]) -> Pool:
    return module_pool(KNOBS)


@pytest.fixture(scope="module")
def url(pool: Pool) -> tuple[str, int]:
    found = wait_for(lambda: re.search(r"metrics endpoint listening at http://([\d.]+):(\d+)/metrics",
                                       pool.log("CollectorLog")), 30, "the metrics endpoint in the CollectorLog")
    return found.group(1), int(found.group(2))


def get(url: tuple[str, int], path: str, source: str = "127.0.0.1", method: str = "GET") -> tuple[int, dict, str]:
    conn = http.client.HTTPConnection(*url, timeout=30, source_address=(source, 0))
    try:
        conn.request(method, path)
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read().decode()
    finally:
        conn.close()


def scrape(url: tuple[str, int]) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """Sample name -> {sorted labels: value}, parsed by prometheus_client's OpenMetrics parser."""
    status, headers, body = get(url, "/metrics")
    assert status == 200 and headers["Content-Type"].startswith("application/openmetrics-text; version=1.0.0")
    out: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(body):
        for s in family.samples:
            out.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    return out


def slots(m: dict, state: str, activity: str) -> float:
    return m.get("htcd_slots", {}).get((("activity", activity), ("state", state)), 0)


def test_metrics_follow_the_pool(pool: Pool, url: tuple[str, int]) -> None:
    def cycles(m: dict) -> float:
        return max(m.get("htcd_negotiation_cycles_total", {}).values(), default=0)

    m = wait_for(lambda: (lambda m: m if slots(m, "Unclaimed", "Idle") == 2 and "htcd_schedd_jobs" in m
                          and cycles(m) >= 1 else None)(scrape(url)),
                 60, "2 unclaimed slots, the schedd and a negotiation cycle in /metrics")
    assert sum(m["htcd_slots"].values()) == 2, m
    assert sum(m["htcd_slot_cpus"].values()) == 2, m
    schedd = pool.htcd("status", "-schedd", "-af", "Name").stdout.strip()
    assert m["htcd_schedd_jobs"][(("schedd", schedd), ("state", "running"))] == 0, m
    assert m["htcd_collector_ads"][(("ad_type", "Machine"),)] == 2, m
    duration = next(iter(m["htcd_negotiation_cycle_duration_seconds"].values()))
    assert 0 <= duration < 60, m

    pool.submit("executable = /bin/sleep\narguments = 300\nqueue\n")
    def running(m: dict) -> float:
        return sum(v for k, v in m.get("htcd_submitter_jobs", {}).items() if ("state", "running") in k)

    m = wait_for(lambda: (lambda m: m if slots(m, "Claimed", "Busy") == 1 and slots(m, "Unclaimed", "Idle") == 1
                          and m["htcd_schedd_jobs"].get((("schedd", schedd), ("state", "running"))) == 1
                          and running(m) == 1 else None)(scrape(url)),
                 90, "1 Claimed/Busy slot, 1 running job and its submitter in /metrics")
    # the same pool as htcd status shows it
    table = pool.htcd("status").stdout
    assert re.search(r" Claimed +Busy ", table) and re.search(r"Total +2 +0 +1 +1 ", table), table
    sub = pool.htcd("status", "-submitters").stdout.splitlines()
    assert sub[2].split()[2:] == ["1", "0", "0"], f"RunningJobs IdleJobs HeldJobs of the submitter: {sub}"
    assert sub[-1].split() == ["Total", "1", "0", "0"]


def test_ads_as_json(url: tuple[str, int]) -> None:
    q = urllib.parse.urlencode({"type": "Machine", "constraint": 'SlotID == 2', "projection": "Name,State,SlotID"})
    status, headers, body = get(url, f"/ads?{q}")
    assert status == 200 and headers["Content-Type"] == "application/json"
    ads = json.loads(body)
    assert len(ads) == 1 and set(ads[0]) == {"Name", "State", "SlotID"} and ads[0]["SlotID"] == 2
    status, _, body = get(url, "/ads?type=scheduler&limit=1")
    assert status == 200 and [a["MyType"] for a in json.loads(body)] == ["Scheduler"]


def test_bad_requests(url: tuple[str, int]) -> None:
    q = urllib.parse.urlencode({"constraint": "State == "})
    status, _, body = get(url, f"/ads?{q}")
    assert status == 400 and "bad constraint 'State =='" in body and "expected an expression" in body
    status, _, body = get(url, "/ads?type=Frobnicator")
    assert status == 400 and "unknown ad type 'Frobnicator'" in body
    status, _, body = get(url, "/nowhere")
    assert status == 404 and "/metrics" in body
    status, headers, _ = get(url, "/metrics", method="POST")
    assert status == 405 and headers["Allow"] == "GET, HEAD"
    status, headers, body = get(url, "/metrics", method="HEAD")
    assert status == 200 and body == "" and int(headers["Content-Length"]) > 0


def test_hosts_outside_allow_read_are_refused(url: tuple[str, int]) -> None:
    status, _, body = get(url, "/metrics", source="127.0.0.2")
    assert status == 403
    assert "127.0.0.2 may not read the collector" in body and "COLLECTOR_METRICS_ALLOW_READ (127.0.0.1)" in body
    status, _, _ = get(url, "/ads", source="127.0.0.2")
    assert status == 403

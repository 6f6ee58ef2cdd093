"""The pool view's JSON API on a real collector: ads sent to it show in the series it samples, the
glance and the series list; bad requests get 400 with the reason; hosts outside
COLLECTOR_METRICS_ALLOW_READ get 403; the history survives kill -9; without KEEP_POOL_HISTORY the
API is 404 until a reconfig turns it on."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from pooltools import Pool, wait_for

from htcd.wire.address import Address
from htcd.wire.client import Connection
from htcd.wire.locate import read_address_file

KNOBS = {"COLLECTOR_METRICS_PORT": "0", "COLLECTOR_METRICS_ALLOW_READ": "127.0.0.1",
         "KEEP_POOL_HISTORY": "true", "POOL_HISTORY_SAMPLING_INTERVAL": "1"}
ENDPOINT = re.compile(r"metrics endpoint listening at http://([\d.]+):(\d+)/metrics")


def start_collector_pool(make_pool: Callable[..., Pool], knobs: dict[str, str]) -> Pool:
    """A pool running only the master and the collector (as tests/collector's helper)."""
    pool = make_pool({"DAEMON_LIST": "MASTER COLLECTOR", **knobs}, start=False)
    pool.master = subprocess.Popen([sys.executable, "-m", "htcd", "master", "-f"], env=pool.env,
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_for(lambda: collector_address(pool), 60, "the collector's address file")
    return pool


def collector_address(pool: Pool) -> Address | None:
    return read_address_file(str(pool.local / "log" / ".collector_address"))


def call(addr: Address, command: str, **args: Any) -> Any:
    with Connection(addr, timeout=60) as conn:
        return conn.call(command, **args)


def endpoints(pool: Pool) -> list[tuple[str, int]]:
    return [(m.group(1), int(m.group(2))) for m in ENDPOINT.finditer(pool.log("CollectorLog"))]


def get(url: tuple[str, int], path: str, source: str = "127.0.0.1") -> tuple[int, Any]:
    conn = http.client.HTTPConnection(*url, timeout=30, source_address=(source, 0))
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        body = resp.read().decode()
        ctype = resp.getheader("Content-Type") or ""
        return resp.status, json.loads(body) if ctype.startswith("application/json") else body
    finally:
        conn.close()


def slot(name: str, state: str, arch: str = "X86_64") -> dict[str, str]:
    return {"MyType": '"Machine"', "Name": f'"{name}"', "MyAddress": '"<127.0.0.1:1>"', "State": f'"{state}"',
            "Activity": '"Busy"' if state == "Claimed" else '"Idle"', "Arch": f'"{arch}"', "OpSys": '"LINUX"',
            "Cpus": "1"}


def advertise(pool: Pool) -> None:
    addr = collector_address(pool)
    assert addr is not None
    for ad in (slot("slot1@a", "Claimed"), slot("slot2@a", "Claimed"), slot("slot1@b", "Unclaimed", "AARCH64")):
        call(addr, "UPDATE_AD", ad_type="Machine", ad=ad)
    call(addr, "UPDATE_AD", ad_type="Scheduler",
         ad={"MyType": '"Scheduler"', "Name": '"s@h"', "MyAddress": '"<127.0.0.1:2>"', "TotalIdleJobs": "7",
             "TotalRunningJobs": "2", "TotalHeldJobs": "1", "TotalJobAds": "10"})
    call(addr, "UPDATE_AD", ad_type="Submitter",
         ad={"MyType": '"Submitter"', "Name": '"alice@h"', "ScheddName": '"s@h"', "MyAddress": '"<127.0.0.1:2>"',
             "IdleJobs": "7", "RunningJobs": "2", "HeldJobs": "1"})


def claimed_now(url: tuple[str, int]) -> dict[str, Any] | None:
    status, body = get(url, f"/view/api/series?name=slots_by_state&start={int(time.time()) - 600}")
    assert status == 200, body
    col = body["columns"].get("Claimed") or []
    return body if col and col[-1] == 2 else None


def test_the_api_serves_what_the_collector_sampled_and_keeps_it_across_kill_9(
        make_pool: Callable[..., Pool]) -> None:
    pool = start_collector_pool(make_pool, KNOBS)
    url = wait_for(lambda: endpoints(pool)[-1:], 30, "the metrics endpoint in the CollectorLog")[0]
    assert f"keeping pool history in {pool.local / 'ViewHist' / 'pool_history.sqlite'}" in pool.log("CollectorLog")
    advertise(pool)
    body = wait_for(lambda: claimed_now(url), 30, "a sample with the 2 claimed slots")
    assert body["step"] == 1 and body["end"] - body["start"] == 600 and "max" not in body
    assert body["stats"]["Claimed"]["last"] == 2 and body["columns"]["Unclaimed"][-1] == 1
    status, day = get(url, "/view/api/series?name=slots_by_state&range=day")  # 86,400 samples: 5-minute buckets
    assert status == 200 and day["step"] == 300 and day["end"] - day["start"] == 86400
    assert day["stats"]["Claimed"]["peak"] == 2 and day["max"]["Claimed"][-1] == 2

    status, users = get(url, "/view/api/series?name=jobs_by_user&range=week")
    assert status == 200 and users["columns"]["alice@h/Idle"][-1] == 7, users
    status, some = get(url, "/view/api/series?name=jobs_by_user&range=week&keys=alice@h/Held,alice@h/Running")
    assert status == 200 and sorted(some["columns"]) == ["alice@h/Held", "alice@h/Running"], some
    status, listing = get(url, "/view/api/series_list")
    assert status == 200 and listing["interval"] == 1
    assert listing["series"]["slots_by_arch"] == ["AARCH64/LINUX", "X86_64/LINUX"]
    assert listing["oldest"] <= listing["newest"] <= time.time() + 1
    cost = listing["last_sample"]
    assert cost["ads"] >= 5 and 0 <= cost["reduce_cpu_seconds"] < 1 and 0 <= cost["write_cpu_seconds"] < 1
    status, now = get(url, "/view/api/now")
    assert status == 200
    assert now["status_total"]["total"]["Claimed"] == 2 and now["status_total"]["total"]["Total"] == 3
    assert now["queue_totals"]["idle"] == 7 and now["queue_totals"]["by_schedd"]["s@h"]["jobs"] == 10

    for path, reason in (("series?name=nope", "unknown series 'nope'"), ("series", "name is required"),
                         ("series?name=slots_by_state&range=decade", "unknown range 'decade'"),
                         ("series?name=slots_by_state&start=10&end=5", "must be before end"),
                         ("series?name=jobs_by_user&keys=bob@h/Idle", "series jobs_by_user has no key 'bob@h/Idle'")):
        status, err = get(url, "/view/api/" + path)
        assert status == 400 and reason in err["error"], (path, err)
    status, err = get(url, "/view/api/other")
    assert status == 404 and "no such API" in err["error"]
    status, text = get(url, "/view/api/series_list", source="127.0.0.2")
    assert status == 403 and "COLLECTOR_METRICS_ALLOW_READ" in text

    # kill -9: the samples written before stay; the restarted collector goes on sampling
    before = claimed_now(url)
    assert before is not None
    pid = pool.daemon_pids()["COLLECTOR"]
    os.kill(pid, signal.SIGKILL)
    url2 = wait_for(lambda: (lambda e: e[-1] if len(e) >= 2 else None)(endpoints(pool)), 60,
                    "the restarted collector's endpoint")
    after = wait_for(lambda: (lambda b: b if b["t"] and b["t"][-1] > before["t"][-1] else None)(
        get(url2, f"/view/api/series?name=slots_by_state&start={before['start']}")[1]), 30,
        "a sample after the restart")
    kept = dict(zip(after["t"], after["columns"]["Claimed"], strict=True))
    assert all(kept.get(t) == v for t, v in zip(before["t"], before["columns"]["Claimed"], strict=True))
    assert after["columns"]["Claimed"][-1] == 0  # the restarted collector has no ads yet


def test_without_keep_pool_history_the_api_is_404_until_a_reconfig(make_pool: Callable[..., Pool]) -> None:
    pool = start_collector_pool(make_pool, {**KNOBS, "KEEP_POOL_HISTORY": "false"})
    url = wait_for(lambda: endpoints(pool)[-1:], 30, "the metrics endpoint in the CollectorLog")[0]
    status, err = get(url, "/view/api/series?name=slots_by_state")
    assert status == 404 and "KEEP_POOL_HISTORY is false" in err["error"]
    status, text = get(url, "/view/")
    assert status == 404 and "keeps no pool history" in text
    hist = pool.dir / "hist"
    with open(pool.config_file, "a") as f:
        f.write(f"KEEP_POOL_HISTORY = true\nPOOL_HISTORY_DIR = {hist}\n")
    pool.htcd("reconfig")
    wait_for(lambda: get(url, "/view/api/series_list")[0] == 200, 30, "the API after the reconfig")
    advertise(pool)
    wait_for(lambda: claimed_now(url), 30, "a sample with the 2 claimed slots")
    assert (hist / "pool_history.sqlite").exists()

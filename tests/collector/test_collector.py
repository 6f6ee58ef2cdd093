"""The collector as a real process: TCP and signed UDP updates, update statistics (in the ads, the
collector's own ad and ``htcd updates_stats``), expiry, invalidation on shutdown, and queries that
leave the collector answering."""

from __future__ import annotations

import secrets
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
from collectortools import call, collector_address, own_ad, start_collector_pool
from pooltools import wait_for

from htcd.wire import udp
from htcd.wire.client import Connection
from htcd.wire.errors import RemoteError


def generic(name: str, **attrs: str) -> dict[str, str]:
    return {"MyType": '"Generic"', "Name": f'"{name}"', **attrs}


def names(addr: object, ad_type: str, constraint: str | None = None) -> set[str]:
    return {w["Name"].strip('"') for w in call(addr, "QUERY_ADS", ad_type=ad_type, constraint=constraint,
                                               projection=["Name"])}


def test_a_pool_advertising_over_udp_shows_its_slots_and_their_statistics(make_pool) -> None:
    pool = make_pool({"UPDATE_COLLECTOR_WITH_TCP": "false"})
    slots = pool.slot_names()
    assert len(slots) == 2
    addr = collector_address(pool)
    # the slots keep updating over UDP: their counts grow, nothing is lost
    wait_for(lambda: int(own_ad(addr)["DatagramsReceived"]) >= 8, 60, "UDP updates to arrive")
    ad = own_ad(addr)
    assert int(ad["ActiveUdpSessions"]) >= 1 and ad["DatagramsDroppedBadMAC"] == "0"
    long = pool.htcd("status", "-l", slots[0]).stdout
    for attr in ("UpdatesTotal", "UpdatesSequenced", "UpdatesLost = 0", "UpdatesHistory", "LastHeardFrom",
                 'AuthenticationMethod = "FS"'):
        assert attr in long, attr
    collector = pool.htcd("status", "-collector", "-l").stdout
    assert "UpdatesLostRatio" in collector and "UpdatesTotal_Start" in collector
    stats = pool.htcd("updates_stats", "-startd").stdout
    assert f"*** Name/Machine = '{slots[0]}' MyType = 'Machine' ***" in stats
    assert "Lost=0 (0.00%)" in stats and ": Ok" in stats


def test_lost_updates_are_counted_and_a_restart_is_not_a_loss(make_pool) -> None:
    pool = start_collector_pool(make_pool)
    addr = collector_address(pool)
    base = {"MyType": '"Machine"', "Name": '"slot1@lossy"', "MyAddress": '"<127.0.0.1:1>"', "DaemonStartTime": "100"}
    for seq in (1, 2, 5, 6):  # 3 and 4 never sent
        call(addr, "UPDATE_AD", ad_type="Machine", ad={**base, "UpdateSequenceNumber": str(seq)})
    ad = call(addr, "QUERY_ADS", ad_type="Machine", constraint='Name == "slot1@lossy"')[0]
    assert (ad["UpdatesTotal"], ad["UpdatesSequenced"], ad["UpdatesLost"]) == ("6", "5", "2")
    assert ad["UpdatesHistory"].startswith('"0x3')  # 0011...: the two before the last two were lost
    call(addr, "UPDATE_AD", ad_type="Machine", ad={**base, "DaemonStartTime": "200", "UpdateSequenceNumber": "1"})
    ad = call(addr, "QUERY_ADS", ad_type="Machine", constraint='Name == "slot1@lossy"')[0]
    assert (ad["UpdatesTotal"], ad["UpdatesLost"]) == ("7", "2")
    mine = own_ad(addr)
    assert mine["UpdatesLost_Start"] == "2" and mine["UpdatesTotal_Start"] == "7"
    out = pool.htcd("updates_stats", "-startd", "-l").stdout
    assert "Stats: Total=7, Seq=5, Lost=2 (28.57%)" in out
    assert out.count(": Missed") == 2
    brief = pool.htcd("updates_stats", "-startd", "-history=0-1").stdout
    assert "0: Ok" in brief and ": Missed" not in brief
    summary = pool.htcd("updates_stats", "-s").stdout
    assert "Stats: Total=7" in summary and ": Ok" not in summary


def test_signed_datagrams_are_taken_and_forged_ones_dropped_counted_and_logged(make_pool) -> None:
    pool = start_collector_pool(make_pool)
    addr = collector_address(pool)
    session = call(addr, "UPDATE_SESSION")
    target = tuple(session["udp"])
    sid, key = session["id"], session["key"]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(30)
        update = {"cmd": "UPDATE_AD", "args": {"ad_type": "Generic", "ad": generic("signed")}}
        sock.sendto(udp.encode(sid, key, update), target)
        wait_for(lambda: "signed" in names(addr, "Generic"), 30, "the signed update to be stored")
        forged = {"cmd": "UPDATE_AD", "args": {"ad_type": "Generic", "ad": generic("forged")}}
        for _ in range(3):
            sock.sendto(udp.encode(sid, secrets.token_bytes(32), forged), target)
        tampered = bytearray(udp.encode(sid, key, forged))
        tampered[-2] ^= 0x20
        sock.sendto(bytes(tampered), target)
        stranger = secrets.token_bytes(16)
        sock.sendto(udp.encode(stranger, key, forged), target)
        data, _ = sock.recvfrom(100)  # the collector tells the sender to open a new session
        assert udp.notice_session(data) == stranger
        sock.sendto(b"not a datagram of ours", target)
    wait_for(lambda: own_ad(addr)["DatagramsDroppedBadMAC"] == "4", 30, "the forged datagrams to be counted")
    ad = own_ad(addr)
    assert ad["DatagramsDroppedUnknownSession"] == "1"
    wait_for(lambda: ad["DatagramsDroppedMalformed"] == "1" or own_ad(addr)["DatagramsDroppedMalformed"] == "1",
             30, "the malformed datagram to be counted")
    assert "forged" not in names(addr, "Generic")
    log = wait_for(lambda: "dropped UDP datagrams" in pool.log("CollectorLog") and pool.log("CollectorLog"), 30,
                   "the drops to be logged")
    assert log.count("dropped UDP datagrams") == 1  # at most once a minute
    stored = call(addr, "QUERY_ADS", ad_type="Generic", constraint='Name == "signed"')[0]
    assert stored["AuthenticationMethod"] == '"FS"'


def test_ads_expire_after_their_lifetime(make_pool) -> None:
    pool = start_collector_pool(make_pool, {"CLASSAD_LIFETIME": "2"})
    addr = collector_address(pool)
    call(addr, "UPDATE_AD", ad_type="Generic", ad=generic("brief", ClassAdLifetime="1"))
    call(addr, "UPDATE_AD", ad_type="Generic", ad=generic("lasting", ClassAdLifetime="600"))
    assert names(addr, "Generic") >= {"brief", "lasting"}
    wait_for(lambda: "brief" not in names(addr, "Generic"), 30, "the short-lived ad to expire")
    assert "lasting" in names(addr, "Generic")
    wait_for(lambda: "expired 1 ads" in pool.log("CollectorLog"), 30, "the sweep to remove it")


def test_a_daemon_shutting_down_gracefully_removes_its_ad_at_once(make_pool) -> None:
    pool = start_collector_pool(make_pool, {"UPDATE_INTERVAL": "300"})  # ads would live 900 s
    addr = collector_address(pool)
    neg = subprocess.Popen([sys.executable, "-m", "htcd", "negotiator", "-f"], env=pool.env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: names(addr, "Negotiator"), 60, "the negotiator's ad")
        ad = call(addr, "QUERY_ADS", ad_type="Negotiator", projection=["ClassAdLifetime"])[0]
        assert ad["ClassAdLifetime"] == "900"
        neg.send_signal(signal.SIGTERM)
        assert neg.wait(60) == 0
        assert names(addr, "Negotiator") == set()  # invalidated before the negotiator exited
    finally:
        if neg.poll() is None:
            neg.kill()
            neg.wait()


def test_queries_with_constraint_projection_and_limit(make_pool) -> None:
    pool = start_collector_pool(make_pool)
    addr = collector_address(pool)
    ads = [{"ad_type": "Machine", "ad": {"MyType": '"Machine"', "Name": f'"slot{i}@q"', "MyAddress": '"<127.0.0.1:7>"',
                                           "Group": str(i % 10), "State": '"Claimed"' if i % 2 else '"Unclaimed"'}}
           for i in range(500)]
    assert call(addr, "UPDATE_AD", updates=ads) == {"stored": 500, "errors": []}
    for _ in range(2):  # the first query creates the Group index, later ones use it
        got = call(addr, "QUERY_ADS", ad_type="Machine", constraint='Group == 3 && State == "Claimed"',
                   projection=["Name", "state"])
        assert {w["Name"] for w in got} == {f'"slot{i}@q"' for i in range(500) if i % 10 == 3}
        assert all(set(w) == {"Name", "State"} for w in got)
    assert len(call(addr, "QUERY_ADS", ad_type="Machine", constraint="Group >= 5", limit=7)) == 7
    every = [w["MyType"] for w in call(addr, "QUERY_ADS", ad_type="Any", projection=["MyType"])]
    assert every.count('"Machine"') == 500 and every.count('"Collector"') == 1
    with pytest.raises(RemoteError, match="bad constraint") as err:
        call(addr, "QUERY_ADS", ad_type="Machine", constraint="Group ==")
    assert err.value.code == "BAD_CONSTRAINT"
    bad = call(addr, "UPDATE_AD", updates=[{"ad_type": "Machine", "ad": {"Cpus": "1"}}])
    assert bad["stored"] == 0 and "needs a Name" in bad["errors"][0]
    out = pool.htcd("status", "-constraint", "Group == 4", "-af", "Name").stdout.split()
    assert sorted(out) == sorted(f"slot{i}@q" for i in range(500) if i % 10 == 4)


def test_the_collector_answers_ping_while_streaming_100k_ads(make_pool) -> None:
    pool = start_collector_pool(make_pool)
    addr = collector_address(pool)
    n = 100_000
    for first in range(0, n, 5000):
        batch = [{"ad_type": "Machine",
                  "ad": {"MyType": '"Machine"', "Name": f'"slot{i}@big"', "MyAddress": '"<127.0.0.1:9>"',
                         "Memory": str(i % 4096), "State": '"Unclaimed"', "Arch": '"X86_64"', "Cpus": "1",
                         "Note": f'"filler text for slot {i} to make the reply bigger"'}}
                 for i in range(first, first + 5000)]
        assert call(addr, "UPDATE_AD", updates=batch)["stored"] == 5000
    marks: dict[str, float] = {}
    got = []

    def read_all() -> None:
        with Connection(addr, timeout=120) as conn:
            for part in conn.stream("QUERY_ADS", ad_type="Machine", constraint="Memory >= 0"):
                marks.setdefault("first", time.monotonic())
                got.append(len(part))
        marks["done"] = time.monotonic()

    reader = threading.Thread(target=read_all)
    pings: list[tuple[float, float]] = []
    with Connection(addr, timeout=60) as conn:
        reader.start()
        while reader.is_alive():
            t0 = time.monotonic()
            assert conn.call("PING")["daemon"] == "COLLECTOR"
            pings.append((t0, time.monotonic()))
    reader.join()
    assert sum(got) == n and len(got) > 50  # streamed in chunks
    during = [(a, b) for a, b in pings if a >= marks["first"] and b <= marks["done"]]
    assert len(during) >= 5, (len(pings), marks)
    assert max(b - a for a, b in during) < 2.0

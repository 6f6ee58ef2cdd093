"""DaemonCore statistics measured on a real asyncio loop, STATISTICS_TO_PUBLISH, the Pacer, and the
sliced decoding of big requests."""

from __future__ import annotations

import asyncio
import time

import msgpack
import pytest

from htcd.classad import ClassAd
from htcd.daemon.stats import DaemonStats, PublishFlags, parse_publish
from htcd.pacer import Pacer
from htcd.wire.errors import ProtocolError
from htcd.wire.framing import decode_body
from htcd.wire.server import decode_paced


def burn(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_parse_publish_follows_htcondor_syntax() -> None:
    assert parse_publish(None) == (PublishFlags(), [])
    assert parse_publish("DEFAULT")[0] == PublishFlags()
    assert parse_publish("NONE")[0].level == 0
    assert parse_publish("DC:2")[0] == PublishFlags(level=2)
    assert parse_publish("DAEMONCORE:2")[0].level == 2
    assert parse_publish("SCHEDD:2")[0].level == 0, "a list naming other collections only leaves DC out"
    assert parse_publish("DEFAULT:1!L, DC:2RDZL")[0] == PublishFlags(level=2, recent=True, lifetime=True, debug=True)
    assert parse_publish("ALL:1!R")[0] == PublishFlags(level=1, recent=False)
    assert parse_publish("DC:NONE")[0].level == 0
    flags, problems = parse_publish("DC:2Q")
    assert flags.level == 2 and problems == ["option 'Q' invalid in 'DC:2Q'"]


def run_monitored(stats: DaemonStats, body) -> None:
    async def main() -> None:
        stats.attach(asyncio.get_running_loop())
        await body()

    asyncio.run(main())


def test_a_blocking_callback_is_measured_logged_and_named() -> None:
    blocks: list[tuple[float, float, str]] = []
    stats = DaemonStats(on_block=lambda busy, cpu, what: blocks.append((busy, cpu, what)))

    async def body() -> None:
        async def hog() -> None:
            burn(0.15)

        await asyncio.create_task(hog(), name="the hog")
        await asyncio.sleep(0.01)

    run_monitored(stats, body)
    assert len(blocks) == 1
    busy, cpu, what = blocks[0]
    assert busy >= 0.15 and cpu >= 0.14
    assert what.startswith("task 'the hog' (") and "hog" in what
    life = stats.lifetime()
    assert life.max_block >= 0.15 and life.max_block_cpu >= 0.14 and "the hog" in life.max_block_what


def test_short_steps_stay_short_and_waiting_is_select_wait() -> None:
    stats = DaemonStats()

    async def body() -> None:
        for _ in range(20):
            burn(0.002)
            await asyncio.sleep(0.01)

    run_monitored(stats, body)
    life = stats.lifetime()
    assert life.max_block_cpu < 0.05
    assert life.pump_count >= 20
    assert life.select_wait >= 0.15, "the sleeps are time spent waiting in select()"
    assert life.select_wait < life.pump_sum
    assert 0.0 < DaemonStats.duty_cycle(life) < 0.6


def test_a_paced_loop_over_many_items_never_blocks_long() -> None:
    stats = DaemonStats()

    async def body() -> None:
        pacer = Pacer(0.01)
        for i in range(300):
            if pacer.due():
                await pacer.pause()
            burn(0.001)
            assert i >= 0

    run_monitored(stats, body)
    assert stats.lifetime().max_block_cpu < 0.03


def test_recent_window_forgets_old_quanta_and_lifetime_keeps_them() -> None:
    stats = DaemonStats()
    stats.configure(window=3, quantum=1, flags=PublishFlags(level=2))
    stats.command("PING", 0.5)
    stats.tick(stats.next_tick + 5)  # five quanta later
    stats.command("QUERY_JOBS", 0.25)
    attrs = stats.attributes()
    assert attrs["DCCommands"] == 2 and attrs["RecentDCCommands"] == 1
    assert attrs["DCCommand_PING"] == 1 and attrs["RecentDCCommand_PING"] == 0
    assert attrs["RecentDCCommand_QUERY_JOBSRuntime"] == 0.25
    assert attrs["RecentWindowMax"] == 3


def test_attributes_by_level_and_unpublish() -> None:
    stats = DaemonStats()
    stats.command("PING", 0.001)
    stats.timer("publish", 0.002)
    stats.signal()
    basic = stats.attributes(PublishFlags(level=1))
    assert {"DCCommands", "RecentDCSignals", "DCTimersFired", "StatsLifetime", "DaemonCoreMaxBlockCpuMs",
            "MonitorSelfResidentSetSize", "DaemonCoreDutyCycle"} <= set(basic)
    assert "DCCommand_PING" not in basic and "DCTimer_publish" not in basic
    verbose = stats.attributes(PublishFlags(level=2))
    assert verbose["DCCommand_PING"] == 1 and verbose["DCTimer_publish"] == 1 and "MonitorSelfUserCpuTime" in verbose
    lifetime_only = stats.attributes(PublishFlags(level=1, recent=False))
    assert "DCCommands" in lifetime_only and not any(k.startswith("RecentDC") for k in lifetime_only)
    ad = ClassAd({"Name": "x"})
    stats.publish(ad, PublishFlags(level=2))
    assert "DCCommand_PING" in ad
    stats.unpublish(ad)
    assert list(ad) == ["Name"]


def test_decode_paced_gives_what_decode_body_gives() -> None:
    message = {"cmd": "SUBMIT", "args": {"cluster_id": 7, "cluster_ad": {"Cmd": '"/bin/true"'},
                                         "proc_ads": [{"Args": f'"{i}"'} for i in range(20000)],
                                         "files": {"a": b"\x00\x01" * 10}, "nested": [[1, [2, 3]], {"k": None}]}}
    body = msgpack.packb(message, use_bin_type=True)
    assert asyncio.run(decode_paced(body)) == decode_body(body) == message
    for bad, why in ((body[:-1], "undecodable"), (body + b"\x00", "extra data"),
                     (msgpack.packb([1, 2]), "not a map")):
        with pytest.raises(ProtocolError, match=why):
            asyncio.run(decode_paced(bad))

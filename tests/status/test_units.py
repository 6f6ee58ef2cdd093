"""Pieces of the status tool and the metrics endpoint that need no pool: what -direct sends, the
READ host list, and label escaping in the exposition."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from htcd.cli.main import Parser
from htcd.cli.status import configure, direct_query
from htcd.client import collector as client_collector
from htcd.client import daemoncore
from htcd.collector.metrics import Family, HostList
from htcd.wire.address import Address


def status_args(*argv: str) -> argparse.Namespace:
    p = Parser(prog="htcd status")
    configure("status", p)
    return p.parse_args(list(argv))


def test_direct_passes_statistics_and_filters_locally(monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[tuple[str, dict[str, Any]]] = []
    collector = Address.parse("<127.0.0.1:9618?unix=/nonexistent/collector.sock>")

    def call(address: Address, command: str, what: str, **args: Any) -> list[dict[str, str]]:
        assert address == collector
        sent.append((command, args))
        return [{"MyType": '"Collector"', "Name": '"one"', "HostsTotal": "3"},
                {"MyType": '"Collector"', "Name": '"two"', "HostsTotal": "0"}]

    monkeypatch.setattr(client_collector, "address", lambda cfg: collector)
    monkeypatch.setattr(daemoncore, "call", call)
    args = status_args("-collector", "-statistics", "DC:2,COLLECTOR:1")
    ads = direct_query(None, args, "Collector", "HostsTotal > 0")  # type: ignore[arg-type]
    assert sent == [("DC_QUERY_SELF", {"statistics": "DC:2,COLLECTOR:1"})]
    assert [a.get_value("Name") for a in ads] == ["one"]


@pytest.mark.parametrize(("entries", "peer", "allowed"), [
    ("127.0.0.1", "127.0.0.1", True),
    ("127.0.0.1", "127.0.0.2", False),
    ("127.0.0.0/8, ::1", "127.9.9.9", True),
    ("127.0.0.0/8, ::1", "::1", True),
    ("10.0.0.0/8", "::ffff:10.1.2.3", True),
    ("192.168.*", "192.168.7.1", True),
    ("192.168.*", "192.169.7.1", False),
    ("*/127.0.0.1", "127.0.0.1", True),
    ("alice@example.org/127.0.0.1", "127.0.0.1", False),  # a named user needs authentication
    ("*", "203.0.113.9", True),
    ("localhost", "127.0.0.1", True),
])
def test_host_list(entries: str, peer: str, allowed: bool) -> None:
    async def check() -> bool:
        hl = HostList.parse(entries)
        await hl.resolve()
        return await hl.allows(peer)

    assert asyncio.run(check()) is allowed


def test_exposition_escapes_labels_and_parses() -> None:
    f = Family("htcd_test_seconds", "gauge", 'help with "quotes"\nand a newline', "seconds")
    f.set(1.5, name='a "b"\\c\nd')
    c = Family("htcd_things", "counter", "Things.")
    c.set(3, name="x")
    text = "\n".join([*f.lines(), *c.lines()]) + "\n# EOF\n"
    fams = {fam.name: fam for fam in text_string_to_metric_families(text)}
    sample = fams["htcd_test_seconds"].samples[0]
    assert sample.labels == {"name": 'a "b"\\c\nd'} and sample.value == 1.5
    assert fams["htcd_things"].samples[0].name == "htcd_things_total"


def test_collector_figures_from_the_collector_ad() -> None:
    from htcd.classad import ClassAd
    from htcd.collector.metrics import collector_figures

    fams: dict[str, Family] = {}

    def family(name: str, kind: str, help_text: str, unit: str = "") -> Family:
        return fams.setdefault(name, Family(name, kind, help_text, unit))

    ad = ClassAd({"UpdatesTotal": 100, "UpdatesLost": 4, "UpdatesSequenced": 90, "UpdatesLostRatio": 0.04,
                  "UpdatesLost_Machine": 3, "UpdatesTotal_Machine": 80, "DatagramsReceived": 50,
                  "DatagramsDroppedBadMAC": 2})
    collector_figures(ad, "cm", family)
    text = "\n".join(line for f in fams.values() for line in f.lines()) + "\n# EOF\n"
    got = {(s.name, tuple(sorted(s.labels.items()))): s.value
           for fam in text_string_to_metric_families(text) for s in fam.samples}
    assert got[("htcd_collector_updates_lost_total", (("collector", "cm"),))] == 4
    assert got[("htcd_collector_updates_lost_by_type_total", (("ad_type", "Machine"), ("collector", "cm")))] == 3
    assert got[("htcd_collector_updates_lost_ratio", (("collector", "cm"),))] == 0.04
    assert got[("htcd_collector_datagrams_dropped_total", (("collector", "cm"), ("reason", "BadMAC")))] == 2

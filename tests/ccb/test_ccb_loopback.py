"""CCB on loopback: a startd with CCB_ADDRESS registers with the collector's CCB server and is
reached by a reverse connection (its address without the Unix socket, so the client must use
the CCBID), on the blocking and the asyncio connect paths."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator

import pytest
from pooltools import Pool, wait_for

from htcd.wire import client
from htcd.wire.address import Address
from htcd.wire.authn import ClientSecurity
from htcd.wire.ccb import parse_contacts
from htcd.wire.client import Connection, acall
from htcd.wire.errors import WireError


@pytest.fixture(scope="module")
def ccb_pool(module_pool) -> Iterator[Pool]:
    pool = module_pool({"CCB_ADDRESS": "$(COLLECTOR_HOST)", "CCB_HEARTBEAT_INTERVAL": "2"}, slots=2)
    client.configure(ClientSecurity.from_config(pool.tool_config(), "CLIENT"))  # this pool's tools' settings
    yield pool
    client.configure(None)


def _startd_address(pool: Pool) -> Address:
    ads = wait_for(lambda: [a for a in pool.collector_ads("Machine", ["MyAddress"]) or []
                            if "CCBID=" in a.get("MyAddress", "")], 30, "a slot ad with a CCBID")
    addr = Address.parse(ads[0]["MyAddress"].strip('"'))
    return dataclasses.replace(addr, unix=None)  # as a client on another host sees it


def _ccb_counters(pool: Pool) -> dict[str, int]:
    ads = pool.collector_ads("Collector", ["CCBRequestsSucceeded", "CCBRequestsNotFound", "CCBTargets"]) or [{}]
    return {k: int(v) for k, v in ads[0].items() if k.startswith("CCB")}



def test_reverse_connection_sync_and_async(ccb_pool: Pool) -> None:
    addr = _startd_address(ccb_pool)
    [contact] = parse_contacts(addr.ccbid or "")
    assert contact.server.port and contact.ccbid > 0
    before = _ccb_counters(ccb_pool).get("CCBRequestsSucceeded", 0)
    with Connection(addr, timeout=10) as conn:
        assert conn.call("PING")  # answered by the startd over the connection it opened to us
    assert asyncio.run(acall(addr, "PING", timeout=10))
    wait_for(lambda: _ccb_counters(ccb_pool).get("CCBRequestsSucceeded", 0) >= before + 2, 20,
             lambda: f"two reverse connections counted by the CCB server: {_ccb_counters(ccb_pool)}")
    assert ccb_pool.log("StartLog").count("CCB: connected back to") >= 2


def test_unknown_ccbid_is_a_clear_error(ccb_pool: Pool) -> None:
    addr = _startd_address(ccb_pool)
    [contact] = parse_contacts(addr.ccbid or "")
    bogus = dataclasses.replace(addr, ccbid=f"{contact.server.host}:{contact.server.port}#99999")
    with pytest.raises(WireError, match=r"no route through CCB server .* to ccbid 99999: .*no daemon is "
                                        r"registered with ccbid 99999"):
        Connection(bogus, timeout=5)
    with pytest.raises(WireError, match=r"to ccbid 99999"):
        asyncio.run(acall(bogus, "PING", timeout=5))


def test_the_target_registers_again_with_its_id_after_the_collector_restarts(ccb_pool: Pool) -> None:
    before = _startd_address(ccb_pool)
    [old] = parse_contacts(before.ccbid or "")
    registered = ccb_pool.log("StartLog").count("CCB: registered with")
    ccb_pool.htcd("restart", "-daemon", "collector")

    def again() -> Address | None:  # a new collector (a new port: COLLECTOR_HOST has port 0), the same id
        addr = _startd_address(ccb_pool)
        [now] = parse_contacts(addr.ccbid or "")
        return addr if now.server != old.server and now.ccbid == old.ccbid else None

    addr = wait_for(again, 60, lambda: f"the startd registered again with ccbid {old.ccbid}\n"
                                       f"{ccb_pool.log('StartLog')[-2000:]}")
    assert ccb_pool.log("StartLog").count("CCB: registered with") > registered
    with Connection(addr, timeout=10) as conn:
        assert conn.call("PING")

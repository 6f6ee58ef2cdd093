"""The startd keeps two policies: its slots' START/PREEMPT/... expressions and the daemon's
ALLOW/DENY authorization.  The slot policy is set after the daemon base sets up authorization
(and again on every reconfig), so the two must not share a name: here a startd denies
ADMINISTRATOR to everyone, and after start-up and after a reconfig it still refuses drain."""

from __future__ import annotations

import signal

import pytest
from pooltools import wait_for
from startd.startd_tools import call_startd, slot_ads

from htcd.wire.client import RemoteError

KNOBS = {"NUM_CPUS": "1", "DENY_ADMINISTRATOR_STARTD": "*", "START": "MY.TotalCpus > 0"}


def _refused(pool) -> str:
    with pytest.raises(RemoteError) as err:
        call_startd(pool, "DRAIN_JOBS", how="graceful")
    return str(err.value)


def test_startd_authorization_survives_its_slot_policy(own_startd) -> None:
    startd = own_startd(KNOBS)
    pool = startd.pool
    ads = slot_ads(pool)
    assert ads and all(ad.get_value("Start") is True for ad in ads.values()), "the slot policy applies"
    levels = call_startd(pool, "DC_SEC_QUERY", levels=["READ", "ADMINISTRATOR"])["levels"]
    assert levels["READ"] is None
    assert "DENY_ADMINISTRATOR_STARTD" in str(levels["ADMINISTRATOR"])
    assert "DENY_ADMINISTRATOR_STARTD" in _refused(pool)
    assert all(ad.get_value("Draining") is not True for ad in slot_ads(pool).values())

    assert startd.proc is not None
    before = pool.log("StartLog").count("reconfigured from")
    startd.proc.send_signal(signal.SIGHUP)  # reconfig: both policies are built again
    wait_for(lambda: pool.log("StartLog").count("reconfigured from") > before, 60, "the startd's reconfig")
    assert "DENY_ADMINISTRATOR_STARTD" in _refused(pool)
    assert all(ad.get_value("Start") is True for ad in slot_ads(pool).values())

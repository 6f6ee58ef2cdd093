"""The CCBID address parameter (HTCondor's form, docs/admin-manual/networking.rst: ``IP:port#ID``,
URL-encoded, several contacts separated by spaces) and its contacts."""

from __future__ import annotations

import pytest

from htcd.wire.address import Address
from htcd.wire.ccb import contact_text, parse_contacts
from htcd.wire.errors import WireError


def test_ccbid_round_trips_and_keeps_the_other_parameters() -> None:
    text = "<10.0.0.7:41235?unix=/var/lib/htcd/sock/startd.sock&CCBID=10.0.0.1:9618#12>"
    addr = Address.parse(text)
    assert (addr.host, addr.port, addr.unix, addr.ccbid) == ("10.0.0.7", 41235, "/var/lib/htcd/sock/startd.sock",
                                                             "10.0.0.1:9618#12")
    assert str(addr) == text
    assert Address.parse("<10.0.0.7:41235>").ccbid is None


def test_htcondors_escaped_form_and_several_contacts() -> None:
    addr = Address.parse("<10.0.0.7:41235?CCBID=10.0.0.1:9618%3fsock%3dcollector%2312%20"
                         "10.0.0.2:9618%2313&PrivNet=lab>")
    first, second = parse_contacts(addr.ccbid or "")
    assert (first.server.host, first.server.port, first.ccbid) == ("10.0.0.1", 9618, 12)
    assert (second.server.host, second.server.port, second.ccbid) == ("10.0.0.2", 9618, 13)
    assert contact_text(Address("10.0.0.1", 9618, "/x.sock"), 12) == "10.0.0.1:9618#12"  # no Unix path


@pytest.mark.parametrize("bad", ["10.0.0.1:9618", "10.0.0.1:9618#x", "#3", ""])
def test_a_malformed_ccbid_is_refused_with_its_text(bad: str) -> None:
    with pytest.raises(WireError, match="CCBID"):
        parse_contacts(bad)

"""Daemon addresses: when a client may take the Unix-socket shortcut."""

from __future__ import annotations


def test_a_unix_socket_is_used_only_for_a_daemon_on_this_host(tmp_path) -> None:
    """Hosts laid out alike have the same socket paths: another host's daemon must be reached
    over TCP, not through this host's daemon of the same name."""
    from htcd.wire.address import Address

    sock = tmp_path / "master.sock"
    sock.write_text("")
    assert Address("127.0.0.1", 9618, str(sock)).local_socket() == str(sock)
    assert Address("", 0, str(sock)).local_socket() == str(sock)
    assert Address("192.0.2.7", 9618, str(sock)).local_socket() is None  # TEST-NET: never this host's
    assert Address("127.0.0.1", 9618, str(tmp_path / "gone.sock")).local_socket() is None


def test_the_shared_port_id_survives_parse_and_print() -> None:
    """``sock=`` (HTCondor's shared-port id) and ``unix=`` are both kept, whatever their order
    and whatever other parameters HTCondor's sinful strings carry."""
    from htcd.wire.address import Address

    addr = Address.parse("<10.0.0.5:9618?sock=schedd&unix=/var/lib/htcd/sock/schedd.sock>")
    assert (addr.host, addr.port, addr.sock, addr.unix) == ("10.0.0.5", 9618, "schedd",
                                                           "/var/lib/htcd/sock/schedd.sock")
    assert Address.parse(str(addr)) == addr
    assert str(addr) == "<10.0.0.5:9618?sock=schedd&unix=/var/lib/htcd/sock/schedd.sock>"
    condor = Address.parse("<10.0.0.5:9618?addrs=10.0.0.5-9618&alias=cm.example.org&noUDP&sock=collector>")
    assert (condor.sock, condor.unix, condor.port) == ("collector", None, 9618)
    assert str(Address("10.0.0.5", 9618)) == "<10.0.0.5:9618>"


def test_a_client_names_the_daemon_only_over_tcp_to_a_shared_port() -> None:
    """The shared-port request goes before the hello, in the same write, and only when the
    address has ``sock=`` and the connection is TCP."""
    from htcd.wire.address import Address
    from htcd.wire.authn import ClientSecurity
    from htcd.wire.client import _first
    from htcd.wire.framing import HEADER, decode_body

    sec = ClientSecurity()
    shared = Address("10.0.0.5", 9618, "/x/schedd.sock", "schedd")
    data = _first(shared, sec, tcp=True)
    (length,) = HEADER.unpack_from(data)
    assert decode_body(data[HEADER.size:HEADER.size + length]) == {"shared_port": "schedd"}
    assert decode_body(data[2 * HEADER.size + length:])["hello"] == "htcd"
    assert "shared_port" not in decode_body(_first(shared, sec, tcp=False)[HEADER.size:])
    assert "shared_port" not in decode_body(_first(Address("10.0.0.5", 9618), sec, tcp=True)[HEADER.size:])

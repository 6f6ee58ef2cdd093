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

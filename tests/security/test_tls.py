"""TLS, SSL client certificates, CLAIMTOBE, unauthenticated access and each level's
SEC_* requirements, against a real server on real sockets."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from htcd.wire import ca, tokens
from htcd.wire.client import Connection
from htcd.wire.errors import RemoteError, WireError
from tests.security.test_tokens import DOMAIN, Harness, Pki, refusal


@pytest.fixture
def pki(pool_dir: Path) -> Pki:
    return Pki(pool_dir)


def test_the_client_checks_the_daemons_certificate_against_the_pool_ca(pool_dir: Path, pki: Pki) -> None:
    """A daemon whose certificate another CA signed (a man in the middle) never sees the token."""
    other = Pki(pool_dir / "other")
    h = Harness(pool_dir, other.config())
    try:
        with pytest.raises(WireError, match=r"TLS with .* failed: the daemon's certificate does not verify: certificate signature failure"):
            Connection(h.tcp, security=pki.client(token=pki.token()))
    finally:
        h.close()


def test_the_client_checks_the_host_name_unless_told_not_to(pool_dir: Path) -> None:
    pki = Pki(pool_dir, hosts=("cm.elsewhere.test",))
    h = Harness(pool_dir, pki.config())
    try:
        with pytest.raises(WireError, match="does not verify: IP address mismatch"):
            Connection(h.tcp, security=pki.client(token=pki.token()))
        with Connection(h.tcp, security=pki.client(token=pki.token(), skip_host_check=True)) as conn:
            assert conn.hello["method"] == "TOKEN"
    finally:
        h.close()


def test_a_client_certificate_maps_to_an_identity(pool_dir: Path, pki: Pki) -> None:
    cert, key = pool_dir / "alice.pem", pool_dir / "alice.key"
    ca.issue(str(pki.ca), str(pki.ca_key), str(cert), str(key), "alice@certs.test", client=True)
    bob_cert, bob_key = pool_dir / "bob.pem", pool_dir / "bob.key"
    ca.issue(str(pki.ca), str(pki.ca_key), str(bob_cert), str(bob_key), "bob", client=True)
    mapfile = pool_dir / "mapfile"
    mapfile.write_text('SSL "^bo(.)$" robert\\1@mapped.test\n')
    h = Harness(pool_dir, pki.config(f"CERTIFICATE_MAPFILE = {mapfile}"))
    try:
        sec = pki.client(methods=["SSL"], certfile=str(cert), keyfile=str(key))
        with Connection(h.tcp, security=sec) as conn:
            assert conn.hello["method"] == "SSL" and conn.hello["encrypted"]
            assert conn.call("PING")["who"] == "alice@certs.test"
        with Connection(h.tcp, security=pki.client(methods=["SSL"], certfile=str(bob_cert),
                                                   keyfile=str(bob_key))) as conn:
            assert conn.call("PING")["who"] == "robertb@mapped.test"
        assert "SSL: no client certificate" in refusal(h, pki.client(methods=["SSL"]))
    finally:
        h.close()


def test_a_required_client_certificate_is_checked_in_the_tls_handshake(pool_dir: Path, pki: Pki) -> None:
    h = Harness(pool_dir, pki.config("AUTH_SSL_REQUIRE_CLIENT_CERTIFICATE = true"))
    try:
        with pytest.raises(WireError), Connection(h.tcp, security=pki.client(token=pki.token())) as conn:
            conn.call("PING")
        cert, key = pool_dir / "c.pem", pool_dir / "c.key"
        ca.issue(str(pki.ca), str(pki.ca_key), str(cert), str(key), "carol@certs.test", client=True)
        sec = pki.client(methods=["TOKEN", "SSL"], token=pki.token(), certfile=str(cert), keyfile=str(key))
        with Connection(h.tcp, security=sec) as conn:
            assert conn.call("PING")["who"] == "alice@pool.test"  # TOKEN came first
    finally:
        h.close()


def test_claimtobe_only_when_listed_and_marked_as_claimed(pool_dir: Path, pki: Pki, caplog) -> None:
    h = Harness(pool_dir, pki.config())
    try:
        message = refusal(h, pki.client(methods=["CLAIMTOBE"], claimtobe="root"))
        assert "CLAIMTOBE: not accepted by this daemon" in message
    finally:
        h.close()
    h = Harness(pool_dir, pki.config("SEC_DEFAULT_AUTHENTICATION_METHODS = FS, TOKEN, CLAIMTOBE\n"
                                     "ALL_DEBUG = D_SECURITY"))
    try:
        from htcd.debug import parse_debug  # noqa: F401  (the D_SECURITY category exists)

        with (caplog.at_level(1, logger="test.security"),
              Connection(h.tcp, security=pki.client(methods=["CLAIMTOBE"], claimtobe="carl")) as conn):
            assert conn.hello["method"] == "CLAIMTOBE"
            assert conn.call("PING")["who"] == "carl@users.test"
    finally:
        h.close()


def test_optional_authentication_lets_in_unauthenticated_at_unmapped_with_its_host(pool_dir: Path,
                                                                                   pki: Pki) -> None:
    h = Harness(pool_dir, pki.config("SEC_READ_AUTHENTICATION = OPTIONAL"))
    try:
        with Connection(h.tcp, security=pki.client(methods=["FS"])) as conn:
            assert conn.hello["method"] == "UNAUTHENTICATED"
            reply = conn.call("PING")
            assert reply["who"] == "unauthenticated@unmapped" and reply["host"] == "127.0.0.1"
            with pytest.raises(RemoteError) as err:
                conn.call("DC_CHILDALIVE")  # DAEMON: authentication PREFERRED (the default)
            assert err.value.code == "DENIED" and "SEC_DEFAULT_AUTHENTICATION = PREFERRED" in str(err.value)
        # a client that requires authentication is not let in unauthenticated
        assert "FS: only on the daemon's Unix socket" in refusal(h, pki.client(methods=["FS"],
                                                                               authentication="REQUIRED"))
    finally:
        h.close()


def test_each_level_checks_its_methods_and_encryption(pool_dir: Path, pki: Pki) -> None:
    extra = ("SEC_DEFAULT_AUTHENTICATION_METHODS = FS, TOKEN, CLAIMTOBE\n"
             "SEC_ADMINISTRATOR_AUTHENTICATION_METHODS = FS\n"
             "SEC_DAEMON_ENCRYPTION = REQUIRED\nSEC_DEFAULT_ENCRYPTION = NEVER")
    h = Harness(pool_dir, pki.config(extra))
    try:
        with Connection(h.tcp, security=pki.client(methods=["CLAIMTOBE"], claimtobe="dave",
                                                   encryption="NEVER")) as conn:
            assert conn.hello["encrypted"] is False
            with pytest.raises(RemoteError) as err:
                conn.call("DC_CHILDALIVE")
            assert "SEC_DAEMON_ENCRYPTION = REQUIRED" in str(err.value) and "plain TCP" in str(err.value)
            with pytest.raises(RemoteError) as err:
                conn.call("DC_RECONFIG")
            assert "SEC_ADMINISTRATOR_AUTHENTICATION_METHODS = FS" in str(err.value)
            assert conn.call("PING")["who"] == "dave@users.test"
    finally:
        h.close()


def test_the_verifier_reads_a_replaced_public_key(pool_dir: Path, pki: Pki) -> None:
    """Rolling the key: the public key file lists old and new keys while both are in use."""
    new = tokens.new_signing_key()
    old_pub = pki.public.read_bytes()
    tokens.write_public_key(new.public_key(), str(pool_dir / "new.pub"))
    (pki.public).write_bytes(old_pub + (pool_dir / "new.pub").read_bytes())
    keys = tokens.load_public_keys(str(pki.public))
    assert len(keys) == 2
    assert tokens.verify(tokens.create(new, DOMAIN, "x@pool.test"), keys, DOMAIN).subject == "x@pool.test"
    assert tokens.verify(pki.token(), keys, DOMAIN).subject == "alice@pool.test"
    logging.getLogger("test.security").info("ok")

"""TOKEN authentication against a real server on real sockets: tokens inside TLS, and every
attack refused with its reason while the daemon keeps serving."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pooltools import LoopThread

from htcd.config import load
from htcd.wire import auth, ca, tokens
from htcd.wire.address import Address
from htcd.wire.authn import ClientSecurity, ServerSecurity
from htcd.wire.client import AsyncConnection, Connection
from htcd.wire.errors import RemoteError
from htcd.wire.framing import encode, recv_frame
from htcd.wire.server import Request, Server

DOMAIN = "pool.test"


class Pki:
    """A pool's signing key, public key, CA and host certificate in a temp dir, and a config."""

    def __init__(self, root: Path, hosts: tuple[str, ...] = ("127.0.0.1", "localhost")) -> None:
        self.root = root
        self.key = tokens.new_signing_key()
        self.signing = root / "POOL"
        self.public = root / "POOL.pub"
        tokens.write_private_key(self.key, str(self.signing))
        tokens.write_public_key(self.key.public_key(), str(self.public))
        self.ca, self.ca_key = root / "ca.pem", root / "ca.key"
        ca.create_ca(str(self.ca), str(self.ca_key), DOMAIN)
        self.cert, self.cert_key = root / "host.pem", root / "host.key"
        ca.issue(str(self.ca), str(self.ca_key), str(self.cert), str(self.cert_key), hosts[0], list(hosts))
        self.revoked = root / "revoked"

    def config(self, extra: str = "") -> Any:
        path = self.root / "config"
        path.write_text("\n".join([
            f"LOCAL_DIR = {self.root}", f"TRUST_DOMAIN = {DOMAIN}", "UID_DOMAIN = users.test",
            f"SEC_TOKEN_POOL_PUBLIC_KEY_FILE = {self.public}", f"SEC_TOKEN_POOL_SIGNING_KEY_FILE = {self.signing}",
            f"TRUST_DOMAIN_CAFILE = {self.ca}", f"TRUST_DOMAIN_CAKEY = {self.ca_key}",
            f"AUTH_SSL_SERVER_CERTFILE = {self.cert}", f"AUTH_SSL_SERVER_KEYFILE = {self.cert_key}",
            f"SEC_TOKEN_REVOCATION_LIST = {self.revoked}", extra, ""]))
        return load("TOOL", env={"HTCD_CONFIG": str(path)})

    def token(self, subject: str = "alice@pool.test", **kw: Any) -> str:
        return tokens.create(self.key, DOMAIN, subject, **kw)

    def client(self, methods: list[str] | None = None, token: str | None = None, **kw: Any) -> ClientSecurity:
        return ClientSecurity(methods=methods or ["TOKEN"], tokens=[token] if token else [], cafile=str(self.ca),
                              **kw)


class Harness(LoopThread):
    """A server with the given config in its own event loop thread, so blocking clients can talk
    to it; every command is authorized by policy (only the authentication checks apply)."""

    def __init__(self, sock_dir: Path, cfg: Any) -> None:
        super().__init__()

        async def who(req: Request) -> object:
            i = req.identity
            return {"who": str(i), "method": i.method, "host": i.host, "encrypted": i.encrypted,
                    "scopes": sorted(i.scopes) if i.scopes is not None else None}

        self.log = logging.getLogger("test.security")
        self.server = Server("testd", "users.test", {"PING": who, "DC_CHILDALIVE": who, "DC_RECONFIG": who}, self.log)
        self.server.security = ServerSecurity(cfg, "users.test", self.log)
        self.server.authorizer = lambda identity, level: None
        self.address = self.run(self.server.start(str(sock_dir / "t.sock"), "127.0.0.1", 0))
        self.tcp = Address(host="127.0.0.1", port=self.address.port)



@pytest.fixture
def pki(pool_dir: Path) -> Pki:
    return Pki(pool_dir)


@pytest.fixture
def harness(pool_dir: Path, pki: Pki) -> Iterator[Harness]:
    h = Harness(pool_dir, pki.config())
    yield h
    h.close()


def refusal(h: Harness, sec: ClientSecurity) -> str:
    with pytest.raises(RemoteError) as err:
        Connection(h.tcp, security=sec)
    assert err.value.code == "AUTHENTICATION"
    return str(err.value)


def still_serving(h: Harness, pki: Pki) -> None:
    with Connection(h.tcp, security=pki.client(token=pki.token())) as conn:
        assert conn.call("PING")["who"] == "alice@pool.test"


def test_a_token_authenticates_inside_tls(harness: Harness, pki: Pki) -> None:
    with Connection(harness.tcp, security=pki.client(token=pki.token(scopes=["READ", "DAEMON"]))) as conn:
        assert conn.hello["method"] == "TOKEN" and conn.hello["encrypted"] is True
        reply = conn.call("PING")
    assert reply == {"who": "alice@pool.test", "method": "TOKEN", "host": "127.0.0.1", "encrypted": True,
                     "scopes": ["DAEMON", "READ"]}


def test_the_async_client_authenticates_too(harness: Harness, pki: Pki) -> None:
    async def go() -> dict[str, Any]:
        async with await AsyncConnection.open(harness.tcp, security=pki.client(token=pki.token())) as conn:
            return await conn.call("PING")

    assert asyncio.run(go())["method"] == "TOKEN"


def test_a_forged_signature_is_refused(harness: Harness, pki: Pki) -> None:
    forged = tokens.create(tokens.new_signing_key(), DOMAIN, "root@pool.test")
    assert "signature does not verify with this pool's key" in refusal(harness, pki.client(token=forged))
    still_serving(harness, pki)


def test_a_tampered_payload_is_refused(harness: Harness, pki: Pki) -> None:
    head, _, sig = pki.token("alice@pool.test").split(".")
    evil = tokens.create(tokens.new_signing_key(), DOMAIN, "root@pool.test").split(".")[1]
    assert "signature does not verify" in refusal(harness, pki.client(token=f"{head}.{evil}.{sig}"))


def test_another_pools_token_is_refused(harness: Harness, pki: Pki) -> None:
    other = tokens.create(tokens.new_signing_key(), "other.pool", "alice@other.pool")
    sec = pki.client(token=other)
    sec.tokens = [other]
    # the client offers it only to its own issuer; a raw client sends it anyway
    assert "no token for trust domain pool.test" in refusal(harness, sec)
    keys = tokens.load_public_keys(str(pki.public))
    with pytest.raises(tokens.TokenError, match=r"issued by 'other\.pool'"):
        tokens.verify(other, keys, DOMAIN)


def test_an_expired_token_is_refused(harness: Harness, pki: Pki) -> None:
    old = pki.token(lifetime=60, now=1_000_000)
    assert "expired at 1970-01-12" in refusal(harness, pki.client(token=old))
    still_serving(harness, pki)


def test_a_revoked_token_is_refused(harness: Harness, pki: Pki) -> None:
    token = pki.token()
    with Connection(harness.tcp, security=pki.client(token=token)):
        pass
    tokens.revoke(str(pki.revoked), tokens.decode(token).id, "test")
    assert f"token {tokens.decode(token).id} has been revoked" in refusal(harness, pki.client(token=token))
    still_serving(harness, pki)


def test_revocation_by_expression(pool_dir: Path, pki: Pki) -> None:
    h = Harness(pool_dir, pki.config('SEC_TOKEN_REVOCATION_EXPR = sub == "mallory@pool.test"'))
    try:
        assert "SEC_TOKEN_REVOCATION_EXPR" in refusal(h, pki.client(token=pki.token("mallory@pool.test")))
        still_serving(h, pki)
    finally:
        h.close()


def test_a_token_whose_scope_is_too_small_is_denied_naming_the_scope(harness: Harness, pki: Pki) -> None:
    with Connection(harness.tcp, security=pki.client(token=pki.token(scopes=["READ"]))) as conn:
        assert conn.call("PING")["scopes"] == ["READ"]
        with pytest.raises(RemoteError) as err:
            conn.call("DC_CHILDALIVE")
        assert err.value.code == "DENIED"
        assert "limited to scope READ" in str(err.value) and "condor:/DAEMON" in str(err.value)
        assert conn.call("PING")["who"] == "alice@pool.test"  # the connection goes on


def test_a_token_on_plain_tcp_is_refused(harness: Harness, pki: Pki) -> None:
    """A captured token replayed without TLS: the server will not take it."""
    with socket.create_connection(("127.0.0.1", harness.tcp.port), 10) as s:
        s.sendall(encode({"hello": "htcd", "version": 1, "methods": ["TOKEN"], "encryption": "NEVER"}))
        stage = recv_frame(s)
        assert stage["ok"] and stage["tls"] is False
        s.sendall(encode({"auth": {"TOKEN": pki.token()}}))
        reply = recv_frame(s)
    assert reply["ok"] is False and "TOKEN: refused on a plain TCP connection" in reply["error"]
    # a client told never to encrypt keeps its token to itself and is refused the same way
    assert "TOKEN: refused on a plain TCP" in refusal(harness, pki.client(token=pki.token(), encryption="NEVER"))


def test_each_failed_method_is_named_in_one_line(harness: Harness, pki: Pki, caplog) -> None:
    old = pki.token(lifetime=1, now=1_000_000)
    with caplog.at_level(logging.INFO, logger="test.security"):
        message = refusal(harness, pki.client(methods=["FS", "TOKEN", "SSL"], token=old))
    assert "\n" not in message
    assert "FS: only on the daemon's Unix socket" in message
    assert "TOKEN: token " in message and "expired at" in message
    assert "SSL: no client certificate" in message
    assert any("SSL: no client certificate" in r.getMessage() for r in caplog.records)


def test_a_token_over_the_unix_socket_needs_no_tls(harness: Harness, pki: Pki) -> None:
    with Connection(harness.address, security=pki.client(token=pki.token())) as conn:
        assert conn.hello["method"] == "TOKEN" and conn.hello["encrypted"] is False
        assert conn.call("PING")["host"] is None


def test_fs_first_on_the_unix_socket_takes_one_round_trip(harness: Harness) -> None:
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(harness.address.unix)
        s.sendall(encode({"hello": "htcd", "version": 1, "methods": ["FS", "TOKEN"]}))
        reply = recv_frame(s)
    assert reply["ok"] and reply["method"] == "FS"
    assert reply["identity"] == f"{auth.user_name(os.geteuid())}@users.test"


def test_token_cli_create_list_revoke(pki: Pki, pool_dir: Path) -> None:
    import subprocess
    import sys

    from tests.pooltools import clean_env

    pki.config(f"SEC_TOKEN_DIRECTORY = {pool_dir / 'mine'}")
    env = clean_env({"HTCD_CONFIG": str(pool_dir / "config")})

    def htcd(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "htcd", *args], env=env, capture_output=True, text=True,
                              timeout=60)

    made = htcd("token", "create", "-identity", "bob", "-authz", "READ", "-scope", "WRITE", "-lifetime", "3600",
                "-token", "bob")
    assert made.returncode == 0, made.stderr
    text = (pool_dir / "mine" / "bob").read_text().strip()
    claims = tokens.verify(text, tokens.load_public_keys(str(pki.public)), DOMAIN)
    assert claims.subject == "bob@users.test" and claims.scopes == {"READ", "WRITE"} and claims.expires
    listing = htcd("token", "list").stdout
    assert f"Id: {claims.id}" in listing and "Scopes: READ, WRITE" in listing and "State: valid" in listing
    assert text.split(".")[2] not in listing  # never the signature
    revoked = htcd("token", "revoke", "-token", "bob")
    assert revoked.returncode == 0 and claims.id in pki.revoked.read_text()
    assert "State: revoked" in htcd("token", "list").stdout
    bad = htcd("token", "create", "-identity", "bob", "-scope", "SUPERUSER")
    assert bad.returncode != 0 and "unknown scope 'SUPERUSER'" in bad.stderr and "Traceback" not in bad.stderr

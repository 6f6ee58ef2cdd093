"""The pool's keys at a master's start: created on the central manager, used everywhere.

A master whose DAEMON_LIST has a COLLECTOR (the central manager) creates what is missing, as
HTCondor 9+ does: the Ed25519 token signing key and its public key, the pool CA, this host's
certificate, and a token for its own daemons (``condor@TRUST_DOMAIN``, scoped to the levels they
use) in SEC_TOKEN_SYSTEM_DIRECTORY.  Other hosts get the public key, the CA certificate, a host
certificate and a daemon token installed (``htcd token create``, ``htcd ca issue``; see
docs/protocol.md), and their master only says what is missing.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from htcd.wire import ca, tokens
from htcd.wire.tokens import TokenError

DAEMON_USER = "condor"
DAEMON_TOKEN_FILE = "htcd-daemons"


def daemon_scopes(daemon_list: list[str]) -> list[str]:
    """The levels a host's daemons use as clients of other daemons."""
    names = {d.upper() for d in daemon_list}
    scopes = ["READ", "WRITE", "DAEMON", "ADVERTISE_MASTER"]
    if "SCHEDD" in names:
        scopes.append("ADVERTISE_SCHEDD")
    if "STARTD" in names:
        scopes.append("ADVERTISE_STARTD")
    if "NEGOTIATOR" in names:
        scopes.append("NEGOTIATOR")
    scopes.append("ADMINISTRATOR")  # the master tells its daemons to stop (DC_OFF_GRACEFUL)
    return scopes


def _secret_dir(path: str) -> None:
    os.makedirs(path, mode=0o700, exist_ok=True)
    os.chmod(path, 0o700)


def bootstrap(cfg: Any, log: logging.Logger, hostname: str, extra_hosts: list[str] | None = None) -> list[str]:
    """Create what the central manager lacks; returns what was created (for the log and tests)."""
    created: list[str] = []
    if "COLLECTOR" not in {d.upper() for d in cfg.get_list("DAEMON_LIST")}:
        return created
    trust_domain = cfg.get("TRUST_DOMAIN") or hostname
    signing = cfg.get("SEC_TOKEN_POOL_SIGNING_KEY_FILE")
    public = cfg.get("SEC_TOKEN_POOL_PUBLIC_KEY_FILE")
    passwords = cfg.get("SEC_PASSWORD_DIRECTORY")
    if passwords:
        _secret_dir(passwords)
    if signing and not os.path.exists(signing):
        key = tokens.new_signing_key()
        tokens.write_private_key(key, signing)
        created.append(signing)
        if public:
            tokens.write_public_key(key.public_key(), public)
            created.append(public)
    elif signing and public and not os.path.exists(public):
        tokens.write_public_key(tokens.load_private_key(signing).public_key(), public)
        created.append(public)
    ca_cert, ca_key = cfg.get("TRUST_DOMAIN_CAFILE"), cfg.get("TRUST_DOMAIN_CAKEY")
    if ca_cert and ca_key and not (os.path.exists(ca_cert) and os.path.exists(ca_key)):
        ca.create_ca(ca_cert, ca_key, trust_domain)
        created.append(ca_cert)
    cert, key_file = cfg.get("AUTH_SSL_SERVER_CERTFILE"), cfg.get("AUTH_SSL_SERVER_KEYFILE")
    if cert and key_file and ca_cert and ca_key and not (os.path.exists(cert) and os.path.exists(key_file)):
        ca.issue(ca_cert, ca_key, cert, key_file, hostname, ca.host_names(hostname, extra_hosts))
        created.append(cert)
    system_dir = cfg.get("SEC_TOKEN_SYSTEM_DIRECTORY")
    if system_dir and signing and os.path.exists(signing):
        created += _daemon_token(cfg, signing, public, trust_domain, system_dir)
    for path in created:
        log.info("security bootstrap: created %s", path)
    return created


def _daemon_token(cfg: Any, signing: str, public: str | None, trust_domain: str, system_dir: str) -> list[str]:
    """Mint the daemons' token unless a valid one for this pool (and these daemons) is there."""
    path = os.path.join(system_dir, DAEMON_TOKEN_FILE)
    scopes = daemon_scopes(cfg.get_list("DAEMON_LIST"))
    if os.path.exists(path) and public:
        try:
            with open(path) as f:
                claims = tokens.verify(f.read().strip(), tokens.load_public_keys(public), trust_domain)
            if claims.scopes is not None and set(scopes) <= claims.scopes:
                return []
        except (OSError, TokenError):
            pass
    _secret_dir(system_dir)
    token = tokens.create(tokens.load_private_key(signing), trust_domain, f"{DAEMON_USER}@{trust_domain}", scopes)
    tokens.write_secret(path, (token + "\n").encode())
    return [path]


def missing(cfg: Any) -> list[str]:
    """What a host needs for TCP and lacks (the master logs it at start)."""
    out = []
    for knob in ("SEC_TOKEN_POOL_PUBLIC_KEY_FILE", "TRUST_DOMAIN_CAFILE", "AUTH_SSL_SERVER_CERTFILE"):
        path = cfg.get(knob)
        if not path or not os.path.exists(path):
            out.append(f"{knob} ({path or 'undefined'})")
    system_dir = cfg.get("SEC_TOKEN_SYSTEM_DIRECTORY")
    if not system_dir or not tokens.read_token_files(system_dir):
        out.append(f"a daemon token in SEC_TOKEN_SYSTEM_DIRECTORY ({system_dir or 'undefined'})")
    return out

"""``htcd token`` and ``htcd ca``: the pool's tokens, signing key, CA and certificates.

- ``htcd token create -identity USER[@DOMAIN] [-scope LEVEL ...] [-lifetime SECONDS] [-token FILE]``
  (HTCondor's ``-authz LEVEL`` too): mint a token with the pool signing key (so on the central
  manager, as root or the daemon user).  It is printed, or written (0600) to FILE -- a bare name goes
  into SEC_TOKEN_DIRECTORY, as condor_token_create does.
- ``htcd token list``: the tokens this caller would present, decoded: file, id, issuer, subject,
  scopes, expiry and whether revoked (never the signature).
- ``htcd token revoke (-id ID | -token FILE)``: add a token to SEC_TOKEN_REVOCATION_LIST, which every
  daemon of this host reads (copy it to the other hosts).
- ``htcd ca init``: create the signing key, its public key and the pool CA where missing (what the
  central manager's master does at its first start).
- ``htcd ca issue -host NAME [-name ALT ...] [-cert FILE -key FILE]``: a host certificate for NAME
  (and its other names or addresses); ``htcd ca issue -client IDENTITY -cert FILE -key FILE``: a
  client certificate for the SSL method.  ``htcd ca show [FILE]``: a certificate's names and expiry.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from htcd.errors import UserError
from htcd.wire import auth

ACTIONS = {"token": ("create", "list", "revoke"), "ca": ("init", "issue", "show")}


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.add_argument("action", choices=ACTIONS[name], help="what to do")
    if name == "token":
        p.add_argument("-identity", help="create: who the token says the bearer is (user or user@domain)")
        p.add_argument("-scope", "-authz", dest="scopes", action="append", metavar="LEVEL",
                       help="create: limit the token to this authorization level (repeatable); default: no limit")
        p.add_argument("-lifetime", type=int, metavar="SECONDS", help="create: seconds until it expires (default: never)")
        p.add_argument("-token", metavar="FILE", help="create: write it here (a bare name: into SEC_TOKEN_DIRECTORY); "
                                                     "revoke: the token in this file")
        p.add_argument("-id", dest="token_id", metavar="ID", help="revoke: the token with this id (jti)")
    else:
        p.add_argument("file", nargs="?", help="show: the certificate (default AUTH_SSL_SERVER_CERTFILE)")
        p.add_argument("-host", help="issue: a host certificate for this host name")
        p.add_argument("-name", dest="names", action="append", default=[], metavar="NAME",
                       help="issue -host: another name or IP address the certificate is valid for (repeatable)")
        p.add_argument("-client", metavar="IDENTITY", help="issue: a client certificate (CN) for the SSL method")
        p.add_argument("-cert", help="issue: where to write the certificate (default AUTH_SSL_SERVER_CERTFILE)")
        p.add_argument("-key", help="issue: where to write its key (default AUTH_SSL_SERVER_KEYFILE)")
    return lambda args: _run(name, args)


def _run(name: str, args: argparse.Namespace) -> int:
    from htcd.cli.common import config
    from htcd.wire.tokens import TokenError

    cfg = config()
    try:
        return {"create": _create, "list": _list, "revoke": _revoke, "init": _ca_init, "issue": _ca_issue,
                "show": _ca_show}[args.action](cfg, args)
    except TokenError as exc:
        raise UserError(str(exc)) from None


def _knob(cfg: Any, knob: str) -> str:
    value = cfg.get(knob)
    if not value:
        raise UserError(f"{knob} is not defined")
    return os.path.expanduser(value)


def _create(cfg: Any, args: argparse.Namespace) -> int:
    from htcd.wire import tokens

    if not args.identity:
        raise UserError("htcd token create needs -identity USER[@DOMAIN]")
    scopes = []
    for s in args.scopes or []:
        for level in s.replace(",", " ").split():
            if level.upper() not in auth.LEVELS:
                raise UserError(f"unknown scope {level!r}: expected an authorization level "
                                f"({', '.join(auth.LEVELS)})")
            scopes.append(level.upper())
    if args.lifetime is not None and args.lifetime <= 0:
        raise UserError("-lifetime must be a positive number of seconds")
    signing = _knob(cfg, "SEC_TOKEN_POOL_SIGNING_KEY_FILE")
    if not os.path.exists(signing):
        raise UserError(f"no pool signing key at {signing}: tokens are created on the central manager "
                        "(where its master created the key), as root or the daemon user")
    trust_domain = cfg.get("TRUST_DOMAIN") or cfg.get("UID_DOMAIN") or ""
    identity = args.identity if "@" in args.identity else f"{args.identity}@{cfg.get('UID_DOMAIN')}"
    token = tokens.create(tokens.load_private_key(signing), trust_domain, identity, scopes or None, args.lifetime)
    if not args.token:
        print(token)
        return 0
    path = args.token if "/" in args.token else os.path.join(_knob(cfg, "SEC_TOKEN_DIRECTORY"), args.token)
    os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)
    tokens.write_secret(path, (token + "\n").encode())
    print(f"Token {tokens.decode(token).id} for {identity} written to {path}", file=sys.stderr)
    return 0


def _when(t: int | None) -> str:
    return "never" if t is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


def _list(cfg: Any, args: argparse.Namespace) -> int:
    from htcd.wire import tokens
    from htcd.wire.authn import ClientSecurity

    sec = ClientSecurity.from_config(cfg, "CLIENT")
    revoked = tokens.revoked_ids(os.path.expanduser(cfg.get("SEC_TOKEN_REVOCATION_LIST") or ""))
    found = 0
    for d in sec.token_dirs:
        for path, text in tokens.read_token_files(d):
            try:
                c = tokens.decode(text)
            except tokens.TokenError as exc:
                print(f"File: {path}\n  (not usable: {exc})")
                continue
            found += 1
            state = "revoked" if c.id in revoked else "expired" if c.expired() else "valid"
            scopes = ", ".join(sorted(c.scopes)) if c.scopes is not None else "(no limit)"
            print(f"File: {path}\n  Id: {c.id}\n  Issuer: {c.issuer}\n  Subject: {c.subject}\n"
                  f"  Scopes: {scopes}\n  Issued: {_when(c.issued)}\n  Expires: {_when(c.expires)}\n  State: {state}")
    if not found:
        print("No tokens found in " + (", ".join(sec.token_dirs) or "any token directory"), file=sys.stderr)
    return 0


def _revoke(cfg: Any, args: argparse.Namespace) -> int:
    from htcd.wire import tokens

    if bool(args.token_id) == bool(args.token):
        raise UserError("htcd token revoke needs -id ID or -token FILE (one of them)")
    token_id = args.token_id
    if args.token:
        path = args.token if "/" in args.token else os.path.join(_knob(cfg, "SEC_TOKEN_DIRECTORY"), args.token)
        try:
            with open(path) as f:
                token_id = tokens.decode(f.read().strip()).id
        except OSError as exc:
            raise UserError(f"cannot read {path}: {exc.strerror}") from None
    listing = _knob(cfg, "SEC_TOKEN_REVOCATION_LIST")
    try:
        added = tokens.revoke(listing, token_id, f"revoked {_when(int(time.time()))}")
    except OSError as exc:
        raise UserError(f"cannot write the revocation list {listing}: {exc.strerror}") from None
    print(f"Token {token_id} {'revoked' if added else 'was already revoked'} ({listing})")
    return 0


def _ca_init(cfg: Any, args: argparse.Namespace) -> int:
    from htcd.wire import ca, tokens

    made = []
    signing, public = _knob(cfg, "SEC_TOKEN_POOL_SIGNING_KEY_FILE"), _knob(cfg, "SEC_TOKEN_POOL_PUBLIC_KEY_FILE")
    if not os.path.exists(signing):
        key = tokens.new_signing_key()
        tokens.write_private_key(key, signing)
        tokens.write_public_key(key.public_key(), public)
        made += [signing, public]
    elif not os.path.exists(public):
        tokens.write_public_key(tokens.load_private_key(signing).public_key(), public)
        made.append(public)
    ca_cert, ca_key = _knob(cfg, "TRUST_DOMAIN_CAFILE"), _knob(cfg, "TRUST_DOMAIN_CAKEY")
    if not (os.path.exists(ca_cert) and os.path.exists(ca_key)):
        ca.create_ca(ca_cert, ca_key, cfg.get("TRUST_DOMAIN") or cfg.get("UID_DOMAIN") or "")
        made += [ca_cert, ca_key]
    for path in made:
        print(f"created {path}")
    if not made:
        print("the pool signing key and CA exist already")
    return 0


def _ca_issue(cfg: Any, args: argparse.Namespace) -> int:
    from htcd.wire import ca

    if bool(args.host) == bool(args.client):
        raise UserError("htcd ca issue needs -host NAME or -client IDENTITY (one of them)")
    ca_cert, ca_key = _knob(cfg, "TRUST_DOMAIN_CAFILE"), _knob(cfg, "TRUST_DOMAIN_CAKEY")
    if args.client:
        if not (args.cert and args.key):
            raise UserError("htcd ca issue -client needs -cert FILE and -key FILE")
        ca.issue(ca_cert, ca_key, args.cert, args.key, args.client, client=True)
        print(f"client certificate for {args.client}: {args.cert} (key {args.key})")
        return 0
    cert = args.cert or _knob(cfg, "AUTH_SSL_SERVER_CERTFILE")
    key = args.key or _knob(cfg, "AUTH_SSL_SERVER_KEYFILE")
    names = [args.host, *args.names]
    ca.issue(ca_cert, ca_key, cert, key, args.host, names)
    print(f"host certificate for {', '.join(names)}: {cert} (key {key})")
    return 0


def _ca_show(cfg: Any, args: argparse.Namespace) -> int:
    from htcd.wire import ca

    path = args.file or _knob(cfg, "AUTH_SSL_SERVER_CERTFILE")
    try:
        info = ca.describe(path)
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read the certificate {path}: {exc}") from None
    for key, value in info.items():
        print(f"{key}: {value}")
    return 0

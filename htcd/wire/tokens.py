"""Pool tokens: signed statements "this pool says the bearer is user@domain, for these levels".

A token is JWT-shaped text, ``header.payload.signature`` in base64url, signed with the pool's
Ed25519 key.  Unlike HTCondor's IDTOKENS (HMAC with a pool password every verifier must hold),
the signing key lives only where tokens are minted (the central manager); every other host holds
just the public key, so a compromised execute node can verify tokens but never mint one.

Claims: ``iss`` (the pool's TRUST_DOMAIN), ``sub`` (user@domain), ``iat``, ``exp`` (optional),
``jti`` (a unique id, what revocation names) and ``scope`` (space-separated ``condor:/LEVEL``
entries, as HTCondor writes them; absent: no limit).
"""

from __future__ import annotations

import base64
import json
import os
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # cryptography is imported where a key is used: a tool's start does not pay for it
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

HEADER = {"alg": "EdDSA", "typ": "JWT", "kid": "POOL"}
SCOPE_PREFIX = "condor:/"


class TokenError(Exception):
    """A token that cannot be used, with the one-line reason."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, TypeError):
        raise TokenError("not a token (bad base64url)") from None


@dataclass(frozen=True)
class Claims:
    """What a token says, decoded (never the signature)."""

    issuer: str
    subject: str
    issued: int
    expires: int | None
    id: str
    scopes: frozenset[str] | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def user(self) -> str:
        return self.subject.partition("@")[0]

    @property
    def domain(self) -> str:
        return self.subject.partition("@")[2] or self.issuer

    def expired(self, now: float | None = None) -> bool:
        return self.expires is not None and (now if now is not None else time.time()) >= self.expires


# -- keys ---------------------------------------------------------------------------------------------
def new_signing_key() -> Ed25519PrivateKey:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return Ed25519PrivateKey.generate()


def write_private_key(key: Ed25519PrivateKey, path: str) -> None:
    """PEM, mode 0600, written whole (a reader never sees half a key)."""
    from cryptography.hazmat.primitives import serialization
    data = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())
    write_secret(path, data)


def write_public_key(key: Ed25519PublicKey, path: str) -> None:
    from cryptography.hazmat.primitives import serialization
    data = key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    write_file(path, data, 0o644)


def write_secret(path: str, data: bytes) -> None:
    write_file(path, data, 0o600)


def write_file(path: str, data: bytes, mode: int) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = f"{path}.new.{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, data)
        os.fchmod(fd, mode)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def load_private_key(path: str) -> Ed25519PrivateKey:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    try:
        with open(path, "rb") as f:
            key = serialization.load_pem_private_key(f.read(), None)
    except OSError as exc:
        raise TokenError(f"cannot read the pool signing key {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise TokenError(f"{path} is not a PEM private key: {exc}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise TokenError(f"{path} is not an Ed25519 key")
    return key


_PUBLIC_CACHE: dict[str, tuple[float, list[Ed25519PublicKey]]] = {}


def load_public_keys(path: str) -> list[Ed25519PublicKey]:
    """The verification keys in ``path`` (one or more PEM blocks: a pool rolling its key lists the
    old and the new one); cached until the file changes."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    try:
        mtime = os.stat(path).st_mtime
    except OSError as exc:
        raise TokenError(f"cannot read the pool verification key {path}: {exc.strerror or exc}") from None
    cached = _PUBLIC_CACHE.get(path)
    if cached and cached[0] == mtime:
        return cached[1]
    with open(path, "rb") as f:
        text = f.read()
    keys = []
    for block in text.split(b"-----END PUBLIC KEY-----"):
        if b"-----BEGIN PUBLIC KEY-----" not in block:
            continue
        try:
            key = serialization.load_pem_public_key(block + b"-----END PUBLIC KEY-----\n")
        except ValueError as exc:
            raise TokenError(f"{path}: bad public key: {exc}") from None
        if isinstance(key, Ed25519PublicKey):
            keys.append(key)
    if not keys:
        raise TokenError(f"{path} holds no Ed25519 public key")
    _PUBLIC_CACHE[path] = (mtime, keys)
    return keys


# -- tokens -------------------------------------------------------------------------------------------
def create(key: Ed25519PrivateKey, issuer: str, subject: str, scopes: list[str] | None = None,
           lifetime: int | None = None, now: float | None = None) -> str:
    """A signed token; ``scopes`` are authorization levels (None: no limit)."""
    issued = int(now if now is not None else time.time())
    payload: dict[str, Any] = {"iss": issuer, "sub": subject, "iat": issued, "jti": uuid.uuid4().hex}
    if lifetime is not None:
        payload["exp"] = issued + int(lifetime)
    if scopes:
        payload["scope"] = " ".join(SCOPE_PREFIX + s.upper() for s in scopes)
    signing_input = (_b64(json.dumps(HEADER, separators=(",", ":")).encode()) + "."
                     + _b64(json.dumps(payload, separators=(",", ":")).encode()))
    return signing_input + "." + _b64(key.sign(signing_input.encode()))


def decode(token: str) -> Claims:
    """The claims of ``token`` without checking its signature (for ``htcd token list``)."""
    parts = token.strip().split(".")
    if len(parts) != 3:
        raise TokenError("not a token (expected header.payload.signature)")
    try:
        header = json.loads(_unb64(parts[0]))
        payload = json.loads(_unb64(parts[1]))
    except ValueError:
        raise TokenError("not a token (undecodable JSON)") from None
    if not isinstance(header, dict) or not isinstance(payload, dict):
        raise TokenError("not a token (header or payload is not an object)")
    if header.get("alg") != "EdDSA":
        raise TokenError(f"token signed with {header.get('alg')!r}; this pool accepts only EdDSA")
    try:
        scope = payload.get("scope")
        scopes = None
        if scope:
            scopes = frozenset(s[len(SCOPE_PREFIX):].upper() if s.startswith(SCOPE_PREFIX) else s.upper()
                               for s in str(scope).split())
        exp = payload.get("exp")
        return Claims(str(payload["iss"]), str(payload["sub"]), int(payload["iat"]),
                      int(exp) if exp is not None else None, str(payload["jti"]), scopes, payload)
    except (KeyError, TypeError, ValueError) as exc:
        raise TokenError(f"token lacks a valid claim ({exc})") from None


def verify(token: str, keys: list[Ed25519PublicKey], trust_domain: str, now: float | None = None) -> Claims:
    """The claims of a token this pool signed and that is still valid; else TokenError naming why."""
    from cryptography.exceptions import InvalidSignature
    claims = decode(token)
    head, payload, sig = token.strip().split(".")
    signature = _unb64(sig)
    for key in keys:
        try:
            key.verify(signature, f"{head}.{payload}".encode())
            break
        except InvalidSignature:
            continue
    else:
        if claims.issuer != trust_domain:
            raise TokenError(f"token {claims.id} was issued by {claims.issuer!r}, not by this pool "
                             f"({trust_domain!r}), and its signature does not verify with this pool's key")
        raise TokenError(f"token {claims.id}: the signature does not verify with this pool's key (forged?)")
    if claims.issuer != trust_domain:
        raise TokenError(f"token {claims.id} names issuer {claims.issuer!r}, not this pool ({trust_domain!r})")
    if claims.expired(now):
        raise TokenError(f"token {claims.id} expired at {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(claims.expires))}")
    return claims


# -- revocation ------------------------------------------------------------------------------------------
_REVOKED_CACHE: dict[str, tuple[float, frozenset[str]]] = {}


def revoked_ids(path: str | None) -> frozenset[str]:
    """The ids in the revocation list (one per line, ``#`` comments), re-read when it changes."""
    if not path:
        return frozenset()
    try:
        mtime = os.stat(path).st_mtime
    except OSError:
        return frozenset()
    cached = _REVOKED_CACHE.get(path)
    if cached and cached[0] == mtime:
        return cached[1]
    with open(path) as f:
        ids = frozenset(line.split("#")[0].strip() for line in f if line.split("#")[0].strip())
    _REVOKED_CACHE[path] = (mtime, ids)
    return ids


def revoke(path: str, token_id: str, why: str = "") -> bool:
    """Add ``token_id`` to the revocation list; False if it was there already."""
    if token_id in revoked_ids(path):
        return False
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "a") as f:
        f.write(f"{token_id}{'  # ' + why if why else ''}\n")
    _REVOKED_CACHE.pop(path, None)
    return True


def read_token_files(directory: str | None) -> list[tuple[str, str]]:
    """(path, token) of each token file of a directory (one token per line; files in name order,
    as HTCondor's tokens.d; unreadable or hidden files are skipped)."""
    if not directory or not os.path.isdir(directory):
        return []
    out = []
    for name in sorted(os.listdir(directory)):
        if name.startswith(".") or name.endswith((".new", "~")):
            continue
        path = os.path.join(directory, name)
        try:
            with open(path) as f:
                lines = [line.strip() for line in f]
        except OSError:
            continue
        out += [(path, line) for line in lines if line and not line.startswith("#")]
    return out

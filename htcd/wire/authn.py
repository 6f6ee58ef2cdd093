"""Authentication settings and the method negotiation of the handshake, both ends.

The server side (``ServerSecurity``) reads, per authorization level, HTCondor's
``SEC_<CONTEXT>_AUTHENTICATION_METHODS``, ``SEC_<CONTEXT>_AUTHENTICATION``, ``_ENCRYPTION`` and
``_INTEGRITY`` (each falling back to ``SEC_DAEMON_*`` for NEGOTIATOR and ADVERTISE_*, then to
``SEC_DEFAULT_*``), the pool's token verification key and its TLS certificate.  The handshake
accepts any method some level accepts; each command is then checked against its own level.
The client side (``ClientSecurity``) reads the ``SEC_CLIENT_*`` context (a daemon acting as a
client: ``SEC_DAEMON_*``), its tokens and the pool CA.  See docs/protocol.md, "Handshake".
"""

from __future__ import annotations

import getpass
import logging
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from htcd.wire import auth, tokens

if TYPE_CHECKING:  # ssl is imported where TLS is set up: a tool on the local socket does not load it
    import ssl
from htcd.wire.tokens import TokenError

ALIASES = {"IDTOKEN": "TOKEN", "IDTOKENS": "TOKEN", "TOKENS": "TOKEN"}
DEFAULT_METHODS = ("FS", "TOKEN", "SSL")  # CLAIMTOBE only when listed explicitly
REQUIRED, PREFERRED, OPTIONAL, NEVER = "REQUIRED", "PREFERRED", "OPTIONAL", "NEVER"
REQUIREMENTS = (REQUIRED, PREFERRED, OPTIONAL, NEVER)
UNAUTHENTICATED = "UNAUTHENTICATED"  # Identity.method of unauthenticated@unmapped
#: Where a level's settings come from when SEC_<LEVEL>_* is not set, before SEC_DEFAULT_*.
FALLBACK = {"NEGOTIATOR": "DAEMON", "ADVERTISE_MASTER": "DAEMON", "ADVERTISE_SCHEDD": "DAEMON",
            "ADVERTISE_STARTD": "DAEMON"}
DEFAULTS = {"AUTHENTICATION": PREFERRED, "ENCRYPTION": OPTIONAL, "INTEGRITY": OPTIONAL}


class SecurityConfigError(ValueError):
    """A security knob with a value that is not one of its choices."""


def _knob(cfg: Any, context: str, what: str) -> tuple[str, str | None]:
    """(knob name that decided, value) for SEC_<context>_<what>, walking the fallbacks."""
    chain = [context, FALLBACK.get(context), "DEFAULT"]
    for ctx in chain:
        if ctx is None:
            continue
        name = f"SEC_{ctx}_{what}"
        value = cfg.get(name) if cfg is not None else None
        if value:
            return name, value
    return f"SEC_DEFAULT_{what}", None


def methods_of(text: str | None, knob: str) -> list[str]:
    if text is None:
        return list(DEFAULT_METHODS)
    out = []
    for word in re.split(r"[\s,]+", text.strip()):
        if not word:
            continue
        m = ALIASES.get(word.upper(), word.upper())
        if m not in out:
            out.append(m)
    return out


def requirement_of(text: str | None, knob: str, default: str) -> str:
    if text is None:
        return default
    value = text.strip().upper()
    if value not in REQUIREMENTS:
        raise SecurityConfigError(f"{knob} = {text}: expected one of {', '.join(REQUIREMENTS)}")
    return value


@dataclass(frozen=True)
class LevelPolicy:
    """The authentication settings of one level, with the knob that set each (for messages)."""

    methods: tuple[str, ...]
    authentication: str
    encryption: str
    integrity: str
    knobs: dict[str, str] = field(default_factory=dict, compare=False)


def level_policy(cfg: Any, context: str) -> LevelPolicy:
    knobs = {}
    name, text = _knob(cfg, context, "AUTHENTICATION_METHODS")
    knobs["methods"] = name
    methods = methods_of(text, name)
    values = {}
    for what in ("AUTHENTICATION", "ENCRYPTION", "INTEGRITY"):
        name, text = _knob(cfg, context, what)
        knobs[what.lower()] = name
        values[what.lower()] = requirement_of(text, name, DEFAULTS[what])
    return LevelPolicy(tuple(methods), values["authentication"], values["encryption"], values["integrity"], knobs)


def negotiate(client: str, server: str) -> bool | None:
    """HTCondor's negotiation of a feature: True (on), False (off), None (impossible: one side
    requires what the other refuses)."""
    if NEVER in (client, server):
        return None if REQUIRED in (client, server) else False
    return REQUIRED in (client, server) or PREFERRED in (client, server)


def _path(cfg: Any, knob: str) -> str | None:
    value = cfg.get(knob) if cfg is not None else None
    return os.path.expanduser(value) if value else None


class ServerSecurity:
    """What a daemon accepts in the handshake and requires at each level."""

    def __init__(self, cfg: Any = None, uid_domain: str = "", log: logging.Logger | None = None) -> None:
        self.cfg = cfg
        self.uid_domain = uid_domain
        self.log = log or logging.getLogger("htcd.security")
        self.levels = {lv: level_policy(cfg, lv) for lv in auth.LEVELS}
        self.methods: list[str] = []
        for policy in self.levels.values():
            for m in policy.methods:
                if m not in self.methods:
                    self.methods.append(m)
        reqs = [p.authentication for p in self.levels.values()]
        self.may_skip_authentication = any(r in (OPTIONAL, NEVER) for r in reqs)
        # the handshake's side of the negotiation: REQUIRED only if every level requires TLS (a
        # client refusing it could run no command), PREFERRED if some level wants it
        encs = [negotiate_max(p.encryption, p.integrity) for p in self.levels.values()]
        self.encryption = (REQUIRED if all(e == REQUIRED for e in encs) else
                           PREFERRED if any(e in (REQUIRED, PREFERRED) for e in encs) else OPTIONAL)
        self.trust_domain = (cfg.get("TRUST_DOMAIN") if cfg is not None else None) or uid_domain
        self.public_key_file = _path(cfg, "SEC_TOKEN_POOL_PUBLIC_KEY_FILE")
        self.revocation_file = _path(cfg, "SEC_TOKEN_REVOCATION_LIST")
        self.revocation_expr = cfg.get("SEC_TOKEN_REVOCATION_EXPR") if cfg is not None else None
        self.mapfile = _path(cfg, "CERTIFICATE_MAPFILE")
        self.tls, self.tls_problem = self._tls_context(cfg)

    def _tls_context(self, cfg: Any) -> tuple[ssl.SSLContext | None, str]:
        import ssl

        cert, key = _path(cfg, "AUTH_SSL_SERVER_CERTFILE"), _path(cfg, "AUTH_SSL_SERVER_KEYFILE")
        if not cert or not key:
            return None, "no AUTH_SSL_SERVER_CERTFILE/AUTH_SSL_SERVER_KEYFILE configured"
        if not (os.path.exists(cert) and os.path.exists(key)):
            return None, f"its certificate {cert} or key {key} does not exist"
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        try:
            ctx.load_cert_chain(cert, key)
        except (OSError, ssl.SSLError) as exc:
            return None, f"cannot load {cert}: {exc}"
        cafile = _path(cfg, "AUTH_SSL_SERVER_CAFILE")
        if cafile and os.path.exists(cafile):
            ctx.load_verify_locations(cafile)
            require = cfg.get_bool("AUTH_SSL_REQUIRE_CLIENT_CERTIFICATE", False)
            ctx.verify_mode = ssl.CERT_REQUIRED if require else ssl.CERT_OPTIONAL
        return ctx, ""

    # -- the handshake --------------------------------------------------------------------------------
    def wants_tls(self, hello: dict[str, Any], agreed: list[str]) -> tuple[bool, str]:
        """(start TLS?, why not possible) for a TCP connection, from the client's hello."""
        client = str(hello.get("encryption") or OPTIONAL).upper()
        if client not in REQUIREMENTS:
            client = OPTIONAL
        on = negotiate(client, self.encryption)
        if on is None:
            return False, (f"encryption: the client says {client} and this daemon "
                           f"{self.encryption} (SEC_*_ENCRYPTION)")
        needs = bool({"TOKEN", "SSL"} & set(agreed))
        if client == NEVER:
            return False, ""
        if (on or needs) and self.tls is None:
            if client == REQUIRED:
                return False, f"encryption required by the client, but this daemon has no TLS: {self.tls_problem}"
            return False, ""
        return bool(on or needs) and self.tls is not None, ""

    def agreed(self, offered: list[str]) -> list[str]:
        out = []
        for m in offered:
            m = ALIASES.get(m, m)
            if m not in out:
                out.append(m)
        return out

    def authenticate(self, offered: list[str], creds: dict[str, Any], fs_identity: auth.Identity | None,
                     host: str | None, encrypted: bool, peer_cert: dict[str, Any] | None,
                     client_auth: str) -> tuple[auth.Identity | None, list[str]]:
        """Try the client's methods in its order; (identity, failures).  Identity None: refuse."""
        failures: list[str] = []
        for m in self.agreed(offered):
            if m not in self.methods:
                failures.append(f"{m}: not accepted by this daemon (SEC_*_AUTHENTICATION_METHODS: "
                                f"{', '.join(self.methods) or 'none'})")
                continue
            try:
                identity = self._try(m, creds, fs_identity, host, encrypted, peer_cert)
            except TokenError as exc:
                failures.append(f"{m}: {exc}")
                continue
            return identity, failures
        if not offered:
            failures.append("the client offered no method")
        if self.may_skip_authentication and client_auth not in (REQUIRED,):
            return auth.Identity("unauthenticated", "unmapped", None, UNAUTHENTICATED, host=host,
                                 encrypted=encrypted), failures
        return None, failures

    def _try(self, m: str, creds: dict[str, Any], fs_identity: auth.Identity | None, host: str | None,
             encrypted: bool, peer_cert: dict[str, Any] | None) -> auth.Identity:
        if m == "FS":
            if fs_identity is None:
                raise TokenError("only on the daemon's Unix socket (this is a TCP connection)")
            return fs_identity
        if m == "TOKEN":
            if host is not None and not encrypted:
                raise TokenError("refused on a plain TCP connection (tokens travel only inside TLS)")
            token = creds.get("TOKEN")
            if not isinstance(token, str) or not token:
                raise TokenError(f"the client has no token for trust domain {self.trust_domain}")
            claims = self.verify_token(token)
            return auth.Identity(claims.user, claims.domain, None, "TOKEN", host=host, scopes=claims.scopes,
                                 encrypted=encrypted)
        if m == "SSL":
            if not encrypted:
                raise TokenError("needs TLS" + (f", and this daemon has none: {self.tls_problem}"
                                                if self.tls is None else ""))
            if not peer_cert:
                raise TokenError("no client certificate")
            cn = _common_name(peer_cert)
            if not cn:
                raise TokenError("the client certificate has no CN")
            user, domain = self.map_certificate(cn)
            return auth.Identity(user, domain, None, "SSL", host=host, encrypted=encrypted)
        if m == "CLAIMTOBE":
            claimed = creds.get("CLAIMTOBE")
            if not isinstance(claimed, str) or not claimed or len(claimed) > 256:
                raise TokenError("the client claimed no name")
            user, _, domain = claimed.partition("@")
            return auth.Identity(user, domain or self.uid_domain, None, "CLAIMTOBE", host=host,
                                 encrypted=encrypted)
        raise TokenError("not a method htcd knows (it has FS, TOKEN, SSL, CLAIMTOBE)")

    def verify_token(self, token: str) -> tokens.Claims:
        if not self.public_key_file:
            raise TokenError("this daemon has no pool verification key (SEC_TOKEN_POOL_PUBLIC_KEY_FILE)")
        claims = tokens.verify(token, tokens.load_public_keys(self.public_key_file), self.trust_domain)
        if claims.id in tokens.revoked_ids(self.revocation_file):
            raise TokenError(f"token {claims.id} has been revoked ({self.revocation_file})")
        if self.revocation_expr and _revoked_by_expr(self.revocation_expr, claims):
            raise TokenError(f"token {claims.id} is revoked by SEC_TOKEN_REVOCATION_EXPR = {self.revocation_expr}")
        return claims

    def map_certificate(self, cn: str) -> tuple[str, str]:
        """CN -> (user, domain): the first ``SSL <regex> <identity>`` line of CERTIFICATE_MAPFILE
        matching the whole CN (\\1... from its groups); else a CN ``user@domain`` as it is, and any
        other CN as ``CN@UID_DOMAIN``."""
        if self.mapfile and os.path.exists(self.mapfile):
            with open(self.mapfile) as f:
                for line in f:
                    parts = line.split()
                    if len(parts) != 3 or parts[0].upper() != "SSL":
                        continue
                    pattern = parts[1].strip('"')
                    try:
                        found = re.fullmatch(pattern, cn)
                    except re.error:
                        continue
                    if found:
                        name = found.expand(parts[2].replace("\\", "\\"))
                        user, _, domain = name.partition("@")
                        return user, domain or self.uid_domain
        user, _, domain = cn.partition("@")
        return user, domain or self.uid_domain

    # -- each command -------------------------------------------------------------------------------------
    def check(self, identity: auth.Identity, level: str) -> str | None:
        """None if the connection's authentication suits ``level``; else the one-line reason,
        naming the knob (or the token scope) that requires more."""
        if identity.scopes is not None and not identity.scopes & set(_holders(level)):
            return (f"the token of {identity} is limited to scope {', '.join(sorted(identity.scopes)) or '(none)'}; "
                    f"{level} needs scope condor:/{level}")
        policy = self.levels.get(level)
        if policy is None:
            return None
        if identity.method == UNAUTHENTICATED:
            if policy.authentication in (REQUIRED, PREFERRED):
                return (f"{policy.knobs['authentication']} = {policy.authentication}: {level} needs an "
                        f"authenticated connection, and this one is not ({identity})")
        elif identity.method not in policy.methods:
            return (f"{policy.knobs['methods']} = {', '.join(policy.methods)}: {level} is not accepted by "
                    f"{identity.method}")
        if identity.host is not None and not identity.encrypted:
            for what in ("encryption", "integrity"):
                if getattr(policy, what) == REQUIRED:
                    return (f"{policy.knobs[what]} = REQUIRED: {level} needs an encrypted connection (TLS), "
                            "and this one is plain TCP")
        return None


def _holders(level: str) -> list[str]:
    """``level`` and the levels that imply it (a token scoped ADMINISTRATOR may WRITE)."""
    try:
        from htcd.wire.authz import implied_by
    except ImportError:
        return [level]
    return implied_by(level)


def _common_name(cert: dict[str, Any]) -> str | None:
    for rdn in cert.get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                return str(value)
    return None


def _revoked_by_expr(expr: str, claims: tokens.Claims) -> bool:
    """SEC_TOKEN_REVOCATION_EXPR evaluated against the token's claims (jti, sub, iss, iat, exp,
    scope as attributes); true means revoked.  An expression that does not evaluate to true
    revokes nothing."""
    from htcd.classad import ClassAd, is_true

    ad = ClassAd()
    for key, value in claims.raw.items():
        if isinstance(value, (str, int, float, bool)):
            ad[key] = value
    try:
        return is_true(ad.eval_expr(expr))
    except Exception:  # a broken expression revokes nothing; the daemon logs it at reconfig
        return False


# -- the client side ------------------------------------------------------------------------------------------
@dataclass
class ClientSecurity:
    """What a client offers: its methods in order, its requirements, credentials and CA."""

    methods: list[str] = field(default_factory=lambda: ["FS"])
    authentication: str = OPTIONAL
    encryption: str = OPTIONAL
    token_dirs: list[str] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)  # given directly (tests, htcd ping -token)
    cafile: str | None = None
    certfile: str | None = None
    keyfile: str | None = None
    skip_host_check: bool = False
    prefer_unix: bool = True
    claimtobe: str | None = None
    knobs: dict[str, str] = field(default_factory=dict)
    _ssl: ssl.SSLContext | None = field(default=None, repr=False)

    @classmethod
    def from_config(cls, cfg: Any, context: str = "CLIENT") -> ClientSecurity:
        policy = level_policy(cfg, context)
        dirs = []
        if context == "CLIENT":
            user_dir = _path(cfg, "SEC_TOKEN_DIRECTORY")
            if user_dir:
                dirs.append(user_dir)
        if context != "CLIENT" or os.geteuid() == 0:
            system_dir = _path(cfg, "SEC_TOKEN_SYSTEM_DIRECTORY")
            if system_dir:
                dirs.append(system_dir)
        user = cfg.get("SEC_CLAIMTOBE_USER") or _login()
        return cls(methods=list(policy.methods), authentication=policy.authentication,
                   encryption=negotiate_max(policy.encryption, policy.integrity),
                   token_dirs=dirs, cafile=_path(cfg, "AUTH_SSL_CLIENT_CAFILE"),
                   certfile=_path(cfg, "AUTH_SSL_CLIENT_CERTFILE"), keyfile=_path(cfg, "AUTH_SSL_CLIENT_KEYFILE"),
                   skip_host_check=cfg.get_bool("SSL_SKIP_HOST_CHECK", False),
                   prefer_unix=cfg.get_bool("PREFER_UNIX_SOCKET", True), claimtobe=user,
                   knobs=dict(policy.knobs))

    def all_tokens(self) -> list[str]:
        found = list(self.tokens)
        for d in self.token_dirs:
            found += [t for _, t in tokens.read_token_files(d)]
        return found

    def token_for(self, trust_domain: str | None) -> str | None:
        """The first usable token issued by ``trust_domain`` (unexpired ones first)."""
        candidates = []
        for i, text in enumerate(self.all_tokens()):
            try:
                claims = tokens.decode(text)
            except TokenError:
                continue
            if trust_domain and claims.issuer != trust_domain:
                continue
            candidates.append((claims.expired(), i, text))
        return min(candidates)[2] if candidates else None

    def credentials(self, trust_domain: str | None, agreed: list[str], secure: bool) -> dict[str, Any]:
        """What to send for the agreed methods; a token only on a ``secure`` channel."""
        creds: dict[str, Any] = {}
        if "TOKEN" in agreed and secure:
            token = self.token_for(trust_domain)
            if token:
                creds["TOKEN"] = token
        if "CLAIMTOBE" in agreed and self.claimtobe:
            creds["CLAIMTOBE"] = self.claimtobe
        return creds

    def ssl_context(self) -> ssl.SSLContext:
        """The client's TLS context: the pool CA, the host name check, its certificate if any;
        WireError-worthy problems raise ssl.SSLError."""
        import ssl

        if self._ssl is not None:
            return self._ssl
        if not self.cafile or not os.path.exists(self.cafile):
            raise ssl.SSLError(f"no pool CA to check the daemon's certificate against "
                               f"(AUTH_SSL_CLIENT_CAFILE = {self.cafile or 'undefined'})")
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.load_verify_locations(self.cafile)
        ctx.check_hostname = not self.skip_host_check
        ctx.verify_mode = ssl.CERT_REQUIRED
        if self.certfile and self.keyfile and "SSL" in self.methods:
            ctx.load_cert_chain(self.certfile, self.keyfile)
        self._ssl = ctx
        return ctx


def negotiate_max(a: str, b: str) -> str:
    order = {REQUIRED: 0, PREFERRED: 1, OPTIONAL: 2, NEVER: 3}
    return min(a, b, key=lambda r: order.get(r, 2))


def _login() -> str:
    try:
        return auth.user_name(os.geteuid())
    except Exception:
        return getpass.getuser()

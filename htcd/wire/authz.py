"""Authorization policy: who holds which level, from HTCondor's ALLOW_<LEVEL> / DENY_<LEVEL> knobs.

A daemon builds one :class:`Policy` from its config (at start and on every reconfig) and the
protocol server asks it, for every command, whether the authenticated identity holds the
command's level.  The rules are HTCondor's:

- an entry is ``user@domain/host``; each part may hold ``*`` wildcards; ``host`` is a host name, an
  IP address, a network (``10.0.0.0/8``, ``10.0.0.0/255.0.0.0``) or an address prefix
  (``10.0.*``); ``user@domain`` alone means any host, a bare host means ``*/host``, ``*`` anyone;
- ``ALLOW_<LEVEL>_<SUBSYS>`` (e.g. ``ALLOW_WRITE_COLLECTOR``) replaces ``ALLOW_<LEVEL>`` for that
  daemon, and likewise for DENY;
- levels imply others: ADMINISTRATOR and DAEMON imply WRITE, WRITE, NEGOTIATOR, CONFIG and the
  ADVERTISE levels imply READ; an identity allowed a level holds every level it implies, and one
  denied a level is denied every level that implies it (who may not READ may not WRITE);
- the ADVERTISE_* levels use the DAEMON lists when they have none of their own;
- DENY wins over ALLOW;
- a token's scopes (``Identity.scopes``) limit the identity to those levels (and what they imply).

A level with no ALLOW list at all (no security template in the config) keeps htcd's built-in
default: READ and WRITE for every authenticated identity, the other levels for the daemon user
and root on this host, and for ``condor`` authenticated by TOKEN or SSL (only this pool's signing
key and CA issue those).

The daemon user: HTCondor's templates name the daemons' account ``condor``.  In a personal pool
the daemons run as root or as an ordinary user, so an identity authenticated by FS with the uid
the daemons run as is also ``condor@<its domain>`` for the policy: the pool's own daemons (and
tools run by the pool's owner) match ``condor@*``.  Daemon tokens carry ``condor@<TRUST_DOMAIN>``.
"""

from __future__ import annotations

import fnmatch
import functools
import ipaddress
import logging
import os
import re
import socket
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from htcd.debug import dprintf
from htcd.errors import UserError
from htcd.wire import auth

DAEMON_USER = "condor"

#: level -> the levels it directly implies (HTCondor's permission hierarchy)
IMPLIES: dict[str, tuple[str, ...]] = {
    auth.READ: (),
    auth.WRITE: (auth.READ,),
    auth.ADMINISTRATOR: (auth.WRITE,),
    auth.DAEMON: (auth.WRITE,),
    auth.NEGOTIATOR: (auth.READ,),
    auth.CONFIG: (auth.READ,),
    auth.ADVERTISE_MASTER: (auth.READ,),
    auth.ADVERTISE_SCHEDD: (auth.READ,),
    auth.ADVERTISE_STARTD: (auth.READ,),
}
#: a level whose lists are undefined uses another's (HTCondor: ADVERTISE_* fall back to DAEMON)
CONFIG_FALLBACK = {auth.ADVERTISE_MASTER: auth.DAEMON, auth.ADVERTISE_SCHEDD: auth.DAEMON,
                   auth.ADVERTISE_STARTD: auth.DAEMON}


@functools.cache
def _implied_by(level: str) -> tuple[str, ...]:
    out = [level]
    for lv in out:
        out += [other for other, implied in IMPLIES.items() if lv in implied and other not in out]
    return tuple(out)


@functools.cache
def _implies(level: str) -> tuple[str, ...]:
    out = [level]
    for lv in out:
        out += [x for x in IMPLIES.get(lv, ()) if x not in out]
    return tuple(out)


def implied_by(level: str) -> list[str]:
    """``level`` and every level that implies it, directly or not (whose holders hold ``level``)."""
    return list(_implied_by(level))


def implies(level: str) -> list[str]:
    """``level`` and every level it implies (a denial of any of them denies ``level``)."""
    return list(_implies(level))


@dataclass(frozen=True)
class Entry:
    """One ``user@domain/host`` entry of an ALLOW/DENY list."""

    text: str
    user: str = "*"
    domain: str = "*"
    host: str = "*"  # "*", a name pattern, an IP pattern ("10.0.*"), or "" when ``networks`` says
    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()

    @property
    def host_only(self) -> bool:
        """Authorizes by host alone: any user on the host (Host_Based security)."""
        return self.user == "*" and self.domain == "*" and not (self.host == "*" and not self.networks)


def _network(text: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    try:
        return ipaddress.ip_network(text, strict=False)
    except ValueError:
        return None


def parse_entry(text: str, knob: str = "") -> Entry:
    """``text`` as an entry; a malformed one is a UserError naming ``knob``."""
    raw = text.strip()
    where = f"{knob}: " if knob else ""
    if not raw:
        raise UserError(f"{where}empty entry")
    if raw == "*":
        return Entry(raw)
    net = _network(raw) if "/" in raw else None
    if net is not None:  # a bare network: 10.0.0.0/8
        return Entry(raw, host="", networks=(net,))
    if "/" in raw:
        who, host = raw.split("/", 1)
    elif "@" in raw:
        who, host = raw, "*"
    else:
        who, host = "*", raw
    if "@" in who:
        user, domain = who.rsplit("@", 1)
    else:
        user, domain = who, "*"
    if not user or not domain or not host:
        raise UserError(f"{where}entry {raw!r} is not user@domain/host (an empty part; use * for any)")
    if "/" in host:
        net = _network(host)
        if net is None:
            raise UserError(f"{where}entry {raw!r}: {host!r} is not a network (e.g. 10.0.0.0/8 or "
                            "10.0.0.0/255.0.0.0)")
        return Entry(raw, user.lower(), domain.lower(), "", (net,))
    if host != "*" and "*" not in host:
        addr = _network(host)
        if addr is not None:
            return Entry(raw, user.lower(), domain.lower(), "", (addr,))
    if re.search(r"[\s\"'\\,;]", host):
        raise UserError(f"{where}entry {raw!r}: {host!r} is not a host name or address")
    return Entry(raw, user.lower(), domain.lower(), host.lower())


def parse_list(text: str | None, knob: str = "") -> list[Entry]:
    return [parse_entry(t, knob) for t in (text or "").replace(",", " ").split()]


@dataclass
class _Hosts:
    """What is known of a peer's host for matching: its addresses and names (a Unix-socket peer
    is on this host: loopback and this host's own names and addresses)."""

    addresses: list[ipaddress.IPv4Address | ipaddress.IPv6Address]
    names: list[str]
    reverse: Callable[[], list[str]] | None = None  # lazily looked-up names of an address

    def all_names(self) -> list[str]:
        if self.reverse is not None:
            self.names = [*self.names, *self.reverse()]
            self.reverse = None
        return self.names


@dataclass
class Rule:
    """The resolved ALLOW or DENY list of one level, and the knob it came from."""

    knob: str
    text: str
    entries: list[Entry]


@dataclass
class Policy:
    """Authorization of one daemon, built by :func:`build` from its config."""

    subsystem: str
    allow: dict[str, Rule | None]  # level -> its ALLOW list (None: not configured)
    deny: dict[str, Rule | None]
    daemon_uid: int = field(default_factory=os.geteuid)
    local_names: tuple[str, ...] = ()
    local_addresses: tuple[str, ...] = ()
    log: logging.Logger | None = None
    resolved: dict[str, list[str]] = field(default_factory=dict)  # host name -> its addresses
    _reverse_cache: dict[str, tuple[float, list[str]]] = field(default_factory=dict)
    _local: _Hosts | None = None

    # -- identities --------------------------------------------------------------------------
    def is_daemon_user(self, identity: auth.Identity) -> bool:
        """The daemons' own account, authenticated by FS on this host."""
        return identity.method == "FS" and identity.uid is not None and identity.uid == self.daemon_uid

    def _names(self, identity: auth.Identity) -> list[tuple[str, str]]:
        names = [(identity.user.lower(), identity.domain.lower())]
        if self.is_daemon_user(identity) and identity.user.lower() != DAEMON_USER:
            names.append((DAEMON_USER, identity.domain.lower()))
        return names

    def _hosts(self, identity: auth.Identity) -> _Hosts:
        if identity.host is None:  # a Unix socket: this host
            if self._local is None:
                addrs = []
                for a in ("127.0.0.1", "::1", *self.local_addresses):
                    try:
                        addrs.append(ipaddress.ip_address(a))
                    except ValueError:
                        continue
                self._local = _Hosts(addrs, ["localhost", *self.local_names])
            return self._local
        try:
            ip = ipaddress.ip_address(identity.host.split("%", 1)[0])
        except ValueError:
            return _Hosts([], [identity.host.lower()])
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        return _Hosts([ip], [], reverse=lambda: self._reverse(str(ip)))

    def _reverse(self, ip: str) -> list[str]:
        """The names of ``ip`` by reverse DNS, cached for 5 minutes (only wildcard host-name
        entries need it)."""
        now = time.monotonic()
        hit = self._reverse_cache.get(ip)
        if hit and now - hit[0] < 300:
            return hit[1]
        try:
            name, aliases, _ = socket.gethostbyaddr(ip)
            names = [n.lower() for n in (name, *aliases)]
        except OSError:
            names = []
        self._reverse_cache[ip] = (now, names)
        return names

    def _host_matches(self, entry: Entry, hosts: _Hosts) -> bool:
        if entry.networks:
            return any(a in n for n in entry.networks for a in hosts.addresses if a.version == n.version)
        pattern = entry.host
        if pattern == "*":
            return True
        if re.fullmatch(r"[0-9.*]+|[0-9a-f:*]+", pattern) and any(c.isdigit() for c in pattern):
            return any(fnmatch.fnmatchcase(str(a), pattern) for a in hosts.addresses)
        if "*" not in pattern:
            addrs = self.resolved.get(pattern, [])
            if any(str(a) in addrs for a in hosts.addresses):
                return True
            return pattern in hosts.names  # a Unix-socket peer by this host's own name
        return any(fnmatch.fnmatchcase(n, pattern) for n in hosts.all_names())

    def _match(self, rule: Rule | None, identity: auth.Identity, hosts: _Hosts) -> Entry | None:
        if rule is None:
            return None
        names = self._names(identity)
        for entry in rule.entries:
            if not any(fnmatch.fnmatchcase(u, entry.user) and fnmatch.fnmatchcase(d, entry.domain)
                       for u, d in names):
                continue
            if self._host_matches(entry, hosts):
                return entry
        return None

    # -- the check ---------------------------------------------------------------------------
    def who(self, identity: auth.Identity) -> str:
        """``alice@example.org (authenticated by TOKEN from 10.0.0.7)``, for messages."""
        how = f"authenticated by {identity.method}"
        if identity.host:
            how += f" from {identity.host}"
        return f"{identity} ({how})"

    def check(self, identity: auth.Identity, level: str) -> str | None:
        """None when ``identity`` holds ``level``; else the one-line reason, also logged at D_SECURITY."""
        why = self._why_not(identity, level)
        if why is None:
            return None
        if self.log is not None:
            dprintf(self.log, "D_SECURITY", "PERMISSION DENIED to %s for access level %s: %s",
                    self.who(identity), level, why)
        return f"{self.who(identity)} does not hold {level}: {why}"

    __call__ = check

    def _why_not(self, identity: auth.Identity, level: str) -> str | None:
        if level not in IMPLIES:
            return f"{level} is not an authorization level"
        hosts = self._hosts(identity)
        for lv in implies(level):
            entry = self._match(self.deny.get(lv), identity, hosts)
            if entry is not None:
                rule = self.deny[lv]
                assert rule is not None
                which = f" (entry {entry.text})" if len(rule.entries) > 1 else ""
                return f"{rule.knob} = {rule.text} matched{which}"
        if identity.scopes is not None and not any(s in identity.scopes for s in implied_by(level)):
            scopes = ", ".join(sorted(identity.scopes)) or "(none)"
            return f"the token's scopes {scopes} do not include {level}"
        for lv in implied_by(level):
            rule = self.allow.get(lv)
            if rule is None:
                if self._default_holds(identity, lv):
                    return None
            elif self._match(rule, identity, hosts) is not None:
                return None
        own = self.allow.get(level)
        if own is None:
            return (f"no ALLOW_{level} is configured, so {level} is held only by the daemons' own account "
                    f"({auth.user_name(self.daemon_uid)}) and root on this host, and by the pool's daemon "
                    f"tokens and certificates ({DAEMON_USER}@...)")
        names = [r.knob for lv in implied_by(level)[1:] if (r := self.allow.get(lv)) is not None]
        also = f" (nor in {', '.join(names)})" if names else ""
        return f"not in {own.knob} = {own.text or '(empty)'}{also}"

    def _default_holds(self, identity: auth.Identity, level: str) -> bool:
        """htcd's default for a level with no ALLOW list: READ/WRITE open to every authenticated
        identity, the rest to the daemons' own account and root on this host."""
        if level in auth.OPEN_LEVELS:
            return identity.method.upper() not in ("UNAUTHENTICATED", "ANONYMOUS")
        if identity.method in ("TOKEN", "SSL") and identity.user.lower() == DAEMON_USER:
            return True  # a daemon token or certificate: only this pool's key and CA issue them
        return identity.method == "FS" and identity.uid is not None and identity.uid in (0, self.daemon_uid)

    # -- reports -----------------------------------------------------------------------------
    def host_only_rules(self) -> list[tuple[str, Rule, list[Entry]]]:
        """(level, rule, entries) of the privileged levels authorized by host alone."""
        out = []
        for lv in (auth.WRITE, auth.ADMINISTRATOR, auth.DAEMON, auth.NEGOTIATOR, auth.CONFIG):
            rule = self.allow.get(lv)
            if rule is not None:
                loose = [e for e in rule.entries if e.host_only]
                if loose:
                    out.append((lv, rule, loose))
        return out

    def describe(self) -> list[str]:
        """One line per configured list, for the log at start and reconfig."""
        lines = []
        for kind, table in (("allow", self.allow), ("deny", self.deny)):
            for lv, rule in table.items():
                if rule is not None:
                    lines.append(f"{kind} {lv}: {rule.text or '(empty)'} (from {rule.knob})")
        return lines


def _lookup(config: Any, kind: str, level: str, subsystem: str) -> Rule | None:
    """``<KIND>_<LEVEL>_<SUBSYS>`` when defined, else ``<KIND>_<LEVEL>``; ADVERTISE_* fall back to DAEMON."""
    for lv in (level, CONFIG_FALLBACK.get(level)):
        if lv is None:
            continue
        for knob in (f"{kind}_{lv}_{subsystem}", f"{kind}_{lv}"):
            text = config.get(knob)
            if text and text.strip():  # as HTCondor: an empty value is undefined
                entries = parse_list(text, _where(config, knob))
                return Rule(knob, ", ".join(e.text for e in entries), entries)
    return None


def _where(config: Any, knob: str) -> str:
    try:
        loc = config.where(knob)
    except Exception:
        loc = None
    return f"{knob} ({loc[0]}, line {loc[1]})" if loc else knob


def build(config: Any, subsystem: str, log: logging.Logger | None = None,
          daemon_uid: int | None = None) -> Policy:
    """The policy of daemon ``subsystem`` from ``config``; a malformed entry is a UserError
    naming the knob and where it was set."""
    sub = subsystem.upper()
    allow = {lv: _lookup(config, "ALLOW", lv, sub) for lv in auth.LEVELS}
    deny = {lv: _lookup(config, "DENY", lv, sub) for lv in auth.LEVELS}
    names = [n.lower() for n in (config.get("FULL_HOSTNAME"), config.get("HOSTNAME"), socket.getfqdn(),
                                 socket.gethostname()) if n]
    addresses = [a for a in (config.get("IP_ADDRESS"), config.get("IPV4_ADDRESS"),
                             config.get("IPV6_ADDRESS")) if a]
    policy = Policy(sub, allow, deny, os.geteuid() if daemon_uid is None else daemon_uid,
                    tuple(dict.fromkeys(names)), tuple(dict.fromkeys(addresses)), log)
    policy.resolved = _resolve(e.host for table in (allow, deny) for r in table.values() if r
                               for e in r.entries)
    return policy


def _resolve(hosts: Iterable[str]) -> dict[str, list[str]]:
    """Host names (no wildcard) -> their addresses, looked up once when the policy is built."""
    out: dict[str, list[str]] = {}
    for host in hosts:
        if not host or host == "*" or "*" in host or host in out:
            continue
        try:
            infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            out[host] = []
            continue
        out[host] = sorted({str(ipaddress.ip_address(str(i[4][0]).split("%", 1)[0])) for i in infos})
    return out

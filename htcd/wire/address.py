"""Daemon addresses in HTCondor's "sinful string" form.

``<127.0.0.1:9618?unix=/var/lib/htcd/run/schedd.sock>``: a TCP endpoint plus, for clients on
the same host, the path of the daemon's Unix socket.  Local clients prefer the Unix socket,
because it gives the daemon the caller's verified uid (FS authentication).  A daemon behind the
host's shared port (``USE_SHARED_PORT``) adds HTCondor's ``sock=<id>``: the TCP endpoint is the
shared port, and ``id`` tells it which daemon to hand the connection to
(``<10.0.0.5:9618?sock=schedd&unix=...>``).  A daemon behind a firewall adds
``CCBID=<ccb-server>#<id>`` (HTCondor's form) and is reached through that CCB server.
"""

from __future__ import annotations

import functools
import ipaddress
import os
import socket
from dataclasses import dataclass
from urllib.parse import parse_qsl, quote, urlencode

from htcd.wire.errors import WireError


@dataclass(frozen=True)
class Address:
    host: str = ""
    port: int = 0
    unix: str | None = None
    sock: str | None = None  # the shared-port id (HTCondor's sock=)
    # ``CCBID=<ccb server host:port>#<id>``: the daemon accepts no inbound connection and is
    # reached by a reverse connection through that CCB server (htcd/wire/ccb.py)
    ccbid: str | None = None

    @classmethod
    def parse(cls, text: str) -> Address:
        """Parse ``<host:port?sock=id&unix=path>``, ``host:port``, ``host`` or a bare socket path."""
        s = text.strip()
        if s.startswith("<") and s.endswith(">"):
            s = s[1:-1]
        if s.startswith("/"):
            return cls(unix=s)
        main, _, query = s.partition("?")
        params = dict(parse_qsl(query)) if query else {}
        host, port = main, 0
        if main.startswith("["):  # [v6]:port
            end = main.find("]")
            host = main[1:end]
            rest = main[end + 1:]
            if rest.startswith(":"):
                port = _port(rest[1:], text)
        elif main.count(":") == 1:
            host, p = main.split(":")
            port = _port(p, text)
        if not host and not params.get("unix"):
            raise WireError(f"bad daemon address {text!r}")
        return cls(host=host, port=port, unix=params.get("unix"), sock=params.get("sock") or None,
                   ccbid=params.get("CCBID") or None)

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        params = {k: v for k, v in (("sock", self.sock), ("unix", self.unix), ("CCBID", self.ccbid)) if v}
        q = "?" + urlencode(params, quote_via=quote, safe="/:#") if params else ""
        return f"<{host}:{self.port}{q}>"

    def local_socket(self) -> str | None:
        """The Unix socket path if the daemon is on this host: the path exists here and the TCP
        address is one of this host's.  Hosts laid out alike have the same socket paths, so the
        path alone would lead a client to its own host's daemon of that name."""
        if self.unix and os.path.exists(self.unix) and (not self.host or is_local_host(self.host)):
            return self.unix
        return None


@functools.lru_cache(maxsize=256)
def is_local_host(host: str) -> bool:
    """Whether ``host`` (an address or a name) is an address of this machine: a loopback
    address, or one a socket can be bound to here."""
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_DGRAM)
    except (OSError, UnicodeError):
        return False
    for family, _type, _proto, _name, sockaddr in infos:
        ip = str(sockaddr[0])
        try:
            if ipaddress.ip_address(ip.split("%", 1)[0]).is_loopback:
                return True
        except ValueError:
            continue
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as probe:
                probe.bind((ip, 0))
            return True
        except OSError:
            continue
    return False


def _port(text: str, whole: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise WireError(f"bad port in daemon address {whole!r}") from None
    if not 0 <= port <= 65535:
        raise WireError(f"port out of range in daemon address {whole!r}")
    return port

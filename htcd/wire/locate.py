"""Finding daemons: the collectors from COLLECTOR_HOST (or the address file), local daemons by
their address files, and the address a daemon binds to.

``COLLECTOR_HOST`` is a comma/space list, as in HTCondor: daemons update every collector in it and
queries fail over from one to the next.  A collector on this host is reached through the Unix
socket named after its port, ``$(DAEMON_SOCKET_DIR)/collector-<port>.sock`` (FS authentication),
one on another host over TCP (a token or certificate, inside TLS); a port of 0 (the personal-pool
default: "any free port") means the collector is found through ``COLLECTOR_ADDRESS_FILE``.
"""

from __future__ import annotations

import functools
import os
import socket

from htcd.config import Config
from htcd.errors import UserError
from htcd.wire.address import Address
from htcd.wire.errors import WireError

COLLECTOR_PORT = 9618


#: path -> (inode, mtime, size, address): a daemon that sends an update per job (the startd) asks
#: for the collector's address that often; a stat tells whether the file changed since.
_ADDRESS_FILES: dict[str, tuple[int, int, int, Address | None]] = {}


def read_address_file(path: str | None) -> Address | None:
    """The address in a daemon's address file (its first line), None when there is none yet; read
    again only when the file was replaced or changed (a restarted daemon writes a new one)."""
    if not path:
        return None
    try:
        st = os.stat(path)
    except OSError:
        _ADDRESS_FILES.pop(path, None)
        return None
    cached = _ADDRESS_FILES.get(path)
    if cached is not None and cached[:3] == (st.st_ino, st.st_mtime_ns, st.st_size):
        return cached[3]
    try:
        with open(path) as f:
            line = f.readline().strip()
    except OSError:
        return None
    try:
        address = Address.parse(line) if line else None
    except WireError:
        address = None
    if address is not None:  # a file still being written is read again next time
        _ADDRESS_FILES[path] = (st.st_ino, st.st_mtime_ns, st.st_size, address)
    return address


def socket_dir(config: Config) -> str:
    """``DAEMON_SOCKET_DIR``; ``auto`` (HTCondor's default) means ``$(LOCK)/sock``."""
    sock_dir = config.get("DAEMON_SOCKET_DIR") or "auto"
    if sock_dir.lower() == "auto":
        sock_dir = os.path.join(config.get("LOCK") or config.get("LOG") or ".", "sock")
    return sock_dir


def collector_socket(config: Config, port: int) -> str:
    """The Unix socket of this host's collector listening on ``port`` (a fixed port)."""
    return os.path.join(socket_dir(config), f"collector-{port}.sock")


def default_port(config: Config) -> int:
    """The port of a COLLECTOR_HOST entry that names none (``COLLECTOR_PORT``, else 9618)."""
    return config.get_int("COLLECTOR_PORT", COLLECTOR_PORT)


def collector_entries(config: Config, knob: str = "COLLECTOR_HOST") -> list[Address]:
    """The entries of COLLECTOR_HOST (or CONDOR_VIEW_HOST) as written: host and port, no socket."""
    out = []
    port = default_port(config)
    for text in config.get_list(knob):
        try:
            out.append(Address.parse(text if ":" in text or text.startswith("<") else f"{text}:{port}"))
        except WireError as exc:
            raise UserError(f"{knob}: {exc}") from None
    return out


@functools.lru_cache(maxsize=64)
def _is_local(host: str) -> bool:
    if host in ("localhost", socket.gethostname(), socket.getfqdn()):
        return True
    try:
        ip = socket.gethostbyname(host)
    except OSError:
        return False
    if ip.startswith("127."):
        return True
    try:
        return ip in socket.gethostbyname_ex(socket.gethostname())[2]
    except OSError:
        return False


def collector_addresses(config: Config, knob: str) -> list[Address]:
    """The collectors a knob lists, each with its Unix socket if it is on this host on a fixed
    port.  An entry with port 0 is this host's collector as its address file names it."""
    out = []
    for addr in collector_entries(config, knob):
        if addr.unix:
            out.append(addr)
        elif addr.port == 0:
            found = read_address_file(config.get("COLLECTOR_ADDRESS_FILE"))
            if found is None:
                raise UserError(f"the collector at {addr.host}:0 has no fixed port and its address file "
                                f"{config.get('COLLECTOR_ADDRESS_FILE')} is missing: is the pool running?")
            out.append(found)
        elif _is_local(addr.host):
            out.append(Address(addr.host, addr.port, collector_socket(config, addr.port), addr.sock))
        else:
            out.append(addr)
    return out


def collectors(config: Config) -> list[Address]:
    """Every collector of the pool, in COLLECTOR_HOST order (the order of failover)."""
    if not config.get_list("COLLECTOR_HOST"):
        found = read_address_file(config.get("COLLECTOR_ADDRESS_FILE"))
        if found is not None:
            return [found]
        raise UserError("COLLECTOR_HOST is not defined, so no collector can be found")
    return collector_addresses(config, "COLLECTOR_HOST")


def collector(config: Config) -> Address:
    """The collector to talk to first: the first one of COLLECTOR_HOST whose socket is on this
    host, else the first one."""
    found = collectors(config)
    return next((a for a in found if a.local_socket()), found[0])


def uses_shared_port(config: Config) -> bool:
    """``USE_SHARED_PORT``: the host's daemons are reached on one TCP port (htcd's default is
    false for now, HTCondor's true: docs/networking.md)."""
    return config.get_bool("USE_SHARED_PORT", False)


def shared_port_port(config: Config) -> int:
    """``SHARED_PORT_PORT``: the TCP port of the host's shared-port daemon.  Its default is
    ``$(COLLECTOR_PORT)``, which htcd leaves undefined (read as 9618): empty, it is that port."""
    return config.get_int("SHARED_PORT_PORT") or default_port(config)


def shared_port_ad_file(config: Config) -> str:
    """``SHARED_PORT_DAEMON_AD_FILE``: written by the shared-port daemon once it listens."""
    return config.get("SHARED_PORT_DAEMON_AD_FILE") or os.path.join(
        config.get("LOCK") or config.get("LOG") or ".", "shared_port_ad")


def collector_uses_shared_port(config: Config) -> bool:
    """Whether a collector on this host is reached through the shared port (as ``collector``)."""
    return uses_shared_port(config) and config.get_bool("COLLECTOR_USES_SHARED_PORT", True)


def local_daemon(config: Config, subsystem: str) -> Address | None:
    return read_address_file(config.get(f"{subsystem}_ADDRESS_FILE"))


def bind_host(config: Config) -> str:
    """The IP address daemons listen on for TCP (and the collector for UDP)."""
    iface = config.get("NETWORK_INTERFACE")
    if iface and iface != "*":
        return iface
    host = config.get("CONDOR_HOST") or ""
    try:
        ip = socket.gethostbyname(host) if host else ""
    except OSError:
        ip = ""
    if ip.startswith("127."):
        return ip
    return config.get("IP_ADDRESS") or "127.0.0.1"


def collector_port(config: Config) -> int:
    """The port a collector listens on: ``COLLECTOR_PORT`` if this collector's config sets it
    (e.g. ``C2.COLLECTOR_PORT`` for the collector started with ``-local-name C2``), else the
    port of the first COLLECTOR_HOST entry (0: any free port)."""
    if config.is_defined("COLLECTOR_PORT"):
        return default_port(config)
    entries = collector_entries(config)
    return entries[0].port if entries else COLLECTOR_PORT

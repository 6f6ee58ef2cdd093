"""Finding daemons: the collector from COLLECTOR_HOST or its address file, local daemons by
their address files, and the address a daemon binds to."""

from __future__ import annotations

import os
import socket

from htcd.config import Config
from htcd.errors import UserError
from htcd.wire.address import Address

COLLECTOR_PORT = 9618


def read_address_file(path: str | None) -> Address | None:
    if not path:
        return None
    try:
        with open(path) as f:
            line = f.readline().strip()
    except OSError:
        return None
    return Address.parse(line) if line else None


def collector(config: Config) -> Address:
    """The collector's address: its address file on this host wins, then COLLECTOR_HOST."""
    found = read_address_file(config.get("COLLECTOR_ADDRESS_FILE"))
    if found is not None:
        return found
    hosts = config.get_list("COLLECTOR_HOST")
    if not hosts:
        raise UserError("COLLECTOR_HOST is not defined, so no collector can be found")
    text = hosts[0]
    addr = Address.parse(text if ":" in text or text.startswith("<") else f"{text}:{COLLECTOR_PORT}")
    if addr.port == 0:
        raise UserError(f"the collector at {text} has no fixed port and its address file "
                        f"{config.get('COLLECTOR_ADDRESS_FILE')} is missing: is the pool running?")
    return addr


def local_daemon(config: Config, subsystem: str) -> Address | None:
    return read_address_file(config.get(f"{subsystem}_ADDRESS_FILE"))


def bind_host(config: Config) -> str:
    """The IP address daemons listen on for TCP."""
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
    hosts = config.get_list("COLLECTOR_HOST")
    if not hosts:
        return COLLECTOR_PORT
    addr = Address.parse(hosts[0] if ":" in hosts[0] else f"{hosts[0]}:{COLLECTOR_PORT}")
    return addr.port


def ensure_dir(path: str, mode: int = 0o755) -> str:
    os.makedirs(path, mode=mode, exist_ok=True)
    return path

"""Authentication and authorization of protocol connections.

Every connection authenticates in the handshake, before any command runs.  This version
offers FS: on a Unix socket the kernel tells the daemon the caller's uid (SO_PEERCRED), which
maps to the identity ``user@UID_DOMAIN``.  TCP connections are refused with a message that
says so, until a network method (TOKEN, SSL) is offered.

Authorization is by level, as HTCondor's.  In this version READ and WRITE are open to every
authenticated identity (the schedd itself checks job ownership), and the daemon-internal
levels are held by the daemons' own uid and root.
"""

from __future__ import annotations

import os
import pwd
import socket
import struct
from dataclasses import dataclass

READ = "READ"
WRITE = "WRITE"
ADMINISTRATOR = "ADMINISTRATOR"
DAEMON = "DAEMON"
NEGOTIATOR = "NEGOTIATOR"
ADVERTISE_MASTER = "ADVERTISE_MASTER"
ADVERTISE_SCHEDD = "ADVERTISE_SCHEDD"
ADVERTISE_STARTD = "ADVERTISE_STARTD"
CONFIG = "CONFIG"
LEVELS = (READ, WRITE, ADMINISTRATOR, DAEMON, NEGOTIATOR, ADVERTISE_MASTER, ADVERTISE_SCHEDD,
          ADVERTISE_STARTD, CONFIG)
OPEN_LEVELS = frozenset({READ, WRITE})

_UCRED = struct.Struct("3i")


@dataclass(frozen=True)
class Identity:
    """Who is on the other end of a connection, as established by ``method``."""

    user: str
    domain: str
    uid: int | None
    method: str
    host: str | None = None  # the peer's IP address on a TCP connection; None on a Unix socket
    scopes: frozenset[str] | None = None  # levels a token limits the identity to; None: no limit
    encrypted: bool = False  # the connection is encrypted and integrity-checked (TLS)

    def __str__(self) -> str:
        return f"{self.user}@{self.domain}"


def peer_uid(sock: socket.socket) -> tuple[int, int, int]:
    """(pid, uid, gid) of the process on the other end of a Unix socket."""
    data = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
    return _UCRED.unpack(data)


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid{uid}"


def fs_identity(sock: socket.socket, uid_domain: str) -> Identity:
    _pid, uid, _gid = peer_uid(sock)
    return Identity(user_name(uid), uid_domain, uid, "FS")


def authorize(identity: Identity, level: str) -> str | None:
    """None if ``identity`` holds ``level``; else the reason it does not, for the client."""
    if level in OPEN_LEVELS:
        return None
    if identity.uid is not None and identity.uid in (0, os.geteuid()):
        return None
    return (f"{identity} (authenticated by {identity.method}) does not hold {level}: "
            f"in this pool {level} is held only by root and the daemons' own user "
            f"{user_name(os.geteuid())}")

"""The shared port's wire: the request that names a daemon, and the hand-over of a connected
socket from the shared-port daemon to that daemon (``docs/networking.md``).

A client of a daemon behind the shared port (its address carries ``sock=<id>``) sends one frame
``{"shared_port": id}`` before its hello.  The shared-port daemon reads exactly that frame, then
passes the TCP socket itself to the daemon over a Unix datagram socket with ``SCM_RIGHTS``
(the daemon's *hand-over socket*, ``$(DAEMON_SOCKET_DIR)/<id>``, as HTCondor names its
per-daemon sockets there): no byte of the connection goes through the shared port after that,
and the daemon sees the client's own address as the peer.
"""

from __future__ import annotations

import array
import contextlib
import os
import re
import socket
from collections.abc import Callable

from htcd.wire.framing import encode

#: The key of the shared-port request frame.
REQUEST_KEY = "shared_port"
#: What an id may be: a file name in DAEMON_SOCKET_DIR, so no path separator and no leading dot.
ID_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")
_FD_BYTES = array.array("i", [0]).itemsize


def request(endpoint: str) -> bytes:
    """The frame a client sends first to reach the daemon ``endpoint`` through a shared port."""
    return encode({REQUEST_KEY: endpoint})


def valid_id(endpoint: str) -> bool:
    return ID_RE.fullmatch(endpoint) is not None


def handover_path(sock_dir: str, endpoint: str) -> str:
    """The hand-over socket of the daemon with shared-port id ``endpoint``."""
    return os.path.join(sock_dir, endpoint)


def send_socket(out: socket.socket, path: str, conn: socket.socket) -> None:
    """Pass ``conn`` to the daemon listening at ``path`` (one datagram carrying the descriptor).
    Raises OSError: FileNotFoundError / ConnectionRefusedError when no daemon listens there,
    BlockingIOError when its queue is full."""
    out.sendmsg([b"c"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [conn.fileno()]))], 0, path)


class HandoverListener:
    """A daemon's hand-over socket: each datagram brings connected TCP sockets, given to
    ``accept`` (on the event loop, from a reader callback: no task while nothing comes)."""

    def __init__(self, path: str, accept: Callable[[socket.socket], None],
                 warn: Callable[[str], None]) -> None:
        self.path = path
        self._accept = accept
        self._warn = warn
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.setblocking(False)
        old = os.umask(0o177)  # only the pool's user (the shared-port daemon's) may hand sockets over
        try:
            self.sock.bind(path)
        finally:
            os.umask(old)

    def readable(self) -> None:
        """Take every pending hand-over; a descriptor that is not a connected TCP socket is closed."""
        while True:
            try:
                _data, ancdata, _flags, _addr = self.sock.recvmsg(16, socket.CMSG_SPACE(4 * _FD_BYTES))
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                self._warn(f"reading the hand-over socket {self.path} failed: {exc}")
                return
            for level, kind, data in ancdata:
                if level != socket.SOL_SOCKET or kind != socket.SCM_RIGHTS:
                    continue
                fds = array.array("i")
                fds.frombytes(data[:len(data) - len(data) % _FD_BYTES])
                for fd in fds:
                    self._adopt(fd)

    def _adopt(self, fd: int) -> None:
        try:
            conn = socket.socket(fileno=fd)
        except OSError as exc:
            os.close(fd)
            self._warn(f"a descriptor handed over on {self.path} is not a socket: {exc}")
            return
        if conn.family not in (socket.AF_INET, socket.AF_INET6) or conn.type != socket.SOCK_STREAM:
            self._warn(f"a socket handed over on {self.path} is not a TCP connection ({conn.family.name}, "
                       f"{conn.type.name}); closed")
            conn.close()
            return
        conn.setblocking(False)
        self._accept(conn)

    def close(self) -> None:
        self.sock.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)

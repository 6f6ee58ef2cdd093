"""The shared port's accept path: read the request naming a daemon, hand the socket over.

Everything here runs in reader callbacks on the event loop, with raw non-blocking sockets (no
stream, no task per connection): a connection costs an accept, one or two peeks, one read of the
request and one ``sendmsg``.  The request is peeked first, so that a connection that names no
daemon (a client that knows the collector only as ``host:9618``) reaches the default daemon
(``SHARED_PORT_DEFAULT_ID``) with its first frame unread.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from dataclasses import dataclass, field

import msgpack

from htcd.wire.framing import HEADER, encode
from htcd.wire.sharedport import REQUEST_KEY, handover_path, send_socket, valid_id

#: A request frame is tiny; a first frame longer than this is a client's hello, not a request.
REQUEST_MAX = 512
#: How long a client may take to send its request (HTCondor's SHARED_PORT default is 20 s too).
REQUEST_TIMEOUT = 20.0


@dataclass
class RouterStats:
    handed: int = 0  # connections handed to a daemon
    unknown: int = 0  # connections naming an id no daemon listens on
    failed: int = 0  # closed before a complete request, timed out, or the daemon's queue full
    pending: int = field(default=0)  # connections whose request is not read yet


class _Pending:
    __slots__ = ("conn", "lowat", "timer")

    def __init__(self, conn: socket.socket) -> None:
        self.conn = conn
        self.lowat = 1
        self.timer: asyncio.TimerHandle | None = None


class Router:
    """Listens on ``(host, port)`` and hands every connection to the daemon it names."""

    def __init__(self, sock_dir: str, default_id: str | None, log: logging.Logger) -> None:
        self.sock_dir = sock_dir
        self.default_id = default_id
        self.log = log
        self.stats = RouterStats()
        self.address: tuple[str, int] = ("", 0)
        self._listener: socket.socket | None = None
        self._out = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._out.setblocking(False)
        self._pending: dict[int, _Pending] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self, host: str, port: int) -> tuple[str, int]:
        self._loop = asyncio.get_running_loop()
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        lsock = socket.socket(family, socket.SOCK_STREAM)
        try:
            lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            lsock.bind((host, port))
            lsock.listen(1024)
        except OSError:
            lsock.close()
            raise
        lsock.setblocking(False)
        self._listener = lsock
        self.address = lsock.getsockname()[:2]
        self._loop.add_reader(lsock.fileno(), self._accept)
        return self.address

    def close(self) -> None:
        if self._listener is not None and self._loop is not None:
            self._loop.remove_reader(self._listener.fileno())
            self._listener.close()
            self._listener = None
        for fd in list(self._pending):
            self._drop(fd)
        self._out.close()

    # -- per connection ---------------------------------------------------------------------
    def _accept(self) -> None:
        assert self._listener is not None and self._loop is not None
        for _ in range(64):  # a burst at a time; the loop comes back for the rest
            try:
                conn, _peer = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                self.log.warning("accept on the shared port failed: %s", exc)
                return
            conn.setblocking(False)
            pending = _Pending(conn)
            fd = conn.fileno()
            self._pending[fd] = pending
            pending.timer = self._loop.call_later(REQUEST_TIMEOUT, self._timed_out, fd)
            if not self._route(pending):
                self._loop.add_reader(fd, self._readable, fd)
        self.stats.pending = len(self._pending)

    def _readable(self, fd: int) -> None:
        pending = self._pending.get(fd)
        if pending is not None:
            self._route(pending)  # once routed, _forget removed the reader

    def _timed_out(self, fd: int) -> None:
        pending = self._pending.get(fd)
        if pending is not None:
            self.stats.failed += 1
            self.log.info("dropped a connection to the shared port: no complete request within %g s",
                          REQUEST_TIMEOUT)
            self._drop(fd)

    def _route(self, p: _Pending) -> bool:
        """Try to route ``p`` with what has arrived; False: wait for more (a low-water mark makes
        the socket readable only once the bytes wanted are there, or at the end of the stream)."""
        conn = p.conn
        try:
            data = conn.recv(HEADER.size + REQUEST_MAX, socket.MSG_PEEK)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return self._give_up(p)
        if not data or len(data) < p.lowat:  # readable below the mark: the client closed
            return self._give_up(p)
        if len(data) < HEADER.size:
            return self._wait(p, HEADER.size)
        (length,) = HEADER.unpack_from(data)
        endpoint: str | None = None
        if length <= REQUEST_MAX:
            need = HEADER.size + length
            if len(data) < need:
                return self._wait(p, need)
            endpoint = _requested(data[HEADER.size:need])
            if endpoint is not None:
                conn.recv(need)  # consume the request: the daemon's first read is the hello
        if endpoint is None:
            endpoint = self.default_id
            if endpoint is None:
                return self._refuse(p, "UNKNOWN_ENDPOINT", "this connection names no daemon (sock=) and the shared "
                                    "port has no default (SHARED_PORT_DEFAULT_ID)")
        if p.lowat != 1:
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT, 1)  # the daemon's reads see every byte
        return self._hand(p, endpoint)

    def _wait(self, p: _Pending, want: int) -> bool:
        p.lowat = want
        try:
            p.conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT, want)
        except OSError:
            return self._give_up(p)
        return False

    def _hand(self, p: _Pending, endpoint: str) -> bool:
        where = f"{self.address[0]}:{self.address[1]}"
        if not valid_id(endpoint):
            return self._refuse(p, "UNKNOWN_ENDPOINT", f"the shared port at {where} has no daemon with id {endpoint!r} "
                                "(not a valid id)")
        path = handover_path(self.sock_dir, endpoint)
        try:
            send_socket(self._out, path, p.conn)
        except (FileNotFoundError, ConnectionRefusedError, NotADirectoryError):
            self.stats.unknown += 1
            self.log.info("a connection asked for %r: no daemon listens at %s", endpoint, path)
            return self._refuse(p, "UNKNOWN_ENDPOINT", f"the shared port at {where} has no daemon with id "
                                f"{endpoint!r} (nothing listens at {path})")
        except BlockingIOError:
            self.stats.failed += 1
            return self._refuse(p, "BUSY", f"the daemon {endpoint!r} behind the shared port at {where} has too "
                                "many connections waiting to be taken; try again later")
        except OSError as exc:
            self.stats.unknown += 1
            self.log.info("handing a connection to %r (%s) failed: %s", endpoint, path, exc)
            return self._refuse(p, "UNKNOWN_ENDPOINT", f"the shared port at {where} cannot reach the daemon with id "
                                f"{endpoint!r} ({path}: {exc.strerror or exc})")
        self.stats.handed += 1
        self._forget(p)
        p.conn.close()  # the daemon holds its own descriptor of the connection now
        return True

    def _refuse(self, p: _Pending, code: str, message: str) -> bool:
        """Say why, drop what the client already sent (so the close sends no reset that could
        overtake the reason), close."""
        with contextlib.suppress(OSError):
            p.conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT, 1)
            p.conn.send(encode({"ok": False, "code": code, "error": message}))
            while p.conn.recv(65536):
                pass
        with contextlib.suppress(OSError):
            p.conn.shutdown(socket.SHUT_WR)
        self._drop(p.conn.fileno())
        return True

    def _give_up(self, p: _Pending) -> bool:
        self.stats.failed += 1
        self._drop(p.conn.fileno())
        return True

    def _forget(self, p: _Pending) -> None:
        fd = p.conn.fileno()
        if self._pending.pop(fd, None) is not None and p.timer is not None:
            p.timer.cancel()
        if self._loop is not None:
            with contextlib.suppress(Exception):
                self._loop.remove_reader(fd)
        self.stats.pending = len(self._pending)

    def _drop(self, fd: int) -> None:
        p = self._pending.get(fd)
        if p is None:
            return
        self._forget(p)
        p.conn.close()


def _requested(body: bytes) -> str | None:
    """The id a request frame names, None when the frame is not a request (a hello)."""
    try:
        msg = msgpack.unpackb(body, raw=False, strict_map_key=False, max_str_len=REQUEST_MAX,
                              max_bin_len=REQUEST_MAX, max_array_len=64, max_map_len=64, max_ext_len=0)
    except (ValueError, msgpack.UnpackException, TypeError):
        return None
    if isinstance(msg, dict) and len(msg) == 1:
        value = msg.get(REQUEST_KEY)
        return value if isinstance(value, str) else None
    return None

"""The collector's side of UDP updates: sessions and the datagram listener.

A session is opened by ``UPDATE_SESSION`` over an authenticated connection and lets its holder
sign datagrams (``htcd/wire/udp.py``).  Datagrams with an unknown session or a bad MAC are
dropped and counted; the count is logged at most once a minute.  The listener reads as many
datagrams as are waiting (within a short time budget) each time the socket is readable, which
costs far less per datagram than asyncio's one-datagram-per-wakeup transport; the budget is short
so that queries, which come over connections, get the loop between two batches: they take
priority over the update stream, as HTCondor's reads of at most MAX_UDP_MSGS_PER_CYCLE datagrams
per DaemonCore cycle give them.

Datagrams that never reach the listener are counted too: the kernel drops what arrives while the
socket's receive buffer (COLLECTOR_SOCKET_BUFSIZE) is full, and keeps the count, with the bytes
waiting (HTCondor's ``DCUdpQueueDepth``), in ``/proc/net/udp``; ``kernel_counts`` reads them for
this socket, so a flood beyond the ingest rate shows as loss in the collector's ad rather than as
silence.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from htcd.pacer import Pacer
from htcd.wire import auth, udp
from htcd.wire.errors import ProtocolError

# Seconds of datagram work per wakeup before other work gets the loop.  Short, so that a query
# waits behind at most this much ingest: at 5,000 updates/s (the loop busy with them) a 10 ms
# budget, checked every 64 datagrams (~13 ms of them), put ~5.8 ms of waiting on each ~100-ad
# query.  Another wakeup costs tens of microseconds: ingest loses a few per cent at most.
READ_BUDGET = 0.002
CHECK_EVERY = 8  # datagrams between two looks at the clock (~0.2 ms each at 100 attributes)
LOG_EVERY = 60.0
SAMPLE_EVERY = 0.5  # seconds between two reads of the kernel's figures while a backlog lasts
PROC_NET_UDP = ("/proc/net/udp", "/proc/net/udp6")


class KernelCounts(NamedTuple):
    """What the kernel reports for one UDP socket."""

    queued: int  # bytes received and not yet read (rx_queue)
    drops: int  # datagrams dropped on the socket since it was made (receive buffer full, mostly)


def kernel_counts(inode: int, tables: tuple[str, ...] = PROC_NET_UDP) -> KernelCounts | None:
    """The kernel's figures for the UDP socket with ``inode``, from ``/proc/net/udp`` (and udp6);
    None where that file is missing (not Linux) or does not list the socket."""
    want = str(inode)
    for path in tables:
        try:
            with open(path) as f:
                next(f, None)  # the header
                for line in f:
                    fields = line.split()
                    # sl local rem st tx_queue:rx_queue tr:when retrnsmt uid timeout inode ref pointer drops
                    if len(fields) >= 13 and fields[9] == want:
                        return KernelCounts(int(fields[4].partition(":")[2], 16), int(fields[12]))
        except (OSError, ValueError):
            continue
    return None


@dataclass
class Session:
    sid: bytes
    key: bytes
    who: auth.Identity  # who opened the session: each datagram's ads are authorized for it
    expires: float  # absolute (time.time)
    lease: float  # seconds unused after which it lapses
    last_used: float = field(default_factory=time.time)


class Sessions:
    def __init__(self) -> None:
        self._by_id: dict[bytes, Session] = {}

    def open(self, who: auth.Identity, duration: float, lease: float) -> Session:
        now = time.time()
        s = Session(secrets.token_bytes(udp.SID_BYTES), secrets.token_bytes(udp.KEY_BYTES), who,
                    now + duration, lease, now)
        self._by_id[s.sid] = s
        return s

    def get(self, sid: bytes, now: float) -> Session | None:
        s = self._by_id.get(sid)
        if s is None:
            return None
        if now > s.expires or now - s.last_used > s.lease:
            del self._by_id[sid]
            return None
        s.last_used = now
        return s

    def sweep(self, now: float | None = None) -> int:
        now = time.time() if now is None else now
        old = [sid for sid, s in self._by_id.items() if now > s.expires or now - s.last_used > s.lease]
        for sid in old:
            del self._by_id[sid]
        return len(old)

    def __len__(self) -> int:
        return len(self._by_id)


@dataclass
class Counters:
    received: int = 0
    accepted: int = 0
    unknown_session: int = 0
    bad_mac: int = 0
    malformed: int = 0
    rejected: int = 0  # signed and well formed, but the update itself was refused (e.g. no Name)


class UdpListener:
    """Reads signed datagrams from ``sock`` and hands each verified message to ``handle``."""

    def __init__(self, sock: socket.socket, sessions: Sessions,
                 handle: Callable[[dict[str, Any], Session], None], log: logging.Logger) -> None:
        self.sock = sock
        self.sessions = sessions
        self.handle = handle
        self.log = log
        self.counters = Counters()
        self._logged = Counters()
        self._last_log = 0.0
        self._noticed: dict[Any, float] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self.queue_peak = 0  # the most bytes seen waiting in the receive queue (DCUdpQueueDepthPeak)
        self.kernel_drops = 0  # the kernel's drop count as last read
        self._logged_kernel_drops = 0
        self._sampled = 0.0

    @classmethod
    def bind(cls, host: str, port: int, bufsize: int, sessions: Sessions,
             handle: Callable[[dict[str, Any], Session], None], log: logging.Logger) -> UdpListener:
        """Listen on ``host:port`` (any free port if that one is taken)."""
        sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM)
        try:
            sock.bind((host, port))
        except OSError:
            sock.bind((host, 0))
        if bufsize > 0:
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, bufsize)
            except OSError as exc:
                log.warning("cannot set the UDP receive buffer to %d bytes: %s", bufsize, exc)
        sock.setblocking(False)
        return cls(sock, sessions, handle, log)

    @property
    def address(self) -> tuple[str, int]:
        return self.sock.getsockname()[:2]

    @property
    def buffer_size(self) -> int:
        return self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)

    def kernel(self) -> KernelCounts | None:
        """Bytes waiting in the socket's receive queue and datagrams the kernel dropped on it;
        the largest queue seen so far is kept in ``queue_peak``."""
        if self.sock.fileno() < 0:
            return None
        found = kernel_counts(os.fstat(self.sock.fileno()).st_ino)
        if found is not None:
            self.queue_peak = max(self.queue_peak, found.queued)
            self.kernel_drops = found.drops
        return found

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self.sock.fileno(), self._ready)

    def close(self) -> None:
        if self._loop is not None:
            self._loop.remove_reader(self.sock.fileno())
            self._loop = None
        self.sock.close()

    def _ready(self) -> None:
        c = self.counters
        budget = Pacer(READ_BUDGET)
        now = time.time()
        n = 0
        while True:
            try:
                data, addr = self.sock.recvfrom(65536)
            except (BlockingIOError, InterruptedError):
                break
            except OSError as exc:  # e.g. an ICMP error queued on the socket
                self.log.debug("UDP receive error: %s", exc)
                continue
            c.received += 1
            self._one(data, addr, now)
            n += 1
            if n % CHECK_EVERY == 0:
                if budget.due():  # datagrams still waiting: a backlog, worth a look at its depth
                    if now - self._sampled >= SAMPLE_EVERY:
                        self._sampled = now
                        self.kernel()
                    break
                now = time.time()
        if c.unknown_session + c.bad_mac + c.malformed != (self._logged.unknown_session + self._logged.bad_mac
                                                           + self._logged.malformed):
            self._log_drops()

    def _one(self, data: bytes, addr: Any, now: float) -> None:
        c = self.counters
        sid = udp.session_of(data)
        if sid is None:
            c.malformed += 1
            return
        session = self.sessions.get(sid, now)
        if session is None:
            c.unknown_session += 1
            self._notice(sid, addr, now)
            return
        payload = udp.verify(data, session.key)
        if payload is None:
            c.bad_mac += 1
            return
        try:
            message = udp.decode_payload(payload)
        except ProtocolError:
            c.malformed += 1
            return
        try:
            self.handle(message, session)
        except Exception as exc:  # a bad update must not stop the listener
            c.rejected += 1
            self.log.debug("UDP update from %s refused: %s", session.who, exc)
            return
        c.accepted += 1

    def _notice(self, sid: bytes, addr: Any, now: float) -> None:
        """Tell the sender (at most once a second per sender) to open a new session."""
        if now - self._noticed.get(addr, 0.0) < 1.0:
            return
        if len(self._noticed) > 10_000:
            self._noticed.clear()
        self._noticed[addr] = now
        with contextlib.suppress(OSError):
            self.sock.sendto(udp.notice(sid), addr)

    def _log_drops(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last_log < LOG_EVERY:
            return
        c, seen = self.counters, self._logged
        kernel = self.kernel_drops - self._logged_kernel_drops
        if not kernel and (c.unknown_session, c.bad_mac, c.malformed) == (seen.unknown_session, seen.bad_mac,
                                                                          seen.malformed):
            return
        self.log.warning("dropped UDP datagrams since the last report: %d with an unknown session, %d with a bad "
                         "MAC, %d malformed, %d by the kernel (receive buffer full: the collector falls behind; "
                         "see COLLECTOR_SOCKET_BUFSIZE)", c.unknown_session - seen.unknown_session,
                         c.bad_mac - seen.bad_mac, c.malformed - seen.malformed, kernel)
        self._logged = Counters(**vars(c))
        self._logged_kernel_drops = self.kernel_drops
        self._last_log = now

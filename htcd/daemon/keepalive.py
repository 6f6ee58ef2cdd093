"""What a daemon owes the master that started it.

Keepalives: a child sends ``DC_CHILDALIVE {pid, timeout}`` to its master every so often, so
that a hung daemon is noticed and restarted.  The timeout it promises is
``<SUBSYS>_NOT_RESPONDING_TIMEOUT``, else ``NOT_RESPONDING_TIMEOUT`` (3600 s); it sends every
``timeout / 3 - 30`` seconds (at least every second), as HTCondor's daemons do.  A daemon was
started by a master when ``HTCD_MASTER_PID`` (set by the master) names its parent; the master's
address comes from ``MASTER_ADDRESS_FILE``.

"Do not restart me": a daemon that exits with status 99 (``DAEMON_NO_RESTART``, HTCondor's
convention) is left off by the master until ``htcd on``.  Every daemon, the master included,
evaluates ``DAEMON_SHUTDOWN`` (and ``DAEMON_SHUTDOWN_FAST``) against its own ad whenever it
would publish it; when true it shuts itself down and exits with 99.  ``shut_down_for_good`` is
the same for code (e.g. a startd drained with ``-exit-on-completion``).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Protocol

from htcd.errors import UserError
from htcd.wire import locate
from htcd.wire.client import acall
from htcd.wire.errors import WireError

if TYPE_CHECKING:
    import asyncio
    import logging
    from collections.abc import Awaitable, Callable

    from htcd.classad import ClassAd
    from htcd.config import Config


class Daemon(Protocol):
    """What the shutdown check and the keepalive use of a daemon (:class:`htcd.daemon.core.Daemon`)."""

    @property
    def subsystem(self) -> str: ...

    @property
    def config(self) -> Config: ...

    @property
    def log(self) -> logging.Logger: ...

    @property
    def stopping(self) -> asyncio.Event: ...

    def request_stop(self, fast: bool = False, peaceful: bool = False) -> None: ...

    def update_interval(self) -> int: ...

    def every(self, interval: Callable[[], float], action: Callable[[], Awaitable[Any]], what: str,
              first: float = 0.0, during_shutdown: bool = False) -> None: ...

    def make_ad(self) -> ClassAd | None: ...

DAEMON_NO_RESTART = 99
NOT_RESPONDING_TIMEOUT = 3600

_exit_status = 0


def exit_status() -> int:
    """The status this process should exit with (0, or 99 after a shutdown for good)."""
    return _exit_status


def set_exit_status(status: int) -> None:
    global _exit_status
    _exit_status = status


def shut_down_for_good(daemon: Daemon, why: str, fast: bool = False) -> None:
    """Shut ``daemon`` down and exit with DAEMON_NO_RESTART, so its master leaves it off."""
    daemon.log.info("%s: shutting down %s; exit status %d tells the master not to restart me",
                    why, "fast" if fast else "gracefully", DAEMON_NO_RESTART)
    set_exit_status(DAEMON_NO_RESTART)
    daemon.request_stop(fast=fast)


def promised_timeout(daemon: Daemon) -> int:
    """Seconds without a keepalive after which the master may call this daemon hung."""
    cfg = daemon.config
    default = cfg.get_int("NOT_RESPONDING_TIMEOUT", NOT_RESPONDING_TIMEOUT)
    return max(1, cfg.get_int(f"{daemon.subsystem}_NOT_RESPONDING_TIMEOUT", default))


def alive_period(timeout: int) -> float:
    """HTCondor's keepalive period for a promised timeout: a third of it less 30 s, at least 1."""
    return float(max(1, timeout // 3 - 30))


def started_by_master() -> bool:
    master = os.environ.get("HTCD_MASTER_PID", "")
    return master.isdigit() and int(master) == os.getppid()


def start(daemon: Daemon) -> None:
    """Called by every daemon once it serves: the DAEMON_SHUTDOWN check and, under a master,
    the keepalive timer."""
    daemon.every(lambda: float(daemon.update_interval()), lambda: _check_shutdown(daemon), "DAEMON_SHUTDOWN")
    if daemon.subsystem != "MASTER" and started_by_master():
        # kept up through a shutdown, which may be long (peaceful): the master still watches for a hang
        daemon.every(lambda: alive_period(promised_timeout(daemon)), lambda: _send_alive(daemon),
                     "keepalive to the master", during_shutdown=True)


async def _send_alive(daemon: Daemon) -> None:
    address = locate.local_daemon(daemon.config, "MASTER")
    if address is None:
        daemon.log.info("DaemonKeepAlive: no master address in %s; keepalive not sent",
                        daemon.config.get("MASTER_ADDRESS_FILE"))
        return
    timeout = promised_timeout(daemon)
    try:
        await acall(address, "DC_CHILDALIVE", timeout=max(5.0, min(60.0, alive_period(timeout))),
                    pid=os.getpid(), timeout_secs=timeout)
    except (WireError, UserError) as exc:
        daemon.log.warning("DaemonKeepAlive: FAILED sending keepalive to the master at %s: %s", address, exc)


async def _check_shutdown(daemon: Daemon) -> None:
    """DAEMON_SHUTDOWN_FAST, then DAEMON_SHUTDOWN, evaluated in this daemon's own ad."""
    from htcd.classad import is_true
    from htcd.config import ConfigError

    for knob, fast in (("DAEMON_SHUTDOWN_FAST", True), ("DAEMON_SHUTDOWN", False)):
        try:
            text = daemon.config.get_expr(knob)
        except ConfigError as exc:
            daemon.log.error("%s is ignored: %s", knob, exc)
            continue
        if not text or daemon.stopping.is_set():
            continue
        ad = daemon.make_ad()
        if ad is not None and is_true(ad.eval_expr(text)):
            shut_down_for_good(daemon, f"{knob} ({text}) is true", fast=fast)
            return

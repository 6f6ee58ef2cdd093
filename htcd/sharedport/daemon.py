"""The SHARED_PORT daemon: listens on SHARED_PORT_PORT and hands each connection to the daemon
it names (``htcd/sharedport/router.py``).  It sends no ad to the collector (HTCondor's does not
either); it writes ``SHARED_PORT_DAEMON_AD_FILE``, whose presence tells the master that the port
is open, and answers ``DC_QUERY_SELF`` on its Unix socket with its counters."""

from __future__ import annotations

import contextlib
import os
from typing import Any

from htcd.classad import ClassAd
from htcd.daemon.core import Daemon
from htcd.errors import UserError
from htcd.sharedport.router import Router
from htcd.wire import locate


def default_id(config: Any) -> str | None:
    """``SHARED_PORT_DEFAULT_ID``; unset: ``collector`` when the collector uses the shared port."""
    value = config.get("SHARED_PORT_DEFAULT_ID")
    if value:
        return str(value)
    return "collector" if config.get_bool("COLLECTOR_USES_SHARED_PORT", True) else None


class SharedPort(Daemon):
    subsystem = "SHARED_PORT"
    ad_type = "SharedPort"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.router: Router | None = None

    def tcp_bind(self) -> tuple[str | None, int]:
        return None, 0  # its command socket is the Unix one; the TCP port is the router's

    def shared_port_id(self) -> str | None:
        return None

    def ad_file(self) -> str:
        return locate.shared_port_ad_file(self.config)

    async def startup(self) -> None:
        host = locate.bind_host(self.config)
        port = locate.shared_port_port(self.config)
        sock_dir = locate.socket_dir(self.config)
        os.makedirs(sock_dir, mode=0o755, exist_ok=True)
        self.router = Router(sock_dir, default_id(self.config), self.log)
        try:
            self.router.start(host, port)
        except OSError as exc:
            raise UserError(f"the shared port cannot listen on {host}:{port} (SHARED_PORT_PORT): "
                            f"{exc.strerror or exc}") from None
        self.log.info("shared port listening on %s:%d; daemons' hand-over sockets in %s; default id %s",
                      host, port, sock_dir, self.router.default_id or "(none)")
        self._write_ad_file()

    async def shutdown(self, fast: bool) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.ad_file())
        if self.router is not None:
            self.router.close()
            self.router = None

    async def publish(self) -> None:
        """Nothing to the collector; the ad file is refreshed with the counters."""
        if self.router is not None:
            self._write_ad_file()

    async def invalidate(self) -> None:
        return None

    def own_ads(self) -> list[ClassAd]:
        return [self._ad()]

    def _ad(self) -> ClassAd:
        ad = self.base_ad(self.ad_type)
        if self.router is not None:
            host, port = self.router.address
            ad["SharedPortAddress"] = f"<{host}:{port}>"
            ad["ForkedChildrenCurrent"] = 0  # HTCondor's counters; htcd forks no child per connection
            ad["RequestsSucceeded"] = self.router.stats.handed
            ad["RequestsFailed"] = self.router.stats.failed + self.router.stats.unknown
            ad["RequestsPendingCurrent"] = self.router.stats.pending
        return ad

    def _write_ad_file(self) -> None:
        path = self.ad_file()
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        tmp = f"{path}.new"
        with open(tmp, "w") as f:
            f.write(self._ad().to_old() + "\n")
        os.replace(tmp, path)

"""How a daemon tells the collector(s) about itself: updates and invalidations of its ads.

Every daemon goes through one ``Advertiser`` so that transport (TCP or UDP), sequence numbers and
the list of collectors live in one place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from htcd.daemon import locate
from htcd.errors import UserError
from htcd.wire.client import acall
from htcd.wire.errors import WireError

if TYPE_CHECKING:
    from htcd.daemon.core import Daemon


class Advertiser:
    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon

    async def call(self, command: str, **args: Any) -> Any:
        """One command at the pool's collector (queries, too)."""
        address = locate.collector(self.daemon.config)
        return await acall(address, command, timeout=20.0, **args)

    async def update(self, ad_type: str, ad: dict[str, str], private: dict[str, str] | None = None) -> bool:
        """Send one ad (wire form); False, logged, if no collector took it."""
        try:
            await self.call("UPDATE_AD", ad_type=ad_type, ad=ad, private=private)
        except (WireError, UserError) as exc:
            self.daemon.log.info("cannot update the collector: %s", exc)
            return False
        return True

    async def invalidate(self, ad_type: str, name: str) -> None:
        try:
            await self.call("INVALIDATE_AD", ad_type=ad_type, name=name)
        except (WireError, UserError) as exc:
            self.daemon.log.info("cannot invalidate at the collector: %s", exc)

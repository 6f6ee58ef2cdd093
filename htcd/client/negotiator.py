"""Talking to the negotiator: its accountant's priorities, factors and usage."""

from __future__ import annotations

from typing import Any

from htcd.client import collector
from htcd.client.daemoncore import call, local_address
from htcd.config import Config
from htcd.errors import UserError
from htcd.wire.address import Address


def address(cfg: Config) -> Address:
    """This host's negotiator (its address file), else the one the collector knows."""
    try:
        return local_address(cfg, "NEGOTIATOR")
    except UserError:
        ads = collector.query(cfg, "Negotiator", None, ["MyAddress"], limit=1)
        if not ads or not ads[0].get_value("MyAddress"):
            raise UserError("userprio: cannot find the negotiator (no address file on this host, and the "
                            "collector knows none)") from None
        return Address.parse(str(ads[0].get_value("MyAddress")))


class Accountant:
    """The negotiator's accountant at ``address``; each call is one request."""

    def __init__(self, address: Address) -> None:
        self.address = address
        self.fail = f"Attempt to talk to the negotiator at {address} failed"

    def set_factor(self, user: str, factor: float) -> None:
        call(self.address, "SET_PRIORITYFACTOR", self.fail, name=user, factor=factor)

    def set_priority(self, user: str, priority: float) -> None:
        call(self.address, "SET_PRIORITY", self.fail, name=user, priority=priority)

    def reset_usage(self, user: str | None) -> None:
        """One user's accumulated usage, or every user's when ``user`` is None."""
        if user is None:
            call(self.address, "RESET_USAGE", self.fail, all=True)
        else:
            call(self.address, "RESET_USAGE", self.fail, name=user)

    def delete_user(self, user: str) -> None:
        call(self.address, "DELETE_USER", self.fail, name=user)

    def priorities(self) -> dict[str, Any]:
        """``GET_PRIORITY``: ``now`` and the ``customers`` records."""
        return dict(call(self.address, "GET_PRIORITY", self.fail))

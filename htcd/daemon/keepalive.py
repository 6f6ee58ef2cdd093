"""A master's child proves it is alive: DC_CHILDALIVE to the master every so often, so that a
hung daemon (no keepalive within NOT_RESPONDING_TIMEOUT) is noticed and restarted."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from htcd.daemon.core import Daemon


def start(daemon: Daemon) -> None:
    """Start the keepalive timer if this daemon was started by a master."""

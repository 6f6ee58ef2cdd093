"""Talking to a master: finding it, and the commands that start, stop and restart daemons."""

from __future__ import annotations

from typing import Any

from htcd.client import collector
from htcd.client.daemoncore import call, local_address
from htcd.config import Config
from htcd.errors import UserError
from htcd.wire.address import Address


def address(cfg: Config, name: str | None = None) -> tuple[Address, str]:
    """(address, how to name it in messages) of this host's master, or of the one the collector
    knows by that Name or Machine (another host's: over TCP, with a token)."""
    if not name:
        return local_address(cfg, "MASTER"), "local master"
    bare = name.replace('"', "")
    ads = collector.query(cfg, "DaemonMaster", f'Name == "{bare}" || Machine == "{bare}"',
                          ["Name", "Machine", "MyAddress"])
    if not ads:
        raise UserError(f"Can't find address for master {name}: the collector knows no master by that "
                        "Name or Machine (htcd status -master lists them)")
    return Address.parse(str(ads[0].get_value("MyAddress"))), f"master {ads[0].get_value('Name')}"


def command(address: Address, command: str, what: str, **args: Any) -> None:
    """One of the master's commands (``DAEMONS_ON``, ``DAEMON_OFF``, ``RESTART``, ``DC_OFF_GRACEFUL``...);
    a failure is a UserError starting with ``what``."""
    call(address, command, what, **args)

"""Talking to a startd: finding a machine's startd, draining it, vacating its claims."""

from __future__ import annotations

import socket
from typing import Any

from htcd.client import collector
from htcd.client.daemoncore import call
from htcd.config import Config
from htcd.errors import UserError
from htcd.wire import locate
from htcd.wire.address import Address


def local_names(cfg: Config) -> set[str]:
    """The names this host goes by (lower case): a startd named so is this host's."""
    names = {socket.getfqdn(), socket.gethostname(), "localhost", "127.0.0.1"}
    for knob in ("FULL_HOSTNAME", "HOSTNAME"):
        value = cfg.get(knob)
        if value:
            names.add(value)
    return {n.lower() for n in names}


def find(cfg: Config, host: str) -> tuple[Address, str]:
    """(address, name) of the startd of ``host``: this host's through its address file, else the
    one the collector knows (another host's: over TCP, with this client's token)."""
    local = locate.local_daemon(cfg, "STARTD")
    bare = host.rsplit("@", 1)[-1].lower()
    if bare in local_names(cfg):
        if local is None:
            raise UserError(f"Can't find address for startd {host}: no startd runs on this host "
                            f"({cfg.get('STARTD_ADDRESS_FILE')} is missing)")
        return local, host
    quoted = host.replace("\\", "\\\\").replace('"', '\\"')
    ads = collector.query(cfg, "Machine", f'Machine == "{quoted}" || Name == "{quoted}"',
                          ["Name", "Machine", "StartdIpAddr", "MyAddress"], limit=1)
    if not ads:
        raise UserError(f"Can't find address for startd {host}: the collector knows no machine of that name")
    text = str(ads[0].get_value("StartdIpAddr") or ads[0].get_value("MyAddress") or "")
    if not text:
        raise UserError(f"Can't find address for startd {host}: its ad has no StartdIpAddr")
    advertised = Address.parse(text)
    name = str(ads[0].get_value("Machine") or host)
    if local is not None and (local.host, local.port) == (advertised.host, advertised.port):
        return local, name
    return advertised, name


def drain(address: Address, **request: Any) -> dict[str, Any]:
    """``DRAIN_JOBS`` (how_fast, on_completion, reason, check, start); the reply has the request id."""
    reply = call(address, "DRAIN_JOBS", f"Attempt to send DRAIN_JOBS to startd {address} failed", **request)
    return reply if isinstance(reply, dict) else {}


def cancel_drain(address: Address, request_id: str | None = None) -> None:
    request: dict[str, Any] = {"request_id": request_id} if request_id else {}
    call(address, "CANCEL_DRAIN_JOBS", f"Attempt to send CANCEL_DRAIN_JOBS to startd {address} failed",
         **request)


def vacate_claims(address: Address, fast: bool, slots: list[str], what: str) -> bool:
    """``VACATE_CLAIMS`` for the named slots (all when empty); whether a claim was vacated.
    ``what`` is the command's name in the failure message."""
    reply = call(address, "VACATE_CLAIMS", f"Attempt to send {what} to startd {address} failed",
                 fast=fast, slots=slots)
    return bool(isinstance(reply, dict) and reply.get("vacated"))

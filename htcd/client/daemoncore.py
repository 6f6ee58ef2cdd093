"""What every daemon answers (HTCondor's DaemonCore commands), and the one-call helper the other
client modules use."""

from __future__ import annotations

from typing import Any

from htcd.config import Config
from htcd.errors import UserError
from htcd.wire import locate
from htcd.wire.address import Address
from htcd.wire.client import Connection, current_security
from htcd.wire.errors import WireError


def call(address: Address, command: str, what: str, **args: Any) -> Any:
    """One request on its own connection; a failure is a UserError starting with ``what``."""
    try:
        with Connection(address) as conn:
            return conn.call(command, **args)
    except WireError as exc:
        raise UserError(f"{what}: {exc}") from None


def local_address(cfg: Config, subsystem: str) -> Address:
    """A daemon of this host, by subsystem, from its address file (the collector may also be
    another host's: the first of COLLECTOR_HOST)."""
    subsys = subsystem.upper()
    addr = locate.collector(cfg) if subsys == "COLLECTOR" else locate.local_daemon(cfg, subsys)
    if addr is None:
        raise UserError(f"no {subsys.lower()} is running for LOCAL_DIR {cfg.get('LOCAL_DIR')} "
                        f"({cfg.get(subsys + '_ADDRESS_FILE')} is missing)")
    return addr


def answers(address: Address, timeout: float = 5.0) -> bool:
    """Whether a daemon accepts a connection at ``address`` (a stale address file says nothing)."""
    try:
        with Connection(address, timeout=timeout):
            return True
    except WireError:
        return False


def query_self(address: Address, what: str, statistics: str | None = None) -> list[dict[str, str]]:
    """``DC_QUERY_SELF``: the daemon's own ads (wire form), with its statistics at the level
    ``statistics`` names when given."""
    request: dict[str, Any] = {"statistics": statistics} if statistics else {}
    return list(call(address, "DC_QUERY_SELF", what, **request) or [])


def security_query(address: Address, levels: list[str], subsys: str,
                   want_version: bool) -> tuple[dict[str, Any], str]:
    """The daemon's ``DC_SEC_QUERY`` answer for ``levels`` (and its version, from ``PING``, when
    asked) over one connection, with whether it was encrypted and the methods this client offers."""
    try:
        with Connection(address) as conn:
            reply = conn.call("DC_SEC_QUERY", levels=levels)
            reply.setdefault("encrypted", bool(conn.hello.get("encrypted")))
            reply["offered"] = current_security().methods
            version = str(conn.call("PING").get("version", "")) if want_version else ""
    except WireError as exc:
        hint = ""
        if address.local_socket() is None:
            hint = ("\nthe daemon has no socket on this host: over TCP this client needs a token (htcd token "
                    "list) or a certificate, and the pool CA (AUTH_SSL_CLIENT_CAFILE)")
        raise UserError(f"failed to make connection to {subsys.lower()} at {address}: {exc}{hint}") from None
    return reply, version


def set_config(address: Address, what: str, persistent: bool, set_: list[str], unset: list[str]) -> None:
    """``DC_CONFIG_PERSIST`` (kept in the daemon's file) or ``DC_CONFIG_RUNTIME`` (in its memory):
    the daemon checks the settings and stores them for its next reconfig."""
    command = "DC_CONFIG_PERSIST" if persistent else "DC_CONFIG_RUNTIME"
    call(address, command, what, set=set_, unset=unset)


def reconfig(address: Address, what: str) -> list[str]:
    """``DC_RECONFIG``; the changed knobs that wait for a restart."""
    reply = call(address, "DC_RECONFIG", what)
    return list(reply.get("pending_restart") or [])

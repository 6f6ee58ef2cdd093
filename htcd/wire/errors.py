"""Exceptions of the protocol layer."""

from __future__ import annotations

from htcd.errors import UserError


class WireError(UserError):
    """A connection could not be made or was broken (daemon down, socket gone)."""


class ProtocolError(WireError):
    """The peer broke the protocol: bad frame, wrong version, garbage."""


class RemoteError(WireError):
    """The daemon refused the command and said why (``code`` is a short keyword)."""

    def __init__(self, message: str, code: str = "FAILED") -> None:
        self.code = code
        super().__init__(message)


class Refused(RemoteError):
    """The daemon turned the connection away before the handshake (too many connections open,
    too many in authentication) and said why; trying again later, or another daemon, may work."""

    def __init__(self, address: object, reason: str, code: str) -> None:
        self.address = address
        self.reason = reason
        super().__init__(f"the daemon at {address} refused the connection: {reason}", code)


#: the codes of a refusal before the handshake (``Refused``)
REFUSAL_CODES = frozenset({"TOO_MANY_CONNECTIONS", "BUSY"})


class CommandError(Exception):
    """Raised by a command handler to refuse a request; the message goes back to the client."""

    def __init__(self, message: str, code: str = "FAILED") -> None:
        self.code = code
        super().__init__(message)

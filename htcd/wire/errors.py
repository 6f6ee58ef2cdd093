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


class CommandError(Exception):
    """Raised by a command handler to refuse a request; the message goes back to the client."""

    def __init__(self, message: str, code: str = "FAILED") -> None:
        self.code = code
        super().__init__(message)

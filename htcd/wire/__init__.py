"""htcd's protocol: framing, addresses, the command table, authentication, client and server.

See docs/protocol.md for the wire format.  Nothing here knows about jobs or slots.
"""

from htcd.wire.address import Address
from htcd.wire.errors import CommandError, ProtocolError, RemoteError, WireError

__all__ = ["Address", "CommandError", "ProtocolError", "RemoteError", "WireError"]

"""Exceptions raised by the p2p package.

Every error raised on purpose carries a human-readable ``reason`` because a refused or
dropped peer must always be told (or at least logged) *why*: a silent disconnect on a LAN
table is indistinguishable from a crash, and players need to know whether to retype a join
code, upgrade their program, or suspect a cheat.
"""

from __future__ import annotations


class P2PError(Exception):
    """Base class of every error raised on purpose by this package."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class FramingError(P2PError):
    """Bytes on a stream that are not a well-formed frame (size, msgpack, types, cipher)."""


class ConnectionClosed(P2PError):
    """The remote end closed the stream (cleanly or at a frame boundary)."""


class HandshakeError(P2PError):
    """A handshake failed; ``refused_by_remote`` tells whether the other side refused us.

    ``transient`` marks a failure that dialling again may cure (the connection was closed
    or reset before the other side said anything of substance: a lossy link, or a busy
    listener that pushed us out), as opposed to a refusal with a reason, which would only
    be repeated.
    """

    def __init__(self, reason: str, *, refused_by_remote: bool = False,
                 transient: bool = False) -> None:
        super().__init__(reason)
        self.refused_by_remote = refused_by_remote
        self.transient = transient


class NotSilkroad(HandshakeError):
    """The address answered, but not with our handshake (a web server, another program):
    dialling again would get the same answer, and the player needs to hear that the
    address is wrong rather than a framing error's numbers."""


class ProtocolError(P2PError):
    """A well-formed frame that breaks the message rules of the current protocol step."""


class LobbyError(P2PError):
    """Joining, seating or starting a table failed."""

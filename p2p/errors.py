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
    """A handshake failed; ``refused_by_remote`` tells whether the other side refused us."""

    def __init__(self, reason: str, *, refused_by_remote: bool = False) -> None:
        super().__init__(reason)
        self.refused_by_remote = refused_by_remote


class ProtocolError(P2PError):
    """A well-formed frame that breaks the message rules of the current protocol step."""


class LobbyError(P2PError):
    """Joining, seating or starting a table failed."""

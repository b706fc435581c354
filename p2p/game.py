"""Game parameters, the game id and the authentication words every player compares.

``game_id = SHA-256(domain ‖ msgpack([[seat, key, name]…], params))`` binds every later
message (mesh purpose, phase-2 envelopes) to exactly this roster and these rules.  Network
addresses are deliberately *not* hashed: they are transport hints that differ per observer
(multi-homed hosts) and may change when a peer restarts.

The authentication words are derived from the game id **and** a nonce per seat that every
peer committed to (at join time) before any nonce was revealed.  Without the commitments a
man-in-the-middle who controls the keys on both sides of a split table could grind keys
until both rosters gave the same few words (a birthday search, ~2^20 tries for 40 bits);
with them the words on each side are fixed by values the attacker had to choose blind, so
a forged table matches with probability 2^-40.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from .errors import ProtocolError
from .framing import pack
from .handshake import PROTOCOL_VERSION
from .mesh import RosterEntry

SHUFFLE_MODES = ("verified", "audit")
MIN_PLAYERS = 3
MAX_PLAYERS = 6
NONCE_LEN = 32
WORD_COUNT = 5


@dataclass(frozen=True)
class GameParams:
    """The table parameters every peer must agree on (all hashed into the game id)."""

    players: int
    variant: str = "base"
    board_digest: bytes = b""
    shuffle_mode: str = "verified"
    protocol_version: int = PROTOCOL_VERSION

    def to_wire(self) -> list[Any]:
        return [
            self.protocol_version,
            self.players,
            self.variant,
            self.board_digest,
            self.shuffle_mode,
        ]

    @classmethod
    def from_wire(cls, obj: Any) -> GameParams:
        """Parse and validate; raises :class:`ProtocolError` naming the bad field."""
        if not isinstance(obj, list) or len(obj) != 5:
            raise ProtocolError("params must be [version, players, variant, digest, shuffle]")
        version, players, variant, digest, mode = obj
        if version != PROTOCOL_VERSION or isinstance(version, bool):
            raise ProtocolError(
                f"params for protocol version {version!r}, we speak {PROTOCOL_VERSION}"
            )
        if not isinstance(players, int) or isinstance(players, bool):
            raise ProtocolError("players must be an integer")
        if not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise ProtocolError(f"{players} players (3..6 allowed)")
        if not isinstance(variant, str) or not 0 < len(variant) <= 32:
            raise ProtocolError("bad variant")
        if not isinstance(digest, bytes) or len(digest) > 64:
            raise ProtocolError("bad board digest")
        if mode not in SHUFFLE_MODES:
            raise ProtocolError(f"shuffle mode {mode!r} (verified/audit)")
        return cls(players, variant, digest, mode, version)


def compute_game_id(roster: Sequence[RosterEntry], params: GameParams) -> bytes:
    """``H(roster ‖ params)``: seat order, keys and names; never addresses."""
    seats = [[e.seat, e.key, e.name] for e in roster]
    return hashlib.sha256(b"silkroad/game-id/v1\0" + pack([seats, params.to_wire()])).digest()


def commitment(nonce: bytes, key: bytes) -> bytes:
    """Commitment to a seat's authentication nonce, bound to the committer's key."""
    return hashlib.sha256(b"silkroad/sas-commit/v1\0" + key + nonce).digest()


@cache
def wordlist() -> tuple[str, ...]:
    """The 256 built-in words (``p2p/data/words.txt``), one per byte value."""
    text = resources.files("p2p").joinpath("data/words.txt").read_text("utf-8")
    words = tuple(w.strip() for w in text.splitlines() if w.strip())
    if len(words) != 256 or len(set(words)) != 256:
        raise RuntimeError("p2p/data/words.txt must hold 256 distinct words")
    return words


def auth_words(game_id: bytes, nonces: Sequence[bytes], count: int = WORD_COUNT) -> tuple[str, ...]:
    """The words every player reads aloud and compares (one byte of hash per word)."""
    digest = hashlib.sha256(b"silkroad/sas/v1\0" + game_id + b"".join(nonces)).digest()
    words = wordlist()
    return tuple(words[b] for b in digest[:count])


@dataclass(frozen=True)
class GameSetup:
    """What the lobby hands to the mesh (and to phase 2): everything agreed at the table."""

    roster: tuple[RosterEntry, ...]
    params: GameParams
    game_id: bytes
    words: tuple[str, ...]
    my_seat: int

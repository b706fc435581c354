"""What a table is given: the agreed setup, and who decides and carries messages for it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from crypto.shuffle import DEFAULT_LAMBDA
from crypto.transcript import signing_key

from ..game import DEFAULT_BOARD, GameParams, game_config
from ..protocol.table_game import SILK_ROAD, Config, Move, TableGame, View


class Transport(Protocol):
    """What the table needs from :class:`p2p.net.mesh.Mesh` (which satisfies it)."""

    def broadcast(self, body: bytes) -> None: ...

    def send(self, seat: int, body: bytes) -> None: ...

    async def next_event(self) -> Any: ...


class Agent(Protocol):
    def choose(self, view: View, legal: list[Move]) -> Move: ...


HumanDecider = Callable[[View, list[Move]], Awaitable[Move]]


@dataclass
class TableSetup:
    """Everything agreed at the table (from the lobby's GameSetup, or meta.json)."""

    game_id: bytes
    keys: list[bytes]
    my_seat: int
    shuffle_mode: str = "audit"
    lam: int = DEFAULT_LAMBDA
    variant: str = "base"
    #: board spec (``"default"`` or board JSON) and the digest the table agreed on
    board: str = DEFAULT_BOARD
    board_digest: bytes = b""
    #: the seat holding the leader pawn first (games 2.. of a series, :mod:`p2p.lobby.series`);
    #: None: the shared coin picks it
    first_leader: int | None = None
    #: the game played (its rules, zones and resolution script: :mod:`p2p.protocol.table_game`)
    game: TableGame = SILK_ROAD

    @property
    def players(self) -> int:
        return len(self.keys)

    def public_keys(self) -> list[Ed25519PublicKey]:
        return [signing_key(k, f"seat {i}'s key") for i, k in enumerate(self.keys)]

    def config(self) -> Config:
        """The agreed engine config (raises :class:`p2p.game.BoardMismatch` for a board
        whose digest is not the agreed one, or an unknown variant)."""
        params = GameParams(self.players, self.variant, self.board_digest, self.shuffle_mode)
        return game_config(params, self.board)._replace(first_holder=self.first_leader)

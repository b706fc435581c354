"""The Resolver interface: everything random or hidden that the public rules cannot decide.

Implementations: :class:`engine.dealer.LocalDealer` (trusted, in-process) and the
cryptographic resolver in p2p/ (mental poker over the network).
"""

from __future__ import annotations

from typing import Protocol

from engine.actions import Action
from engine.state import GameState


class Resolver(Protocol):
    def resolve(self, s: GameState) -> Action:
        """The resolution for a ``RESOLVER`` step: Seed, Dealt, Withdrawn, Stolen, FinalReveal."""
        ...

    def check(self, s: GameState, a: Action) -> None:
        """Verify the hidden claims a player's action makes (colours of goods named)."""
        ...

    def hand(self, s: GameState, seat: int) -> dict[int, int]:
        """The colours of ``seat``'s own goods, as that seat knows them."""
        ...

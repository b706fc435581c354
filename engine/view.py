"""What one player may see: the public state plus their own goods' colours."""

from __future__ import annotations

from typing import NamedTuple

from engine.colours import NCOLOURS
from engine.state import GameState


class PlayerView(NamedTuple):
    """Bots and the UI decide from this only. ``state`` is public information by design
    (it holds no hidden colour), ``hand`` is this seat's private knowledge."""

    state: GameState
    seat: int
    hand: dict[int, int]

    def counts(self) -> list[int]:
        """How many goods of each colour this seat holds."""
        out = [0] * NCOLOURS
        for c in self.hand.values():
            out[c] += 1
        return out

    def public_colours(self, seat: int) -> list[int]:
        """Colour counts of ``seat``'s goods that the whole table knows."""
        out = [0] * NCOLOURS
        known = self.state.known
        for h in self.state.goods[seat]:
            c = known.get(h)
            if c is not None:
                out[c] += 1
        return out

"""The easy bot: the heuristic merchant, made absent-minded.

A beginner's opponent should still play a real game (sell what it holds, buy what it
can sell, never throw money away), so this bot keeps the heuristic's judgement for
performing tiles and the Vizier, and weakens it where a human's slip looks natural:

* it bids too eagerly (a larger share of what leading is worth: the heuristic's share
  was tuned low on purpose, and a larger one loses clearly);
* one time in three it takes a tile, moves the caravan or passes the pawn at random
  instead of by its valuation.

Against three heuristic bots it wins about 14 % of 4-player games (fair share 25 %);
against three random bots nearly all of them.
"""

from __future__ import annotations

from engine.actions import Action
from engine.bots.heuristic import HeuristicBot
from engine.rng import DetRng
from engine.state import Phase
from engine.view import PlayerView

SLIP_IN = 3
"""One decision in this many (taking, moving, passing) is a random one."""

_SLIP_PHASES = (Phase.TAKE, Phase.MOVE, Phase.PASS)


class EasyBot(HeuristicBot):
    kind = "easy"
    bid_share = 0.4

    def __init__(self, seed: bytes | int = 0) -> None:
        super().__init__(seed)
        if isinstance(seed, int):
            seed = seed.to_bytes(16, "big", signed=True)
        self.slips = DetRng(seed, b"silkroad/bot/easy")

    def choose(self, view: PlayerView, legal: list[Action]) -> Action:
        if len(legal) > 1 and view.state.phase in _SLIP_PHASES \
                and self.slips.below(SLIP_IN) == 0:
            return legal[self.slips.below(len(legal))]
        return super().choose(view, legal)

"""The frugal bot: the heuristic bot, but it declines tiles that draw from the bag when it
may.

Why: bag draws (withdraw) are the costliest crypto step, and when every peer of a game runs
in one process each verifies every one; declining them keeps a game of 3–6 peers to
seconds while it still has deals, sales, thefts, Grand Viziers and the final reveal.  The
test tables, the adversary's honest games and the live adversary all play with it."""

from __future__ import annotations

from engine.actions import Action, Buy, Decline, ExchangeDone, ExchangePair, Trade
from engine.bots import make_bot
from engine.view import PlayerView

BAG_ACTIONS = (Buy, Trade, ExchangePair, ExchangeDone)
"""The actions that draw from the bag."""


class FrugalBot:
    """See the module docstring."""

    def __init__(self, seed: int) -> None:
        self.inner = make_bot("heuristic", seed)

    def choose(self, view: PlayerView, legal: list[Action]) -> Action:
        a = self.inner.choose(view, legal)
        if isinstance(a, BAG_ACTIONS) and Decline() in legal:
            return Decline()
        return a

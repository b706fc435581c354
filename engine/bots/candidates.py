"""Which legal actions the search bot simulates: the heuristic's pick and its best rivals.

Searching every legal action wastes the budget: a bid may be any amount up to all the
bidder's money, an "exchange up to 4" offers dozens of pairs, a Crook up to ten
changes. The heuristic bot's own valuations rank them, and only the best few (always
including the heuristic's choice, listed first so that it wins ties) are simulated.
Actions that differ in nothing the game can tell apart (two identical tiles in one
city) are simulated once.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.actions import (
    Action,
    Bid,
    Buy,
    Decline,
    ExchangeDone,
    ExchangePair,
    PassPawn,
    PlayBarterer,
    Sell,
    Steal,
    TakeTile,
    Trade,
    UseCrook,
    Vizier,
    VizierChoice,
)
from engine.bots.heuristic import THIEF_VALUE, Eval, HeuristicBot
from engine.state import GameState, Phase
from engine.view import PlayerView

MAX_WIDTH = 4
"""At most this many actions are simulated in one decision."""

BID_FRACTIONS = (0.25, 0.5, 0.8)
"""Bids tried, as fractions of the heuristic's value of leading (besides passing and
the lowest bid)."""


def candidates(guide: HeuristicBot, view: PlayerView, legal: list[Action],
               width: int = MAX_WIDTH) -> list[Action]:
    """The actions worth simulating, best first by the heuristic; ``legal[...]`` members."""
    first = guide.choose(view, legal)
    ranked = _ranked(guide, view, legal)
    out: list[Action] = [first]
    seen_keys = {_key(view.state, first)}
    for a in ranked:
        if len(out) >= width:
            break
        k = _key(view.state, a)
        if k in seen_keys:
            continue
        seen_keys.add(k)
        out.append(a)
    return out


def _key(s: GameState, a: Action) -> tuple[object, ...]:
    """What tells two actions apart: a tile taken is known by what it shows."""
    if isinstance(a, TakeTile):
        t = s.board.tileset.tiles[a.tile]
        return ("take", t.kind, t.colour, t.give, t.receive, t.n)
    return (type(a).__name__, *a)


def _ranked(guide: HeuristicBot, view: PlayerView, legal: list[Action]) -> list[Action]:
    """``legal`` ordered best first by the heuristic's estimates (stable for ties)."""
    s = view.state
    ph = s.phase
    if ph == Phase.BID:
        return _bids(guide, view, legal)
    if ph == Phase.VIZIER:
        # reveal everything, nothing, or all but one (the other counts rarely differ)
        n = len(legal)
        picks = [n - 1, 0, n - 2]
        return [legal[i] for i in dict.fromkeys(picks) if 0 <= i < n]
    score = _scorer(guide, view)
    order = sorted(range(len(legal)), key=lambda i: (-score(legal[i]), i))
    return [legal[i] for i in order]


def _bids(guide: HeuristicBot, view: PlayerView, legal: list[Action]) -> list[Action]:
    """Pass, the lowest bid, and bids at fractions of what leading is worth."""
    s = view.state
    value = guide.evaluate(view).leading_value(s.board.succ[s.city])
    amounts = [round(value * f) for f in BID_FRACTIONS]
    out: list[Action] = [a for a in legal if not isinstance(a, Bid)]
    bids = {a.amount: a for a in legal if isinstance(a, Bid)}
    lowest = min(bids) if bids else None
    for amount in [lowest, *amounts]:
        if amount is not None and amount in bids and bids[amount] not in out:
            out.append(bids[amount])
    return out


def _scorer(guide: HeuristicBot, view: PlayerView) -> Callable[[Action], float]:
    """A heuristic estimate of each action's immediate gain (higher is better)."""
    s = view.state
    ev = guide.evaluate(view)
    tiles = s.board.tileset.tiles
    t = s.tile

    def score(a: Action) -> float:
        if isinstance(a, TakeTile):
            return ev.best_gain(tiles[a.tile])
        if isinstance(a, PlayBarterer):
            return ev.barterer_value
        if isinstance(a, PassPawn):  # hand the pawn to the weakest rival first
            return -float(s.money[a.to] + len(s.goods[a.to]))
        if isinstance(a, Decline | ExchangeDone):
            return 0.0
        if t is None:
            return 0.0
        if isinstance(a, Sell):
            return ev.sell_gain(t.colour, len(a.handles))
        if isinstance(a, Buy):
            return ev.buy_gain(t.colour, a.count)
        if isinstance(a, Trade):
            return ev.delta([(c, -1) for c in t.give] + [(c, 1) for c in t.receive])
        if isinstance(a, ExchangePair):
            return _pair_gain(ev, s, a) - 0.2
        if isinstance(a, Steal):
            return THIEF_VALUE + 0.01 * (s.money[a.victim] + 2 * len(s.goods[a.victim]))
        if isinstance(a, Vizier):
            return ev.vizier_gain(a.colour) - 1.0
        if isinstance(a, UseCrook):
            return ev.best_gain(t.with_symbol(a.symbol, a.colour)) - ev.crook_value
        if isinstance(a, VizierChoice):
            return float(len(a.handles))
        return 0.0

    return score


def _pair_gain(ev: Eval, s: GameState, a: ExchangePair) -> float:
    counts = list(ev.counts)
    for _, g, r in s.pairs:
        counts[g] -= 1
        counts[r] += 1
    return ev.delta(((a.give, -1), (a.receive, 1)), counts)

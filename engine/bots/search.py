"""The search bot: determinized Monte Carlo over worlds its seat cannot rule out.

For a decision with a real choice it

1. lists a few candidate actions, ranked by the heuristic bot
   (:mod:`engine.bots.candidates`);
2. samples worlds -- a colour for every good its seat cannot see -- consistent with its
   view (:mod:`engine.bots.determinize`);
3. plays every candidate out to the end of the game in the same worlds, with the same
   dealer and policy seeds (common random numbers: the candidates are compared on
   equal luck), every seat played by the heuristic bot (:mod:`engine.bots.rollout`);
4. keeps the better half of the candidates after each round (sequential halving, which
   spends most of a fixed budget on the close contenders) and returns the best by mean
   value, the score margin over the best rival; the heuristic's own pick is credited
   with :data:`PRIOR` points, so that noise alone does not overturn it.

It reads only its :class:`~engine.view.PlayerView`. The budget is a number of playouts,
never a clock, and all randomness comes from a :class:`~engine.rng.DetRng` seeded by the
bot's seed and a digest of the view: the same seed and view give the same decision,
whatever was decided before and whatever the hidden truth is.

The Grand Vizier reveal is simultaneous: the candidates are how many goods to show, and
in each world the other seats' reveals are the heuristic's, made without seeing ours.
"""

from __future__ import annotations

import hashlib

from engine.actions import Action, VizierChoice
from engine.bots.candidates import MAX_WIDTH, candidates
from engine.bots.determinize import HiddenPool, hidden_pool, sample_world
from engine.bots.heuristic import HeuristicBot
from engine.bots.rollout import (
    play_out,
    rollout_policies,
    value_for,
    vizier_reveal,
    world_dealer,
)
from engine.rng import DetRng
from engine.rules import apply
from engine.state import Phase
from engine.view import PlayerView

DEFAULT_BUDGET = 12
"""Playouts per decision at the ``hard`` level: the least tried that clears the product
target (>= 40 % of 4-player games against three heuristic bots) with room to spare. In
100-game runs of ``silkroad bench bots`` it won 63 %, where 8 playouts won 38 % and 16
won 67 %. Over 400 games it won 56 %, deciding in 0.04 s (median) and 0.18 s (99th
percentile); see docs/engine.md."""

MAX_BUDGET = 100_000

PRIOR = 1.0
"""Points of mean playout value the heuristic's own choice is credited with: another
candidate must beat it by more than this (noise alone should not overturn it). At 16
playouts, 1 point won 67 % of 100 4-player games, 0 points 55 % and 2 points 55 %."""


class SearchBot:
    """Determinized Monte Carlo search (see the module docstring)."""

    kind = "search"

    def __init__(self, seed: bytes | int = 0, budget: int = DEFAULT_BUDGET,
                 width: int = MAX_WIDTH, prior: float = PRIOR) -> None:
        if isinstance(seed, int):
            seed = seed.to_bytes(16, "big", signed=True)
        if not 1 <= budget <= MAX_BUDGET:
            raise ValueError(f"the search budget must be 1..{MAX_BUDGET} playouts, not {budget}")
        if width < 1:
            raise ValueError(f"the search width must be at least 1, not {width}")
        self.seed = seed
        self.budget = budget
        self.width = width
        self.prior = prior
        self.playouts = 0
        """Playouts run so far (all decisions): for benchmarks."""

    def choose(self, view: PlayerView, legal: list[Action]) -> Action:
        if len(legal) == 1:
            return legal[0]
        rng = DetRng(self.seed + _digest(view), b"silkroad/bot/search/v1")
        guide = HeuristicBot(rng.bytes_below_256(16))
        cands = candidates(guide, view, legal, min(self.width, self.budget))
        if len(cands) == 1:
            return cands[0]
        return self._halving(view, cands, hidden_pool(view), rng)

    def _halving(self, view: PlayerView, cands: list[Action], pool: HiddenPool,
                 rng: DetRng) -> Action:
        """Sequential halving over ``cands`` with at most ``self.budget`` playouts: each
        round shares what is left of the budget evenly among the rounds still to come
        and the candidates still in, then drops the worse half."""
        k = len(cands)
        rounds = (k - 1).bit_length()  # ceil(log2 k)
        total = [0.0] * k
        count = [0] * k
        alive = list(range(k))
        left = self.budget
        for r in range(rounds):
            worlds = left // ((rounds - r) * len(alive)) or left // len(alive)
            if worlds == 0:
                break
            for _w in range(worlds):
                world = sample_world(pool, rng)
                seed = rng.bytes_below_256(16)
                for i in alive:
                    total[i] += self._playout(view, cands[i], world, seed)
                    count[i] += 1
            left -= worlds * len(alive)
            alive.sort(key=lambda i: (-total[i] / count[i] - (self.prior if i == 0 else 0.0), i))
            if r + 1 < rounds:
                alive = alive[: (len(alive) + 1) // 2]
        return cands[alive[0]]

    def _playout(self, view: PlayerView, action: Action, world: dict[int, int],
                 seed: bytes) -> float:
        """Value for our seat of ``action`` then the policies, in one world."""
        s = view.state.copy()
        dealer = world_dealer(world, seed)
        policies = rollout_policies(s.players, seed)
        if s.phase == Phase.VIZIER:
            assert isinstance(action, VizierChoice)
            apply(s, vizier_reveal(s, dealer, policies, {view.seat: action}))
        else:
            apply(s, action)
        play_out(s, dealer, policies)
        self.playouts += 1
        return value_for(s, view.seat)


def _digest(view: PlayerView) -> bytes:
    """What the seat sees, in 16 bytes: the public state and its own hand."""
    h = hashlib.sha256(view.state.encode())
    h.update(view.seat.to_bytes(1, "big"))
    for handle, colour in sorted(view.hand.items()):
        h.update(handle.to_bytes(4, "big") + colour.to_bytes(1, "big"))
    return h.digest()[:16]

"""Playing a sampled world out to the end: the search bot's simulations.

A world (:mod:`engine.bots.determinize`) fixes every good's colour, so an ordinary
:class:`~engine.dealer.LocalDealer` holding that colour map can resolve the rest of
the game (bag draws, thefts, the final reveal) from its own seeded RNG. Every seat is
then played by a fast policy -- the heuristic bot -- to the final reveal, and the
result is scored for one seat.

Everything here works on copies: the real game state is never touched.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from engine.actions import RESOLVER, Action, VizierChoice
from engine.bots.heuristic import HeuristicBot
from engine.dealer import LocalDealer
from engine.rules import actors, apply, combine_vizier, is_simultaneous, legal_actions_of_actor
from engine.scoring import score_lines
from engine.state import GameState
from engine.view import PlayerView

Policy = Callable[[PlayerView, list[Action]], Action]

MAX_STEPS = 20_000
"""A whole game is a few hundred steps: a playout that runs longer is looping."""

_new_tuple = tuple.__new__


class PlayoutError(RuntimeError):
    """A playout did not reach the end of the game (an engine or policy fault)."""


def world_dealer(world: dict[int, int], seed: bytes) -> LocalDealer:
    """A dealer that knows the sampled colours and draws its randomness from ``seed``."""
    dealer = LocalDealer(seed)
    dealer.colour = dict(world)  # thefts add handles: keep the sample itself intact
    return dealer


def rollout_policies(players: int, seed: bytes) -> list[Policy]:
    """One heuristic bot per seat, seeded from ``seed`` (the same for every candidate)."""
    return [HeuristicBot(seed + bytes((p,))).choose for p in range(players)]


def vizier_reveal(s: GameState, dealer: LocalDealer, policies: Sequence[Policy],
                  fixed: dict[int, VizierChoice]) -> Action:
    """The simultaneous Grand Vizier reveal: ``fixed`` choices, the policies' for the rest."""
    choices = dict(fixed)
    for p in actors(s):
        if p not in choices:
            hand = dealer.hand(s, p)
            view = _new_tuple(PlayerView, (s, p, hand))
            c = policies[p](view, legal_actions_of_actor(s, p, hand))
            assert isinstance(c, VizierChoice)
            choices[p] = c
    return combine_vizier(s, choices)


def play_out(s: GameState, dealer: LocalDealer, policies: Sequence[Policy]) -> GameState:
    """Play ``s`` (changed in place) to the end with ``policies``; returns it."""
    resolve, hand_of = dealer.resolve, dealer.hand
    for _ in range(MAX_STEPS):
        acts = actors(s)
        if not acts:
            return s
        p = acts[0]
        if p == RESOLVER:
            a = resolve(s)
        elif is_simultaneous(s):
            a = vizier_reveal(s, dealer, policies, {})
        else:
            hand = hand_of(s, p)
            a = policies[p](_new_tuple(PlayerView, (s, p, hand)),
                            legal_actions_of_actor(s, p, hand))
        apply(s, a)
    raise PlayoutError(f"a playout ran past {MAX_STEPS} steps")


def value_for(s: GameState, seat: int) -> float:
    """How good the end of ``s`` is for ``seat``: its score margin over the best rival
    (positive: it won). A bonus for winning on top of the margin was tried and lost
    strength: it adds variance between playouts that the margin does not have."""
    assert s.final is not None
    totals = [line.total for line in score_lines(s.money, s.final)]
    return float(totals[seat] - max(t for p, t in enumerate(totals) if p != seat))

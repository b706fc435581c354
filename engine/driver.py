"""Plays one engine-only game: agents choose, the resolver resolves, the engine applies."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from engine.actions import RESOLVER, Action, VizierChoice
from engine.resolver import Resolver
from engine.rules import (
    actors,
    apply,
    combine_vizier,
    is_simultaneous,
    legal_actions_of_actor,
)
from engine.state import Config, GameState
from engine.view import PlayerView

_new_tuple = tuple.__new__
"""``_new_tuple(PlayerView, (state, seat, hand))`` builds a view without the generated
NamedTuple ``__new__`` (argument parsing): half the cost, once per decision."""


class Agent(Protocol):
    def choose(self, view: PlayerView, legal: list[Action]) -> Action: ...


def play_game(
    config: Config,
    resolver: Resolver,
    agents: Sequence[Agent],
    on_step: Callable[[GameState, Action], None] | None = None,
) -> tuple[GameState, list[Action]]:
    """Run a whole game; returns the final state and the action log (the save file).

    This loop is the simulator's hot path: bound methods are looked up once, and
    ``legal_actions_of_actor`` skips re-deriving the actors computed just above.
    """
    s = GameState(config)
    log: list[Action] = []
    append = log.append
    resolve, check, hand_of = resolver.resolve, resolver.check, resolver.hand
    chooses = [agent.choose for agent in agents]
    while True:
        acts = actors(s)
        if not acts:
            break
        p = acts[0]
        if p == RESOLVER:
            a = resolve(s)
        elif is_simultaneous(s):
            choices: dict[int, VizierChoice] = {}
            for p in acts:
                hand = hand_of(s, p)
                view = _new_tuple(PlayerView, (s, p, hand))
                c = chooses[p](view, legal_actions_of_actor(s, p, hand))
                assert isinstance(c, VizierChoice)
                choices[p] = c
            a = combine_vizier(s, choices)
            check(s, a)
        else:
            hand = hand_of(s, p)
            view = _new_tuple(PlayerView, (s, p, hand))
            a = chooses[p](view, legal_actions_of_actor(s, p, hand))
            check(s, a)
        apply(s, a)
        append(a)
        if on_step is not None:
            on_step(s, a)
    return s, log

"""Plays one engine-only game: agents choose, the resolver resolves, the engine applies."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from engine.actions import RESOLVER, Action, VizierChoice
from engine.resolver import Resolver
from engine.rules import actors, apply, combine_vizier, is_simultaneous, legal_actions
from engine.state import Config, GameState
from engine.view import PlayerView


class Agent(Protocol):
    def choose(self, view: PlayerView, legal: list[Action]) -> Action: ...


def play_game(
    config: Config,
    resolver: Resolver,
    agents: Sequence[Agent],
    on_step: Callable[[GameState, Action], None] | None = None,
) -> tuple[GameState, list[Action]]:
    """Run a whole game; returns the final state and the action log (the save file)."""
    s = GameState(config)
    log: list[Action] = []
    while True:
        acts = actors(s)
        if not acts:
            break
        if acts[0] == RESOLVER:
            a = resolver.resolve(s)
        elif is_simultaneous(s):
            choices: dict[int, VizierChoice] = {}
            for p in acts:
                view = PlayerView(s, p, resolver.hand(s, p))
                c = agents[p].choose(view, legal_actions(s, p, view.hand))
                assert isinstance(c, VizierChoice)
                choices[p] = c
            a = combine_vizier(s, choices)
            resolver.check(s, a)
        else:
            p = acts[0]
            view = PlayerView(s, p, resolver.hand(s, p))
            a = agents[p].choose(view, legal_actions(s, p, view.hand))
            resolver.check(s, a)
        apply(s, a)
        log.append(a)
        if on_step is not None:
            on_step(s, a)
    return s, log

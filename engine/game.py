"""The engine's facade: start a game, act, score, replay. OpenSpiel-like and pure."""

from __future__ import annotations

from collections.abc import Iterable

from engine.actions import Action
from engine.errors import IllegalAction
from engine.rules import (
    actors,
    allowed_vizier_colours,
    apply,
    combine_vizier,
    forced_action,
    is_over,
    is_simultaneous,
    legal_actions,
    vizier_payouts,
)
from engine.scoring import ScoreLine, score_lines, winners_of
from engine.state import Config, GameState, Phase, make_config

__all__ = [
    "Config",
    "GameState",
    "IllegalAction",
    "Phase",
    "actors",
    "allowed_vizier_colours",
    "apply",
    "combine_vizier",
    "forced_action",
    "hash_chain",
    "is_over",
    "is_simultaneous",
    "legal_actions",
    "make_config",
    "new_game",
    "replay",
    "score_table",
    "scores",
    "vizier_payouts",
    "winners",
]


def new_game(config: Config) -> GameState:
    """A table before its seed: the first step is the resolver's ``Seed``."""
    return GameState(config)


def score_table(s: GameState) -> list[ScoreLine]:
    if s.final is None:
        raise ValueError("scores exist only after the final reveal")
    return score_lines(s.money, s.final)


def scores(s: GameState) -> list[int]:
    return [line.total for line in score_table(s)]


def winners(s: GameState) -> list[int]:
    """Seats with the highest score (ties share the victory)."""
    return winners_of(scores(s))


def replay(config: Config, log: Iterable[Action]) -> GameState:
    """Rebuild the state from an action log (the save file). Raises on an illegal entry."""
    s = new_game(config)
    for i, a in enumerate(log):
        try:
            apply(s, a)
        except IllegalAction as exc:
            raise IllegalAction(exc.rule, f"log entry {i}: {exc.message}") from None
    return s


def hash_chain(config: Config, log: Iterable[Action]) -> list[bytes]:
    """The state hash after every logged action: compared across processes and peers."""
    s = new_game(config)
    out = []
    for a in log:
        apply(s, a)
        out.append(s.hash())
    return out

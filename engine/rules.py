"""The rules of Silk Road as a state machine: who acts, what is legal, and apply.

``apply`` validates an action completely before changing anything, so an illegal
action raises :class:`IllegalAction` (naming the rule) and leaves the state as it
was. Steps with exactly one public choice (a forced pass of the pawn, a single arrow,
a bidder who cannot outbid, ...) happen by themselves inside ``apply``; they are
derived, never logged, so replaying the log reproduces them.

The rules live in four modules, one concern each: :mod:`engine.phase_rules` (who acts,
and the predicates shared by "legal" and "accepted"), :mod:`engine.legal` (the legal
and the forced actions), :mod:`engine.flow` (set-up, auction, movement, a market's flow)
and :mod:`engine.perform` (performing tiles and the resolutions that complete them).
This module is their front: ``apply`` and the names the rest of the project imports.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine import flow, perform
from engine.actions import Action, PassPawn
from engine.errors import fail
from engine.flow import pawn_to
from engine.legal import (
    Hand,
    combine_vizier,
    forced_action,
    legal_actions,
    legal_actions_of_actor,
)
from engine.perform import VIZIER_FIRST, VIZIER_SECOND, vizier_payouts
from engine.phase_rules import (
    PH_OVER,
    actors,
    allowed_vizier_colours,
    is_over,
    is_simultaneous,
    vizier_actors,
)
from engine.state import GameState

__all__ = [
    "VIZIER_FIRST",
    "VIZIER_SECOND",
    "Hand",
    "actors",
    "allowed_vizier_colours",
    "apply",
    "combine_vizier",
    "forced_action",
    "is_over",
    "is_simultaneous",
    "legal_actions",
    "legal_actions_of_actor",
    "vizier_actors",
    "vizier_payouts",
]

_HANDLERS: dict[tuple[int, type], Callable[[GameState, Any], None]] = {
    **flow.HANDLERS,
    **perform.HANDLERS,
}
"""Every (phase, action type) the rules accept, and the handler that applies it."""


def apply(s: GameState, a: Action) -> None:
    """Validate ``a`` against the rules and apply it in place, then any forced steps."""
    handler = _HANDLERS.get((s.phase, type(a)))
    if handler is None:
        if s.phase == PH_OVER:
            fail("game.over", "the game is over")
        fail(
            "turn.phase",
            f"{type(a).__name__} is not an action of the {s.phase.name.lower()} step",
        )
    handler(s, a)
    _auto(s)


def _auto(s: GameState) -> None:
    while True:
        f = forced_action(s)
        if f is None:
            return
        if isinstance(f, PassPawn):
            pawn_to(s, f.to)
        else:
            _HANDLERS[(s.phase, type(f))](s, f)

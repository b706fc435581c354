"""The first leader of a game: drawn from the seed, unless the table agreed on it (games
2.. of a series rotate it, docs/rules.md "A series at one table")."""

from __future__ import annotations

from typing import Any

import pytest

from engine.actions import Seed
from engine.errors import IllegalAction
from engine.game import new_game
from engine.rules import apply
from engine.state import GameState, make_config


def _seeded(players: int, seed: bytes, first: int | None) -> GameState:
    s = new_game(make_config(players)._replace(first_holder=first))
    apply(s, Seed(seed))
    return s


def test_the_seed_draws_the_first_leader_when_none_is_agreed() -> None:
    picks = {_seeded(4, bytes([i]) * 32, None).holder for i in range(40)}
    assert picks == {0, 1, 2, 3}  # every seat can be drawn


@pytest.mark.parametrize("first", [0, 1, 2])
def test_an_agreed_first_leader_holds_the_pawn_and_the_layout_is_the_seeds(first: int
                                                                          ) -> None:
    seed = b"\x07" * 32
    drawn = _seeded(3, seed, None)
    agreed = _seeded(3, seed, first)
    assert agreed.holder == first
    # only the holder differs: the tiles are laid out by the same seed stream
    assert agreed.layout == drawn.layout and agreed.money == drawn.money


@pytest.mark.parametrize("first", [-1, 3, True, "1"])
def test_a_first_leader_that_is_not_a_seat_is_refused(first: Any) -> None:
    s = new_game(make_config(3)._replace(first_holder=first))
    with pytest.raises(IllegalAction, match="first leader"):
        apply(s, Seed(b"\x01" * 32))

"""RULES.md "End of game and scoring": final reveal, majorities, shared victory."""

from __future__ import annotations

import pytest
from engine_kit import IVORY, SILK, SPICE, assert_illegal, resolve, set_hands

from engine.actions import Dealt, FinalReveal, PassBid
from engine.dealer import LocalDealer
from engine.game import score_table, scores, winners
from engine.rules import actors, legal_actions
from engine.scoring import score_lines, winners_of
from engine.state import GameState, Phase

Table = tuple[GameState, LocalDealer]


def test_majority_needs_strictly_more_and_at_least_one() -> None:
    lines = score_lines(
        [10, 3, 0],
        (
            (0, 0, 1, 3),  # ivory x2, silk x1, jewels x1
            (0, 0, 1, 2),  # ivory x2, silk x1, fruit x1
            (4,),  # spice x1
        ),
    )
    # ivory 2-2 and silk 1-1: tied, nobody; fruit: seat 1; jewels: seat 0; spice: seat 2.
    assert [ln.majorities for ln in lines] == [(3,), (2,), (4,)]
    assert [ln.per_colour for ln in lines] == [(2, 1, 0, 1, 0), (2, 1, 1, 0, 0), (0, 0, 0, 0, 1)]
    assert [ln.total for ln in lines] == [10 + 4 + 2, 3 + 4 + 2, 0 + 1 + 2]
    assert [ln.goods for ln in lines] == [4, 4, 1]


def test_no_goods_no_majority() -> None:
    lines = score_lines([5, 5, 5], ((), (), ()))
    assert all(ln.majorities == () and ln.total == 5 for ln in lines)
    assert winners_of([ln.total for ln in lines]) == [0, 1, 2], "ties share the victory"


def test_winners_single_and_shared() -> None:
    assert winners_of([3, 9, 4]) == [1]
    assert winners_of([9, 2, 9, 1]) == [0, 2]


def _to_reveal(s: GameState) -> None:
    s.phase = Phase.REVEAL
    s.city = s.board.end


def test_final_reveal_scores_and_ends(t3: Table) -> None:
    s, d = t3
    set_hands(s, d, {0: [SILK, SILK, IVORY], 1: [SILK, SPICE], 2: [IVORY]})
    s.money = [5, 12, 9]
    s.crooks[2] = 2  # unused Crooks and Barterers are worth nothing
    s.barterers[2] = [1]
    _to_reveal(s)
    assert actors(s) == (-1,)
    fr = resolve(s, d)
    assert fr == FinalReveal(((SILK, SILK, IVORY), (SILK, SPICE), (IVORY,)))
    assert s.phase == Phase.OVER and actors(s) == ()
    # seat 0: 5 + 3 goods + silk majority (2 > 1) = 10; ivory tied 1-1 with seat 2.
    # seat 1: 12 + 2 + spice majority = 16; seat 2: 9 + 1 = 10.
    assert scores(s) == [10, 16, 10]
    assert winners(s) == [1]
    assert score_table(s)[0].majorities == (SILK,)
    assert legal_actions(s, 0) == []
    assert_illegal(s, PassBid(), "game.over")
    assert_illegal(s, Dealt(), "game.over")


def test_shared_victory(t3: Table) -> None:
    s, d = t3
    set_hands(s, d, {0: [SILK], 1: [IVORY], 2: []})
    s.money = [10, 10, 13]
    _to_reveal(s)
    resolve(s, d)
    assert scores(s) == [13, 13, 13] and winners(s) == [0, 1, 2]


def test_final_reveal_is_validated(t3: Table) -> None:
    s, d = t3
    set_hands(s, d, {0: [SILK, IVORY], 1: [], 2: [SPICE]})
    h = s.goods[0][0]
    s.known[h] = SILK
    _to_reveal(s)
    assert_illegal(s, FinalReveal(((SILK, IVORY), ())), "reveal.shape")
    assert_illegal(s, FinalReveal(((SILK,), (), (SPICE,))), "reveal.shape")
    assert_illegal(s, FinalReveal(((SILK, 5), (), (SPICE,))), "reveal.colour")
    assert_illegal(s, FinalReveal(((IVORY, IVORY), (), (SPICE,))), "reveal.colour")
    with pytest.raises(ValueError, match="only after the final reveal"):
        score_table(s)

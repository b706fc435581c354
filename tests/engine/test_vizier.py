"""RULES.md "Grand Vizier": colour locks, the simultaneous reveal, every payout tie case."""

from __future__ import annotations

import pytest
from engine_kit import (
    FRUIT,
    IVORY,
    JEWELS,
    SILK,
    SPICE,
    VIZIER,
    assert_illegal,
    assert_lie,
    of,
    perform,
    set_hands,
    tile_ids,
)

from engine.actions import Decline, Vizier, VizierChoice, VizierReveals
from engine.dealer import LocalDealer
from engine.rules import (
    actors,
    allowed_vizier_colours,
    apply,
    combine_vizier,
    is_simultaneous,
    legal_actions,
    vizier_payouts,
)
from engine.state import GameState, Phase

Table = tuple[GameState, LocalDealer]


@pytest.mark.parametrize(
    ("counts", "pay"),
    [
        ([3, 1, 0, 0], [5, 3, 0, 0]),  # a first and a second
        ([3, 2, 1, 0], [5, 3, 0, 0]),  # only one second place
        ([2, 2, 1, 0], [5, 5, 0, 0]),  # tied firsts: 5 each, no second
        ([2, 2, 2, 2], [5, 5, 5, 5]),  # all tied
        ([1, 1, 0, 0], [5, 5, 0, 0]),
        ([4, 1, 1, 0], [5, 3, 3, 0]),  # one first, tied seconds: 3 each
        ([4, 1, 1, 1], [5, 3, 3, 3]),
        ([1, 0, 0, 0], [5, 0, 0, 0]),  # nobody else revealed: no second
        ([0, 0, 0, 0], [0, 0, 0, 0]),  # Decision: revealing none never earns
        ([0, 0, 2, 0], [0, 0, 5, 0]),
        ([0, 3, 0, 0, 0, 3], [0, 5, 0, 0, 0, 5]),
        ([5, 4, 4, 3, 0, 0], [5, 3, 3, 0, 0, 0]),
        ([2, 0, 1], [5, 0, 3]),
    ],
)
def test_payouts(counts: list[int], pay: list[int]) -> None:
    assert vizier_payouts(counts) == pay


def _vizier(s: GameState, d: LocalDealer, seat: int = 0) -> None:
    perform(s, d, seat, tile_ids(s.board, VIZIER)[0])


def test_reveal_round_pays_and_makes_goods_public(t4: Table) -> None:
    s, d = t4
    set_hands(s, d, {0: [SILK, SILK, IVORY], 1: [SILK], 2: [SILK, SILK], 3: []})
    _vizier(s, d)
    assert legal_actions(s, 0, d.hand(s, 0)) == [Decline(), *(Vizier(c) for c in range(5))]
    apply(s, Vizier(SILK))
    assert s.locked == [SILK] and s.phase == Phase.VIZIER and is_simultaneous(s)
    assert actors(s) == (0, 1, 2), "everyone holding goods decides, the taker included"
    silk0, silk1, silk2 = of(s, d, 0, SILK), of(s, d, 1, SILK), of(s, d, 2, SILK)
    assert legal_actions(s, 1, d.hand(s, 1)) == [VizierChoice(()), VizierChoice(tuple(silk1))]
    assert legal_actions(s, 3, {}) == []
    with pytest.raises(ValueError):
        combine_vizier(s, {0: VizierChoice(tuple(silk0))})  # still waiting for seats 1, 2
    a = combine_vizier(
        s,
        {0: VizierChoice(tuple(silk0)), 1: VizierChoice(tuple(silk1)),
         2: VizierChoice(tuple(silk2[:1]))},
    )
    assert a == VizierReveals((tuple(silk0), tuple(silk1), tuple(silk2[:1]), ()))
    d.check(s, a)
    apply(s, a)
    # 2 revealed: first (5); 1 and 1: tied seconds (3 each); seat 2 held one back.
    assert s.money == [15, 13, 13, 10]
    assert {h: s.known[h] for h in (*silk0, *silk1, silk2[0])} == dict.fromkeys(
        (*silk0, *silk1, silk2[0]), SILK
    )
    assert silk2[1] not in s.known
    assert len(s.goods[0]) == 3, "revealed goods stay with their owners"
    assert s.phase == Phase.PASS and s.vizier_colour == -1


def test_known_goods_are_offered_first_and_wrong_colours_rejected(t4: Table) -> None:
    s, d = t4
    set_hands(s, d, {0: [SPICE, SPICE, FRUIT], 1: [FRUIT]})
    sp = of(s, d, 0, SPICE)
    (fr,) = of(s, d, 0, FRUIT)
    s.known[sp[1]] = SPICE
    s.known[fr] = FRUIT
    _vizier(s, d)
    apply(s, Vizier(SPICE))
    assert legal_actions(s, 0, d.hand(s, 0))[1] == VizierChoice((sp[1],))
    n = s.players
    assert_illegal(s, VizierReveals(((fr,), (), (), ())), "goods.colour")
    assert_illegal(s, VizierReveals(((s.goods[1][0],), (), (), ())), "goods.owner")
    assert_illegal(s, VizierReveals(((),) * (n - 1)), "vizier.reveal")
    # A hidden good falsely claimed to be spice passes the public check; the dealer catches it.
    lie = VizierReveals(((), (s.goods[1][0],), (), ()))
    assert_lie(s, d, lie)


def test_colour_locks_and_the_sixth_vizier(t4: Table) -> None:
    s, d = t4
    set_hands(s, d, {0: [], 1: [], 2: [], 3: []})  # nobody holds goods: reveals are empty
    for k, c in enumerate([JEWELS, IVORY, SPICE, SILK, FRUIT]):
        _vizier(s, d)
        allowed = [x for x in range(5) if x not in [JEWELS, IVORY, SPICE, SILK, FRUIT][:k]]
        assert allowed_vizier_colours(s) == allowed
        assert legal_actions(s, 0, {}) == [Decline(), *(Vizier(x) for x in allowed)]
        if k:
            assert_illegal(s, Vizier(JEWELS), "vizier.colour")
        apply(s, Vizier(c))
        assert s.phase == Phase.PASS, "no goods anywhere: the reveal happens by itself"
    # Every colour is taken: the 6th Grand Vizier may choose any colour.
    _vizier(s, d)
    assert allowed_vizier_colours(s) == [0, 1, 2, 3, 4]
    apply(s, Vizier(JEWELS))
    assert s.money == [10, 10, 10, 10]


def test_declined_vizier_locks_nothing(t4: Table) -> None:
    s, d = t4
    _vizier(s, d)
    apply(s, Decline())
    assert s.locked == [] and s.phase == Phase.PASS
    _vizier(s, d, seat=1)
    assert legal_actions(s, 1, d.hand(s, 1))[1:] == [Vizier(c) for c in range(5)]
    assert_illegal(s, Vizier(5), "vizier.colour")
    assert_illegal(s, Vizier(-1), "vizier.colour")


def test_nobody_reveals_nobody_earns(t4: Table) -> None:
    s, d = t4
    _vizier(s, d)
    apply(s, Vizier(SPICE))
    apply(s, VizierReveals(((),) * 4))
    assert s.money == [10, 10, 10, 10] and s.locked == [SPICE]

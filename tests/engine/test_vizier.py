"""RULES.md "Grand Vizier": colour locks, the simultaneous reveal, every payout tie case,
and the Vizier's marker (a good of its colour set aside from the bag; docs/rules.md, "The
Grand Vizier's marker"), with the rule off as networked games before version 5 had it."""

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
    bag_of,
    colour_counts,
    hoard,
    of,
    perform,
    resolve,
    set_hands,
    started,
    tile_ids,
)

from engine.actions import RESOLVER, Decline, Vizier, VizierChoice, VizierReveals, Withdrawn
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
from engine.state import MARKER, GameState, Phase

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
    # the Vizier's marker: one silk is asked of the bag, as a purchase of one would be
    assert s.phase == Phase.WITHDRAW and s.vizier_colour == -1
    assert actors(s) == (RESOLVER,) and s.pending == (MARKER, (SILK,), True)
    resolve(s, d)
    assert s.phase == Phase.PASS and s.set_aside == [SILK]


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
        # no goods anywhere: the reveal happens by itself; the marker is the bag's
        assert s.phase == Phase.WITHDRAW, "no goods anywhere: the reveal happens by itself"
        resolve(s, d)
        assert s.phase == Phase.PASS
    # Every colour is taken: the 6th Grand Vizier may choose any colour.
    _vizier(s, d)
    assert allowed_vizier_colours(s) == [0, 1, 2, 3, 4]
    apply(s, Vizier(JEWELS))
    resolve(s, d)
    assert s.money == [10, 10, 10, 10]
    assert s.set_aside == [JEWELS, IVORY, SPICE, SILK, FRUIT, JEWELS]
    expected = [14] * 5
    expected[JEWELS] = 13
    assert colour_counts(d, s.bag) == expected and len(s.bag) == 75 - 6


def test_declined_vizier_locks_nothing(t4: Table) -> None:
    s, d = t4
    _vizier(s, d)
    apply(s, Decline())
    assert s.locked == [] and s.phase == Phase.PASS and s.set_aside == []
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
    resolve(s, d)
    assert s.set_aside == [SPICE], "the marker does not depend on what was revealed"


# --------------------------------------------------------------------------------------
# The Grand Vizier's marker
# --------------------------------------------------------------------------------------
def _revealed(s: GameState, d: LocalDealer, colour: int, seat: int = 0) -> None:
    """Seat ``seat`` plays a Grand Vizier on ``colour``; everyone reveals all of it."""
    _vizier(s, d, seat)
    apply(s, Vizier(colour))
    reveals = tuple(tuple(of(s, d, p, colour)) for p in range(s.players))
    d.check(s, VizierReveals(reveals))
    apply(s, VizierReveals(reveals))


def test_the_marker_leaves_the_bag_and_goes_to_nobody(t4: Table) -> None:
    s, d = t4
    set_hands(s, d, {0: [SILK, IVORY], 1: [SILK], 2: [FRUIT], 3: []})
    goods = [list(g) for g in s.goods]
    bag_silk = bag_of(s, d, SILK)
    _revealed(s, d, SILK)
    money = list(s.money)
    assert s.pending == (MARKER, (SILK,), True), "asked of the bag like a purchase of one"
    a = resolve(s, d)
    assert isinstance(a, Withdrawn) and len(a.handles) == 1
    (h,) = a.handles
    assert d.colour[h] == SILK and h in bag_silk
    assert h not in s.bag and h not in s.known
    assert s.goods == goods, "nobody gets the marker"
    assert s.money == money, "nobody pays for it"
    assert bag_of(s, d, SILK) == [x for x in bag_silk if x != h]
    assert s.set_aside == [SILK] and s.locked == [SILK]
    assert s.phase == Phase.PASS and s.pending is None
    assert sum(map(len, s.goods)) + len(s.bag) + len(s.set_aside) == 75


def test_no_good_of_the_colour_left_sets_nothing_aside(t4: Table) -> None:
    s, d = t4
    set_hands(s, d, {0: [SPICE], 1: [], 2: [], 3: []})
    hoard(s, d, SPICE, 2)  # every spice is held: none left in the bag
    assert bag_of(s, d, SPICE) == []
    bag = list(s.bag)
    _revealed(s, d, SPICE)
    assert s.phase == Phase.WITHDRAW, "whether the bag holds one is hidden: it is asked"
    assert resolve(s, d) == Withdrawn(())
    assert s.bag == bag and s.set_aside == []
    assert s.locked == [SPICE] and SPICE not in allowed_vizier_colours(s), "still used"
    assert s.phase == Phase.PASS


def test_an_empty_bag_is_not_asked(t4: Table) -> None:
    s, d = t4
    set_hands(s, d, {0: [SILK]})
    for p in range(4):  # every good held: the bag is publicly empty
        s.goods[p].extend(s.bag[p::4])
    s.bag = []
    _revealed(s, d, SILK)
    assert s.phase == Phase.PASS and s.pending is None and s.set_aside == []


def test_the_marker_withdraw_takes_at_most_one_good_of_the_bag(t4: Table) -> None:
    s, d = t4
    _revealed(s, d, FRUIT)
    fruit = bag_of(s, d, FRUIT)
    assert_illegal(s, Withdrawn(tuple(fruit[:2])), "bag.count")
    assert_illegal(s, Withdrawn((s.goods[1][0],)), "bag.handles")
    apply(s, Withdrawn((fruit[0],)))
    assert s.set_aside == [FRUIT]


def test_rule_off_is_the_old_behaviour() -> None:
    """``vizier_marker=False`` (networked games before protocol version 5): the reveal ends
    the tile, nothing leaves the bag, and the state encodes as it always did."""
    on, d_on = started(4)
    off, d_off = started(4)
    off.config = off.config._replace(vizier_marker=False)
    for s, d in ((on, d_on), (off, d_off)):
        set_hands(s, d, {0: [SILK, SILK], 1: [SILK]})
    assert on.hash() == off.hash(), "the flag itself is not hashed"
    n_canonical = len(off.canonical())
    bag = list(off.bag)
    _revealed(off, d_off, SILK)
    assert off.phase == Phase.PASS and off.pending is None
    assert off.bag == bag and off.set_aside == []
    assert len(off.canonical()) == n_canonical
    _revealed(on, d_on, SILK)
    assert on.money == off.money, "the payouts do not change"
    resolve(on, d_on)
    assert on.set_aside == [SILK] and len(on.canonical()) == n_canonical + 1
    assert on.hash() != off.hash()

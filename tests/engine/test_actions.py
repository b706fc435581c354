"""RULES.md "Actions": Seller, Buyer, Trader, Exchange up to n, Thief (the Grand Vizier
has its own module)."""

from __future__ import annotations

import pytest
from engine_kit import (
    BUYER,
    FRUIT,
    IVORY,
    JEWELS,
    SELLER,
    SILK,
    SPICE,
    THIEF,
    TRADER,
    act,
    assert_illegal,
    assert_lie,
    at_market,
    bag_of,
    city,
    colour_counts,
    hoard,
    of,
    perform,
    resolve,
    set_hands,
    started,
    tile_ids,
)

from engine.actions import (
    Buy,
    Decline,
    ExchangeDone,
    ExchangePair,
    Move,
    Sell,
    Steal,
    Stolen,
    TakeTile,
    Trade,
    Withdrawn,
)
from engine.dealer import LocalDealer
from engine.prices import buy_cost, max_affordable, sell_income
from engine.rules import actors, apply, legal_actions
from engine.state import GameState, Phase
from engine.tiles import EXCHANGE

Table = tuple[GameState, LocalDealer]


def _total_goods(s: GameState) -> int:
    return len(s.bag) + sum(len(g) for g in s.goods)


# --- price tables -------------------------------------------------------------------------
def test_price_tables() -> None:
    assert [sell_income(k) for k in range(8)] == [0, 4, 7, 9, 10, 11, 12, 13]
    assert [buy_cost(k) for k in range(8)] == [0, 1, 3, 6, 10, 14, 18, 22]
    assert [max_affordable(m, 15) for m in (0, 1, 2, 3, 5, 6, 9, 10, 13, 14)] == [
        0, 1, 1, 2, 2, 3, 3, 4, 4, 5,
    ]
    assert max_affordable(100, 3) == 3


# --- Seller ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("k", "income"), [(1, 4), (2, 7), (3, 9), (4, 10), (5, 11)])
def test_seller_totals(t4: Table, k: int, income: int) -> None:
    s, d = t4
    set_hands(s, d, {0: [SILK] * 5 + [IVORY]})
    perform(s, d, 0, tile_ids(s.board, SELLER, colour=SILK)[0])
    silk = of(s, d, 0, SILK)
    s.known[silk[0]] = SILK  # one publicly known silk: offered first
    legal = legal_actions(s, 0, d.hand(s, 0))
    assert legal == [Decline(), *(Sell(tuple(silk[:j])) for j in range(1, 6))]
    act(s, d, Sell(tuple(silk[:k])))
    assert s.money[0] == 10 + income
    assert len(s.goods[0]) == 6 - k
    assert all(h in s.bag and h not in s.known for h in silk[:k]), "back into the bag"
    assert _total_goods(s) == 75
    assert s.phase == Phase.PASS


def test_seller_rejections(t4: Table) -> None:
    s, d = t4
    set_hands(s, d, {0: [SILK, SILK, IVORY], 1: [SILK]})
    perform(s, d, 0, tile_ids(s.board, SELLER, colour=SILK)[0])
    silk, (ivory,) = of(s, d, 0, SILK), of(s, d, 0, IVORY)
    assert_illegal(s, Sell(()), "seller.count")
    assert_illegal(s, Sell((silk[0], silk[0])), "goods.duplicate")
    assert_illegal(s, Sell((s.goods[1][0],)), "goods.owner")
    assert_illegal(s, Buy(1), "perform.kind")
    assert_illegal(s, Trade((silk[0],)), "perform.kind")
    s.known[ivory] = IVORY
    assert_illegal(s, Sell((ivory,)), "goods.colour")
    # A hidden lie passes the public rules but the dealer (the truth) rejects it.
    del s.known[ivory]
    assert_lie(s, d, Sell((silk[0], ivory)))


# --- Buyer ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("k", "cost"), [(1, 1), (2, 3), (3, 6), (4, 10), (5, 14)])
def test_buyer_totals(t4: Table, k: int, cost: int) -> None:
    s, d = t4
    s.money[0] = 17  # enough for 5 (14), not 6 (18)
    perform(s, d, 0, tile_ids(s.board, BUYER, colour=JEWELS)[0])
    assert legal_actions(s, 0, d.hand(s, 0)) == [Decline(), *(Buy(j) for j in range(1, 6))]
    apply(s, Buy(k))
    assert s.phase == Phase.WITHDRAW and actors(s) == (-1,)
    w = resolve(s, d)
    assert isinstance(w, Withdrawn) and len(w.handles) == k
    assert s.money[0] == 17 - cost
    assert colour_counts(d, s.goods[0][3:]) == [0, 0, 0, k, 0]
    assert all(s.known[h] == JEWELS for h in w.handles), "bought goods are public"
    assert _total_goods(s) == 75 and s.phase == Phase.PASS


def test_buyer_gets_and_pays_for_what_the_bag_has(t4: Table) -> None:
    """Decision: you may ask for as many as you can pay for; a short bag gives what it has."""
    s, d = t4
    hoard(s, d, SPICE, seat=3, keep=2)
    perform(s, d, 0, tile_ids(s.board, BUYER, colour=SPICE)[0])
    apply(s, Buy(4))
    resolve(s, d)
    assert s.money[0] == 10 - 3 and colour_counts(d, s.goods[0][3:]) == [0, 0, 0, 0, 2]
    assert bag_of(s, d, SPICE) == []


def test_buyer_with_an_empty_colour_pays_nothing(t4: Table) -> None:
    s, d = t4
    hoard(s, d, SPICE, seat=3)
    perform(s, d, 0, tile_ids(s.board, BUYER, colour=SPICE)[0])
    apply(s, Buy(2))
    assert resolve(s, d) == Withdrawn(())
    assert s.money[0] == 10 and len(s.goods[0]) == 3


def test_buyer_rejections(t4: Table) -> None:
    s, d = t4
    s.money[0] = 9
    perform(s, d, 0, tile_ids(s.board, BUYER, colour=SILK)[0])
    assert_illegal(s, Buy(0), "buyer.count")
    assert_illegal(s, Buy(16), "buyer.count")
    assert_illegal(s, Buy(4), "buyer.money")  # 10 > 9
    apply(s, Buy(2))
    # The resolver may not give more than asked, nor goods outside the bag.
    silk = bag_of(s, d, SILK)
    assert_illegal(s, Withdrawn(tuple(silk[:3])), "bag.count")
    assert_illegal(s, Withdrawn((s.goods[1][0],)), "bag.handles")
    assert_illegal(s, Withdrawn((silk[0], silk[0])), "bag.handles")


# --- Trader ---------------------------------------------------------------------------------
def _trader(s: GameState, give: tuple[int, ...], receive: tuple[int, ...]) -> int:
    return next(
        t.id for t in s.board.tileset.tiles
        if t.kind == TRADER and t.give == give and t.receive == receive
    )


def test_trader_once_or_twice(t4: Table) -> None:
    s, d = t4
    set_hands(s, d, {0: [IVORY, IVORY, FRUIT]})
    perform(s, d, 0, _trader(s, (IVORY,), (SILK, SPICE)))
    ivory = of(s, d, 0, IVORY)
    assert legal_actions(s, 0, d.hand(s, 0)) == [Decline(), Trade((ivory[0],))]
    act(s, d, Trade((ivory[0],)))
    resolve(s, d)
    assert colour_counts(d, s.goods[0]) == [1, 1, 1, 0, 1]
    assert ivory[0] in s.bag and ivory[0] not in s.known
    assert s.phase == Phase.PERFORM and s.trades_done == 1, "may trade a second time"
    assert legal_actions(s, 0, d.hand(s, 0)) == [Decline(), Trade((ivory[1],))]
    act(s, d, Trade((ivory[1],)))
    resolve(s, d)
    assert colour_counts(d, s.goods[0]) == [0, 2, 1, 0, 2]
    assert s.phase == Phase.PASS, "at most twice: the tile is done"
    assert s.money[0] == 10 and _total_goods(s) == 75


def test_trader_stop_after_one(t4: Table) -> None:
    s, d = t4
    set_hands(s, d, {0: [IVORY, IVORY]})
    perform(s, d, 0, _trader(s, (IVORY,), (FRUIT, FRUIT)))
    act(s, d, Trade((of(s, d, 0, IVORY)[0],)))
    resolve(s, d)
    apply(s, Decline())
    assert colour_counts(d, s.goods[0]) == [1, 0, 2, 0, 0] and s.phase == Phase.PASS


def test_trader_exchange_is_all_or_nothing(t4: Table) -> None:
    """Decision: if the bag cannot provide all the goods on the right, nothing happens."""
    s, d = t4
    set_hands(s, d, {0: [IVORY, IVORY]})
    hoard(s, d, SPICE, seat=3)  # the bag has silk but no spice
    perform(s, d, 0, _trader(s, (IVORY,), (SILK, SPICE)))
    before = list(s.goods[0])
    act(s, d, Trade((before[0],)))
    silk = bag_of(s, d, SILK)
    assert_illegal(s, Withdrawn((silk[0],)), "bag.all_or_nothing")
    assert resolve(s, d) == Withdrawn(())
    assert s.goods[0] == before, "you keep what you would have given"
    assert s.phase == Phase.PASS


def test_trader_two_for_three_and_rejections(t4: Table) -> None:
    s, d = t4
    set_hands(s, d, {0: [IVORY, SILK, FRUIT]})
    perform(s, d, 0, _trader(s, (IVORY, SILK), (JEWELS, SPICE, FRUIT)))
    (iv,), (si,), (fr,) = of(s, d, 0, IVORY), of(s, d, 0, SILK), of(s, d, 0, FRUIT)
    assert_illegal(s, Trade((iv,)), "trader.give")
    assert_illegal(s, Trade((iv, iv)), "goods.owner")
    assert_illegal(s, Trade((iv, s.goods[1][0])), "goods.owner")
    s.known[fr] = FRUIT
    assert_illegal(s, Trade((iv, fr)), "goods.colour")
    assert_lie(s, d, Trade((si, iv)))  # order matters: left side is ivory then silk
    act(s, d, Trade((iv, si)))
    resolve(s, d)
    assert colour_counts(d, s.goods[0]) == [0, 0, 2, 1, 1]
    assert s.phase == Phase.PERFORM  # a second exchange would need ivory + silk again
    assert legal_actions(s, 0, d.hand(s, 0)) == [Decline()]


# --- Exchange up to n (printed bonus) ---------------------------------------------------------
def _arrive(s: GameState, frm: str, to: str, leader: int = 0) -> None:
    s.city = city(s, frm)
    s.visit = 4
    s.holder = leader
    s.phase = Phase.MOVE
    apply(s, Move(city(s, to)))


def test_exchange_up_to_n_with_shared_colours(t4: Table) -> None:
    s, d = t4
    set_hands(s, d, {0: [IVORY, SILK, FRUIT, JEWELS, SPICE]})
    _arrive(s, "Yarkand", "Kashgar")
    assert s.phase == Phase.PERFORM and s.printed and s.tile is not None
    assert s.tile.kind == EXCHANGE and s.tile.n == 4
    h = d.hand(s, 0)
    legal = legal_actions(s, 0, h)
    assert legal[0] == Decline() and len(legal) == 1 + 5 * 5
    (iv,), (si,), (fr,) = of(s, d, 0, IVORY), of(s, d, 0, SILK), of(s, d, 0, FRUIT)
    act(s, d, ExchangePair(iv, IVORY, SPICE))
    assert_illegal(s, ExchangePair(iv, IVORY, SILK), "goods.duplicate")
    assert_illegal(s, Decline(), "exchange.done")
    assert_illegal(s, ExchangePair(si, SILK, 7), "exchange.colour")
    act(s, d, ExchangePair(si, SILK, SILK))  # the two sides may share colours
    act(s, d, ExchangePair(fr, FRUIT, SPICE))
    act(s, d, ExchangeDone())
    resolve(s, d)
    assert colour_counts(d, s.goods[0]) == [0, 1, 0, 1, 3]
    assert s.phase == Phase.TAKE and s.actor == 0, "then the leader takes a tile"
    assert _total_goods(s) == 75


def test_exchange_stops_at_n(t4: Table) -> None:
    s, d = t4
    set_hands(s, d, {0: [IVORY, IVORY, IVORY]})
    _arrive(s, "Lanzhou", "Dunhuang")  # exchange up to 2
    iv = of(s, d, 0, IVORY)
    act(s, d, ExchangePair(iv[0], IVORY, SILK))
    act(s, d, ExchangePair(iv[1], IVORY, FRUIT))
    assert s.phase == Phase.WITHDRAW, "the n-th pair finishes the choice by itself"
    resolve(s, d)
    assert colour_counts(d, s.goods[0]) == [1, 1, 1, 0, 0]


def test_exchange_all_or_nothing_and_rejections(t4: Table) -> None:
    s, d = t4
    set_hands(s, d, {0: [IVORY, SILK]})
    hoard(s, d, JEWELS, seat=3)
    _arrive(s, "Lanzhou", "Dunhuang")
    assert_illegal(s, ExchangeDone(), "exchange.done")
    assert_illegal(s, ExchangePair(s.goods[1][0], IVORY, SILK), "goods.owner")
    (iv,), (si,) = of(s, d, 0, IVORY), of(s, d, 0, SILK)
    assert_lie(s, d, ExchangePair(iv, SILK, FRUIT))
    act(s, d, ExchangePair(iv, IVORY, FRUIT))
    act(s, d, ExchangePair(si, SILK, JEWELS))  # no jewels in the bag
    before = list(s.goods[0])
    assert resolve(s, d) == Withdrawn(())
    assert s.goods[0] == before and s.phase == Phase.TAKE


# --- Thief ------------------------------------------------------------------------------------
def test_thief_takes_a_random_good_and_only_thief_and_victim_learn_it(t4: Table) -> None:
    s, d = t4
    set_hands(s, d, {0: [FRUIT], 1: [], 2: [SILK, SPICE, IVORY], 3: [JEWELS]})
    victim_before = list(s.goods[2])
    for h in victim_before:
        s.known[h] = d.colour[h]  # e.g. revealed to an earlier Grand Vizier
    s.known[s.goods[0][0]] = FRUIT
    perform(s, d, 0, tile_ids(s.board, THIEF)[0])
    assert legal_actions(s, 0, d.hand(s, 0)) == [Decline(), Steal(2), Steal(3)]
    assert_illegal(s, Steal(1), "thief.victim")  # no goods: cannot be chosen
    assert_illegal(s, Steal(0), "thief.victim")
    assert_illegal(s, Steal(9), "thief.victim")
    apply(s, Steal(2))
    assert s.phase == Phase.STEAL and actors(s) == (-1,)
    assert_illegal(s, Stolen(3), "thief.index")
    assert_illegal(s, Stolen(-1), "thief.index")
    resolve(s, d)
    assert len(s.goods[0]) == 2 and len(s.goods[2]) == 2
    taken = s.goods[0][-1]
    assert taken not in s.known, "the public does not learn the stolen colour"
    assert d.hand(s, 0)[taken] in (SILK, SPICE, IVORY), "the thief knows it"
    # The victim's goods were re-handled: what the public knew about them is forgotten.
    assert all(h not in s.known for h in s.goods[2])
    assert not set(s.goods[2]) & set(victim_before)
    assert s.known == {s.goods[0][0]: FRUIT}, "other public knowledge stays"
    assert sorted(colour_counts(d, [*s.goods[2], taken])) == sorted(
        colour_counts(d, victim_before)
    )
    assert _total_goods(s) == 75


def test_thief_pick_is_random_over_all_goods() -> None:
    stolen: set[int] = set()
    for seed in range(40):
        s, d = started(3)
        d.rng = LocalDealer(seed).rng
        set_hands(s, d, {0: [], 1: [SILK, SPICE, IVORY, IVORY], 2: []})
        perform(s, d, 0, tile_ids(s.board, THIEF)[0])
        apply(s, Steal(1))
        resolve(s, d)
        stolen.add(d.colour[s.goods[0][-1]])
    assert stolen == {SILK, SPICE, IVORY}


def test_thief_with_nobody_to_rob_declines_by_itself(t4: Table) -> None:
    s, d = t4
    set_hands(s, d, {0: [SILK], 1: [], 2: [], 3: []})
    thief, other = tile_ids(s.board, THIEF)[:2]
    at_market(s, "Kucha", 0, [thief, other])
    apply(s, TakeTile(thief))
    assert s.phase == Phase.PASS and s.goods[0] == of(s, d, 0, SILK)

"""RULES.md "Crook" timing and effect (and the Decisions in "Further decisions")."""

from __future__ import annotations

from engine_kit import (
    BUYER,
    CROOK,
    FRUIT,
    IVORY,
    JEWELS,
    SELLER,
    SILK,
    SPICE,
    THIEF,
    TRADER,
    VIZIER,
    act,
    assert_illegal,
    at_market,
    city,
    colour_counts,
    of,
    perform,
    resolve,
    set_hands,
    tile_ids,
)

from engine.actions import (
    Buy,
    Decline,
    ExchangePair,
    Move,
    PassPawn,
    Sell,
    TakeTile,
    Trade,
    UseCrook,
)
from engine.dealer import LocalDealer
from engine.rules import apply, legal_actions
from engine.state import GameState, Phase

Table = tuple[GameState, LocalDealer]


def _crooks(s: GameState, seat: int, k: int = 1) -> None:
    s.crooks[seat] = k


def _uses(legal: list[object]) -> list[UseCrook]:
    return [a for a in legal if isinstance(a, UseCrook)]


def test_crook_turns_a_silk_seller_into_a_spice_seller(t4: Table) -> None:
    s, d = t4
    set_hands(s, d, {0: [SPICE, SPICE, IVORY]})
    _crooks(s, 0)
    perform(s, d, 0, tile_ids(s.board, SELLER, colour=SILK)[0])
    legal = legal_actions(s, 0, d.hand(s, 0))
    # Only changes that leave something to sell are offered.
    assert _uses(legal) == [UseCrook(0, IVORY), UseCrook(0, SPICE)]
    apply(s, UseCrook(0, SPICE))
    assert s.crooks[0] == 0 and s.tile is not None and s.tile.colour == SPICE
    sp = of(s, d, 0, SPICE)
    act(s, d, Sell(tuple(sp)))
    assert s.money[0] == 17 and colour_counts(d, s.goods[0]) == [1, 0, 0, 0, 0]


def test_crook_on_a_buyer(t4: Table) -> None:
    s, d = t4
    _crooks(s, 0)
    perform(s, d, 0, tile_ids(s.board, BUYER, colour=SILK)[0])
    apply(s, UseCrook(0, JEWELS))
    apply(s, Buy(2))
    resolve(s, d)
    assert s.money[0] == 7 and colour_counts(d, s.goods[0][3:]) == [0, 0, 0, 2, 0]


def test_one_crook_per_action_and_validation(t4: Table) -> None:
    s, d = t4
    set_hands(s, d, {0: [SILK, FRUIT]})
    _crooks(s, 0, 2)
    perform(s, d, 0, tile_ids(s.board, SELLER, colour=SILK)[0])
    assert_illegal(s, UseCrook(1, FRUIT), "crook.symbol")
    assert_illegal(s, UseCrook(0, SILK), "crook.colour")  # must change the colour
    assert_illegal(s, UseCrook(0, 5), "crook.colour")
    apply(s, UseCrook(0, FRUIT))
    assert _uses(legal_actions(s, 0, d.hand(s, 0))) == []
    assert_illegal(s, UseCrook(0, SILK), "crook.use")
    assert s.crooks[0] == 1


def test_crook_only_with_an_action_that_is_performed(t4: Table) -> None:
    s, d = t4
    set_hands(s, d, {0: [FRUIT]})
    _crooks(s, 0)
    perform(s, d, 0, tile_ids(s.board, SELLER, colour=SILK)[0])
    assert Decline() in legal_actions(s, 0, d.hand(s, 0))
    apply(s, UseCrook(0, FRUIT))
    assert legal_actions(s, 0, d.hand(s, 0)) == [Sell(tuple(of(s, d, 0, FRUIT)))]
    assert_illegal(s, Decline(), "crook.performed")


def test_no_crook_without_one(t4: Table) -> None:
    s, d = t4
    perform(s, d, 0, tile_ids(s.board, SELLER, colour=SILK)[0])
    assert_illegal(s, UseCrook(0, FRUIT), "crook.use")


def test_crook_changes_both_trader_exchanges(t4: Table) -> None:
    s, d = t4
    set_hands(s, d, {0: [SILK, SILK]})
    _crooks(s, 0)
    tid = next(
        t.id for t in s.board.tileset.tiles
        if t.kind == TRADER and t.give == (SILK,) and t.receive == (FRUIT,)
    )
    perform(s, d, 0, tid)
    # symbols: give (index 0) then receive (index 1)
    apply(s, UseCrook(1, SPICE))
    assert_illegal(s, Decline(), "crook.performed")
    silk = of(s, d, 0, SILK)
    act(s, d, Trade((silk[0],)))
    resolve(s, d)
    assert s.phase == Phase.PERFORM and s.trades_done == 1
    assert Decline() in legal_actions(s, 0, d.hand(s, 0)), "performed: may stop now"
    act(s, d, Trade((silk[1],)))
    resolve(s, d)
    assert colour_counts(d, s.goods[0]) == [0, 0, 0, 0, 2], "both exchanges gave spice"


def test_crook_on_the_give_side_of_a_trader(t4: Table) -> None:
    s, d = t4
    set_hands(s, d, {0: [JEWELS]})
    _crooks(s, 0)
    tid = next(
        t.id for t in s.board.tileset.tiles
        if t.kind == TRADER and t.give == (IVORY,) and t.receive == (SILK, SPICE)
    )
    perform(s, d, 0, tid)
    assert UseCrook(0, JEWELS) in legal_actions(s, 0, d.hand(s, 0))
    apply(s, UseCrook(0, JEWELS))
    act(s, d, Trade(tuple(s.goods[0])))
    resolve(s, d)
    assert colour_counts(d, s.goods[0]) == [0, 1, 0, 0, 1]


def test_crook_not_on_thief_or_vizier(t4: Table) -> None:
    s, d = t4
    set_hands(s, d, {0: [SILK], 1: [SILK]})
    for kind in (THIEF, VIZIER):
        _crooks(s, 0)
        perform(s, d, 0, tile_ids(s.board, kind)[0])
        assert _uses(legal_actions(s, 0, d.hand(s, 0))) == []
        assert_illegal(s, UseCrook(0, SILK), "crook.use")
        apply(s, Decline())


def test_crook_not_on_an_exchange(t4: Table) -> None:
    s, d = t4
    set_hands(s, d, {0: [SILK]})
    _crooks(s, 0)
    s.city, s.visit, s.holder, s.phase = city(s, "Yarkand"), 4, 0, Phase.MOVE
    apply(s, Move(city(s, "Kashgar")))
    assert s.printed
    legal = legal_actions(s, 0, d.hand(s, 0))
    assert _uses(legal) == [] and ExchangePair(s.goods[0][0], SILK, IVORY) in legal
    assert_illegal(s, UseCrook(0, IVORY), "crook.use")


def test_crook_usable_in_the_city_where_it_was_taken(t3: Table) -> None:
    s, d = t3
    set_hands(s, d, {0: [FRUIT, FRUIT]})
    crook = tile_ids(s.board, CROOK, back=0)[0]
    silk_seller = tile_ids(s.board, SELLER, colour=SILK)[0]
    fillers = tile_ids(s.board, THIEF, back=0)[:3]
    at_market(s, "Kucha", 0, [crook, silk_seller, *fillers], visit=3)
    apply(s, TakeTile(crook))
    assert s.crooks == [1, 0, 0]
    apply(s, PassPawn(1))
    apply(s, TakeTile(fillers[0]))
    apply(s, Decline())
    apply(s, PassPawn(0))  # 3 players: seat 0 acts a second time in this city
    apply(s, TakeTile(silk_seller))
    apply(s, UseCrook(0, FRUIT))
    act(s, d, Sell(tuple(of(s, d, 0, FRUIT))))
    assert s.money[0] == 17 and s.crooks == [0, 0, 0]


def test_crook_refused_when_the_changed_action_cannot_be_performed(t4: Table) -> None:
    """After a Crook the action must be performed (Decline is refused), so a Crook that
    public information shows cannot be performed is refused: it would leave no legal step.
    (Regression: the engine used to accept it and the game deadlocked.)"""
    s, d = t4
    # A Seller and nothing to sell at all.
    set_hands(s, d, {0: []})
    _crooks(s, 0)
    perform(s, d, 0, tile_ids(s.board, SELLER, colour=SILK)[0])
    assert legal_actions(s, 0, {}) == [Decline()]
    assert_illegal(s, UseCrook(0, SPICE), "crook.performed")
    # A Buyer without a single silver.
    s.money[0] = 0
    perform(s, d, 0, tile_ids(s.board, BUYER, colour=SILK)[0])
    assert_illegal(s, UseCrook(0, SPICE), "crook.performed")


def test_crook_refused_when_known_goods_rule_it_out(t4: Table) -> None:
    s, d = t4
    set_hands(s, d, {0: [IVORY, FRUIT]})
    for h in s.goods[0]:
        s.known[h] = d.colour[h]  # both publicly known (e.g. shown to a Grand Vizier)
    _crooks(s, 0)
    tid = next(
        t.id for t in s.board.tileset.tiles
        if t.kind == TRADER and t.give == (IVORY, SILK)
    )
    perform(s, d, 0, tid)
    assert _uses(legal_actions(s, 0, d.hand(s, 0))) == [UseCrook(1, FRUIT)]
    assert_illegal(s, UseCrook(1, SPICE), "crook.performed")  # needs ivory + spice
    assert_illegal(s, UseCrook(0, FRUIT), "crook.performed")  # needs fruit + silk
    apply(s, UseCrook(1, FRUIT))  # ivory + fruit: held
    act(s, d, Trade(tuple(s.goods[0])))
    resolve(s, d)
    assert colour_counts(d, s.goods[0]) == [0, 0, 1, 1, 1]


def test_crook_with_hidden_goods_is_a_claim(t4: Table) -> None:
    """With hidden goods the public cannot tell; the player's client offers only
    performable changes (legal_actions uses their hand)."""
    s, d = t4
    set_hands(s, d, {0: [IVORY]})
    _crooks(s, 0)
    perform(s, d, 0, tile_ids(s.board, SELLER, colour=SILK)[0])
    assert _uses(legal_actions(s, 0, d.hand(s, 0))) == [UseCrook(0, IVORY)]
    apply(s, UseCrook(0, IVORY))
    act(s, d, Sell(tuple(s.goods[0])))
    assert s.money[0] == 14

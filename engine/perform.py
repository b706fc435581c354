"""Performing a tile (Seller, Buyer, Trader, Exchange, Thief, Grand Vizier, a Crook's
change) and the hidden-goods resolutions that complete it (goods withdrawn from the bag,
the Grand Vizier's marker, a theft, the final reveal).

Each handler validates before it changes anything (see :func:`engine.rules.apply`);
:data:`HANDLERS` maps (phase, action type) to them.  A finished tile hands the market
back to :func:`engine.flow.after_tile`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.actions import (
    Buy,
    Decline,
    ExchangeDone,
    ExchangePair,
    FinalReveal,
    Sell,
    Steal,
    Stolen,
    Trade,
    UseCrook,
    Vizier,
    VizierReveals,
    Withdrawn,
)
from engine.colours import GOODS_PER_COLOUR, NCOLOURS
from engine.errors import fail
from engine.flow import after_tile
from engine.phase_rules import (
    PH_OVER,
    PH_PERFORM,
    PH_REVEAL,
    PH_STEAL,
    PH_VIZIER,
    PH_WITHDRAW,
    allowed_vizier_colours,
    crook_possible,
)
from engine.prices import buy_cost, sell_income
from engine.state import BUY, EXCHANGE, MARKER, TRADE, GameState
from engine.tiles import BUYER, SELLER, THIEF, TRADER, Tile
from engine.tiles import EXCHANGE as EXCHANGE_TILE
from engine.tiles import VIZIER as VIZIER_TILE

VIZIER_FIRST, VIZIER_SECOND = 5, 3


# --- performing ---------------------------------------------------------------------------
def _tile(s: GameState) -> Tile:
    assert s.tile is not None
    return s.tile


def _on_decline(s: GameState, a: Decline) -> None:
    t = _tile(s)
    if t.kind == EXCHANGE_TILE and s.pairs:
        fail("exchange.done", "pairs are chosen: finish with ExchangeDone")
    if s.crook_used and s.trades_done == 0:
        fail("crook.performed", "a Crook may only be used with an action that is performed")
    after_tile(s)


def _on_use_crook(s: GameState, a: UseCrook) -> None:
    t = _tile(s)
    if not crook_possible(s, s.actor):
        fail("crook.use", "no Crook to play on this action (or one was already played)")
    syms = t.symbols
    if not 0 <= a.symbol < len(syms):
        fail("crook.symbol", f"this tile shows {len(syms)} goods symbols")
    if not 0 <= a.colour < NCOLOURS or a.colour == syms[a.symbol]:
        fail("crook.colour", "a Crook must change the symbol to another goods colour")
    nt = t.with_symbol(a.symbol, a.colour)
    if not _publicly_performable(s, s.actor, nt):
        # After a Crook the action must be performed (Decline is refused): accepting a
        # change nobody could perform would leave the table with no legal step.
        fail("crook.performed", "a Crook may only be used with an action you can perform")
    s.crooks[s.actor] -= 1
    s.crook_used = True
    s.tile = nt


def _publicly_performable(s: GameState, seat: int, t: Tile) -> bool:
    """Whether public information allows ``seat`` to perform Seller/Buyer/Trader ``t``:
    hidden goods may be of any colour, publicly known ones only of their own."""
    if t.kind == BUYER:
        return s.money[seat] >= 1 and len(s.bag) > 0
    known = s.known
    goods = s.goods[seat]
    free = sum(1 for h in goods if h not in known)
    need = t.give if t.kind == TRADER else (t.colour,)
    short = 0
    for c in set(need):
        have = sum(1 for h in goods if known.get(h) == c)
        short += max(0, need.count(c) - have)
    return short <= free


def _check_own(s: GameState, seat: int, handles: tuple[int, ...], colour: int | None) -> None:
    goods = s.goods[seat]
    if len(set(handles)) != len(handles):
        fail("goods.duplicate", "the same good is named twice")
    for h in handles:
        if h not in goods:
            fail("goods.owner", f"good #{h} is not yours")
        if colour is not None and s.known.get(h, colour) != colour:
            fail("goods.colour", f"good #{h} is publicly known not to be that colour")


def _on_sell(s: GameState, a: Sell) -> None:
    t = _tile(s)
    if t.kind != SELLER:
        fail("perform.kind", "this tile is not a Seller")
    if not a.handles:
        fail("seller.count", "sell at least one good (or decline)")
    _check_own(s, s.actor, a.handles, t.colour)
    for h in a.handles:
        s.goods[s.actor].remove(h)
        s.known.pop(h, None)
        s.bag.append(h)
    s.money[s.actor] += sell_income(len(a.handles))
    after_tile(s)


def _on_buy(s: GameState, a: Buy) -> None:
    t = _tile(s)
    if t.kind != BUYER:
        fail("perform.kind", "this tile is not a Buyer")
    if a.count < 1:
        fail("buyer.count", "buy at least one good (or decline)")
    if a.count > GOODS_PER_COLOUR or a.count > len(s.bag):
        fail("buyer.count", f"the bag cannot hold {a.count} goods of one colour")
    if buy_cost(a.count) > s.money[s.actor]:
        fail("buyer.money", f"{a.count} goods cost {buy_cost(a.count)} silver; you have less")
    s.pending = (BUY, (t.colour,) * a.count, True)
    s.phase = PH_WITHDRAW


def _on_trade(s: GameState, a: Trade) -> None:
    t = _tile(s)
    if t.kind != TRADER:
        fail("perform.kind", "this tile is not a Trader")
    if s.trades_done >= 2:
        fail("trader.times", "a Trader is performed at most twice")
    if len(a.handles) != len(t.give):
        fail("trader.give", f"give exactly {len(t.give)} goods")
    goods = s.goods[s.actor]
    if len(set(a.handles)) != len(a.handles) or any(h not in goods for h in a.handles):
        fail("goods.owner", "give your own goods, each once")
    for h, c in zip(a.handles, t.give, strict=True):
        if s.known.get(h, c) != c:
            fail("goods.colour", f"good #{h} is publicly known not to be that colour")
    s.trade_give = a.handles
    s.pending = (TRADE, t.receive, False)
    s.phase = PH_WITHDRAW


def _on_exchange_pair(s: GameState, a: ExchangePair) -> None:
    t = _tile(s)
    if t.kind != EXCHANGE_TILE:
        fail("perform.kind", "this is not an Exchange")
    if len(s.pairs) >= t.n:
        fail("exchange.count", f"exchange at most {t.n} goods")
    if not (0 <= a.give < NCOLOURS and 0 <= a.receive < NCOLOURS):
        fail("exchange.colour", "unknown goods colour")
    if any(p[0] == a.handle for p in s.pairs):
        fail("goods.duplicate", "that good is already being exchanged")
    _check_own(s, s.actor, (a.handle,), a.give)
    s.pairs.append((a.handle, a.give, a.receive))
    if len(s.pairs) == t.n:
        _exchange_request(s)


def _on_exchange_done(s: GameState, a: ExchangeDone) -> None:
    t = _tile(s)
    if t.kind != EXCHANGE_TILE or not s.pairs:
        fail("exchange.done", "choose at least one pair first (or decline)")
    _exchange_request(s)


def _exchange_request(s: GameState) -> None:
    s.pending = (EXCHANGE, tuple(p[2] for p in s.pairs), False)
    s.phase = PH_WITHDRAW


def _on_steal(s: GameState, a: Steal) -> None:
    if _tile(s).kind != THIEF:
        fail("perform.kind", "this tile is not a Thief")
    if not 0 <= a.victim < s.players or a.victim == s.actor:
        fail("thief.victim", "steal from another player")
    if not s.goods[a.victim]:
        fail("thief.victim", "a player with no goods cannot lose one")
    s.steal_victim = a.victim
    s.phase = PH_STEAL


def _on_vizier(s: GameState, a: Vizier) -> None:
    if _tile(s).kind != VIZIER_TILE:
        fail("perform.kind", "this tile is not a Grand Vizier")
    if a.colour not in allowed_vizier_colours(s):
        fail("vizier.colour", "that colour was already chosen by an earlier Grand Vizier")
    s.locked.append(a.colour)
    s.vizier_colour = a.colour
    s.phase = PH_VIZIER


def _on_vizier_reveals(s: GameState, a: VizierReveals) -> None:
    n = s.players
    if len(a.reveals) != n:
        fail("vizier.reveal", f"expected one reveal per seat ({n})")
    c = s.vizier_colour
    for p in range(n):
        _check_own(s, p, a.reveals[p], c)
    counts = [len(r) for r in a.reveals]
    for p, amount in enumerate(vizier_payouts(counts)):
        s.money[p] += amount
    for r in a.reveals:
        for h in r:
            s.known[h] = c
    s.vizier_colour = -1
    if s.config.vizier_marker and s.bag:
        _marker_request(s, c)
        return
    after_tile(s)


def _marker_request(s: GameState, colour: int) -> None:
    """The Grand Vizier's marker: ask the bag for one good of ``colour``, to set aside.

    The rulebook sets the played Vizier aside "on a piece of the goods just chosen", so
    that a good of that colour leaves play.  Decision (the rulebook does not say where it
    comes from): it is drawn from the bag by colour, exactly as a purchase of one good is
    (the same resolver request, so a networked table proves it the same way and nobody
    learns more than a purchase shows: whether the bag held one), and it goes to nobody.
    Decision: if the bag holds none of that colour, nothing is set aside and the colour is
    still locked.  An empty bag is public: no request then.  A declined Vizier never gets
    here, so it sets nothing aside."""
    s.pending = (MARKER, (colour,), True)
    s.phase = PH_WITHDRAW


def vizier_payouts(counts: list[int]) -> list[int]:
    """5 to the most revealed, 3 to the second; tied firsts all get 5 and no second;
    revealing none never earns."""
    pay = [0] * len(counts)
    positive = sorted({k for k in counts if k > 0}, reverse=True)
    if not positive:
        return pay
    first = [p for p, k in enumerate(counts) if k == positive[0]]
    for p in first:
        pay[p] = VIZIER_FIRST
    if len(first) == 1 and len(positive) > 1:
        for p, k in enumerate(counts):
            if k == positive[1]:
                pay[p] = VIZIER_SECOND
    return pay


# --- resolutions ---------------------------------------------------------------------------
def _on_withdrawn(s: GameState, a: Withdrawn) -> None:
    assert s.pending is not None
    purpose, request, partial = s.pending
    got = a.handles
    if len(set(got)) != len(got) or any(h not in s.bag for h in got):
        fail("bag.handles", "withdrawn goods must be distinct goods from the bag")
    if partial:
        if len(got) > len(request):
            fail("bag.count", f"asked for {len(request)}, got more")
    elif len(got) not in (0, len(request)):
        fail("bag.all_or_nothing", "this exchange takes all the goods or none")
    if purpose == MARKER:
        # set aside for good: out of the bag, into no hand, its colour public
        for h, c in zip(got, request, strict=False):
            s.bag.remove(h)
            s.set_aside.append(c)
        after_tile(s)
        return
    actor = s.actor
    if purpose == BUY:
        s.money[actor] -= buy_cost(len(got))
    elif got:
        give = s.trade_give if purpose == TRADE else tuple(p[0] for p in s.pairs)
        for h in give:
            s.goods[actor].remove(h)
            s.known.pop(h, None)
    for h, c in zip(got, request, strict=False):
        s.bag.remove(h)
        s.goods[actor].append(h)
        s.known[h] = c
    if got and purpose != BUY:
        s.bag.extend(s.trade_give if purpose == TRADE else (p[0] for p in s.pairs))
    s.pending = None
    if purpose == TRADE and got:
        s.trades_done += 1
        s.trade_give = ()
        s.phase = PH_PERFORM
        if s.trades_done >= 2:
            after_tile(s)
        return
    after_tile(s)


def _on_stolen(s: GameState, a: Stolen) -> None:
    v = s.steal_victim
    if not 0 <= a.index < len(s.goods[v]):
        fail("thief.index", f"the victim holds {len(s.goods[v])} goods")
    # The victim's goods were re-shuffled: fresh handles, public colour links broken.
    fresh = list(range(s.next_handle, s.next_handle + len(s.goods[v])))
    s.next_handle += len(fresh)
    for h in s.goods[v]:
        s.known.pop(h, None)
    taken = fresh.pop(a.index)
    s.goods[v] = fresh
    s.goods[s.actor].append(taken)
    s.steal_victim = -1
    after_tile(s)


def _on_final_reveal(s: GameState, a: FinalReveal) -> None:
    n = s.players
    if len(a.colours) != n:
        fail("reveal.shape", f"expected colours for {n} seats")
    for p in range(n):
        cs = a.colours[p]
        if len(cs) != len(s.goods[p]):
            fail("reveal.shape", f"seat {p} holds {len(s.goods[p])} goods")
        for h, c in zip(s.goods[p], cs, strict=True):
            if not 0 <= c < NCOLOURS:
                fail("reveal.colour", "unknown goods colour")
            if s.known.get(h, c) != c:
                fail("reveal.colour", f"good #{h} is publicly known to be another colour")
    s.final = tuple(tuple(cs) for cs in a.colours)
    s.phase = PH_OVER


HANDLERS: dict[tuple[int, type], Callable[[GameState, Any], None]] = {
    (PH_PERFORM, Decline): _on_decline,
    (PH_PERFORM, UseCrook): _on_use_crook,
    (PH_PERFORM, Sell): _on_sell,
    (PH_PERFORM, Buy): _on_buy,
    (PH_PERFORM, Trade): _on_trade,
    (PH_PERFORM, ExchangePair): _on_exchange_pair,
    (PH_PERFORM, ExchangeDone): _on_exchange_done,
    (PH_PERFORM, Steal): _on_steal,
    (PH_PERFORM, Vizier): _on_vizier,
    (PH_VIZIER, VizierReveals): _on_vizier_reveals,
    (PH_WITHDRAW, Withdrawn): _on_withdrawn,
    (PH_STEAL, Stolen): _on_stolen,
    (PH_REVEAL, FinalReveal): _on_final_reveal,
}

"""What a seat may do now: the finite list of legal actions (canonical handle choices),
and the one action public information forces, if any.

The lists are built on the simulation hot path, so they reuse pre-built action records
and memoised pairs instead of constructing hundreds of values per game.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.actions import (
    Action,
    Bid,
    Buy,
    Decline,
    ExchangeDone,
    ExchangePair,
    KeepLead,
    Move,
    PassBid,
    PassPawn,
    PlayBarterer,
    Sell,
    SellLead,
    Steal,
    TakeTile,
    Trade,
    UseCrook,
    Vizier,
    VizierChoice,
    VizierReveals,
)
from engine.colours import GOODS_PER_COLOUR, NCOLOURS
from engine.phase_rules import (
    PH_BID,
    PH_CHOOSE,
    PH_MOVE,
    PH_PASS,
    PH_PERFORM,
    PH_TAKE,
    PH_VIZIER,
    actors,
    allowed_vizier_colours,
    can_barter,
    crook_possible,
    eligible,
    vizier_actors,
)
from engine.prices import max_affordable
from engine.state import GameState
from engine.tiles import BUYER, SELLER, THIEF, TRADER, Tile
from engine.tiles import EXCHANGE as EXCHANGE_TILE
from engine.tiles import VIZIER as VIZIER_TILE

Hand = Mapping[int, int]
"""A player's private knowledge: handle -> colour of their own goods."""


# --- shared action records ----------------------------------------------------------
# Actions are immutable NamedTuples (values), so the legal-action lists on the simulation
# hot path reuse pre-built records instead of constructing hundreds per game.
_PASS_BID = PassBid()
_SELL_LEAD = SellLead()
_KEEP_LEAD = KeepLead()
_DECLINE = Decline()
_EXCHANGE_DONE = ExchangeDone()
_PLAY_BARTERER = PlayBarterer()
_BIDS = tuple(Bid(x) for x in range(512))
_BUYS = tuple(Buy(k) for k in range(GOODS_PER_COLOUR + 1))
_MOVES = tuple(Move(c) for c in range(64))
_TAKES = tuple(TakeTile(t) for t in range(256))
_PASSES = tuple(PassPawn(q) for q in range(8))
_STEALS = tuple(Steal(v) for v in range(8))
_VIZIERS = tuple(Vizier(c) for c in range(NCOLOURS))


def _bids(lo: int, hi: int) -> list[Action]:
    """``PassBid`` then ``Bid(lo..hi)``."""
    if hi < len(_BIDS):
        return [_PASS_BID, *_BIDS[lo : hi + 1]]
    return [_PASS_BID, *(Bid(x) for x in range(lo, hi + 1))]


def _take(t: int) -> TakeTile:
    return _TAKES[t] if t < len(_TAKES) else TakeTile(t)


def _move(c: int) -> Move:
    return _MOVES[c] if c < len(_MOVES) else Move(c)


_PAIRS: dict[int, tuple[ExchangePair, ...]] = {}


def _exchange_pairs(handle: int, give: int) -> tuple[ExchangePair, ...]:
    """``ExchangePair(handle, give, r)`` for every colour r (memoised; handles are small)."""
    key = handle * NCOLOURS + give
    out = _PAIRS.get(key)
    if out is None:
        out = tuple(ExchangePair(handle, give, r) for r in range(NCOLOURS))
        if len(_PAIRS) < 20_000:
            _PAIRS[key] = out
    return out


def _of_colour(s: GameState, seat: int, hand: Hand, colour: int) -> list[int]:
    """Own handles of ``colour``, publicly known ones first (revealing them costs nothing)."""
    known = s.known
    mine = [h for h in s.goods[seat] if hand.get(h) == colour]
    if len(mine) > 1:
        mine.sort(key=lambda h: (h not in known, h))
    return mine


def _need_hand(hand: Hand | None) -> Hand:
    if hand is None:
        raise ValueError("this decision involves hidden goods: pass the player's hand")
    return hand


def legal_actions(s: GameState, seat: int, hand: Hand | None = None) -> list[Action]:
    """Every legal action for ``seat`` now (finite; canonical handle choices).

    ``hand`` (handle -> colour of the seat's own goods) is needed for decisions that
    involve hidden goods (performing most tiles, the Vizier reveal).
    """
    if seat not in actors(s):
        return []
    return legal_actions_of_actor(s, seat, hand)


def legal_actions_of_actor(s: GameState, seat: int, hand: Hand | None = None) -> list[Action]:
    """:func:`legal_actions` for a seat the caller knows is in ``actors(s)``.

    The driver and the simulator already computed ``actors``; skipping the second
    computation matters on the hot path. Same result as :func:`legal_actions` there.
    """
    ph = s.phase
    if ph == PH_BID:
        return _bids(s.high_bid + 1, s.money[seat])
    if ph == PH_TAKE:
        opts: list[Action] = [_take(t) for t in s.layout[s.city]]
        if can_barter(s):
            opts.append(_PLAY_BARTERER)
        return opts
    if ph == PH_PASS:
        return [_PASSES[q] for q in eligible(s)]
    if ph == PH_CHOOSE:
        if s.money[s.holder] >= s.high_bid:
            return [_SELL_LEAD, _KEEP_LEAD]
        return [_SELL_LEAD]
    if ph == PH_MOVE:
        return [_move(c) for c in s.board.succ[s.city]]
    if ph == PH_PERFORM:
        return _perform_options(s, seat, _need_hand(hand))
    if ph == PH_VIZIER:
        h = _need_hand(hand)
        mine = _of_colour(s, seat, h, s.vizier_colour)
        return [VizierChoice(tuple(mine[:k])) for k in range(len(mine) + 1)]
    return []


def _perform_options(s: GameState, seat: int, hand: Hand) -> list[Action]:
    t = s.tile
    assert t is not None
    opts: list[Action] = []
    kind = t.kind
    if kind == EXCHANGE_TILE:
        if not s.pairs:
            opts.append(_DECLINE)
        else:
            opts.append(_EXCHANGE_DONE)
        if len(s.pairs) < t.n:
            # Per colour, the canonical first (see _of_colour) own good not yet paired;
            # one pass over the goods instead of one per colour.
            used = {p[0] for p in s.pairs}
            known = s.known
            first: list[tuple[bool, int] | None] = [None] * NCOLOURS
            for h in s.goods[seat]:
                c = hand.get(h)
                if c is None or h in used:
                    continue
                key = (h not in known, h)
                cur = first[c]
                if cur is None or key < cur:
                    first[c] = key
            for c, best in enumerate(first):
                if best is not None:
                    opts.extend(_exchange_pairs(best[1], c))
        return opts
    if not s.crook_used or s.trades_done > 0:
        opts.append(_DECLINE)
    if kind == SELLER:
        mine = _of_colour(s, seat, hand, t.colour)
        opts.extend(Sell(tuple(mine[:k])) for k in range(1, len(mine) + 1))
    elif kind == BUYER:
        kmax = max_affordable(s.money[seat], min(GOODS_PER_COLOUR, len(s.bag)))
        opts.extend(_BUYS[1 : kmax + 1])
    elif kind == TRADER:
        if s.trades_done < 2:
            give = _give_handles(s, seat, hand, t.give)
            if give is not None:
                opts.append(Trade(give))
    elif kind == THIEF:
        goods = s.goods
        opts.extend(_STEALS[v] for v in range(s.players) if v != seat and goods[v])
    elif kind == VIZIER_TILE:
        opts.extend(_VIZIERS[c] for c in allowed_vizier_colours(s))
    if crook_possible(s, seat):
        opts.extend(_crook_options(s, seat, hand, t))
    return opts


def _give_handles(
    s: GameState, seat: int, hand: Hand, colours: tuple[int, ...]
) -> tuple[int, ...] | None:
    """Canonical own handles matching ``colours`` in order, or None if not held."""
    taken: list[int] = []
    for c in colours:
        cand = [h for h in _of_colour(s, seat, hand, c) if h not in taken]
        if not cand:
            return None
        taken.append(cand[0])
    return tuple(taken)


def _crook_options(s: GameState, seat: int, hand: Hand, t: Tile) -> list[Action]:
    """Crook changes that leave an action the player can actually perform.

    Equivalent to testing ``t.with_symbol(i, c)`` for every change, without building
    those tiles (``NamedTuple._replace`` is slow, and this runs on every Seller, Buyer
    and Trader while the player holds a Crook): a change keeps the tile's kind, and a
    Trader's changed receive symbol leaves its give side as it is.
    """
    out: list[Action] = []
    kind = t.kind
    if kind == BUYER:
        if s.money[seat] >= 1 and len(s.bag) > 0:
            out.extend(_use_crook(0, c) for c in range(NCOLOURS) if c != t.colour)
        return out
    if kind == SELLER:
        for c in range(NCOLOURS):
            if c != t.colour and _of_colour(s, seat, hand, c):
                out.append(_use_crook(0, c))
        return out
    give = t.give
    ngive = len(give)
    can_give_as_printed: bool | None = None
    for i, cur in enumerate(t.symbols):
        for c in range(NCOLOURS):
            if c == cur:
                continue
            if i < ngive:
                ok = _give_handles(s, seat, hand, (*give[:i], c, *give[i + 1 :])) is not None
            else:
                if can_give_as_printed is None:
                    can_give_as_printed = _give_handles(s, seat, hand, give) is not None
                ok = can_give_as_printed
            if ok:
                out.append(_use_crook(i, c))
    return out


_CROOK_USES = {(i, c): UseCrook(i, c) for i in range(8) for c in range(NCOLOURS)}


def _use_crook(symbol: int, colour: int) -> UseCrook:
    return _CROOK_USES.get((symbol, colour)) or UseCrook(symbol, colour)


def combine_vizier(s: GameState, choices: Mapping[int, VizierChoice]) -> VizierReveals:
    """Join every deciding player's private choice into the simultaneous reveal."""
    missing = [p for p in vizier_actors(s) if p not in choices]
    if missing:
        raise ValueError(f"Vizier reveal still waiting for seats {missing}")
    return VizierReveals(
        tuple(choices[p].handles if p in choices else () for p in range(s.players))
    )


def forced_action(s: GameState) -> Action | None:
    """The only possible action, when public information alone fixes it."""
    ph = s.phase
    if ph == PH_BID:
        if s.money[s.bid_order[s.bid_pos]] <= s.high_bid:
            return _PASS_BID
    elif ph == PH_CHOOSE:
        if s.money[s.holder] < s.high_bid:
            return _SELL_LEAD
    elif ph == PH_MOVE:
        succ = s.board.succ[s.city]
        if len(succ) == 1:
            return _move(succ[0])
    elif ph == PH_TAKE:
        tiles = s.layout[s.city]
        if len(tiles) == 1 and not can_barter(s):
            return _take(tiles[0])
    elif ph == PH_PASS:
        el = eligible(s)
        if not el:
            return _PASSES[s.actor]  # nobody else may act: the actor keeps the pawn
        if len(el) == 1:
            return _PASSES[el[0]]
    elif ph == PH_PERFORM:
        t = s.tile
        if t is not None and t.kind == THIEF and not crook_possible(s, s.actor):
            if not any(s.goods[v] for v in range(s.players) if v != s.actor):
                return _DECLINE
    elif ph == PH_VIZIER:
        if not vizier_actors(s):
            return VizierReveals(((),) * s.players)
    return None

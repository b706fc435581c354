"""The rules of Silk Road as a state machine: who acts, what is legal, and apply.

``apply`` validates an action completely before changing anything, so an illegal
action raises :class:`IllegalAction` (naming the rule) and leaves the state as it
was. Steps with exactly one public choice (a forced pass of the pawn, a single arrow,
a bidder who cannot outbid, ...) happen by themselves inside ``apply``; they are
derived, never logged, so replaying the log reproduces them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NoReturn

from engine.actions import (
    RESOLVER,
    Action,
    Bid,
    Buy,
    Dealt,
    Decline,
    ExchangeDone,
    ExchangePair,
    FinalReveal,
    KeepLead,
    Move,
    PassBid,
    PassPawn,
    PlayBarterer,
    Seed,
    Sell,
    SellLead,
    Steal,
    Stolen,
    TakeTile,
    Trade,
    UseCrook,
    Vizier,
    VizierChoice,
    VizierReveals,
    Withdrawn,
)
from engine.colours import GOODS_PER_COLOUR, NCOLOURS, TOTAL_GOODS
from engine.errors import IllegalAction
from engine.layout import lay_out_tiles
from engine.prices import buy_cost, max_affordable, sell_income
from engine.rng import DetRng
from engine.state import BUY, EXCHANGE, TRADE, GameState, Phase
from engine.tiles import (
    BARTERER,
    BUYER,
    CROOK,
    SELLER,
    THIEF,
    TRADER,
    Tile,
)
from engine.tiles import (
    EXCHANGE as EXCHANGE_TILE,
)
from engine.tiles import (
    VIZIER as VIZIER_TILE,
)

Hand = Mapping[int, int]
"""A player's private knowledge: handle -> colour of their own goods."""

VIZIER_FIRST, VIZIER_SECOND = 5, 3

# Phase members as module constants: ``Phase.X`` is an Enum class-attribute lookup,
# several times slower than a global, and the hot path tests the phase constantly.
PH_SEED = Phase.SEED
PH_DEAL = Phase.DEAL
PH_BID = Phase.BID
PH_CHOOSE = Phase.CHOOSE
PH_MOVE = Phase.MOVE
PH_TAKE = Phase.TAKE
PH_PERFORM = Phase.PERFORM
PH_VIZIER = Phase.VIZIER
PH_WITHDRAW = Phase.WITHDRAW
PH_STEAL = Phase.STEAL
PH_PASS = Phase.PASS
PH_REVEAL = Phase.REVEAL
PH_OVER = Phase.OVER

_RESOLVER_PHASES = (PH_SEED, PH_DEAL, PH_WITHDRAW, PH_STEAL, PH_REVEAL)

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


def _fail(rule: str, msg: str) -> NoReturn:
    raise IllegalAction(rule, msg)


# ======================================================================================
# Who acts
# ======================================================================================
def actors(s: GameState) -> tuple[int, ...]:
    """The seats that must decide now; ``(RESOLVER,)`` for hidden/random steps; () at the end."""
    ph = s.phase
    if ph in _RESOLVER_PHASES:
        return (RESOLVER,)
    if ph == PH_BID:
        return (s.bid_order[s.bid_pos],)
    if ph in (PH_CHOOSE, PH_MOVE):
        return (s.holder,)
    if ph in (PH_TAKE, PH_PERFORM, PH_PASS):
        return (s.actor,)
    if ph == PH_VIZIER:
        return vizier_actors(s)
    return ()


def vizier_actors(s: GameState) -> tuple[int, ...]:
    """Players who hold goods decide what to reveal; the others can only reveal nothing."""
    return tuple(p for p in range(s.players) if s.goods[p])


def is_over(s: GameState) -> bool:
    return s.phase == PH_OVER


def is_simultaneous(s: GameState) -> bool:
    return s.phase == PH_VIZIER


# ======================================================================================
# Legal actions
# ======================================================================================
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
        if _can_barter(s):
            opts.append(_PLAY_BARTERER)
        return opts
    if ph == PH_PASS:
        return [_PASSES[q] for q in _eligible(s)]
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
    if _crook_possible(s, seat):
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


def _crook_possible(s: GameState, seat: int) -> bool:
    t = s.tile
    return (
        t is not None
        and s.crooks[seat] > 0
        and not s.crook_used
        and s.trades_done == 0
        and t.kind in (SELLER, BUYER, TRADER)
    )


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


def allowed_vizier_colours(s: GameState) -> list[int]:
    free = [c for c in range(NCOLOURS) if c not in s.locked]
    return free or list(range(NCOLOURS))


def _eligible(s: GameState) -> list[int]:
    lim = s.config.token_limit
    return [q for q in range(s.players) if q != s.actor and s.tokens[q] < lim]


def _can_barter(s: GameState) -> bool:
    a = s.actor
    return (
        not s.barterer_played
        and s.takes_left == 1
        and len(s.layout[s.city]) >= 2
        and any(v < s.visit for v in s.barterers[a])
    )


def combine_vizier(s: GameState, choices: Mapping[int, VizierChoice]) -> VizierReveals:
    """Join every deciding player's private choice into the simultaneous reveal."""
    missing = [p for p in vizier_actors(s) if p not in choices]
    if missing:
        raise ValueError(f"Vizier reveal still waiting for seats {missing}")
    return VizierReveals(
        tuple(choices[p].handles if p in choices else () for p in range(s.players))
    )


# ======================================================================================
# Apply
# ======================================================================================
def apply(s: GameState, a: Action) -> None:
    """Validate ``a`` against the rules and apply it in place, then any forced steps."""
    handler = _HANDLERS.get((s.phase, type(a)))
    if handler is None:
        if s.phase == PH_OVER:
            _fail("game.over", "the game is over")
        _fail(
            "turn.phase",
            f"{type(a).__name__} is not an action of the {s.phase.name.lower()} step",
        )
    handler(s, a)
    _auto(s)


# --- set-up -----------------------------------------------------------------------
def _on_seed(s: GameState, a: Seed) -> None:
    if not isinstance(a.seed, bytes) or not 16 <= len(a.seed) <= 64:
        _fail("setup.seed", "the seed must be 16 to 64 bytes")
    rng = DetRng(a.seed, b"silkroad/setup/v1")
    cfg = s.config
    s.layout = lay_out_tiles(cfg.board, cfg.tiles_per_city, rng)
    s.holder = rng.below(cfg.players)
    s.money = [cfg.start_money] * cfg.players
    s.phase = PH_DEAL


def _on_dealt(s: GameState, a: Dealt) -> None:
    k = s.config.goods_each
    n = s.players
    s.goods = [list(range(p * k, (p + 1) * k)) for p in range(n)]
    s.bag = list(range(n * k, TOTAL_GOODS))
    s.next_handle = TOTAL_GOODS
    _begin_auction(s)


# --- auction ------------------------------------------------------------------------
def _begin_auction(s: GameState) -> None:
    n = s.players
    s.tokens = [0] * n
    s.actor = -1
    s.bid_order = [(s.holder + i) % n for i in range(1, n)]
    s.bid_pos = 0
    s.high_bid = 0
    s.high_bidder = -1
    s.phase = PH_BID


def _on_pass_bid(s: GameState, a: PassBid) -> None:
    _next_bidder(s)


def _on_bid(s: GameState, a: Bid) -> None:
    bidder = s.bid_order[s.bid_pos]
    if a.amount <= s.high_bid:
        _fail("auction.bid", f"a bid must exceed the highest bid so far ({s.high_bid})")
    if a.amount > s.money[bidder]:
        _fail("auction.money", f"bid {a.amount} is more than your {s.money[bidder]} silver")
    s.high_bid = a.amount
    s.high_bidder = bidder
    _next_bidder(s)


def _next_bidder(s: GameState) -> None:
    s.bid_pos += 1
    if s.bid_pos < len(s.bid_order):
        return
    if s.high_bidder < 0:
        _to_move(s)
    else:
        s.phase = PH_CHOOSE


def _on_sell_lead(s: GameState, a: SellLead) -> None:
    s.money[s.high_bidder] -= s.high_bid
    s.money[s.holder] += s.high_bid
    s.holder = s.high_bidder
    _to_move(s)


def _on_keep_lead(s: GameState, a: KeepLead) -> None:
    if s.money[s.holder] < s.high_bid:
        _fail("auction.keep", f"keeping costs {s.high_bid} silver; the holder has less")
    s.money[s.holder] -= s.high_bid
    s.money[s.high_bidder] += s.high_bid
    _to_move(s)


def _to_move(s: GameState) -> None:
    s.phase = PH_MOVE


# --- movement -------------------------------------------------------------------------
def _on_move(s: GameState, a: Move) -> None:
    if a.city not in s.board.succ[s.city]:
        names = ", ".join(s.board.cities[c] for c in s.board.succ[s.city])
        _fail("move.arrow", f"the caravan can only move to {names}")
    s.city = a.city
    s.visit += 1
    if a.city == s.board.end:
        s.phase = PH_REVEAL  # the game ends immediately: no market
        return
    s.tokens = [0] * s.players
    s.actor = s.holder
    printed = s.board.printed[a.city]
    if printed is not None:
        _start_perform(s, printed, printed=True)
    else:
        _start_turn(s)


# --- market flow ------------------------------------------------------------------------
def _start_turn(s: GameState) -> None:
    s.phase = PH_TAKE
    s.takes_left = 1
    s.barterer_played = False


def _on_play_barterer(s: GameState, a: PlayBarterer) -> None:
    if not _can_barter(s):
        _fail(
            "barterer.timing",
            "a Barterer needs one taken in an earlier city, two tiles left, and must be "
            "played before taking a tile (once per turn)",
        )
    lst = s.barterers[s.actor]
    lst.remove(min(lst))
    s.barterer_played = True
    s.takes_left = 2


def _on_take(s: GameState, a: TakeTile) -> None:
    tiles = s.layout[s.city]
    if a.tile not in tiles:
        _fail("market.take", f"tile {a.tile} is not in {s.board.cities[s.city]}")
    tiles.remove(a.tile)
    s.tokens[s.actor] += 1
    s.takes_left -= 1
    t = s.board.tileset.tiles[a.tile]
    if t.kind == CROOK:
        s.crooks[s.actor] += 1
        _after_tile(s)
    elif t.kind == BARTERER:
        s.barterers[s.actor].append(s.visit)
        _after_tile(s)
    else:
        _start_perform(s, t, printed=False)


def _start_perform(s: GameState, t: Tile, printed: bool) -> None:
    s.phase = PH_PERFORM
    s.tile = t
    s.printed = printed
    s.crook_used = False
    s.trades_done = 0
    s.trade_give = ()
    s.pairs = []


def _after_tile(s: GameState) -> None:
    was_printed = s.printed
    s.tile = None
    s.printed = False
    s.crook_used = False
    s.trades_done = 0
    s.trade_give = ()
    s.pairs = []
    s.pending = None
    if was_printed:
        _start_turn(s)
    elif s.takes_left > 0 and s.layout[s.city]:
        s.phase = PH_TAKE
    else:
        s.phase = PH_PASS


def _on_pass_pawn(s: GameState, a: PassPawn) -> None:
    if a.to not in _eligible(s):
        _fail(
            "market.pass",
            f"seat {a.to} cannot receive the pawn (it is you, or they already used their turn)",
        )
    _pawn_to(s, a.to)


def _pawn_to(s: GameState, to: int) -> None:
    if to == s.actor:
        s.layout[s.city] = []  # nobody else may act: the city's remaining tiles go unused
    if s.layout[s.city]:
        s.actor = to
        _start_turn(s)
        return
    s.holder = to
    s.actor = -1
    if s.board.only_end_next(s.city):
        # Decision: no auction before a forced move into the end.  As at the end of every
        # market, the receiver collects the turn tokens; the caravan then goes on to the
        # end city, where the game ends ("with the caravan standing in the end city":
        # docs/rules.md, "The last city").
        if s.config.final_move:
            s.tokens = [0] * s.players
            s.city = s.board.end
            s.visit += 1
        s.phase = PH_REVEAL
    else:
        _begin_auction(s)


# --- performing ---------------------------------------------------------------------------
def _tile(s: GameState) -> Tile:
    assert s.tile is not None
    return s.tile


def _on_decline(s: GameState, a: Decline) -> None:
    t = _tile(s)
    if t.kind == EXCHANGE_TILE and s.pairs:
        _fail("exchange.done", "pairs are chosen: finish with ExchangeDone")
    if s.crook_used and s.trades_done == 0:
        _fail("crook.performed", "a Crook may only be used with an action that is performed")
    _after_tile(s)


def _on_use_crook(s: GameState, a: UseCrook) -> None:
    t = _tile(s)
    if not _crook_possible(s, s.actor):
        _fail("crook.use", "no Crook to play on this action (or one was already played)")
    syms = t.symbols
    if not 0 <= a.symbol < len(syms):
        _fail("crook.symbol", f"this tile shows {len(syms)} goods symbols")
    if not 0 <= a.colour < NCOLOURS or a.colour == syms[a.symbol]:
        _fail("crook.colour", "a Crook must change the symbol to another goods colour")
    nt = t.with_symbol(a.symbol, a.colour)
    if not _publicly_performable(s, s.actor, nt):
        # After a Crook the action must be performed (Decline is refused): accepting a
        # change nobody could perform would leave the table with no legal step.
        _fail("crook.performed", "a Crook may only be used with an action you can perform")
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
        _fail("goods.duplicate", "the same good is named twice")
    for h in handles:
        if h not in goods:
            _fail("goods.owner", f"good #{h} is not yours")
        if colour is not None and s.known.get(h, colour) != colour:
            _fail("goods.colour", f"good #{h} is publicly known not to be that colour")


def _on_sell(s: GameState, a: Sell) -> None:
    t = _tile(s)
    if t.kind != SELLER:
        _fail("perform.kind", "this tile is not a Seller")
    if not a.handles:
        _fail("seller.count", "sell at least one good (or decline)")
    _check_own(s, s.actor, a.handles, t.colour)
    for h in a.handles:
        s.goods[s.actor].remove(h)
        s.known.pop(h, None)
        s.bag.append(h)
    s.money[s.actor] += sell_income(len(a.handles))
    _after_tile(s)


def _on_buy(s: GameState, a: Buy) -> None:
    t = _tile(s)
    if t.kind != BUYER:
        _fail("perform.kind", "this tile is not a Buyer")
    if a.count < 1:
        _fail("buyer.count", "buy at least one good (or decline)")
    if a.count > GOODS_PER_COLOUR or a.count > len(s.bag):
        _fail("buyer.count", f"the bag cannot hold {a.count} goods of one colour")
    if buy_cost(a.count) > s.money[s.actor]:
        _fail("buyer.money", f"{a.count} goods cost {buy_cost(a.count)} silver; you have less")
    s.pending = (BUY, (t.colour,) * a.count, True)
    s.phase = PH_WITHDRAW


def _on_trade(s: GameState, a: Trade) -> None:
    t = _tile(s)
    if t.kind != TRADER:
        _fail("perform.kind", "this tile is not a Trader")
    if s.trades_done >= 2:
        _fail("trader.times", "a Trader is performed at most twice")
    if len(a.handles) != len(t.give):
        _fail("trader.give", f"give exactly {len(t.give)} goods")
    goods = s.goods[s.actor]
    if len(set(a.handles)) != len(a.handles) or any(h not in goods for h in a.handles):
        _fail("goods.owner", "give your own goods, each once")
    for h, c in zip(a.handles, t.give, strict=True):
        if s.known.get(h, c) != c:
            _fail("goods.colour", f"good #{h} is publicly known not to be that colour")
    s.trade_give = a.handles
    s.pending = (TRADE, t.receive, False)
    s.phase = PH_WITHDRAW


def _on_exchange_pair(s: GameState, a: ExchangePair) -> None:
    t = _tile(s)
    if t.kind != EXCHANGE_TILE:
        _fail("perform.kind", "this is not an Exchange")
    if len(s.pairs) >= t.n:
        _fail("exchange.count", f"exchange at most {t.n} goods")
    if not (0 <= a.give < NCOLOURS and 0 <= a.receive < NCOLOURS):
        _fail("exchange.colour", "unknown goods colour")
    if any(p[0] == a.handle for p in s.pairs):
        _fail("goods.duplicate", "that good is already being exchanged")
    _check_own(s, s.actor, (a.handle,), a.give)
    s.pairs.append((a.handle, a.give, a.receive))
    if len(s.pairs) == t.n:
        _exchange_request(s)


def _on_exchange_done(s: GameState, a: ExchangeDone) -> None:
    t = _tile(s)
    if t.kind != EXCHANGE_TILE or not s.pairs:
        _fail("exchange.done", "choose at least one pair first (or decline)")
    _exchange_request(s)


def _exchange_request(s: GameState) -> None:
    s.pending = (EXCHANGE, tuple(p[2] for p in s.pairs), False)
    s.phase = PH_WITHDRAW


def _on_steal(s: GameState, a: Steal) -> None:
    if _tile(s).kind != THIEF:
        _fail("perform.kind", "this tile is not a Thief")
    if not 0 <= a.victim < s.players or a.victim == s.actor:
        _fail("thief.victim", "steal from another player")
    if not s.goods[a.victim]:
        _fail("thief.victim", "a player with no goods cannot lose one")
    s.steal_victim = a.victim
    s.phase = PH_STEAL


def _on_vizier(s: GameState, a: Vizier) -> None:
    if _tile(s).kind != VIZIER_TILE:
        _fail("perform.kind", "this tile is not a Grand Vizier")
    if a.colour not in allowed_vizier_colours(s):
        _fail("vizier.colour", "that colour was already chosen by an earlier Grand Vizier")
    s.locked.append(a.colour)
    s.vizier_colour = a.colour
    s.phase = PH_VIZIER


def _on_vizier_reveals(s: GameState, a: VizierReveals) -> None:
    n = s.players
    if len(a.reveals) != n:
        _fail("vizier.reveal", f"expected one reveal per seat ({n})")
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
    _after_tile(s)


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
        _fail("bag.handles", "withdrawn goods must be distinct goods from the bag")
    if partial:
        if len(got) > len(request):
            _fail("bag.count", f"asked for {len(request)}, got more")
    elif len(got) not in (0, len(request)):
        _fail("bag.all_or_nothing", "this exchange takes all the goods or none")
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
            _after_tile(s)
        return
    _after_tile(s)


def _on_stolen(s: GameState, a: Stolen) -> None:
    v = s.steal_victim
    if not 0 <= a.index < len(s.goods[v]):
        _fail("thief.index", f"the victim holds {len(s.goods[v])} goods")
    # The victim's goods were re-shuffled: fresh handles, public colour links broken.
    fresh = list(range(s.next_handle, s.next_handle + len(s.goods[v])))
    s.next_handle += len(fresh)
    for h in s.goods[v]:
        s.known.pop(h, None)
    taken = fresh.pop(a.index)
    s.goods[v] = fresh
    s.goods[s.actor].append(taken)
    s.steal_victim = -1
    _after_tile(s)


def _on_final_reveal(s: GameState, a: FinalReveal) -> None:
    n = s.players
    if len(a.colours) != n:
        _fail("reveal.shape", f"expected colours for {n} seats")
    for p in range(n):
        cs = a.colours[p]
        if len(cs) != len(s.goods[p]):
            _fail("reveal.shape", f"seat {p} holds {len(s.goods[p])} goods")
        for h, c in zip(s.goods[p], cs, strict=True):
            if not 0 <= c < NCOLOURS:
                _fail("reveal.colour", "unknown goods colour")
            if s.known.get(h, c) != c:
                _fail("reveal.colour", f"good #{h} is publicly known to be another colour")
    s.final = tuple(tuple(cs) for cs in a.colours)
    s.phase = PH_OVER


_HANDLERS: dict[tuple[int, type], Callable[[GameState, Any], None]] = {
    (PH_SEED, Seed): _on_seed,
    (PH_DEAL, Dealt): _on_dealt,
    (PH_BID, PassBid): _on_pass_bid,
    (PH_BID, Bid): _on_bid,
    (PH_CHOOSE, SellLead): _on_sell_lead,
    (PH_CHOOSE, KeepLead): _on_keep_lead,
    (PH_MOVE, Move): _on_move,
    (PH_TAKE, TakeTile): _on_take,
    (PH_TAKE, PlayBarterer): _on_play_barterer,
    (PH_PASS, PassPawn): _on_pass_pawn,
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


# ======================================================================================
# Forced steps
# ======================================================================================
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
        if len(tiles) == 1 and not _can_barter(s):
            return _take(tiles[0])
    elif ph == PH_PASS:
        el = _eligible(s)
        if not el:
            return _PASSES[s.actor]  # nobody else may act: the actor keeps the pawn
        if len(el) == 1:
            return _PASSES[el[0]]
    elif ph == PH_PERFORM:
        t = s.tile
        if t is not None and t.kind == THIEF and not _crook_possible(s, s.actor):
            if not any(s.goods[v] for v in range(s.players) if v != s.actor):
                return _DECLINE
    elif ph == PH_VIZIER:
        if not vizier_actors(s):
            return VizierReveals(((),) * s.players)
    return None


def _auto(s: GameState) -> None:
    while True:
        f = forced_action(s)
        if f is None:
            return
        if isinstance(f, PassPawn):
            _pawn_to(s, f.to)
        else:
            _HANDLERS[(s.phase, type(f))](s, f)

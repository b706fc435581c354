"""The course of a game between markets: set-up, the auction for the lead, the
caravan's move, and a market's flow (taking tiles, Barterers, passing the pawn, the end).

Each handler validates before it changes anything (see :func:`engine.rules.apply`);
:data:`HANDLERS` maps (phase, action type) to them.  Performing a tile is in
:mod:`engine.perform`, which hands back through :func:`after_tile`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.actions import (
    Bid,
    Dealt,
    KeepLead,
    Move,
    PassBid,
    PassPawn,
    PlayBarterer,
    Seed,
    SellLead,
    TakeTile,
)
from engine.colours import TOTAL_GOODS
from engine.errors import fail
from engine.layout import lay_out_tiles
from engine.phase_rules import (
    PH_BID,
    PH_CHOOSE,
    PH_DEAL,
    PH_MOVE,
    PH_PASS,
    PH_PERFORM,
    PH_REVEAL,
    PH_SEED,
    PH_TAKE,
    can_barter,
    eligible,
)
from engine.rng import DetRng
from engine.state import GameState
from engine.tiles import BARTERER, CROOK, Tile


# --- set-up -----------------------------------------------------------------------
def _on_seed(s: GameState, a: Seed) -> None:
    if not isinstance(a.seed, bytes) or not 16 <= len(a.seed) <= 64:
        fail("setup.seed", "the seed must be 16 to 64 bytes")
    first = s.config.first_holder
    if first is not None and (not isinstance(first, int) or isinstance(first, bool)
                              or not 0 <= first < s.config.players):
        fail("setup.first_holder", f"the first leader {first!r} is not a seat")
    rng = DetRng(a.seed, b"silkroad/setup/v1")
    cfg = s.config
    s.layout = lay_out_tiles(cfg.board, cfg.tiles_per_city, rng)
    drawn = rng.below(cfg.players)  # drawn either way: the seed's stream is unchanged
    s.holder = drawn if first is None else first
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
        fail("auction.bid", f"a bid must exceed the highest bid so far ({s.high_bid})")
    if a.amount > s.money[bidder]:
        fail("auction.money", f"bid {a.amount} is more than your {s.money[bidder]} silver")
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
        fail("auction.keep", f"keeping costs {s.high_bid} silver; the holder has less")
    s.money[s.holder] -= s.high_bid
    s.money[s.high_bidder] += s.high_bid
    _to_move(s)


def _to_move(s: GameState) -> None:
    s.phase = PH_MOVE



# --- movement -------------------------------------------------------------------------
def _on_move(s: GameState, a: Move) -> None:
    if a.city not in s.board.succ[s.city]:
        names = ", ".join(s.board.cities[c] for c in s.board.succ[s.city])
        fail("move.arrow", f"the caravan can only move to {names}")
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
    if not can_barter(s):
        fail(
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
        fail("market.take", f"tile {a.tile} is not in {s.board.cities[s.city]}")
    tiles.remove(a.tile)
    s.tokens[s.actor] += 1
    s.takes_left -= 1
    t = s.board.tileset.tiles[a.tile]
    if t.kind == CROOK:
        s.crooks[s.actor] += 1
        after_tile(s)
    elif t.kind == BARTERER:
        s.barterers[s.actor].append(s.visit)
        after_tile(s)
    else:
        _start_perform(s, t, printed=False)


def _set_tile(s: GameState, t: Tile | None, printed: bool) -> None:
    """The tile being performed (None: none), with its per-tile progress reset."""
    s.tile = t
    s.printed = printed
    s.crook_used = False
    s.trades_done = 0
    s.trade_give = ()
    s.pairs = []


def _start_perform(s: GameState, t: Tile, printed: bool) -> None:
    s.phase = PH_PERFORM
    _set_tile(s, t, printed)


def after_tile(s: GameState) -> None:
    """A tile is done (performed, declined or kept): the market goes on."""
    was_printed = s.printed
    _set_tile(s, None, False)
    s.pending = None
    if was_printed:
        _start_turn(s)
    elif s.takes_left > 0 and s.layout[s.city]:
        s.phase = PH_TAKE
    else:
        s.phase = PH_PASS


def _on_pass_pawn(s: GameState, a: PassPawn) -> None:
    if a.to not in eligible(s):
        fail(
            "market.pass",
            f"seat {a.to} cannot receive the pawn (it is you, or they already used their turn)",
        )
    pawn_to(s, a.to)


def pawn_to(s: GameState, to: int) -> None:
    """The pawn goes to ``to``: its turn in this market, or (market over) the next
    auction, or the end of the game when only the end city is next."""
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


HANDLERS: dict[tuple[int, type], Callable[[GameState, Any], None]] = {
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
}

"""Helpers for the rules-engine tests: build exact situations and check outcomes.

Kept in a uniquely named module (not ``conftest``) so test modules can import it
without clashing with other test directories' conftest modules; ``conftest.py``
re-exports the useful pieces as fixtures.

Situations are built from a real started game (``Seed`` + ``Dealt`` applied through
:func:`engine.rules.apply`), then the few fields a test cares about are set directly
(``GameState`` is a plain mutable object). Hidden colours come from a
:class:`LocalDealer` whose truth (``dealer.colour``) the test controls.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

import pytest
from hypothesis import HealthCheck, settings

from engine.actions import RESOLVER, Action, Dealt, Seed, TakeTile, VizierChoice
from engine.board import Board
from engine.colours import NCOLOURS
from engine.dealer import LocalDealer
from engine.errors import IllegalAction
from engine.game import new_game
from engine.rules import actors, apply, combine_vizier, is_simultaneous, legal_actions
from engine.state import GameState, Phase, make_config
from engine.tiles import BARTERER, BUYER, CROOK, EXCHANGE, SELLER, THIEF, TRADER, VIZIER, Tile

IVORY, SILK, FRUIT, JEWELS, SPICE = range(NCOLOURS)
ORANGE, PURPLE = 0, 1

# Handles 0..74 get the colour ``h % 5``: exactly 15 of each colour (RULES.md).
TRUTH: dict[int, int] = {h: h % NCOLOURS for h in range(75)}

SEED = Seed(bytes(range(32)))

PROPERTY = settings(
    max_examples=50,
    deadline=None,
    database=None,  # hermetic: no example database written into the work tree
    suppress_health_check=[HealthCheck.too_slow],
)
"""Settings for whole-game property tests: modest, so the engine suite stays fast."""


# --------------------------------------------------------------------------------------
# Starting a table
# --------------------------------------------------------------------------------------
def started(
    players: int = 4,
    reverse: bool = False,
    seed: Seed = SEED,
    board: Board | None = None,
) -> tuple[GameState, LocalDealer]:
    """A game after Seed and Dealt (in the first auction), with the fixed TRUTH colours."""
    s = new_game(make_config(players, reverse, board))
    dealer = LocalDealer(0)
    apply(s, seed)
    dealer.resolve(s)  # the dealer's own DEAL shuffle; replaced by TRUTH below
    apply(s, Dealt())
    dealer.colour = dict(TRUTH)
    return s, dealer


def set_hands(s: GameState, dealer: LocalDealer, hands: dict[int, Sequence[int]]) -> None:
    """Give each listed seat exactly these goods colours (others keep theirs).

    Goods come from (and go back to) the bag; publicly known colours are forgotten.
    """
    for seat in hands:
        s.bag.extend(s.goods[seat])
        s.goods[seat] = []
    s.bag.sort()
    s.known.clear()
    for seat, colours in hands.items():
        for c in colours:
            h = next(h for h in s.bag if dealer.colour[h] == c)
            s.bag.remove(h)
            s.goods[seat].append(h)


def of(s: GameState, dealer: LocalDealer, seat: int, colour: int) -> list[int]:
    """Handles of ``seat``'s goods whose true colour is ``colour``, in holding order."""
    return [h for h in s.goods[seat] if dealer.colour[h] == colour]


def bag_of(s: GameState, dealer: LocalDealer, colour: int) -> list[int]:
    return [h for h in s.bag if dealer.colour[h] == colour]


def hoard(s: GameState, dealer: LocalDealer, colour: int, seat: int, keep: int = 0) -> None:
    """Move all but ``keep`` of the bag's goods of ``colour`` to ``seat`` (keeps 75 goods)."""
    for h in bag_of(s, dealer, colour)[keep:]:
        s.bag.remove(h)
        s.goods[seat].append(h)


def auction(s: GameState, holder: int, money: Sequence[int] | None = None) -> None:
    """Start a fresh auction in the current city with ``holder`` holding the pawn."""
    n = s.players
    s.holder = holder
    s.actor = -1
    s.tokens = [0] * n
    s.bid_order = [(holder + i) % n for i in range(1, n)]
    s.bid_pos = 0
    s.high_bid = 0
    s.high_bidder = -1
    s.phase = Phase.BID
    if money is not None:
        s.money = list(money)


def city(s: GameState, name: str) -> int:
    return s.board.index(name)


def tile_ids(
    board: Board,
    kind: int,
    *,
    back: int | None = None,
    colour: int | None = None,
    give: tuple[int, ...] | None = None,
) -> list[int]:
    """Ids of tiles in the manifest matching the description."""
    out = []
    for t in board.tileset.tiles:
        if t.kind != kind or (back is not None and t.back != back):
            continue
        if colour is not None and t.colour != colour:
            continue
        if give is not None and t.give != give:
            continue
        out.append(t.id)
    return out


def tile(board: Board, tid: int) -> Tile:
    return board.tileset.tiles[tid]


def at_market(
    s: GameState,
    where: str,
    actor: int,
    tiles: Iterable[int],
    tokens: Sequence[int] | None = None,
    visit: int | None = None,
) -> None:
    """Put ``actor`` in the TAKE step of city ``where`` holding exactly ``tiles``."""
    c = city(s, where)
    s.city = c
    s.layout[c] = list(tiles)
    s.holder = actor
    s.actor = actor
    s.tokens = list(tokens) if tokens is not None else [0] * s.players
    s.takes_left = 1
    s.barterer_played = False
    s.tile = None
    s.printed = False
    s.phase = Phase.TAKE
    if visit is not None:
        s.visit = visit
    elif s.visit == 0:
        s.visit = 1


def perform(s: GameState, dealer: LocalDealer, seat: int, tid: int, where: str = "Kucha") -> None:
    """Put ``seat`` in the PERFORM step of tile ``tid``: taken as the leader's first tile in
    ``where`` (a Thief is left there, so afterwards the pawn is passed on)."""
    other = next(t.id for t in s.board.tileset.tiles if t.id != tid and t.kind == THIEF)
    at_market(s, where, seat, [tid, other])
    apply(s, TakeTile(tid))
    assert s.phase == Phase.PERFORM


def hand(s: GameState, dealer: LocalDealer, seat: int) -> dict[int, int]:
    return dealer.hand(s, seat)


def act(s: GameState, dealer: LocalDealer, a: Action) -> None:
    """Apply a player's action after the dealer verified its hidden claims."""
    dealer.check(s, a)
    apply(s, a)


def resolve(s: GameState, dealer: LocalDealer) -> Action:
    """Apply the resolver's answer for the current RESOLVER step and return it."""
    assert actors(s) == (RESOLVER,), f"not a resolver step: {s.phase.name}"
    a = dealer.resolve(s)
    apply(s, a)
    return a


def assert_illegal(s: GameState, a: Action, rule: str) -> IllegalAction:
    """``a`` is rejected naming ``rule`` and the state (and its hash) is unchanged."""
    before = s.hash()
    snapshot = s.copy()
    with pytest.raises(IllegalAction) as info:
        apply(s, a)
    assert info.value.rule == rule, f"expected rule {rule}, got {info.value}"
    assert s.hash() == before
    assert s.canonical() == snapshot.canonical()
    return info.value


def assert_lie(s: GameState, dealer: LocalDealer, a: Action) -> None:
    """The dealer (who knows the truth) rejects ``a``'s false colour claim."""
    with pytest.raises(IllegalAction) as info:
        dealer.check(s, a)
    assert info.value.rule == "hidden.claim"


def colour_counts(dealer: LocalDealer, handles: Iterable[int]) -> list[int]:
    out = [0] * NCOLOURS
    for h in handles:
        out[dealer.colour[h]] += 1
    return out


# --------------------------------------------------------------------------------------
# Random legal play
# --------------------------------------------------------------------------------------
def random_step(s: GameState, dealer: LocalDealer, rng: random.Random) -> Action:
    """One random legal step (resolver, simultaneous Vizier or a single actor); returns it."""
    acts = actors(s)
    if acts[0] == RESOLVER:
        a = dealer.resolve(s)
    elif is_simultaneous(s):
        choices: dict[int, VizierChoice] = {}
        for p in acts:
            legal = legal_actions(s, p, dealer.hand(s, p))
            assert legal, f"seat {p} has no Vizier choice"
            c = rng.choice(legal)
            assert isinstance(c, VizierChoice)
            choices[p] = c
        a = combine_vizier(s, choices)
    else:
        legal = legal_actions(s, acts[0], dealer.hand(s, acts[0]))
        assert legal, f"no legal action in {s.phase.name}"
        a = rng.choice(legal)
    dealer.check(s, a)
    apply(s, a)
    return a


def play_random(
    players: int, reverse: bool, seed: int, max_steps: int = 3000
) -> tuple[GameState, LocalDealer, list[Action]]:
    s = new_game(make_config(players, reverse))
    dealer = LocalDealer(seed)
    rng = random.Random(seed)
    log: list[Action] = []
    while actors(s):
        log.append(random_step(s, dealer, rng))
        assert len(log) < max_steps
    return s, dealer, log


__all__ = [
    "BARTERER",
    "BUYER",
    "CROOK",
    "EXCHANGE",
    "FRUIT",
    "IVORY",
    "JEWELS",
    "ORANGE",
    "PROPERTY",
    "PURPLE",
    "SEED",
    "SELLER",
    "SILK",
    "SPICE",
    "THIEF",
    "TRADER",
    "TRUTH",
    "VIZIER",
    "act",
    "assert_illegal",
    "assert_lie",
    "at_market",
    "auction",
    "bag_of",
    "city",
    "colour_counts",
    "hand",
    "hoard",
    "of",
    "perform",
    "play_random",
    "random_step",
    "resolve",
    "set_hands",
    "started",
    "tile",
    "tile_ids",
]

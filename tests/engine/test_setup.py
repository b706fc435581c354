"""RULES.md "Set-up" and "Variant reverse": tiles per city, backs, the Crook/Barterer
swap, money, goods, the random leader."""

from __future__ import annotations

from collections import Counter

import pytest
from engine_kit import ORANGE, PURPLE, assert_illegal

from engine.actions import Dealt, PassBid, Seed
from engine.board import default_board, load_board
from engine.colours import TOTAL_GOODS
from engine.errors import DataError
from engine.game import new_game
from engine.layout import lay_out_tiles
from engine.rng import DetRng
from engine.rules import actors, apply
from engine.state import GameState, Phase, make_config
from engine.tiles import BARTERER, CROOK, KEPT_KINDS

PLAYERS = (3, 4, 5, 6)
EXPECTED_PER_CITY = {3: 5, 4: 3, 5: 4, 6: 5}


def _seed(i: int) -> Seed:
    return Seed(i.to_bytes(4, "big") * 8)


def _seeded(players: int, reverse: bool, i: int) -> GameState:
    s = new_game(make_config(players, reverse))
    apply(s, _seed(i))
    return s


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("players", PLAYERS)
def test_tiles_per_city_and_backs(players: int, reverse: bool) -> None:
    s = _seeded(players, reverse, 7)
    b = s.board
    assert s.config.tiles_per_city == EXPECTED_PER_CITY[players]
    seen: list[int] = []
    for c, tiles in enumerate(s.layout):
        if c in (b.start, b.end):
            assert tiles == [], "start and end cities get no tiles"
            continue
        assert len(tiles) == EXPECTED_PER_CITY[players], b.cities[c]
        for tid in tiles:
            assert b.tileset.tiles[tid].back == b.colour[c], "tile back matches city colour"
        seen.extend(tiles)
    assert len(seen) == len(set(seen)), "each tile is placed at most once"
    # Printed actions do not count toward the number.
    assert any(p is not None for p in b.printed)


@pytest.mark.parametrize("reverse", [False, True])
def test_city_colours_and_direction(reverse: bool) -> None:
    b = default_board(reverse)
    east = ["Lanzhou", "Yumen", "Dunhuang", "Turfan", "Koria", "Khotan", "Kucha", "Yarkand",
            "Kashgar"]
    west = ["Samarkand", "Balkh", "Bukhara", "Merv", "Susia", "Ecbatana", "Baghdad", "Aleppo",
            "Tyre"]
    east_back, west_back = (PURPLE, ORANGE) if reverse else (ORANGE, PURPLE)
    assert all(b.colour[b.index(n)] == east_back for n in east)
    assert all(b.colour[b.index(n)] == west_back for n in west)
    start, end = ("Antioch", "Chang'An") if reverse else ("Chang'An", "Antioch")
    assert b.cities[b.start] == start and b.cities[b.end] == end
    forbidden = {"Lanzhou", "Yumen"} if reverse else {"Aleppo", "Tyre"}
    assert {b.cities[c] for c in b.no_crook_barterer} == forbidden
    # Edges are reversed.
    n = default_board(False)
    for a, succ in enumerate(n.succ):
        for c in succ:
            assert (a in b.succ[c]) if reverse else (c in b.succ[a])


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("players", PLAYERS)
def test_no_crook_or_barterer_on_forbidden_cities(players: int, reverse: bool) -> None:
    for i in range(40):
        s = _seeded(players, reverse, i)
        for c in s.board.no_crook_barterer:
            kinds = {s.board.tileset.tiles[t].kind for t in s.layout[c]}
            assert not kinds & {CROOK, BARTERER}, (players, reverse, i, s.board.cities[c])


def _unswapped(players: int, reverse: bool, i: int) -> list[list[int]]:
    """The layout before the swap: same shuffle, no forbidden cities."""
    b = default_board(reverse)
    rng = DetRng(_seed(i).seed, b"silkroad/setup/v1")
    return lay_out_tiles(b._replace(no_crook_barterer=()), EXPECTED_PER_CITY[players], rng)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("players", PLAYERS)
def test_swap_replaces_only_kept_tiles(players: int, reverse: bool) -> None:
    """Decision: a Crook/Barterer on a forbidden city is swapped with an unused tile of the
    same back if any remain (4-5 players), else with a non-kept tile of another,
    non-forbidden city of the same colour (3 and 6 players use all 45 tiles)."""
    b = default_board(reverse)
    kept = {t.id for t in b.tileset.tiles if t.kind in KEPT_KINDS}
    swaps_seen = 0
    for i in range(30):
        before = _unswapped(players, reverse, i)
        after = _seeded(players, reverse, i).layout
        forbidden = set(b.no_crook_barterer)
        moved_in: list[int] = []
        for c in forbidden:
            for old, new in zip(before[c], after[c], strict=True):
                if old in kept:
                    assert new not in kept, "the replacement is never a Crook or Barterer"
                    assert b.tileset.tiles[new].back == b.colour[c]
                    moved_in.append(new)
                    swaps_seen += 1
                else:
                    assert new == old, "tiles other than Crook/Barterer stay"
        changed = {
            c: [(o, n) for o, n in zip(before[c], after[c], strict=True) if o != n]
            for c in b.tile_cities
            if c not in forbidden
        }
        if players in (4, 5):
            # Unused tiles remain: no other city changes.
            assert all(not ch for ch in changed.values())
            used_before = {t for ts in before for t in ts}
            assert all(t not in used_before for t in moved_in), "taken from the unused tiles"
        else:
            # All tiles used: the swap partners come from other non-forbidden cities.
            for ch in changed.values():
                for old, new in ch:
                    assert old in moved_in and new in kept
        # Same multiset of backs per city; every tile at most once.
        flat = [t for ts in after for t in ts]
        assert len(flat) == len(set(flat))
    assert swaps_seen > 0, "the seeds exercised at least one swap"


def test_swap_impossible_is_a_data_error() -> None:
    """If every purple city is forbidden and the purple tiles cannot fill them without a
    Crook/Barterer, set-up fails with a DataError rather than breaking the rule."""
    data = {
        "start": "S",
        "end": "E",
        "cities": [
            {"name": "S", "colour": None},
            {"name": "A", "colour": "orange"},
            {"name": "B", "colour": "purple"},
            {"name": "C", "colour": "purple"},
            {"name": "E", "colour": None},
        ],
        "arrows": [["S", "A"], ["A", "B"], ["A", "C"], ["B", "E"], ["C", "E"]],
        "no_crook_barterer": ["B", "C"],
        "tiles": {
            "orange": [{"kind": "thief", "count": 5}],
            "purple": [
                {"kind": "crook", "count": 3},
                {"kind": "barterer", "count": 3},
                {"kind": "thief", "count": 4},
            ],
        },
    }
    b = load_board(data)
    with pytest.raises(DataError, match="Crooks/Barterers"):
        lay_out_tiles(b, 5, DetRng(b"x" * 16))


@pytest.mark.parametrize("players", PLAYERS)
def test_money_goods_and_first_auction(players: int) -> None:
    s = _seeded(players, False, 3)
    assert s.phase == Phase.DEAL and actors(s) == (-1,)
    assert s.money == [10] * players, "1 gold + 5 silver each"
    apply(s, Dealt())
    assert s.goods == [[3 * p, 3 * p + 1, 3 * p + 2] for p in range(players)]
    assert len(s.bag) == TOTAL_GOODS - 3 * players
    assert s.known == {}, "starting goods are hidden"
    assert s.city == s.board.start
    assert s.phase == Phase.BID
    # Bidding starts with the player to the holder's left (seat + 1) and goes clockwise.
    assert s.bid_order == [(s.holder + i) % players for i in range(1, players)]
    assert s.tokens == [0] * players


@pytest.mark.parametrize("players", PLAYERS)
def test_random_leader_covers_every_seat(players: int) -> None:
    holders = Counter(_seeded(players, False, i).holder for i in range(60))
    assert set(holders) == set(range(players))


def test_seed_is_validated() -> None:
    s = new_game(make_config(4))
    assert_illegal(s, Seed(b"short"), "setup.seed")
    assert_illegal(s, PassBid(), "turn.phase")


def test_same_seed_same_layout_and_leader() -> None:
    a, b = _seeded(5, True, 11), _seeded(5, True, 11)
    assert a.layout == b.layout and a.holder == b.holder
    c = _seeded(5, True, 12)
    assert (c.layout, c.holder) != (a.layout, a.holder)


def test_player_count_bounds() -> None:
    for bad in (2, 7):
        with pytest.raises(ValueError):
            make_config(bad)

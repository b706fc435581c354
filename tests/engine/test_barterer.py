"""RULES.md "Barterer" timing (and the 3-player Decision)."""

from __future__ import annotations

from engine_kit import BARTERER, SELLER, assert_illegal, at_market, city, tile_ids

from engine.actions import Decline, Move, PassPawn, PlayBarterer, TakeTile
from engine.dealer import LocalDealer
from engine.rules import apply, legal_actions
from engine.state import GameState, Phase

Table = tuple[GameState, LocalDealer]


def _sellers(s: GameState, k: int) -> list[int]:
    return tile_ids(s.board, SELLER, back=0)[:k]


def _take_decline(s: GameState, tid: int) -> None:
    if s.phase == Phase.TAKE:
        apply(s, TakeTile(tid))
    assert s.tile is not None and s.tile.id == tid
    apply(s, Decline())


def test_barterer_takes_two_tiles_with_a_token_each(t4: Table) -> None:
    s, _ = t4
    tiles = _sellers(s, 3)
    at_market(s, "Kucha", 0, tiles, visit=5)
    _take_decline(s, tiles[0])
    s.barterers[1] = [2]  # taken in an earlier city
    apply(s, PassPawn(1))
    legal = legal_actions(s, 1)
    assert legal == [TakeTile(tiles[1]), TakeTile(tiles[2]), PlayBarterer()]
    apply(s, PlayBarterer())
    assert s.barterers[1] == [] and s.takes_left == 2
    assert_illegal(s, PlayBarterer(), "barterer.timing")  # once per turn
    apply(s, TakeTile(tiles[2]))
    apply(s, Decline())
    assert s.phase == Phase.PERFORM and s.actor == 1, "the last tile is taken by itself"
    apply(s, Decline())
    assert s.tokens == [1, 2, 0, 0], "one turn token per tile"
    # Two players will not act; the one who took the last tile chooses who holds the pawn.
    assert s.phase == Phase.PASS and legal_actions(s, 1) == [PassPawn(2), PassPawn(3)]
    apply(s, PassPawn(3))
    assert s.holder == 3 and s.phase == Phase.BID


def test_not_in_the_city_where_it_was_taken(t3: Table) -> None:
    s, _ = t3
    barterer = tile_ids(s.board, BARTERER, back=0)[0]
    tiles = _sellers(s, 4)
    at_market(s, "Kucha", 0, [barterer, *tiles], visit=5)
    apply(s, TakeTile(barterer))
    assert s.barterers[0] == [5]
    apply(s, PassPawn(1))
    _take_decline(s, tiles[0])
    apply(s, PassPawn(0))  # seat 0 acts again in the same city
    assert PlayBarterer() not in legal_actions(s, 0)
    assert_illegal(s, PlayBarterer(), "barterer.timing")
    # In the next city it may be played.
    at_market(s, "Kashgar", 0, tiles[1:], visit=6)
    assert PlayBarterer() in legal_actions(s, 0)


def test_needs_two_tiles(t4: Table) -> None:
    s, _ = t4
    (t,) = _sellers(s, 1)
    s.barterers[0] = [1]
    at_market(s, "Kucha", 0, [t], visit=5)
    assert legal_actions(s, 0) == [TakeTile(t)]
    assert_illegal(s, PlayBarterer(), "barterer.timing")


def test_not_after_taking_a_tile(t4: Table) -> None:
    s, _ = t4
    tiles = _sellers(s, 3)
    s.barterers[0] = [1, 2]
    at_market(s, "Kucha", 0, tiles, visit=5)
    apply(s, PlayBarterer())
    _take_decline(s, tiles[0])
    assert s.phase == Phase.TAKE and s.takes_left == 1
    assert_illegal(s, PlayBarterer(), "barterer.timing")
    assert s.barterers[0] == [2], "the other Barterer is kept for later"


def test_three_players_barterer_up_to_three_tokens(t3: Table) -> None:
    """Decision (3 players): a Barterer may bring a player to 3 turn tokens."""
    s, _ = t3
    tiles = _sellers(s, 5)
    at_market(s, "Kucha", 0, tiles, visit=5)
    s.barterers[0] = [3]
    _take_decline(s, tiles[0])  # A: 1 token
    apply(s, PassPawn(1))
    _take_decline(s, tiles[1])  # B: 1
    apply(s, PassPawn(0))
    apply(s, PlayBarterer())
    _take_decline(s, tiles[2])
    _take_decline(s, tiles[3])
    assert s.tokens == [3, 1, 0]
    # One tile left; B and C may still act, A chooses.
    assert legal_actions(s, 0) == [PassPawn(1), PassPawn(2)]
    apply(s, PassPawn(2))
    _take_decline(s, tiles[4])
    # No tile left: only B (1 token) may still act and receives the pawn.
    assert s.holder == 1 and s.phase == Phase.BID


def test_leader_decides_after_the_printed_bonus(t4: Table) -> None:
    s, _ = t4
    s.barterers[2] = [1]
    s.city, s.visit, s.holder, s.phase = city(s, "Lanzhou"), 1, 2, Phase.MOVE
    s.layout[city(s, "Dunhuang")] = _sellers(s, 3)
    apply(s, Move(city(s, "Dunhuang")))
    assert s.phase == Phase.PERFORM and s.printed
    assert_illegal(s, PlayBarterer(), "turn.phase")
    apply(s, Decline())
    assert PlayBarterer() in legal_actions(s, 2)

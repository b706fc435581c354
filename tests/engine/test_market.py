"""RULES.md "3. The market": taking tiles, turn tokens, passing the pawn (4-6 and 3
players), who ends with the pawn, kept tiles."""

from __future__ import annotations

import pytest
from engine_kit import (
    BARTERER,
    CROOK,
    SELLER,
    assert_illegal,
    at_market,
    started,
    tile_ids,
)

from engine.actions import Decline, PassPawn, TakeTile
from engine.dealer import LocalDealer
from engine.rules import actors, apply, legal_actions
from engine.state import GameState, Phase

Table = tuple[GameState, LocalDealer]


def _sellers(s: GameState, k: int, back: int = 0) -> list[int]:
    return tile_ids(s.board, SELLER, back=back)[:k]


def _act(s: GameState, tid: int) -> None:
    """The current actor takes ``tid`` and declines it. The last tile of a city is taken
    by itself (no choice), so then only the Decline is applied."""
    if len(s.layout[s.city]) > 1:
        apply(s, TakeTile(tid))
    assert s.phase == Phase.PERFORM and s.tile is not None and s.tile.id == tid
    apply(s, Decline())


def test_leader_must_take_a_tile_from_this_city(t4: Table) -> None:
    s, _ = t4
    tiles = _sellers(s, 3)
    at_market(s, "Kucha", 0, tiles)
    assert legal_actions(s, 0) == [TakeTile(t) for t in tiles]
    assert_illegal(s, TakeTile(_sellers(s, 5)[4]), "market.take")
    assert_illegal(s, Decline(), "turn.phase")
    assert_illegal(s, PassPawn(1), "turn.phase")
    _act(s, tiles[1])
    assert s.layout[s.city] == [tiles[0], tiles[2]], "the taken tile leaves the game"
    assert s.tokens == [1, 0, 0, 0]
    assert s.phase == Phase.PASS and actors(s) == (0,)


def test_four_players_pass_to_players_without_a_token(t4: Table) -> None:
    s, _ = t4
    tiles = _sellers(s, 3)
    at_market(s, "Kucha", 0, tiles)
    _act(s, tiles[0])
    assert legal_actions(s, 0) == [PassPawn(1), PassPawn(2), PassPawn(3)]
    assert_illegal(s, PassPawn(0), "market.pass")  # not to yourself
    assert_illegal(s, PassPawn(4), "market.pass")
    apply(s, PassPawn(2))
    assert s.phase == Phase.TAKE and s.actor == 2
    _act(s, tiles[1])
    assert legal_actions(s, 2) == [PassPawn(1), PassPawn(3)]
    assert_illegal(s, PassPawn(0), "market.pass")  # already has a turn token
    apply(s, PassPawn(3))
    assert s.phase == Phase.PERFORM, "a single tile left is taken by itself"
    apply(s, Decline())
    # No tiles left; only seat 1 may still act: it gets the pawn without acting.
    assert s.holder == 1 and s.actor == -1
    assert s.phase == Phase.BID and s.bid_order == [2, 3, 0]
    assert s.tokens == [0, 0, 0, 0], "the holder collects all turn tokens"


def test_last_actor_chooses_among_several_who_may_still_act(t4: Table) -> None:
    s, _ = t4
    (t,) = _sellers(s, 1)
    at_market(s, "Kucha", 0, [t])
    apply(s, TakeTile(t))
    apply(s, Decline())
    assert s.layout[s.city] == []
    assert legal_actions(s, 0) == [PassPawn(1), PassPawn(2), PassPawn(3)]
    apply(s, PassPawn(2))
    assert s.holder == 2 and s.phase == Phase.BID, "the receiver does not act"


@pytest.mark.parametrize("players", [5, 6])
def test_each_player_at_most_once_with_many_players(players: int) -> None:
    s, _ = started(players)
    tiles = _sellers(s, players - 1)
    at_market(s, "Kucha", 0, tiles)
    order = [0]
    for i, t in enumerate(tiles):
        _act(s, t)
        if i < len(tiles) - 1:
            nxt = max(q for q in range(players) if q not in order)
            apply(s, PassPawn(nxt))
            order.append(nxt)
    (last,) = [q for q in range(players) if q not in order]
    assert s.holder == last and s.phase == Phase.BID


def test_three_players_each_act_twice_and_the_third_ends_with_the_pawn(t3: Table) -> None:
    s, _ = t3
    tiles = _sellers(s, 5)
    at_market(s, "Kucha", 0, tiles)
    _act(s, tiles[0])  # A
    assert legal_actions(s, 0) == [PassPawn(1), PassPawn(2)]
    apply(s, PassPawn(1))
    _act(s, tiles[1])  # B
    apply(s, PassPawn(2))
    _act(s, tiles[2])  # C
    # A already has one token but may act again with 3 players.
    assert legal_actions(s, 2) == [PassPawn(0), PassPawn(1)]
    apply(s, PassPawn(0))
    _act(s, tiles[3])  # A again: 2 tokens
    assert legal_actions(s, 0) == [PassPawn(1), PassPawn(2)]
    apply(s, PassPawn(1))
    _act(s, tiles[4])  # B again: 2 tokens; no tiles left
    assert s.tokens == [0, 0, 0], "reset for the next auction"
    assert s.holder == 2 and s.phase == Phase.BID, "C, the only one who may act, holds the pawn"


def test_three_players_two_tokens_cannot_receive(t3: Table) -> None:
    s, _ = t3
    tiles = _sellers(s, 5)
    at_market(s, "Kucha", 0, tiles)
    _act(s, tiles[0])  # A 1
    apply(s, PassPawn(1))
    _act(s, tiles[1])  # B 1
    apply(s, PassPawn(0))
    _act(s, tiles[2])  # A 2
    assert legal_actions(s, 0) == [PassPawn(1), PassPawn(2)]
    apply(s, PassPawn(1))
    _act(s, tiles[3])  # B 2
    # Only C may still act: the pawn goes to C by itself, and C takes the last tile.
    assert s.phase == Phase.PERFORM and s.actor == 2 and s.tokens == [2, 2, 1]
    assert_illegal(s, PassPawn(0), "turn.phase")
    _act(s, tiles[4])  # C 1, last tile: nobody else may act, C keeps the pawn
    assert s.holder == 2 and s.phase == Phase.BID


def test_crook_and_barterer_are_kept_not_performed(t4: Table) -> None:
    s, _ = t4
    crook = tile_ids(s.board, CROOK, back=0)[0]
    barterer = tile_ids(s.board, BARTERER, back=0)[0]
    seller = _sellers(s, 1)[0]
    at_market(s, "Kucha", 0, [crook, barterer, seller], visit=4)
    apply(s, TakeTile(crook))
    assert s.crooks == [1, 0, 0, 0] and s.phase == Phase.PASS and s.tile is None
    apply(s, PassPawn(1))
    apply(s, TakeTile(barterer))
    assert s.barterers[1] == [4], "remembered with the city visit where it was taken"
    assert s.phase == Phase.PASS
    assert crook not in s.layout[s.city] and barterer not in s.layout[s.city]

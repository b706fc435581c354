"""RULES.md "2. Moving the caravan": arrows, the immediate end, and the Decision that no
auction is held when the only arrows lead to the end (10 auctions on every route)."""

from __future__ import annotations

import pytest
from engine_kit import SEED, SELLER, assert_illegal, at_market, auction, city, tile_ids

from engine.actions import Dealt, Decline, Move, PassBid, TakeTile
from engine.board import Board, default_board, load_board
from engine.dealer import LocalDealer
from engine.game import new_game
from engine.rules import actors, apply, forced_action, legal_actions
from engine.state import GameState, Phase, make_config
from engine.tiles import EXCHANGE

Table = tuple[GameState, LocalDealer]


def test_move_only_along_an_arrow(t4: Table) -> None:
    s, _ = t4
    auction(s, holder=0)
    for _ in range(3):
        apply(s, PassBid())
    assert s.phase == Phase.MOVE and s.city == s.board.start
    assert_illegal(s, Move(city(s, "Dunhuang")), "move.arrow")
    assert_illegal(s, Move(s.board.start), "move.arrow")
    assert_illegal(s, Move(999), "move.arrow")
    apply(s, Move(city(s, "Yumen")))
    assert s.city == city(s, "Yumen") and s.visit == 1
    # A city without a printed action: the leader takes the first tile.
    assert s.phase == Phase.TAKE and s.actor == 0 and s.tokens == [0, 0, 0, 0]


def test_single_arrow_moves_by_itself_and_printed_bonus_comes_first(t4: Table) -> None:
    s, _ = t4
    s.city = city(s, "Lanzhou")
    s.visit = 1
    auction(s, holder=3)
    assert forced_action(s) is None
    for _ in range(3):
        apply(s, PassBid())
    # Lanzhou has one arrow (Dunhuang): no Move decision; Dunhuang's printed bonus follows.
    assert s.city == city(s, "Dunhuang") and s.visit == 2
    assert s.phase == Phase.PERFORM and s.printed and actors(s) == (3,)
    assert s.tile is not None and s.tile.kind == EXCHANGE and s.tile.n == 2
    apply(s, Decline())
    assert s.phase == Phase.TAKE and s.actor == 3, "then the leader must take a tile"
    assert s.tokens == [0, 0, 0, 0], "the printed bonus places no turn token"


def test_moving_into_the_end_ends_the_game_immediately(t4: Table) -> None:
    s, _ = t4
    s.city = city(s, "Aleppo")
    s.phase = Phase.MOVE
    s.holder = 1
    money = list(s.money)
    apply(s, Move(s.board.end))
    assert s.city == s.board.end and s.phase == Phase.REVEAL
    assert s.money == money and s.layout[s.board.end] == []


def _fork_board() -> Board:
    """S -> A; A -> B or straight to E; B -> E."""
    return load_board(
        {
            "start": "S",
            "end": "E",
            "cities": [
                {"name": "S", "colour": None},
                {"name": "A", "colour": "orange"},
                {"name": "B", "colour": "purple"},
                {"name": "E", "colour": None},
            ],
            "arrows": [["S", "A"], ["A", "B"], ["A", "E"], ["B", "E"]],
        }
    )


def test_leader_may_steer_into_the_end_skipping_a_market() -> None:
    board = _fork_board()
    s = new_game(make_config(3, board=board))
    apply(s, SEED)
    apply(s, Dealt())
    a = board.index("A")
    s.city = a
    s.visit = 1
    auction(s, holder=0)
    apply(s, PassBid())
    apply(s, PassBid())
    # A has an arrow to a non-end city too, so the auction was held and the leader chooses.
    assert s.phase == Phase.MOVE
    assert legal_actions(s, 0) == [Move(board.index("B")), Move(board.end)]
    apply(s, Move(board.end))
    assert s.phase == Phase.REVEAL and actors(s) == (-1,)


def test_no_auction_when_only_arrows_lead_to_the_end(t4: Table) -> None:
    s, _ = t4
    sellers = tile_ids(s.board, SELLER, back=1)
    at_market(s, "Tyre", 0, sellers[:1], tokens=[0, 1, 1, 0], visit=10)
    money = list(s.money)
    apply(s, TakeTile(sellers[0]))
    apply(s, Decline())
    # The pawn goes to seat 3 (the only one who may still act), and the game ends.
    assert s.holder == 3
    assert s.phase == Phase.REVEAL and s.money == money


def _routes(b: Board) -> list[list[int]]:
    out: list[list[int]] = []

    def walk(path: list[int]) -> None:
        if path[-1] == b.end:
            out.append(path)
            return
        for n in b.succ[path[-1]]:
            walk([*path, n])

    walk([b.start])
    return out


@pytest.mark.parametrize("reverse", [False, True])
def test_every_route_holds_ten_auctions(reverse: bool) -> None:
    b = default_board(reverse)
    routes = _routes(b)
    assert len(routes) > 5
    for r in routes:
        tile_cities = r[1:-1]
        assert len(tile_cities) == 10
        # One auction in the start city, one after every market except the last one.
        auctions = sum(1 for c in r[:-1] if not b.only_end_next(c))
        assert auctions == 10, [b.cities[c] for c in r]

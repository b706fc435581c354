"""The public game state: everything every peer knows, nothing more.

Mutable with ``__slots__`` because the simulator applies hundreds of thousands of
actions a second; :meth:`GameState.copy` gives an independent snapshot. Goods are
integer handles; ``known`` maps a *held* handle to its colour when the public has
seen it (bought, revealed to a Vizier). Hidden colours live with the resolver.
Goods in play are the bag and the hands; ``set_aside`` lists the colours of the goods
Grand Viziers set aside for good (docs/rules.md, "The Grand Vizier's marker").
"""

from __future__ import annotations

import hashlib
from enum import IntEnum
from typing import Any, NamedTuple

import msgpack

from engine.board import Board, default_board
from engine.tiles import Tile


class Phase(IntEnum):
    SEED = 0  # resolver: the table's public seed
    DEAL = 1  # resolver: hidden starting goods
    BID = 2  # a bidder passes or bids
    CHOOSE = 3  # the holder sells or keeps the pawn
    MOVE = 4  # the leader moves the caravan
    TAKE = 5  # the actor takes a tile (or plays a Barterer first)
    PERFORM = 6  # the actor performs / declines the tile or printed bonus
    VIZIER = 7  # simultaneous Grand Vizier reveal
    WITHDRAW = 8  # resolver: goods from the bag
    STEAL = 9  # resolver: the thief's random pick
    PASS = 10  # the actor passes the pawn
    REVEAL = 11  # resolver: final reveal of all goods
    OVER = 12


class Config(NamedTuple):
    """What a table agrees on before play: it is hashed into every state hash."""

    players: int
    board: Board
    goods_each: int = 3
    start_money: int = 10
    #: after the last market the caravan goes on into the end city, and the pawn's receiver
    #: collects the turn tokens (docs/rules.md, "The end").  Networked games recorded
    #: before protocol version 4 ended in the last tile city: their config says False so
    #: that they replay (and audit) exactly as they were played.  Not in the state hash:
    #: the protocol version, which the game id binds, decides it.
    final_move: bool = True
    #: a Grand Vizier, once revealed, sets one good of its colour aside for the rest of
    #: the game, drawn from the bag like a purchase (docs/rules.md, "The Grand Vizier's
    #: marker").  Networked games recorded before protocol version 5 set nothing aside:
    #: their config says False.  Not in the state hash, for the same reason as
    #: ``final_move``; the state shows it once a good is set aside.
    vizier_marker: bool = True
    #: the seat that holds the leader pawn first; None: the seed draws it (the rulebook's
    #: random start).  Games 2.. of a series at one table rotate it (docs/rules.md,
    #: "a series").  Not in the state hash: the game id binds it, and the state shows the
    #: holder from the seed on.
    first_holder: int | None = None

    @property
    def reverse(self) -> bool:
        return self.board.reverse

    @property
    def tiles_per_city(self) -> int:
        return 5 if self.players == 3 else self.players - 1

    @property
    def token_limit(self) -> int:
        """Turn tokens a player may have in front of them and still receive the pawn."""
        return 2 if self.players == 3 else 1


def make_config(players: int, reverse: bool = False, board: Board | None = None) -> Config:
    if not 3 <= players <= 6:
        raise ValueError(f"Silk Road is for 3 to 6 players, not {players}")
    if board is None:
        board = default_board(reverse)
    elif board.reverse != reverse:
        raise ValueError("the board's direction does not match the variant")
    return Config(players, board)


# Pending resolver request purposes.  MARKER: the Grand Vizier's marker, one good of its
# colour drawn from the bag as a purchase is, that goes to nobody (``set_aside``).
BUY, TRADE, EXCHANGE, MARKER = 0, 1, 2, 3


class GameState:
    __slots__ = (
        "actor",
        "bag",
        "barterer_played",
        "barterers",
        "bid_order",
        "bid_pos",
        "board",
        "city",
        "config",
        "crook_used",
        "crooks",
        "final",
        "goods",
        "high_bid",
        "high_bidder",
        "holder",
        "known",
        "layout",
        "locked",
        "money",
        "next_handle",
        "pairs",
        "pending",
        "phase",
        "players",
        "printed",
        "set_aside",
        "steal_victim",
        "takes_left",
        "tile",
        "tokens",
        "trade_give",
        "trades_done",
        "visit",
        "vizier_colour",
    )

    def __init__(self, config: Config) -> None:
        n = config.players
        self.config = config
        # Plain copies of two config fields (not properties): read on every step.
        self.players: int = n
        self.board: Board = config.board
        self.phase = Phase.SEED
        self.layout: list[list[int]] = [[] for _ in config.board.cities]
        self.money = [0] * n
        self.goods: list[list[int]] = [[] for _ in range(n)]
        self.known: dict[int, int] = {}
        self.crooks = [0] * n
        self.barterers: list[list[int]] = [[] for _ in range(n)]
        self.bag: list[int] = []
        self.next_handle = 0
        self.holder = 0
        self.bid_order: list[int] = []
        self.bid_pos = 0
        self.high_bid = 0
        self.high_bidder = -1
        self.city = config.board.start
        self.visit = 0
        self.actor = -1
        self.tokens = [0] * n
        self.takes_left = 0
        self.barterer_played = False
        self.tile: Tile | None = None
        self.printed = False
        self.crook_used = False
        self.trades_done = 0
        self.trade_give: tuple[int, ...] = ()
        self.pairs: list[tuple[int, int, int]] = []
        self.pending: tuple[int, tuple[int, ...], bool] | None = None
        self.vizier_colour = -1
        self.locked: list[int] = []
        #: colours of the goods Grand Viziers set aside (out of play), in order
        self.set_aside: list[int] = []
        self.steal_victim = -1
        self.final: tuple[tuple[int, ...], ...] | None = None

    def copy(self) -> GameState:
        s = GameState.__new__(GameState)
        for name in GameState.__slots__:
            v = getattr(self, name)
            if isinstance(v, list):
                v = [list(x) if isinstance(x, list) else x for x in v]
            elif isinstance(v, dict):
                v = dict(v)
            setattr(s, name, v)
        return s

    # --- canonical form and hash -------------------------------------------------
    def canonical(self) -> list[Any]:
        """All state as nested arrays of ints/bytes, in a fixed order (no maps, no floats).

        ``set_aside`` is appended only once a good was set aside: until then a game has
        exactly the encoding (hence the hashes) it had before the Vizier's marker
        existed, so games recorded then still replay hash for hash."""
        cfg = self.config
        t = self.tile
        tile = None if t is None else [t.id, t.back, t.kind, t.colour, list(t.give),
                                       list(t.receive), t.n]
        out: list[Any] = [
            1,  # state format version
            [cfg.players, int(cfg.reverse), cfg.board.digest, cfg.goods_each, cfg.start_money],
            int(self.phase),
            self.layout,
            self.money,
            self.goods,
            sorted(self.known.items()),
            self.crooks,
            self.barterers,
            self.bag,
            self.next_handle,
            self.holder,
            self.bid_order,
            self.bid_pos,
            self.high_bid,
            self.high_bidder,
            self.city,
            self.visit,
            self.actor,
            self.tokens,
            self.takes_left,
            int(self.barterer_played),
            tile,
            int(self.printed),
            int(self.crook_used),
            self.trades_done,
            list(self.trade_give),
            [list(p) for p in self.pairs],
            None if self.pending is None
            else [self.pending[0], list(self.pending[1]), int(self.pending[2])],
            self.vizier_colour,
            self.locked,
            self.steal_victim,
            None if self.final is None else [list(f) for f in self.final],
        ]
        if self.set_aside:
            out.append(self.set_aside)
        return out

    def encode(self) -> bytes:
        return msgpack.packb(self.canonical(), use_bin_type=True)

    def hash(self) -> bytes:
        """SHA-256 of the canonical encoding: equal on every peer in lockstep."""
        return hashlib.sha256(self.encode()).digest()

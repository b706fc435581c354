"""The save file: a game record written as the game goes.

Format: a msgpack *stream*. The first object is a header map (config, dealer seed,
names, bot kinds); every following object is one action in its canonical wire form
(``engine.actions.to_wire``), appended and flushed as soon as it is applied. A game
killed mid-write therefore leaves a valid prefix: the reader stops at the last whole
action. The dealer seed makes the record complete for an auditor (the LocalDealer
re-run from it reproduces every hidden colour); a p2p transcript replaces it later.
"""

from __future__ import annotations

import datetime as _dt
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import msgpack

from engine.actions import Action, from_wire, to_wire
from engine.board import Board, default_board, load_board_file
from engine.errors import DataError, DecodeError
from engine.state import Config, make_config

FORMAT = "silkroad-game"
VERSION = 1
SUFFIX = ".silkroad"


class SaveFileError(ValueError):
    """A save file that cannot be read (missing, not a game record, wrong board)."""


@dataclass
class GameHeader:
    players: int
    reverse: bool
    board_path: str | None
    board_digest: str
    dealer_seed: int
    names: list[str]
    kinds: list[str]
    seat: int | None
    created: str
    #: the Grand Vizier's marker (engine ``Config.vizier_marker``): records written before
    #: the rule existed have no such key and replay without it
    vizier_marker: bool = True

    def to_map(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "players": self.players,
            "variant": "reverse" if self.reverse else "normal",
            "board": {"path": self.board_path, "digest": self.board_digest},
            "dealer_seed": self.dealer_seed,
            "names": self.names,
            "kinds": self.kinds,
            "seat": self.seat,
            "created": self.created,
            "vizier_marker": self.vizier_marker,
        }

    @classmethod
    def from_map(cls, m: Any) -> GameHeader:
        if not isinstance(m, dict) or m.get("format") != FORMAT:
            raise SaveFileError("not a silkroad game record (bad header)")
        if m.get("version") != VERSION:
            raise SaveFileError(f"game record version {m.get('version')} is not supported")
        try:
            board = m["board"]
            return cls(
                players=int(m["players"]),
                reverse=m["variant"] == "reverse",
                board_path=board.get("path"),
                board_digest=str(board["digest"]),
                dealer_seed=int(m["dealer_seed"]),
                names=[str(n) for n in m["names"]],
                kinds=[str(k) for k in m["kinds"]],
                seat=None if m.get("seat") is None else int(m["seat"]),
                created=str(m.get("created", "")),
                vizier_marker=m.get("vizier_marker", False) is True,
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise SaveFileError(f"game record header is damaged ({exc})") from None


def default_save_path(seed: int, directory: str | Path = "games") -> Path:
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path(directory) / f"{stamp}-seed{seed}{SUFFIX}"


class SaveWriter:
    """Appends the header, then one action per call, flushing each so a crash keeps a prefix."""

    def __init__(self, path: str | Path, header: GameHeader) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f: BinaryIO | None = open(self.path, "wb")
        self._write(header.to_map())

    def _write(self, obj: Any) -> None:
        if self._f is None:
            return
        self._f.write(msgpack.packb(obj, use_bin_type=True))
        self._f.flush()
        os.fsync(self._f.fileno())

    def append(self, action: Action) -> None:
        self._write(to_wire(action))

    def close(self) -> None:
        if self._f is not None:
            self._f.close()
            self._f = None


@dataclass
class SavedGame:
    header: GameHeader
    config: Config
    actions: list[Action]
    truncated: bool  # the file ended inside an action (a killed game)


def board_for(header: GameHeader) -> Board:
    """The board the game was played on; checks the digest so a changed file is caught."""
    try:
        if header.board_path:
            board = load_board_file(header.board_path, reverse=header.reverse)
        else:
            board = default_board(header.reverse)
    except DataError as exc:
        raise SaveFileError(f"cannot load the game's board: {exc}") from None
    if board.digest.hex() != header.board_digest:
        raise SaveFileError("the board file changed since this game was played (digest differs)")
    return board


def load_game(path: str | Path) -> SavedGame:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SaveFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False, use_list=True)
    unpacker.feed(data)
    objs: list[Any] = []
    try:
        for obj in unpacker:
            objs.append(obj)
    except Exception as exc:  # msgpack raises several unrelated types on garbage
        raise SaveFileError(f"{path} is not a silkroad game record ({exc})") from None
    if not objs:
        raise SaveFileError(f"{path} is empty or not a silkroad game record")
    header = GameHeader.from_map(objs[0])
    truncated = unpacker.tell() < len(data)
    actions: list[Action] = []
    for i, obj in enumerate(objs[1:]):
        try:
            actions.append(from_wire(obj))
        except DecodeError as exc:
            raise SaveFileError(f"action {i} in {path} is damaged: {exc}") from None
    try:
        config = make_config(header.players, header.reverse, board_for(header))._replace(
            vizier_marker=header.vizier_marker)
    except ValueError as exc:
        raise SaveFileError(str(exc)) from None
    return SavedGame(header, config, actions, truncated)

"""A series at one table: "one more game" keeps the seats (``silkroad host --games N``).

Each game of a series is an ordinary game (its own lobby start, words, game id, folder,
transcript and audit); what carries over is decided here, deterministically:

* **the seats** — seats that come back keep their place; a newcomer takes the place of a
  seat that left (:meth:`NextGame.arrange`), so "same seats" means the same order;
* **a new game id** — game *k* carries ``game_no = k`` in its params
  (:class:`p2p.game.GameParams`), hashed into the game id: the same roster and rules never
  repeat an id, and the coin flip of every game is bound to its own id;
* **the first leader rotates** — game 1's is the shared coin's pick; game *k* ≥ 2's is the
  seat after game *k*−1's first leader, ``(previous + 1) mod players``
  (:meth:`NextGame.first_leader`).  It is in the params, so the game id binds it and every
  seat's engine starts with it (``engine.state.Config.first_holder``, set by
  :meth:`p2p.table.setup.TableSetup.config`);
* **the record** — ``series.json`` in each seat's game folder (:class:`SeriesRecord`):
  the series so far after that game (game ids in order, winners by name, wins per name),
  written atomically and privately like every file of the folder.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.actions import Seed
from engine.rules import apply
from engine.state import GameState

from ..game import MAX_SERIES
from ..net.connection import Listener
from ..store import StoreError, write_private

SERIES_FILE = "series.json"
SERIES_VERSION = 1


@dataclass(frozen=True)
class NextGame:
    """What the host carries from one game of a series into the next one's lobby."""

    #: the number of the game about to be seated (2..)
    game_no: int
    #: the previous game's seat keys in seat order (seat 0, the host, first)
    order: tuple[bytes, ...]
    #: the previous game's first leader (its seat), None if not known
    previous_leader: int | None

    def __post_init__(self) -> None:
        if not 2 <= self.game_no <= MAX_SERIES:
            raise ValueError(f"game number {self.game_no} (2..{MAX_SERIES})")

    def arrange(self, keys: Sequence[bytes]) -> list[int]:
        """The seat order for the seated ``keys`` (join order, the host first): indices
        into ``keys``.  A key that played the previous game keeps its seat when that seat
        still exists; everybody else (newcomers first in join order) fills the free
        seats from the lowest up.  The host was seat 0 and stays seat 0."""
        n = len(keys)
        before = {k: i for i, k in enumerate(self.order)}
        slots: list[int | None] = [None] * n
        rest: list[int] = []
        for j, key in enumerate(keys):
            want = before.get(key)
            if want is not None and want < n and slots[want] is None:
                slots[want] = j
            else:
                rest.append(j)
        free = iter(i for i in range(n) if slots[i] is None)
        for j in rest:
            slots[next(free)] = j
        return [j for j in slots if j is not None]

    def first_leader(self, players: int) -> int | None:
        """The seat after the previous game's first leader (None: the coin picks)."""
        if self.previous_leader is None:
            return None
        return (self.previous_leader + 1) % players


def rotation_refusal(record: SeriesRecord, game_no: int, first_leader: int | None,
                     names: Sequence[str]) -> str | None:
    """Why a seat refuses the host's next game, or None to accept it: the game's first
    leader must be the seat after the first leader of the previous game *this seat played*
    (:meth:`NextGame.first_leader`), read from its own record (``record``, the seat's
    :class:`SeriesRecord`).  Why the seat checks it: the first leader is in the params the
    host proposes, and a host that kept it (or picked its friend) would lead every game
    first; only a seat that played game ``game_no``−1 knows which seat led it, so a
    newcomer, or a seat that missed a game, takes the host's word like the variant."""
    previous = next((g for g in reversed(record.games) if g.game_no == game_no - 1), None)
    if game_no < 2 or previous is None:
        return None
    want: int | None = None  # the previous leader unknown: the coin picks, as at the host
    if previous.first_leader is not None and previous.first_leader in previous.players:
        want = (previous.players.index(previous.first_leader) + 1) % len(names)
    if first_leader == want:
        return None

    def who(seat: int | None) -> str:
        if seat is None:
            return "the coin's pick"
        return f"seat {seat} ({names[seat]})" if 0 <= seat < len(names) else f"seat {seat}"

    return (f"the host's game {game_no} gives the first lead to {who(first_leader)}, but "
            f"game {game_no - 1} began with {previous.first_leader or 'the coin'}: in a "
            f"series the first lead passes to the next seat, {who(want)}")


def first_leader_of(record: tuple[GameState, list[Any]] | None) -> int | None:
    """The first leader of a played game, from its first state and its actions
    (:meth:`p2p.handle.TableHandle.record`): the holder right after the seed."""
    if record is None:
        return None
    state, actions = record
    if not actions or not isinstance(actions[0], Seed):
        return None
    first = state.copy()
    apply(first, actions[0])
    return first.holder


class KeptListener(Listener):
    """A listener that outlives the games it serves: a table closes its listener when its
    game ends (:func:`p2p.local_table.finish_peer`), but a series plays every game on one
    key and one address, so that close is ignored until :meth:`close_for_good`.  Why not
    a new listener per game: joiners dial the host's address again at once, and a closed
    port in between would refuse them."""

    async def close(self) -> None:
        """Left open: the series goes on (see the class docstring)."""

    async def close_for_good(self) -> None:
        await super().close()


@dataclass
class SeriesGame:
    game_no: int
    game_id: str
    players: list[str]
    winners: list[str]
    first_leader: str | None


@dataclass
class SeriesRecord:
    """The games of a series so far, as a seat saw them end (``series.json``).

    Wins are counted per name (the roster's, unique at a table): a shared win counts for
    each winner."""

    table: str = ""
    games: list[SeriesGame] = field(default_factory=list)

    def add(self, game_no: int, game_id: bytes, names: Sequence[str],
            winners: Sequence[int], first_leader: int | None) -> None:
        self.games.append(SeriesGame(
            game_no, game_id.hex(), list(names), [names[w] for w in winners],
            names[first_leader] if first_leader is not None else None))

    @property
    def wins(self) -> dict[str, int]:
        """Wins per name, every name that played included (0 wins too), in the order
        names first sat down."""
        out: dict[str, int] = {}
        for game in self.games:
            for name in game.players:
                out.setdefault(name, 0)
            for name in game.winners:
                out[name] += 1
        return out

    def line(self) -> str:
        """``Series after 3 games: Ann 2 wins, Bob 1, Cy 0`` (most wins first)."""
        ranked = sorted(self.wins.items(), key=lambda kv: -kv[1])
        parts = [f"{name} {n} win{'s' if n != 1 else ''}" if i == 0 else f"{name} {n}"
                 for i, (name, n) in enumerate(ranked)]
        count = len(self.games)
        return f"Series after {count} game{'s' if count != 1 else ''}: {', '.join(parts)}"

    def to_json(self) -> dict[str, Any]:
        return {"version": SERIES_VERSION, "table": self.table,
                "games": [vars(g) for g in self.games], "wins": self.wins}

    def save(self, folder: str | os.PathLike[str]) -> Path:
        """Write ``series.json`` into a seat's game folder (atomic, ``0600``)."""
        data = json.dumps(self.to_json(), indent=1).encode()
        return write_private(Path(folder) / SERIES_FILE, data)


def read_series(folder: str | os.PathLike[str]) -> SeriesRecord | None:
    """The ``series.json`` of a game folder; None when the game was not part of a series
    recorded here.  A damaged file raises :class:`p2p.store.StoreError` naming it."""
    path = Path(folder) / SERIES_FILE
    if not path.exists():
        return None
    try:
        obj = json.loads(path.read_text())
        if obj.get("version") != SERIES_VERSION:
            raise ValueError(f"version {obj.get('version')!r}")
        games = [SeriesGame(int(g["game_no"]), str(g["game_id"]),
                            [str(n) for n in g["players"]], [str(n) for n in g["winners"]],
                            None if g["first_leader"] is None else str(g["first_leader"]))
                 for g in obj["games"]]
        for game in games:
            if not set(game.winners) <= set(game.players):
                raise ValueError(f"game {game.game_no}: a winner who did not play")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise StoreError(f"cannot read {path}: {exc}") from None
    return SeriesRecord(str(obj.get("table", "")), games)

"""The route map: cities, arrows, printed actions; loaded from a data file and validated.

A board file is JSON (see ``engine/data/default_board.json``). It may carry its own
tile manifest under ``"tiles"``; otherwise the default manifest is used. Every
problem is reported as a :class:`DataError` that names the city, field or rule.
"""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

from engine.errors import DataError
from engine.tiles import BACKS, KEPT_KINDS, Tile, TileSet, load_tileset, parse_tile_spec

MIN_TILE_SLOTS = 5
"""Tiles a city needs at most (3 players: 5; 6 players: 5)."""


class Board(NamedTuple):
    """An *oriented* board: the direction of travel is already applied.

    ``colour[i]`` is the back colour whose tiles city ``i`` receives (-1: no tiles).
    ``succ[i]`` are the arrows onward, ``printed[i]`` the printed bonus (or None).
    """

    name: str
    cities: tuple[str, ...]
    colour: tuple[int, ...]
    succ: tuple[tuple[int, ...], ...]
    printed: tuple[Tile | None, ...]
    start: int
    end: int
    no_crook_barterer: tuple[int, ...]
    tileset: TileSet
    digest: bytes
    reverse: bool = False

    def index(self, name: str) -> int:  # type: ignore[override]  # deliberately shadows tuple.index
        """City index by name (case-insensitive, ignoring apostrophes)."""
        key = _norm(name)
        for i, c in enumerate(self.cities):
            if _norm(c) == key:
                return i
        raise KeyError(name)

    @property
    def tile_cities(self) -> tuple[int, ...]:
        return tuple(i for i, c in enumerate(self.colour) if c >= 0)

    def only_end_next(self, city: int) -> bool:
        """True when every arrow from ``city`` leads to the end (no auction follows)."""
        s = self.succ[city]
        return bool(s) and all(n == self.end for n in s)


def _norm(s: str) -> str:
    return s.lower().replace("'", "").replace("’", "").replace(" ", "")


def _canonical_digest(data: Any) -> bytes:
    blob = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).digest()


def default_board_data() -> dict[str, Any]:
    text = resources.files("engine.data").joinpath("default_board.json").read_text("utf-8")
    return json.loads(text)


def default_tiles_data() -> dict[str, Any]:
    text = resources.files("engine.data").joinpath("default_tiles.json").read_text("utf-8")
    return json.loads(text)


def load_board_file(path: str | Path, reverse: bool = False) -> Board:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise DataError(f"cannot read board file {path}: {exc}") from None
    return load_board(data, reverse=reverse, where=str(path))


def default_board(reverse: bool = False) -> Board:
    return load_board(default_board_data(), reverse=reverse, where="default board")


def load_board(data: Any, reverse: bool = False, where: str = "board") -> Board:
    """Validate parsed board JSON and orient it (``reverse``: Antioch to Chang'An)."""
    if not isinstance(data, dict):
        raise DataError(f"{where}: expected a JSON object")
    tiles_data = data.get("tiles", default_tiles_data())
    tileset = load_tileset(tiles_data, where=f"{where}.tiles")
    digest = _canonical_digest({"board": {k: v for k, v in data.items() if k != "tiles"},
                                "tiles": tiles_data})
    cities_raw = data.get("cities")
    if not isinstance(cities_raw, list) or len(cities_raw) < 3:
        raise DataError(f"{where}: 'cities' must be a list of at least 3 cities")
    names: list[str] = []
    colours: list[int] = []
    printed_specs: list[Any] = []
    for i, c in enumerate(cities_raw):
        if not isinstance(c, dict) or not isinstance(c.get("name"), str) or not c["name"]:
            raise DataError(f"{where}: cities[{i}] needs a non-empty 'name'")
        name = c["name"]
        if _norm(name) in {_norm(n) for n in names}:
            raise DataError(f"{where}: city {name!r} appears twice")
        names.append(name)
        col = c.get("colour")
        if col is None:
            colours.append(-1)
        elif col in BACKS:
            colours.append(BACKS.index(col))
        else:
            raise DataError(f"{where}: city {name!r} has colour {col!r} (orange, purple or null)")
        printed_specs.append(c.get("printed"))
    idx = {n: i for i, n in enumerate(names)}

    def city(name: Any, field: str) -> int:
        if not isinstance(name, str) or name not in idx:
            raise DataError(f"{where}: {field} names unknown city {name!r}")
        return idx[name]

    start = city(data.get("start"), "'start'")
    end = city(data.get("end"), "'end'")
    if start == end:
        raise DataError(f"{where}: start and end must differ")
    for special in (start, end):
        if colours[special] != -1:
            raise DataError(
                f"{where}: {names[special]} (start/end) must have no tiles (colour null)"
            )
    for i, col in enumerate(colours):
        if col == -1 and i not in (start, end):
            raise DataError(f"{where}: city {names[i]!r} needs a colour (orange or purple)")
    arrows = data.get("arrows")
    if not isinstance(arrows, list) or not arrows:
        raise DataError(f"{where}: 'arrows' must be a non-empty list of [from, to] pairs")
    edges: list[tuple[int, int]] = []
    for k, a in enumerate(arrows):
        if not isinstance(a, list) or len(a) != 2:
            raise DataError(f"{where}: arrows[{k}] must be a [from, to] pair")
        e = (city(a[0], f"arrows[{k}]"), city(a[1], f"arrows[{k}]"))
        if e[0] == e[1] or e in edges:
            raise DataError(f"{where}: arrows[{k}] {a[0]}->{a[1]} is a loop or a duplicate")
        edges.append(e)
    def forbidden_list(key: str) -> tuple[int, ...]:
        raw = data.get(key, [])
        if not isinstance(raw, list):
            raise DataError(f"{where}: {key!r} must be a list of city names")
        out = tuple(city(n, key) for n in raw)
        for f in out:
            if colours[f] == -1:
                raise DataError(f"{where}: {key} city {names[f]!r} has no tiles")
        return out

    forbidden = forbidden_list("reverse_no_crook_barterer" if reverse else "no_crook_barterer")
    # Also validate the other direction's list (same checks) so a bad file is reported
    # whichever direction is loaded.
    forbidden_list("no_crook_barterer" if reverse else "reverse_no_crook_barterer")

    if reverse:
        edges = [(b, a) for a, b in edges]
        start, end = end, start
        colours = [-1 if c == -1 else 1 - c for c in colours]
    succ: list[list[int]] = [[] for _ in names]
    for a, b in edges:
        succ[a].append(b)
    printed: list[Tile | None] = []
    for i, spec in enumerate(printed_specs):
        if spec is None:
            printed.append(None)
            continue
        if colours[i] == -1:
            raise DataError(f"{where}: {names[i]!r} has no tiles, so no printed action")
        t = parse_tile_spec(spec, colours[i], -1, f"{where}: printed action of {names[i]!r}")
        if t.kind in KEPT_KINDS:
            raise DataError(f"{where}: printed action of {names[i]!r} cannot be a {spec['kind']}")
        printed.append(t)
    direction = "reverse" if reverse else "normal"
    for i, s in enumerate(succ):
        if i == end:
            if s:
                raise DataError(f"{where}: the end city {names[i]} has arrows onward ({direction})")
        elif not 1 <= len(s) <= 2:
            raise DataError(
                f"{where}: {names[i]!r} has {len(s)} arrows onward ({direction}); need 1 or 2"
            )
    _check_routes(names, succ, start, end, where)
    board = Board(
        name=str(data.get("name", "custom board")),
        cities=tuple(names),
        colour=tuple(colours),
        succ=tuple(tuple(s) for s in succ),
        printed=tuple(printed),
        start=start,
        end=end,
        no_crook_barterer=forbidden,
        tileset=tileset,
        digest=digest,
        reverse=reverse,
    )
    _check_tile_supply(board, where)
    return board


def _check_routes(
    names: list[str], succ: list[list[int]], start: int, end: int, where: str
) -> None:
    """Every city is reachable from the start, there are no cycles, every route ends."""
    colour_state = [0] * len(names)  # 0 new, 1 on stack, 2 done
    order: list[int] = []
    stack: list[tuple[int, int]] = [(start, 0)]
    colour_state[start] = 1
    while stack:
        node, k = stack.pop()
        if k < len(succ[node]):
            stack.append((node, k + 1))
            nxt = succ[node][k]
            if colour_state[nxt] == 1:
                raise DataError(f"{where}: the arrows form a cycle through {names[nxt]!r}")
            if colour_state[nxt] == 0:
                colour_state[nxt] = 1
                stack.append((nxt, 0))
        else:
            colour_state[node] = 2
            order.append(node)
    for i, st in enumerate(colour_state):
        if st == 0:
            raise DataError(f"{where}: city {names[i]!r} cannot be reached from {names[start]}")
    # Acyclic and every non-end city has an arrow, so every route reaches a sink: the end.


def _check_tile_supply(board: Board, where: str) -> None:
    for back, back_name in enumerate(BACKS):
        ncities = sum(1 for c in board.colour if c == back)
        have = sum(1 for t in board.tileset.tiles if t.back == back)
        if have < MIN_TILE_SLOTS * ncities:
            raise DataError(
                f"{where}: {ncities} {back_name} cities need {MIN_TILE_SLOTS * ncities} "
                f"{back_name}-backed tiles for 3 or 6 players; the manifest has {have}"
            )

"""Action tiles: kinds, the Tile record, and loading a tile manifest data file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from engine.colours import COLOURS, colour_id
from engine.errors import DataError

# Tile kinds (ints: they are hashed as part of state).
SELLER, BUYER, TRADER, EXCHANGE, THIEF, VIZIER, CROOK, BARTERER = range(8)
KIND_NAMES: tuple[str, ...] = (
    "seller",
    "buyer",
    "trader",
    "exchange",
    "thief",
    "vizier",
    "crook",
    "barterer",
)
KEPT_KINDS = (CROOK, BARTERER)
"""Tiles the taker keeps instead of performing."""

ORANGE, PURPLE = 0, 1
BACKS: tuple[str, ...] = ("orange", "purple")


class Tile(NamedTuple):
    """One action tile (or a city's printed action, with ``id`` -1).

    ``colour`` is used by Seller/Buyer (-1 otherwise); ``give``/``receive`` by Trader;
    ``n`` by "Exchange up to n".
    """

    id: int
    back: int
    kind: int
    colour: int = -1
    give: tuple[int, ...] = ()
    receive: tuple[int, ...] = ()
    n: int = 0

    @property
    def symbols(self) -> tuple[int, ...]:
        """The goods symbols printed on the tile, in Crook order: give then receive."""
        if self.kind in (SELLER, BUYER):
            return (self.colour,)
        if self.kind == TRADER:
            return self.give + self.receive
        return ()

    def with_symbol(self, index: int, colour: int) -> Tile:
        """The tile as a Crook changes it: symbol ``index`` now shows ``colour``."""
        if self.kind in (SELLER, BUYER):
            return self._replace(colour=colour)
        syms = list(self.symbols)
        syms[index] = colour
        g = len(self.give)
        return self._replace(give=tuple(syms[:g]), receive=tuple(syms[g:]))

    def describe(self) -> str:
        return describe_tile(self)


def describe_tile(t: Tile) -> str:
    name = KIND_NAMES[t.kind]
    if t.kind in (SELLER, BUYER):
        return f"{name.capitalize()} ({COLOURS[t.colour]})"
    if t.kind == TRADER:
        give = "+".join(COLOURS[c] for c in t.give)
        recv = "+".join(COLOURS[c] for c in t.receive)
        return f"Trader ({give} -> {recv})"
    if t.kind == EXCHANGE:
        return f"Exchange up to {t.n}"
    return {"thief": "Thief", "vizier": "Grand Vizier", "crook": "Crook", "barterer": "Barterer"}[
        name
    ]


def parse_tile_spec(spec: Any, back: int, tile_id: int, where: str) -> Tile:
    """Parse one tile (no count) from its JSON object."""
    if not isinstance(spec, dict) or "kind" not in spec:
        raise DataError(f"{where}: a tile must be an object with a 'kind'")
    kind_name = spec["kind"]
    if kind_name not in KIND_NAMES:
        raise DataError(f"{where}: unknown tile kind {kind_name!r}")
    kind = KIND_NAMES.index(kind_name)
    try:
        if kind in (SELLER, BUYER):
            return Tile(tile_id, back, kind, colour=colour_id(str(spec["colour"])))
        if kind == TRADER:
            if not isinstance(spec["give"], list) or not isinstance(spec["receive"], list):
                raise DataError(f"{where}: a trader's 'give' and 'receive' must be lists")
            give = tuple(colour_id(str(c)) for c in spec["give"])
            recv = tuple(colour_id(str(c)) for c in spec["receive"])
            if not give or not recv:
                raise DataError(f"{where}: a trader needs goods on both sides")
            return Tile(tile_id, back, kind, give=give, receive=recv)
        if kind == EXCHANGE:
            n = spec["n"]
            if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 10:
                raise DataError(f"{where}: exchange 'n' must be an integer 1..10")
            return Tile(tile_id, back, kind, n=n)
    except (KeyError, TypeError) as exc:
        raise DataError(f"{where}: missing or malformed field {exc}") from None
    except ValueError as exc:
        if isinstance(exc, DataError):
            raise
        raise DataError(f"{where}: {exc}") from None
    return Tile(tile_id, back, kind)


class TileSet(NamedTuple):
    """The full manifest: every tile with a unique id (index into ``tiles``)."""

    name: str
    tiles: tuple[Tile, ...]

    def of_back(self, back: int) -> list[int]:
        return [t.id for t in self.tiles if t.back == back]


def load_tileset(data: dict[str, Any], where: str = "tiles") -> TileSet:
    """Build a TileSet from parsed JSON, expanding ``per_colour`` and ``count``."""
    if not isinstance(data, dict):
        raise DataError(f"{where}: expected a JSON object")
    tiles: list[Tile] = []
    for back, back_name in enumerate(BACKS):
        entries = data.get(back_name)
        if not isinstance(entries, list):
            raise DataError(f"{where}: missing list {back_name!r}")
        for i, spec in enumerate(entries):
            w = f"{where}.{back_name}[{i}]"
            if not isinstance(spec, dict):
                raise DataError(f"{w}: a tile must be an object")
            per_colour = spec.get("per_colour")
            count = spec.get("count", 1)
            if per_colour is not None:
                if spec.get("kind") not in ("seller", "buyer"):
                    raise DataError(f"{w}: per_colour only applies to seller/buyer")
                if not isinstance(per_colour, int) or per_colour < 0:
                    raise DataError(f"{w}: per_colour must be a non-negative integer")
                for c in COLOURS:
                    for _ in range(per_colour):
                        tiles.append(
                            parse_tile_spec({**spec, "colour": c}, back, len(tiles), w)
                        )
                continue
            if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                raise DataError(f"{w}: count must be a non-negative integer")
            for _ in range(count):
                tiles.append(parse_tile_spec(spec, back, len(tiles), w))
    return TileSet(str(data.get("name", "custom tiles")), tuple(tiles))


def load_tileset_file(path: str | Path) -> TileSet:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise DataError(f"cannot read tile file {path}: {exc}") from None
    return load_tileset(data, where=str(path))

"""Set-up of the action tiles from the table's shared seed, with the Crook/Barterer swap.

Every peer runs this with the same seed and gets the same layout (DetRng, board order).
"""

from __future__ import annotations

from engine.board import Board
from engine.errors import DataError
from engine.rng import DetRng
from engine.tiles import KEPT_KINDS, TileSet


def lay_out_tiles(board: Board, per_city: int, rng: DetRng) -> list[list[int]]:
    """Tile ids per city (index = city). Cities of a back colour get that colour's tiles.

    Decision (RULES.md): a Crook or Barterer on a forbidden city is swapped with a random
    unused tile of the same back that is neither; failing that, with a random such tile
    from another (non-forbidden) city of the same colour.
    """
    tiles: TileSet = board.tileset
    layout: list[list[int]] = [[] for _ in board.cities]
    unused: dict[int, list[int]] = {}
    for back in (0, 1):
        pool = tiles.of_back(back)
        rng.shuffle(pool)
        k = 0
        for city in board.tile_cities:
            if board.colour[city] != back:
                continue
            layout[city] = pool[k : k + per_city]
            k += per_city
        unused[back] = pool[k:]

    def kept(tid: int) -> bool:
        return tiles.tiles[tid].kind in KEPT_KINDS

    forbidden = board.no_crook_barterer
    for city in forbidden:
        back = board.colour[city]
        for slot, tid in enumerate(layout[city]):
            if not kept(tid):
                continue
            spare = [i for i, u in enumerate(unused[back]) if not kept(u)]
            if spare:
                i = spare[rng.below(len(spare))]
                layout[city][slot], unused[back][i] = unused[back][i], tid
                continue
            others = [
                (c, s)
                for c in board.tile_cities
                if board.colour[c] == back and c != city and c not in forbidden
                for s, t in enumerate(layout[c])
                if not kept(t)
            ]
            if not others:
                raise DataError(
                    f"cannot keep Crooks/Barterers off {board.cities[city]}: "
                    "no other tile of that colour to swap with"
                )
            c, s = others[rng.below(len(others))]
            layout[city][slot], layout[c][s] = layout[c][s], tid
    return layout

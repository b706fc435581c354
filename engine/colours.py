"""The five goods colours, as small integers so state stays integer-only."""

from __future__ import annotations

COLOURS: tuple[str, ...] = ("ivory", "silk", "fruit", "jewels", "spice")
"""Index = colour id. The order is fixed: it is part of every state hash."""

NCOLOURS = len(COLOURS)
GOODS_PER_COLOUR = 15
TOTAL_GOODS = GOODS_PER_COLOUR * NCOLOURS

_ALIASES = {
    "white": 0,
    "blue": 1,
    "brown": 2,
    "dried fruit": 2,
    "yellow": 3,
    "jewel": 3,
    "red": 4,
    "spices": 4,
}


def colour_id(name: str) -> int:
    """Parse a colour name (or common alias); raise ValueError naming it otherwise."""
    key = name.strip().lower()
    if key in COLOURS:
        return COLOURS.index(key)
    if key in _ALIASES:
        return _ALIASES[key]
    raise ValueError(f"unknown goods colour {name!r} (expected one of {', '.join(COLOURS)})")


def colour_name(c: int) -> str:
    return COLOURS[c]

"""Colours, symbols and the prompt_toolkit style shared by every screen.

Every piece of information is carried by text first (a letter per goods colour, a
symbol per tile kind) and colour second, so the screens read the same with NO_COLOR.
"""

from __future__ import annotations

import os

from prompt_toolkit.output import ColorDepth
from prompt_toolkit.styles import Style

from engine.colours import COLOURS
from engine.tiles import (
    BARTERER,
    BUYER,
    CROOK,
    EXCHANGE,
    SELLER,
    THIEF,
    TRADER,
    VIZIER,
    Tile,
    describe_tile,
)

GOOD_LETTER: tuple[str, ...] = ("I", "S", "F", "J", "P")
"""One letter per goods colour: Ivory, Silk, Fruit, Jewels, sPice."""

GOOD_STYLE: tuple[str, ...] = tuple(f"class:good.{c}" for c in COLOURS)

KIND_SYMBOL = {
    BUYER: "+",
    SELLER: "$",
    TRADER: "T",
    EXCHANGE: "e",
    THIEF: "X",
    VIZIER: "V",
    CROOK: "C",
    BARTERER: "B",
}

LEGEND = "+ buy  $ sell  Trade  X thief  Vizier  Crook  Barterer  * exchange"
GOODS_LEGEND = "Ivory Silk Fruit Jewels sPice"

LEGEND_ITEMS: tuple[tuple[str, str, str, str], ...] = (
    # (before, key, after, style of the key): the key is what the map shows
    ("", "+", " buy", "bold"),
    ("", "$", " sell", "bold"),
    ("", "T", "rade", "class:tile.trader"),
    ("", "X", " thief", "class:tile.thief"),
    ("", "V", "izier", "class:tile.vizier"),
    ("", "C", "rook", "class:tile.crook"),
    ("", "B", "arterer", "class:tile.barterer"),
    ("", "*", " exchange", "class:tile.exchange"),
    ("", "I", "vory", "class:good.ivory bold"),
    ("", "S", "ilk", "class:good.silk bold"),
    ("", "F", "ruit", "class:good.fruit bold"),
    ("", "J", "ewels", "class:good.jewels bold"),
    ("s", "P", "ice", "class:good.spice bold"),
)
FIRST_GOOD = 8


def legend_lines(width: int) -> list[list[tuple[str, str]]]:
    """The legend flowed into lines of at most ``width`` columns (tiles first, then goods).

    Each entry is a word with its map symbol picked out (``Trade``, ``sPice``), so
    the legend stays compact and still reads without colour."""
    lines: list[list[tuple[str, str]]] = [[]]
    used = 0
    for i, (pre, key, post, style) in enumerate(LEGEND_ITEMS):
        sep = 1 if i >= FIRST_GOOD else 2
        if i == FIRST_GOOD and lines[-1]:  # goods start on a fresh line
            lines.append([])
            used = 0
        w = len(pre) + len(key) + len(post)
        if used and used + sep + w > width:
            lines.append([])
            used = 0
        if used:
            lines[-1].append(("", " " * sep))
            used += sep
        lines[-1].extend([("class:muted", pre), (style + " underline", key),
                          ("class:muted", post)])
        used += w
    return lines


def tile_name(t: Tile) -> str:
    """A tile in words for the screen: ``Trader (silk → ivory+jewels)``."""
    return describe_tile(t).replace(" -> ", " → ")


def tile_symbol(t: Tile) -> str:
    """Compact map symbol: ``+S`` buyer of silk, ``$P`` seller of spice, ``T``, ``e2``, ..."""
    sym = KIND_SYMBOL[t.kind]
    if t.kind in (BUYER, SELLER):
        return sym + GOOD_LETTER[t.colour]
    if t.kind == EXCHANGE:
        return f"{sym}{t.n}"
    return sym


def tile_style(t: Tile) -> str:
    if t.kind in (BUYER, SELLER):
        return GOOD_STYLE[t.colour] + " bold"
    return {
        TRADER: "class:tile.trader",
        EXCHANGE: "class:tile.exchange",
        THIEF: "class:tile.thief",
        VIZIER: "class:tile.vizier",
        CROOK: "class:tile.crook",
        BARTERER: "class:tile.barterer",
    }[t.kind]


def no_color() -> bool:
    """The NO_COLOR convention (https://no-color.org): present and non-empty."""
    return bool(os.environ.get("NO_COLOR"))


def color_depth() -> ColorDepth | None:
    return ColorDepth.DEPTH_1_BIT if no_color() else None


STYLE = Style.from_dict(
    {
        "good.ivory": "#f0ead2",
        "good.silk": "#5fafff",
        "good.fruit": "#c08a50",
        "good.jewels": "#ffd700",
        "good.spice": "#ff5f5f",
        "tile.trader": "#5fd7af",
        "tile.exchange": "#87afaf",
        "tile.thief": "#ff5faf bold",
        "tile.vizier": "#d7af00 bold",
        "tile.crook": "#af87ff",
        "tile.barterer": "#87d75f",
        "city": "#d0d0d0",
        "city.orange": "#ffaf5f",
        "city.purple": "#d787ff",
        "city.here": "reverse bold",
        "city.next": "bold underline",
        "city.visited": "#6c6c6c",
        "city.end": "#d0d0d0 bold",
        "route": "#6c6c6c",
        "title": "bold",
        "bold": "bold",
        "words": "bold reverse",
        "status": "reverse",
        "status.turn": "reverse bold",
        "banner.bad": "bg:#870000 #ffffff bold",
        "banner.good": "bg:#005f00 #ffffff bold",
        "banner.info": "bg:#005f87 #ffffff",
        "player": "",
        "player.me": "bold",
        "player.turn": "reverse",
        "money": "#ffd75f",
        "muted": "#808080",
        "pawn": "#ffd700 bold",
        "log": "",
        "log.new": "bold",
        "log.me": "#ffd75f bold",
        "log.talk": "#87d7ff italic",
        "road": "#a8a8a8",
        "menu.key": "bold #5fd7ff",
        "menu.sel": "reverse",
        "menu.title": "bold",
        "error": "#ff5f5f bold",
        "prompt": "bold",
        "frame.border": "#6c6c6c",
        "overlay": "bg:#1c1c1c #e4e4e4",
        "win": "#ffd700 bold",
    }
)

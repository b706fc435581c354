"""Rules in words for the table: what every tile does, a city's details, the help pages.

The menus only ever offer legal actions, so a player can play without knowing the rules;
these texts are there so they can also *learn* them at the table (players found the
once-per-colour Vizier only as missing menu entries, and the end at Tyre surprised them).
"""

from __future__ import annotations

from cli.theme import tile_name
from engine.board import Board
from engine.colours import COLOURS
from engine.state import GameState
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
)

TILE_RULES: dict[int, str] = {
    SELLER: "sell any number of your goods of its colour: 4, 7, 9, 10, 11… silver in all",
    BUYER: "buy goods of its colour from the bag: 1, 3, 6, 10, 14… silver in all",
    TRADER: "give the goods on the left, get those on the right from the bag; once or twice",
    EXCHANGE: "give 1 to n goods of your choice, get as many of your choice from the bag",
    THIEF: "take one good at random from a player of your choice",
    VIZIER: "call a colour no Vizier called yet (any, once all are); everyone shows some "
            "of it at once: most +5, second +3",
    CROOK: "kept for later; it changes one colour on a Seller, Buyer or Trader you perform",
    BARTERER: "kept for later; in a later city, take and perform two tiles in one turn",
}


def tile_rule(t: Tile) -> str:
    """One line: the tile's name and what it does, in full words."""
    what = TILE_RULES[t.kind]
    if t.kind == EXCHANGE:
        what = what.replace("1 to n", f"1 to {t.n}")
    return f"{tile_name(t)}: {what}"


def city_kind(board: Board, c: int) -> str:
    if c == board.start:
        return "where the caravan starts"
    if c == board.end:
        return "the end: the game ends when the caravan arrives"
    return ("orange" if board.colour[c] == 0 else "purple") + " city"


def routes_from(board: Board, c: int, depth: int = 3, limit: int = 6) -> list[list[int]]:
    """The next ``depth`` stops along every road from ``c`` (at most ``limit`` routes)."""
    out: list[list[int]] = []

    def walk(path: list[int]) -> None:
        if len(out) >= limit:
            return
        succ = board.succ[path[-1]]
        if len(path) > depth or not succ:
            out.append(path[1:])
            return
        for n in succ:
            walk([*path, n])

    walk([c])
    return [r for r in out if r]


def city_details(s: GameState, c: int, route: list[int]) -> list[str]:
    """The inspector's lines for city ``c``: what it is, its tiles in full words (and the
    printed action), where its roads lead and the next stops from there."""
    board = s.board
    name = board.cities[c]
    where = ("the caravan is here" if c == s.city
             else "passed" if c in route else "")
    head = f"{name} — {city_kind(board, c)}" + (f" ({where})" if where else "")
    lines = [head]
    pr = board.printed[c]
    if pr is not None:
        lines.append(f"Printed action, the leader's bonus before taking a tile: {tile_rule(pr)}")
    tiles = s.layout[c] if s.layout else []
    if board.colour[c] >= 0:
        if tiles:
            lines.append("Tiles:")
            for i, tid in enumerate(tiles, 1):
                lines.append(f"  {i} {tile_rule(board.tileset.tiles[tid])}")
        else:
            lines.append("Tiles: none left")
    succ = board.succ[c]
    if succ:
        lines.append("Roads on: " + ", ".join(board.cities[n] for n in succ))
        routes = routes_from(board, c)
        if routes:
            lines.append("Next stops:")
            lines.extend("  " + " › ".join(board.cities[n] for n in r) for r in routes)
        if board.only_end_next(c):
            lines.append(f"Last market: the game ends after it (only {board.cities[board.end]} "
                         "is left).")
    return lines


def _colours() -> str:
    return ", ".join(COLOURS)


HELP_PAGES: tuple[tuple[str, str], ...] = (
    ("The game", f"""\
Lead the caravan from start to end; the richest merchant wins.
Goods come in five colours: {_colours()}.
Every city has three steps:
1 AUCTION for the lead. The pawn's holder does not bid; the others,
  clockwise, pass or bid more than the highest bid (whole silver, at
  most their money). The holder then sells the lead to the highest
  bidder (gets the bid) or keeps it (pays the bid to that bidder).
2 MOVE. The leader moves the caravan along one road (arrows ↓ ↙ ↘ on
  the map; i inspects a city).
3 MARKET. The leader may use the city's printed action (*), then takes
  a tile, performs it or declines it, places a turn token and passes
  the pawn to a player who has not acted yet (3 players: act twice).
  When the tiles run out, whoever gets the pawn holds it for the next
  auction without acting."""),
    ("Tiles", """\
+ Buyer: buy goods of its colour from the bag: 1, 3, 6, 10, 14… in all.
  The bag is the only supply; you get (and pay for) what it has.
$ Seller: sell your goods of its colour: 4, 7, 9, 10, 11… in all.
T Trader: give the left side, get the right side; once or twice.
  All-or-nothing: if the bag lacks a good, nothing changes.
* Exchange up to 2 or 4 (printed on a city): give 1 to n goods of your
  choice, get as many of your choice; all-or-nothing like the Trader.
X Thief: take one good at random from a player of your choice; only
  the two of you learn its colour.
V Grand Vizier: see the next page.
C Crook and B Barterer are kept for later: see the next page.
A taken tile you decline is lost: the menu asks before it happens."""),
    ("Vizier, Crook, Barterer", """\
Grand Vizier: its taker calls a colour that no earlier Vizier called
  (once every colour is called, any colour). Everyone chooses at once
  how many goods of that colour to show: most shown +5 silver, second
  +3; tied firsts each +5 and no second; showing none earns nothing.
  Shown goods stay yours, now known to all (until a Thief robs you: your
  goods are shuffled and hidden again). A declined Vizier locks no colour.
Crook: play it on a Seller, Buyer or Trader you perform (also in the
  city where you took it) to change one goods colour on it for that
  use. At most one per action; never on Exchange, Thief or Vizier.
Barterer: when it is your turn to take a tile, in a later city than
  where you took it and with two tiles left, play it to take and
  perform two tiles, one after the other (one turn token each).
Unused Crooks and Barterers score nothing."""),
    ("The end and scoring", """\
The game ends when the caravan reaches the end city (Antioch; Chang'An
in the reverse variant). When every road from a city leads only to the
end (Aleppo and Tyre on the default board), that city is the LAST
MARKET: no auction follows, the caravan goes on to the end and
everyone reveals their goods. The header and the log say so.
Score: 1 point per silver, 1 per good, and 2 more for each colour in
which you hold strictly more goods than every other player.
Ties share the victory.
Money: every payment is public. At a table with hidden money
(--money hidden) others' money shows as $? and the log still says who
paid what; keeping track is part of the game."""),
)

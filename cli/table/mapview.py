"""The route map as formatted text: rows from start to end, the caravan, every city's tiles
and the roads between them.

Rows are the longest-path depth from the start city, so any valid board (and the
reverse variant, whose start is Antioch) lays out from where the caravan begins to
where it ends without needing row numbers in the board file.  Where each city and road
goes is :mod:`cli.table.map_layout`'s (a fixed geometry: nothing moves as tiles are taken);
this module draws the state into it.
"""

from __future__ import annotations

from collections.abc import Sequence

from prompt_toolkit.formatted_text import StyleAndTextTuples

from cli.table.map_layout import (
    MapPlan,
    board_rows,
    city_label,
    lanes_fit,
    plan_map,
    road_glyphs,
)
from cli.theme import tile_style, tile_symbol
from engine.board import Board
from engine.state import GameState

__all__ = ["GONE", "HERE", "NEXT", "PASSED", "board_rows", "city_label", "city_row",
           "map_lines", "map_plan", "map_window", "reachable", "render_map", "road_glyphs"]

HERE, NEXT, PASSED, GONE = "▶", "›", "·", " "


def reachable(board: Board, city: int) -> set[int]:
    """Cities the caravan can still reach from ``city`` (including it)."""
    out = {city}
    todo = [city]
    while todo:
        c = todo.pop()
        for n in board.succ[c]:
            if n not in out:
                out.add(n)
                todo.append(n)
    return out


def _cell(
    s: GameState, c: int, route: Sequence[int], ahead: set[int], name_w: int,
    roads: str = "", roads_w: int = 0,
) -> StyleAndTextTuples:
    board = s.board
    nexts = board.succ[s.city] if s.phase != s.phase.OVER else ()
    if c == s.city:
        mark, mstyle = HERE, "class:city.here"
    elif c in nexts:
        mark, mstyle = NEXT, "class:city.next"
    elif c in route:
        mark, mstyle = PASSED, "class:city.visited"
    else:
        mark, mstyle = GONE, ""
    if c == s.city:
        nstyle = "class:city.here"
    elif c not in ahead:
        nstyle = "class:city.visited"
    elif board.colour[c] == 0:
        nstyle = "class:city.orange"
    elif board.colour[c] == 1:
        nstyle = "class:city.purple"
    else:
        nstyle = "class:city.end"
    if c in nexts:
        nstyle += " class:city.next"
    frags: StyleAndTextTuples = [(mstyle, mark), ("", " "), (nstyle, city_label(board, c))]
    frags.append(("", " " * (name_w - len(city_label(board, c)) + 1)))
    if roads_w:
        frags.append(("class:route" if c not in ahead else "class:road", f"{roads:<{roads_w}}"))
        frags.append(("", " "))
    tiles = s.layout[c]
    for i, tid in enumerate(tiles):
        t = board.tileset.tiles[tid]
        if i:
            frags.append(("", " "))
        style = tile_style(t) if c in ahead else "class:city.visited"
        frags.append((style, tile_symbol(t)))
    return frags


def map_window(rows: int, here: int, height: int | None) -> tuple[int, int]:
    """Which rows ``[first, end)`` to draw in ``height`` lines so the caravan's row
    (``here``) shows; a clipped side costs one line for its "more rows" marker.

    A board taller than the screen scrolls with the caravan rather than pushing the menu
    and the command line off an 80x24 terminal: we keep one passed row above the caravan
    (where it came from) and as many rows ahead as fit (where it can go)."""
    if height is None or rows <= height:
        return 0, rows
    height = max(height, 3)  # a marker, the caravan's row, a marker
    best: tuple[tuple[int, int, int, int], tuple[int, int]] | None = None
    for first in range(rows):
        top = 1 if first else 0
        end = min(rows, first + height - top)
        if end < rows:
            end -= 1  # the "more rows ahead" marker takes the last line
        if not first <= here < end:
            continue
        ahead = min(end - 1 - here, 2)
        behind = 1 if here > first or here == 0 else 0
        key = (-ahead, -behind, -(end - first), abs(first - (here - 1)))
        if best is None or key < best[0]:
            best = (key, (first, end))
    assert best is not None
    return best[1]


def city_row(board: Board, city: int) -> int:
    """The map row ``city`` is drawn on."""
    return next(r for r, row in enumerate(board_rows(board)) if city in row)


def _road_line(s: GameState, upper: list[int], lower: list[int], centre: dict[int, int],
               ahead: set[int]) -> StyleAndTextTuples:
    """The roads from one map row to the next as a line between them: ``│`` straight down,
    ``╲``/``╱`` halfway along a diagonal road (``╳`` where two cross); roads the caravan
    can still take stand out."""
    board = s.board
    marks: dict[int, tuple[str, bool]] = {}
    for c in upper:
        for n in board.succ[c]:
            if n not in lower:
                continue  # a road that skips a row: the arrows in the cells show it
            a, b = centre[c], centre[n]
            live = c in ahead and n in ahead
            if abs(a - b) <= 3:
                at, ch = a, "│"
            else:
                at, ch = (a + b) // 2, "╲" if b > a else "╱"
            if at in marks and {marks[at][0], ch} == {"╲", "╱"}:
                ch = "╳"  # two roads cross halfway: both stay drawn
            if at not in marks or live or ch == "╳":
                marks[at] = (ch, live or marks.get(at, ("", False))[1])
    out: StyleAndTextTuples = []
    x = 0
    for at in sorted(marks):
        ch, live = marks[at]
        out.append(("", " " * (at - x)))
        out.append(("class:road" if live else "class:route", ch))
        x = at + 1
    return out


def map_lines(board: Board) -> int:
    """Lines the map takes with the roads drawn between its rows."""
    return 2 * len(board_rows(board)) - 1




def map_plan(s: GameState, width: int | None = None, grow: int = 0,
             roads: bool = True) -> MapPlan:
    """The geometry :func:`render_map` draws ``s`` into (same arguments)."""
    return plan_map(s.board, s.config.tiles_per_city, width, grow, roads)


def render_map(
    s: GameState, route: Sequence[int] = (), width: int | None = None,
    height: int | None = None, roads: bool = True, lines: bool = False, grow: int = 0,
) -> StyleAndTextTuples:
    """The map, one line per row, every city in its fixed place (:mod:`cli.table.map_layout`).

    ``width``: the columns the map may take; the roads are drawn in the lanes between the
    columns (or as arrows in the cells) when they fit, else left out (the inspector, key
    ``i``, names them; ``roads=False`` leaves them out anyway).  ``grow``: extra columns
    a wide terminal lends to spread the lanes.  With ``height`` (lines available) a taller
    board shows a window of rows around the caravan (:func:`map_window`), with a muted
    line saying how many rows are hidden.  ``lines`` draws the roads between the rows
    (:func:`_road_line`; a terminal tall enough for twice the rows), instead of the
    arrows when those lines show every road."""
    board = s.board
    plan = map_plan(s, width, grow, roads)
    rows = plan.rows
    first, end = map_window(len(rows), city_row(board, s.city), height)
    ahead = reachable(board, s.city)
    centre = {c: plan.centre(c) for c in plan.x}
    twice = lines and lanes_fit(board)
    out: StyleAndTextTuples = []
    if first:
        out.append(("class:muted", f"  ↑ {first} more row{'s' * (first > 1)} passed\n"))
    for r in range(first, end):
        if r > first:
            out.append(("", "\n"))
            if lines:
                out.extend(_road_line(s, list(rows[r - 1]), list(rows[r]), centre, ahead))
                out.append(("", "\n"))
        # when the lines between the rows show every road, arrows would say it twice
        pieces: list[tuple[int, StyleAndTextTuples]] = [
            (plan.x[c], _cell(s, c, route, ahead, plan.name_w[c], *(
                ("", 0) if twice else (plan.arrows[c], plan.arrows_w[c])))) for c in rows[r]]
        for mark in () if twice else plan.lanes.get(r, ()):
            live = any(c in ahead for c in mark.sources)
            pieces.append((mark.x, [("class:road" if live else "class:route", mark.glyph)]))
        x = 0
        for at, frags in sorted(pieces, key=lambda p: p[0]):
            out.append(("", " " * max(0, at - x)))
            out.extend(frags)
            x = max(x, at) + sum(len(t) for _, t, *_ in frags)
    if end < len(rows):
        left = len(rows) - end
        out.append(("class:muted", f"\n  ↓ {left} more row{'s' * (left > 1)} ahead"))
    return out

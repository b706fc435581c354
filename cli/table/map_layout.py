"""Where the route map puts every city and every road: one fixed geometry per board, tile
count and width.

Why fixed: a city's cell is as wide as its fullest market could be (every tile two
characters), and where a cell starts never depends on the tiles left in it, so nothing on
the map moves as tiles are taken.

Two layouts, the first whenever the board allows it:

* **lanes** — every row holds one or two cities and every road leads to the next row (the
  default board and its reverse).  The two cities of a row sit in a left and a right
  column; between them a *lane* of three slots shows the roads to the next row: the left
  city's road straight down (``↓``), a road crossing over (``↘`` from the left city, ``↙``
  from the right one, ``╳`` both) and the right city's road straight down.  When the next
  row is a single city, the slots say ``↘`` and ``↙`` (both roads converge on it).  A
  single city sits over the middle of the lane with its roads in its cell (``↙↘``).  The
  lane costs three columns where arrows in both cells cost six, so the roads fit beside
  the players' panels at 80 columns even with five tiles per city; a wider terminal
  spreads the lane (:data:`MAX_SPREAD`).
* **cells** — any other board (rows of three cities, roads that skip a row): each city's
  roads as arrows in its own cell (:func:`road_glyphs`), columns in fixed places.

Without room for either, the map leaves the roads out (the inspector names them).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from engine.board import Board

MAX_SPREAD = 6
"""The most columns each gap of a lane grows on a wide terminal: the map spreads to use the
width, but not so far that a row's two cities stop reading as one row."""


@dataclass(frozen=True)
class LaneMark:
    """One glyph of a lane: where it is drawn, and the cities whose road it shows."""

    x: int
    glyph: str
    sources: tuple[int, ...]


@dataclass(frozen=True)
class MapPlan:
    """A board's map geometry (see the module docstring).  ``x``: each city's cell start;
    ``name_w``: the width its label is padded to; ``arrows``/``arrows_w``: the road arrows
    drawn in its cell and the columns they are padded to (0: none); ``lanes``: per row
    index, the lane between its two cities; ``width``: the map's fixed width."""

    rows: tuple[tuple[int, ...], ...]
    x: dict[int, int]
    name_w: dict[int, int]
    arrows: dict[int, str]
    arrows_w: dict[int, int]
    lanes: dict[int, tuple[LaneMark, ...]]
    width: int
    labels: tuple[str, ...]

    def centre(self, c: int) -> int:
        """The column under the middle of ``c``'s name."""
        return self.x[c] + 2 + len(self.labels[c]) // 2

    @property
    def roads(self) -> bool:
        """Whether this plan draws the roads at all."""
        return bool(self.lanes) or any(self.arrows.values())


def city_label(board: Board, c: int) -> str:
    """A city's name as the map shows it: ``*`` marks a printed exchange."""
    return board.cities[c] + ("*" if board.printed[c] is not None else "")


def board_rows(board: Board) -> list[list[int]]:
    """Cities grouped by longest-path depth from the start (board order within a row)."""
    return [list(r) for r in _rows(board)]


@lru_cache(maxsize=32)
def _rows(board: Board) -> tuple[tuple[int, ...], ...]:
    depth = {board.start: 0}
    for c in _topological(board):
        for n in board.succ[c]:
            depth[n] = max(depth.get(n, 0), depth[c] + 1)
    rows: list[list[int]] = [[] for _ in range(max(depth.values()) + 1)]
    for c in range(len(board.cities)):
        rows[depth[c]].append(c)
    return tuple(tuple(r) for r in rows)


def _topological(board: Board) -> list[int]:
    seen = {board.start}
    out: list[int] = []
    stack = [(board.start, iter(board.succ[board.start]))]
    while stack:
        node, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            stack.pop()
            out.append(node)
        elif nxt not in seen:
            seen.add(nxt)
            stack.append((nxt, iter(board.succ[nxt])))
    return out[::-1]


def tiles_width(tiles_per_city: int) -> int:
    """Columns of a full market: every tile two characters, one space between."""
    return max(0, 3 * tiles_per_city - 1)


def lanes_fit(board: Board) -> bool:
    """Whether the board can be drawn with lanes: rows of one or two cities, every road
    to the next row."""
    rows = _rows(board)
    row_of = {c: r for r, row in enumerate(rows) for c in row}
    return all(len(row) <= 2 for row in rows) and all(
        row_of[n] == row_of[c] + 1 for c in range(len(board.cities)) for n in board.succ[c])


def road_glyphs(board: Board) -> dict[int, str]:
    """Every city's roads onward as arrows pointing where the map draws their ends:
    ``↓`` the city below, ``↙``/``↘`` one to the left/right (ordered left to right)."""
    return dict(_glyphs(board))


@lru_cache(maxsize=32)
def _glyphs(board: Board) -> tuple[tuple[int, str], ...]:
    # directions from the cells layout without arrows: adding arrows widens every column
    # alike, so no road changes side
    labels = tuple(city_label(board, c) for c in range(len(board.cities)))
    x, _w = _cell_positions(_rows(board), labels, max(map(len, labels)), 0, 0)
    centre = {c: x[c] + 2 + len(labels[c]) // 2 for c in x}
    out: list[tuple[int, str]] = []
    for c in range(len(board.cities)):
        glyphs = ""
        for n in sorted(board.succ[c], key=lambda n: (centre[n], n)):
            dx = centre[n] - centre[c]
            glyphs += "↓" if abs(dx) <= 3 else ("↘" if dx > 0 else "↙")
        out.append((c, glyphs))
    return tuple(out)


def _cell_positions(rows: tuple[tuple[int, ...], ...], labels: tuple[str, ...], name_w: int,
                    arrows_w: int, tw: int) -> tuple[dict[int, int], int]:
    """The cells layout: columns of equal width side by side, a single city's name over
    the middle of the map; returns the starts and the map's width."""
    full = 2 + name_w + 1 + (arrows_w + 1 if arrows_w else 0) + tw
    ncols = max(len(r) for r in rows)
    width = ncols * (full + 1) - 1
    x: dict[int, int] = {}
    for row in rows:
        if len(row) == 1 and ncols > 1:
            c = row[0]
            own = 2 + len(labels[c]) + 1 + (arrows_w + 1 if arrows_w else 0) + tw
            x[c] = max(0, min(width - own, width // 2 - 2 - len(labels[c]) // 2))
            continue
        for i, c in enumerate(row):
            x[c] = i * (full + 1)
    return x, width


@lru_cache(maxsize=64)
def plan_map(board: Board, tiles_per_city: int, room: int | None = None, grow: int = 0,
             roads: bool = True) -> MapPlan:
    """The map's geometry within ``room`` columns (None: no limit), spread by up to
    ``grow`` more columns on a wide terminal; ``roads=False`` leaves the roads out."""
    rows = _rows(board)
    labels = tuple(city_label(board, c) for c in range(len(board.cities)))
    tw = tiles_width(tiles_per_city)
    if roads and lanes_fit(board):
        plan = _lanes(board, rows, labels, tw, 0)
        if room is None or plan.width <= room:
            spread = min(MAX_SPREAD, max(0, grow) // 4)
            return _lanes(board, rows, labels, tw, spread) if spread else plan
    if roads and not lanes_fit(board):
        glyphs = dict(_glyphs(board))
        aw = max(map(len, glyphs.values()), default=0)
        plan = _cells(rows, labels, tw, glyphs, aw)
        if room is None or plan.width <= room:
            return plan
    return _cells(rows, labels, tw, {}, 0)


def _cells(rows: tuple[tuple[int, ...], ...], labels: tuple[str, ...], tw: int,
           glyphs: dict[int, str], aw: int) -> MapPlan:
    name_w = max(map(len, labels))
    x, width = _cell_positions(rows, labels, name_w, aw, tw)
    lone = {row[0] for row in rows if len(row) == 1}
    return MapPlan(
        rows=rows, x=x,
        name_w={c: len(labels[c]) if c in lone else name_w for c in x},
        arrows={c: glyphs.get(c, "") for c in x},
        arrows_w={c: aw for c in x}, lanes={}, width=width, labels=labels)


def _lanes(board: Board, rows: tuple[tuple[int, ...], ...], labels: tuple[str, ...],
           tw: int, spread: int) -> MapPlan:
    """The lanes layout (module docstring) with each lane gap ``spread`` columns wider."""
    pairs = [row for row in rows if len(row) == 2]
    nw_left = max((len(labels[r[0]]) for r in pairs), default=0)
    nw_right = max((len(labels[r[1]]) for r in pairs), default=0)
    left_w = 2 + nw_left + 1 + tw
    # the lane: a space, then three slots each ``spread`` apart, then the right column
    slot = [left_w + 1 + spread, left_w + 2 + 2 * spread, left_w + 3 + 3 * spread]
    right_x = left_w + 4 + 4 * spread
    width = right_x + 2 + nw_right + 1 + tw if pairs else 0
    x: dict[int, int] = {}
    name_w: dict[int, int] = {}
    arrows: dict[int, str] = {}
    glyphs = dict(_glyphs(board))
    for row in rows:
        if len(row) == 2:
            x[row[0]], x[row[1]] = 0, right_x
            name_w[row[0]], name_w[row[1]] = nw_left, nw_right
            arrows[row[0]] = arrows[row[1]] = ""
    lone = [row[0] for row in rows if len(row) == 1]
    # a single column (no row of two): names padded alike, so the tiles line up
    nw_lone = 0 if pairs else max((len(labels[c]) for c in lone), default=0)
    own: dict[int, int] = {}
    for c in lone:
        arrows[c] = glyphs[c]
        name_w[c] = max(nw_lone, len(labels[c]))
        own[c] = 2 + name_w[c] + (len(arrows[c]) + 1 if arrows[c] else 0) + 1 + tw
    width = max([width, *own.values()])
    for c in lone:  # the name over the lane's middle slot, the cell within the map
        x[c] = 0 if not pairs else \
            max(0, min(width - own[c], slot[1] - 2 - len(labels[c]) // 2))
    lanes: dict[int, tuple[LaneMark, ...]] = {}
    for r, row in enumerate(rows[:-1]):
        if len(row) != 2:
            continue
        left, right = row
        below = rows[r + 1]
        to = board.succ
        marks: list[LaneMark] = []
        if len(below) == 2:
            down_l, down_r = below
            if down_l in to[left]:
                marks.append(LaneMark(slot[0], "↓", (left,)))
            over = tuple(c for c, n in ((left, down_r), (right, down_l)) if n in to[c])
            if over:
                glyph = "╳" if len(over) == 2 else ("↘" if over[0] == left else "↙")
                marks.append(LaneMark(slot[1], glyph, over))
            if down_r in to[right]:
                marks.append(LaneMark(slot[2], "↓", (right,)))
        else:
            if below[0] in to[left]:
                marks.append(LaneMark(slot[0], "↘", (left,)))
            if below[0] in to[right]:
                marks.append(LaneMark(slot[2], "↙", (right,)))
        lanes[r] = tuple(marks)
    return MapPlan(rows=rows, x=x, name_w=name_w, arrows=arrows,
                   arrows_w={c: len(a) for c, a in arrows.items()}, lanes=lanes,
                   width=width, labels=labels)

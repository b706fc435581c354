"""The route map as formatted text: rows from start to end, the caravan, every city's tiles.

Rows are the longest-path depth from the start city, so any valid board (and the
reverse variant, whose start is Antioch) lays out from where the caravan begins to
where it ends without needing row numbers in the board file.
"""

from __future__ import annotations

from collections.abc import Sequence

from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.formatted_text.utils import fragment_list_width

from cli.theme import tile_style, tile_symbol
from engine.board import Board
from engine.state import GameState

HERE, NEXT, PASSED, GONE = "▶", "›", "·", " "


def board_rows(board: Board) -> list[list[int]]:
    """Cities grouped by longest-path depth from the start (board order within a row)."""
    depth = {board.start: 0}
    order = _topological(board)
    for c in order:
        for n in board.succ[c]:
            depth[n] = max(depth.get(n, 0), depth[c] + 1)
    rows: list[list[int]] = [[] for _ in range(max(depth.values()) + 1)]
    for c in range(len(board.cities)):
        rows[depth[c]].append(c)
    return rows


def _topological(board: Board) -> list[int]:
    seen: set[int] = set()
    out: list[int] = []

    def visit(c: int) -> None:
        stack = [(c, iter(board.succ[c]))]
        seen.add(c)
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                out.append(node)
            elif nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, iter(board.succ[nxt])))

    visit(board.start)
    return out[::-1]


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


def city_label(board: Board, c: int) -> str:
    return board.cities[c] + ("*" if board.printed[c] is not None else "")


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


def _positions(board: Board, rows: list[list[int]], name_w: int, full: int
               ) -> dict[int, int]:
    """Each city's cell start column (as :func:`render_map` draws it): the first city of a
    row at 0, the next ones in fixed columns, a lone city centred over the first column."""
    x: dict[int, int] = {}
    for row in rows:
        if len(row) == 1:
            x[row[0]] = (full + 1) // 2 - full // 4
            continue
        for i, c in enumerate(row):
            x[c] = i * (full + 1)
    return x


def road_glyphs(board: Board) -> dict[int, str]:
    """Every city's roads onward as arrows pointing where the map draws their ends:
    ``↓`` the city below, ``↙``/``↘`` one to the left/right.  The two columns of the map
    cannot show diagonal roads with lines in the rows it has, so each city says where its
    roads go (the inspector, key ``i``, names them)."""
    rows = board_rows(board)
    name_w = max(len(city_label(board, c)) for c in range(len(board.cities)))
    x = _positions(board, rows, name_w, 2 + name_w)
    centre = {c: x[c] + 2 + len(city_label(board, c)) // 2 for c in x}
    out: dict[int, str] = {}
    for c in range(len(board.cities)):
        glyphs = []
        for n in sorted(board.succ[c], key=lambda n: (centre[n], n)):
            dx = centre[n] - centre[c]
            glyphs.append("↓" if abs(dx) <= 3 else ("↘" if dx > 0 else "↙"))
        out[c] = "".join(glyphs)
    return out


def _road_line(s: GameState, upper: list[int], lower: list[int], centre: dict[int, int],
               ahead: set[int]) -> StyleAndTextTuples:
    """The roads from one map row to the next as a line between them: ``│`` straight down,
    ``╲``/``╱`` halfway along a diagonal road; roads the caravan can still take stand out."""
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
            if at not in marks or live:
                marks[at] = (ch, live)
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


def render_map(
    s: GameState, route: Sequence[int] = (), width: int | None = None,
    height: int | None = None, roads: bool = True, lines: bool = False,
) -> StyleAndTextTuples:
    """The map, one line per row; a row's second city starts in a fixed column.

    Each city shows its roads onward (:func:`road_glyphs`), so diagonal roads such as
    Yumen → Dunhuang are visible.  With ``height`` (lines available) a taller board shows
    a window of rows around the caravan (:func:`map_window`), with a muted line saying how
    many rows are hidden.  ``roads=False`` leaves the arrows out (a narrow terminal at a
    five-tile table: the inspector still names every road).  ``lines`` draws the roads
    between the rows too (:func:`_road_line`; a terminal tall enough for twice the rows)."""
    board = s.board
    rows = board_rows(board)
    first, end = map_window(len(rows), city_row(board, s.city), height)
    ahead = reachable(board, s.city)
    name_w = max(len(city_label(board, c)) for c in range(len(board.cities)))
    glyphs = road_glyphs(board) if roads else {}
    roads_w = max((len(g) for g in glyphs.values()), default=0)
    cells = [[_cell(s, c, route, ahead, name_w, glyphs.get(c, ""), roads_w) for c in row]
             for row in rows]
    # Columns sized for a full city, so the map does not shift as tiles are taken.
    full = 2 + name_w + 1 + (roads_w + 1 if roads_w else 0) + 3 * s.config.tiles_per_city - 1
    col_w = [full, full, full]
    for row in cells:
        for i, cell in enumerate(row[:3]):
            col_w[i] = max(col_w[i], fragment_list_width(cell))
    # where each cell starts: a row's first city at 0, the next in fixed columns, a lone
    # city centred over the first column
    starts: list[list[int]] = []
    for row in cells:
        xs: list[int] = []
        x = 0
        for i, cell in enumerate(row):
            if i == 0 and len(row) == 1 and len(col_w) > 1 and col_w[1]:
                x = (col_w[0] + 1) // 2 - fragment_list_width(cell) // 4
            elif i:
                x += max(1, sum(col_w[:i]) + i - x)
            xs.append(x)
            x += fragment_list_width(cell)
        starts.append(xs)
    centre = {c: starts[r][i] + 2 + len(city_label(board, c)) // 2
              for r, row in enumerate(rows) for i, c in enumerate(row)}
    out: StyleAndTextTuples = []
    if first:
        out.append(("class:muted", f"  ↑ {first} more row{'s' * (first > 1)} passed\n"))
    for r, row in enumerate(cells[first:end]):
        if r:
            out.append(("", "\n"))
            if lines:
                out.extend(_road_line(s, rows[first + r - 1], rows[first + r], centre, ahead))
                out.append(("", "\n"))
        x = 0
        for cell, at in zip(row, starts[first + r], strict=True):
            out.append(("", " " * max(0 if not x else 1, at - x)))
            x = max(x + (1 if x else 0), at)
            out.extend(cell)
            x += fragment_list_width(cell)
    if end < len(rows):
        left = len(rows) - end
        out.append(("class:muted", f"\n  ↓ {left} more row{'s' * (left > 1)} ahead"))
    return out

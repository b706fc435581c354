"""The route map on the real table screen: every road of the board is drawn at every
player count, at 80x24 (beside the players' panels) and on a wide terminal (which the map
spreads into), and no city moves as the markets empty.

The roads are read back from the rendered screen with the map's grammar (the legend of
:mod:`cli.table.map_layout`), and compared with the board's own arrows (``board.succ``)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.application.current import set_app
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from cli.table.app import TableApp
from cli.table.local_session import LocalSession
from cli.table.map_layout import board_rows, city_label
from cli.table.session import SeatInfo
from cli.table.view import PANEL_MIN
from cli.theme import tile_symbol
from engine.board import Board, default_board
from engine.state import make_config
from tests.cli.helpers import NAMES, screen_text
from tests.cli.test_layout import _dealt

Road = tuple[int, int]
ARROWS = "↓↘↙╳"
LINES = "│╲╱╳"


class Sized(DummyOutput):
    def __init__(self, columns: int, rows: int) -> None:
        super().__init__()
        self.size = Size(rows=rows, columns=columns)

    def get_size(self) -> Size:
        return self.size


@contextmanager
def sized(columns: int, rows: int) -> Iterator[None]:
    with create_pipe_input() as inp, create_app_session(input=inp,
                                                        output=Sized(columns, rows)):
        yield


def table(players: int, board: Board) -> TableApp:
    """The table screen of seat 0 at its first auction (inside a running loop)."""
    seats = [SeatInfo(NAMES[i], "human" if i == 0 else "random") for i in range(players)]
    session = LocalSession(make_config(players, board.reverse, board), seats, 0, 7,
                           bot_delay=0.0)
    _dealt(session)
    return TableApp(session)


def map_area(app: TableApp, columns: int, rows: int) -> tuple[list[str], int]:
    """The map's lines as drawn (left of the panels' separator) and where the separator is."""
    lines = screen_text(app, columns, rows)
    body = [x for x in lines[1:] if "│" in x]
    sep = max(x.rindex("│") for x in body[:4])  # the panels' border: the rightmost bar
    return [x[:sep] for x in lines[1:] if len(x) > sep and x[sep] == "│"], sep


def names_at(board: Board, area: list[str]) -> dict[int, tuple[int, int]]:
    """Each city's (line, column) on the map, found by its label (exactly once)."""
    out: dict[int, tuple[int, int]] = {}
    for c in range(len(board.cities)):
        label = re.escape(city_label(board, c))
        hits = [(y, m.start()) for y, line in enumerate(area)
                for m in re.finditer(rf"(?<![\w']){label}(?![\w'*])", line)]
        assert len(hits) == 1, (board.cities[c], hits)
        out[c] = hits[0]
    return out


def centre(board: Board, at: dict[int, tuple[int, int]], c: int) -> int:
    return at[c][1] + len(city_label(board, c)) // 2


def roads_in_lanes(board: Board, area: list[str]) -> set[Road]:
    """The roads the arrows say (rows drawn line after line): a single city's arrows follow
    its name (``↙`` the left city below, ``↘`` the right one, ``↓`` a single one); between
    a row's two cities the lane, whose middle is under every single city's name: left of
    the middle the left city's roads (``↓`` straight down, ``↘`` to a single city), right
    of it the right city's (``↓``, ``↙``), in the middle the crossings (``↘`` left to right,
    ``↙`` right to left, ``╳`` both)."""
    rows = board_rows(board)
    at = names_at(board, area)
    lone = [r[0] for r in rows if len(r) == 1]
    middles = {centre(board, at, c) for c in lone}
    assert len(middles) == 1, "every single city sits over the lanes' middle"
    mid = middles.pop()
    drawn: set[Road] = set()
    for r, row in enumerate(rows[:-1]):
        below = rows[r + 1]
        y = at[row[0]][0]
        line = area[y]
        if len(row) == 1:
            c = row[0]
            cell = line[at[c][1] + len(city_label(board, c)):].split()
            arrows = cell[0] if cell and set(cell[0]) <= set(ARROWS) else ""
            for g in arrows:
                if len(below) == 1:
                    assert g == "↓", line
                    drawn.add((c, below[0]))
                else:
                    assert g in "↙↘", line
                    drawn.add((c, below[0] if g == "↙" else below[1]))
            continue
        left, right = row
        assert at[right][0] == y
        for x in range(at[left][1], at[right][1]):
            g = line[x]
            if g not in ARROWS:
                continue
            if len(below) == 1:
                assert (g, x < mid) in {("↘", True), ("↙", False)}, (line, x)
                drawn.add((left if x < mid else right, below[0]))
            elif x < mid:
                assert g == "↓", (line, x)
                drawn.add((left, below[0]))
            elif x > mid:
                assert g == "↓", (line, x)
                drawn.add((right, below[1]))
            else:
                if g in "↘╳":
                    drawn.add((left, below[1]))
                if g in "↙╳":
                    drawn.add((right, below[0]))
    return drawn


def roads_between_rows(board: Board, area: list[str]) -> set[Road]:
    """The roads the lines between the rows say: ``│`` under a name goes to the name under
    it; ``╲`` runs from the city above left of it to the one below right of it, ``╱`` the
    other way, ``╳`` both."""
    rows = board_rows(board)
    at = names_at(board, area)
    drawn: set[Road] = set()
    for r, row in enumerate(rows[:-1]):
        below = rows[r + 1]
        y = at[row[0]][0]
        assert at[below[0]][0] == y + 2, "one line of roads between two rows"
        for x, g in enumerate(area[y + 1]):
            if g not in LINES:
                continue
            if g == "│":
                ups = [c for c in row if abs(centre(board, at, c) - x) <= 3]
                downs = [n for n in below if abs(centre(board, at, n) - x) <= 3]
                assert len(ups) == 1 and len(downs) == 1, (area[y + 1], x)
                drawn.add((ups[0], downs[0]))
                continue
            if g in "╲╳":
                ups = [c for c in row if centre(board, at, c) < x]
                downs = [n for n in below if centre(board, at, n) > x]
                assert len(ups) == 1 and len(downs) == 1, (area[y + 1], x)
                drawn.add((ups[0], downs[0]))
            if g in "╱╳":
                ups = [c for c in row if centre(board, at, c) > x]
                downs = [n for n in below if centre(board, at, n) < x]
                assert len(ups) == 1 and len(downs) == 1, (area[y + 1], x)
                drawn.add((ups[0], downs[0]))
    return drawn


def board_roads(board: Board) -> set[Road]:
    return {(c, n) for c in range(len(board.cities)) for n in board.succ[c]}


@pytest.mark.parametrize("reverse", [False, True], ids=["default", "reverse"])
@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_every_road_is_drawn_at_80x24_and_on_a_wide_terminal(players: int,
                                                             reverse: bool) -> None:
    board = default_board(reverse)
    widths: dict[tuple[int, int], int] = {}

    async def look(columns: int, rows: int) -> None:
        app = table(players, board)
        lines = screen_text(app, columns, rows)
        assert len(lines) == rows and all(len(x) <= columns for x in lines)
        assert lines[-1].startswith(">")  # the command line is still there
        area, sep = map_area(app, columns, rows)
        assert columns - sep - 1 >= PANEL_MIN  # the panels keep room for names
        text = "\n".join(lines)
        for name in app.session.names:
            assert name in text
        with set_app(app.app):
            between = app.road_lines()
        if between:  # a tall terminal: the roads between the rows
            drawn = roads_between_rows(board, area)
        else:
            drawn = roads_in_lanes(board, area)
        assert drawn == board_roads(board), (columns, rows, "\n".join(area))
        widths[columns, rows] = sep

    for columns, rows in ((80, 24), (120, 30), (120, 40)):
        with sized(columns, rows):
            asyncio.run(look(columns, rows))
    assert widths[120, 40] >= widths[80, 24] + 20, widths


def test_nothing_moves_as_the_markets_empty() -> None:
    """Every city's name, the lanes and the panels stay put while tiles are taken: the
    single cities (centred) and the widest market too."""
    board = default_board()

    async def empty(players: int) -> None:
        app = table(players, board)
        s = app.session.view().state
        area, sep = map_area(app, 80, 24)
        before = names_at(board, area)
        lanes = [[x for x, g in enumerate(line) if g in ARROWS] for line in area]
        widest = max(range(len(board.cities)), key=lambda c: sum(
            len(tile_symbol(board.tileset.tiles[i])) for i in s.layout[c]))
        for c in [board.index("Kashgar"), board.index("Baghdad"), widest,
                  board.index("Yumen")]:
            while s.layout[c]:
                s.layout[c].pop()
                area, now = map_area(app, 80, 24)
                assert now == sep
                assert names_at(board, area) == before
                assert [[x for x, g in enumerate(line) if g in ARROWS]
                        for line in area] == lanes

    for players in (3, 4):
        with sized(80, 24):
            asyncio.run(empty(players))


def test_a_board_the_lanes_cannot_draw_keeps_its_arrows_in_the_cells() -> None:
    """A road that skips a row (Lanzhou → Koria here) leaves the lanes: every city says
    its roads in its own cell, as many arrows as roads, while that fits beside the panels
    (4 players); with five tiles a city (3 players) the map leaves them out and still
    fits 80 columns."""
    from engine.board import default_board_data, load_board

    data = default_board_data()
    data["arrows"].append(["Lanzhou", "Koria"])
    board = load_board(data)
    assert len(board.succ[board.index("Lanzhou")]) == 2

    async def look(players: int) -> None:
        app = table(players, board)
        lines = screen_text(app, 80, 24)
        assert all(len(x) <= 80 for x in lines) and lines[-1].startswith(">")
        area, sep = map_area(app, 80, 24)
        assert 80 - sep - 1 >= PANEL_MIN
        at = names_at(board, area)
        for c in range(len(board.cities)):
            y, x = at[c]
            after = area[y][x + len(city_label(board, c)):].split()
            arrows = after[0] if after and set(after[0]) <= set(ARROWS) else ""
            assert len(arrows) == (len(board.succ[c]) if players == 4 else 0), \
                (board.cities[c], area[y])

    for players in (3, 4):
        with sized(80, 24):
            asyncio.run(look(players))

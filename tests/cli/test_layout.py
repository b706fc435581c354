"""Layout limits of the table at 80x24: full player panels (all five colours plus Crooks
and Barterers) for 3 and 6 players, and a board taller than the screen (the map scrolls
with the caravan), with and without colour (NO_COLOR)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.formatted_text.utils import fragment_list_to_text
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import ColorDepth

from cli.commands.play import load_board, open_session
from cli.table.app import TableApp
from cli.table.local_session import LocalSession
from cli.table.mapview import board_rows, city_row, map_window
from cli.table.panels import goods_counts, render_players
from cli.table.session import SeatInfo
from engine.actions import RESOLVER
from engine.colours import NCOLOURS
from engine.rules import actors, apply
from engine.state import Phase, make_config
from tests.cli.helpers import NAMES, Output80x24, screen_text

TALL = Path(__file__).parent / "data" / "tall_board.json"


@pytest.fixture(params=[False, True], ids=["colour", "NO_COLOR"])
def no_color(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    if request.param:
        monkeypatch.setenv("NO_COLOR", "1")
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)
    return bool(request.param)


def _menu_shown(lines: list[str]) -> bool:
    """The menu rows are on the screen (entries, or the note that it is not our turn)."""
    return any(x.startswith(" 1 ") or "nothing to do" in x for x in lines[-5:])


def _dealt(session: LocalSession) -> None:
    """Run the dealer's set-up steps so the table is at its first auction."""
    s = session.state
    while actors(s) and actors(s)[0] == RESOLVER:
        apply(s, session.dealer.resolve(s))
    assert s.phase == Phase.BID


def _load_up(session: LocalSession) -> None:
    """Give seats 0 (us) and 1 every colour (several of each), Crooks and Barterers, and
    let the table know some of seat 1's colours: the widest panels a game can show."""
    s, dealer = session.state, session.dealer
    for p in (0, 1):
        for c in range(NCOLOURS):
            mine = [h for h in s.bag if dealer.colour[h] == c][:3 + c]
            for h in mine:
                s.bag.remove(h)
                s.goods[p].append(h)
        s.crooks[p] = 2
        s.barterers[p] = [1, 2, 3]
        s.money[p] = 123
    for h in s.goods[1][:4]:
        s.known[h] = dealer.colour[h]


@pytest.mark.parametrize("players", [3, 6])
def test_full_player_panels_do_not_wrap(players: int, no_color: bool) -> None:
    asyncio.run(_full_panels(players, no_color))


async def _full_panels(players: int, no_color: bool) -> None:
    with create_pipe_input() as inp, create_app_session(input=inp, output=Output80x24()):
        seats = [SeatInfo(NAMES[i] + "-Longname", "human" if i == 0 else "random")
                 for i in range(players)]
        session = LocalSession(make_config(players), seats, 0, 5, bot_delay=0.0)
        _dealt(session)
        _load_up(session)
        app = TableApp(session)
        if no_color:
            assert app.app.color_depth == ColorDepth.DEPTH_1_BIT
        width = app._panel_width()
        panel = fragment_list_to_text(app.players_text()).split("\n")
        assert all(len(line) <= width for line in panel), (width, panel)
        lines = screen_text(app)
        assert len(lines) == 24 and all(len(x) <= 80 for x in lines)
        text = "\n".join(lines)
        me = fragment_list_to_text(render_players(session.view(), seats, 0, (),
                                                  width=width)).split("\n")[1]
        counts = goods_counts(list(session.dealer.hand(session.state, 0).values()))
        assert all(counts)
        spaced = " ".join(f"{x}{k}" for x, k in zip("ISFJP", counts, strict=True))
        assert spaced in me  # our own goods, every colour
        assert "C2" in me and "B3" in me and me.strip() in text  # whole, on the screen
        assert "?" in text  # seat 1's unknown goods
        assert lines[-1].startswith(">") and _menu_shown(lines)
        # a narrower panel (a wide custom map) compacts the goods line instead of wrapping
        for narrow in (22, 18):
            small = fragment_list_to_text(render_players(session.view(), seats, 0, (),
                                                         width=narrow)).split("\n")
            assert all(len(line) <= narrow for line in small), small
            assert spaced.replace(" ", "") in small[1] and "C2B3" in small[1]


def test_map_window_keeps_the_caravan_in_view() -> None:
    assert map_window(12, 5, 13) == (0, 12)  # fits: no scrolling
    for here in range(20):
        first, end = map_window(20, here, 13)
        lines = (end - first) + (first > 0) + (end < 20)
        assert first <= here < end and lines <= 13, (here, first, end)
        assert min(here + 1, 19) < end  # the row ahead shows too


@pytest.mark.parametrize("players", [3, 6])
def test_tall_board_fits_80x24_and_follows_the_caravan(players: int, no_color: bool) -> None:
    """A custom board with 20 rows (the default has 12) in ``play --local``: the screen
    keeps every line of the table (menu, command line) and scrolls the map instead."""
    asyncio.run(_tall_board(players, no_color))


async def _tall_board(players: int, no_color: bool) -> None:
    board = load_board(str(TALL), False)
    rows = board_rows(board)
    assert len(rows) > 20 - 1
    with create_pipe_input() as inp, create_app_session(input=inp, output=Output80x24()):
        seats = [SeatInfo(NAMES[i], "human" if i == 0 else "random") for i in range(players)]
        session = open_session(board, seats, 0, 3, 0.0, None)
        _dealt(session)
        app = TableApp(session)
        if no_color:
            assert app.app.color_depth == ColorDepth.DEPTH_1_BIT
        s = session.state
        for row in (0, 6, 11, 15, len(rows) - 2):
            s.city = rows[row][0]
            assert city_row(board, s.city) == row
            lines = screen_text(app)
            assert len(lines) == 24 and all(len(x) <= 80 for x in lines)
            assert lines[0].startswith(" SILK ROAD") and lines[-1].startswith(">")
            assert _menu_shown(lines)  # the menu is still there
            here = next(x for x in lines if "▶ " + board.cities[s.city] in x)
            assert here, board.cities[s.city]
            text = "\n".join(lines)
            if row > 10:
                assert "more rows passed" in text and board.cities[rows[0][0]] not in text
            if row < len(rows) - 12:
                assert "ahead" in text
            for name in session.names:  # every panel is on the screen
                assert name in text

"""Shared helpers for the CLI tests: a real LocalSession driven through the real UI."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from prompt_toolkit.data_structures import Size
from prompt_toolkit.layout.mouse_handlers import MouseHandlers
from prompt_toolkit.layout.screen import Screen, WritePosition
from prompt_toolkit.output import DummyOutput

from cli.replay.model import ReplayModel
from cli.table.app import TableApp
from cli.table.local_session import LocalSession
from cli.table.session import SeatInfo
from engine.state import Phase, make_config

NAMES = ("Ann", "Marco", "Leyla", "Zhang", "Omar", "Roxana")


def make_session(players: int = 4, seed: int = 1, kind: str = "random",
                 seat: int | None = 0) -> LocalSession:
    seats = [SeatInfo(NAMES[i], "human" if i == seat else kind) for i in range(players)]
    return LocalSession(make_config(players), seats, seat, seed, bot_delay=0.0)


async def until(cond: Callable[[], bool], timeout: float = 5.0) -> None:
    """Let the loop run until ``cond()`` holds (the app and the bots work meanwhile)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not cond():
        if loop.time() > end:
            raise AssertionError("timed out waiting for the table")
        await asyncio.sleep(0.002)


class Output80x24(DummyOutput):
    """A DummyOutput that reports an 80x24 terminal (the smallest we support)."""

    def get_size(self) -> Size:
        return Size(rows=24, columns=80)


def screen_text(app: TableApp | Any, width: int = 80, height: int = 24) -> list[str]:
    """Render a screen's layout (a TableApp, a LobbyScreen: anything with ``.app``) into a
    screen buffer and return its lines of text."""
    from prompt_toolkit.application.current import set_app

    screen = Screen()
    app.app.render_counter += 1  # controls cache their text per render: ask for fresh text
    with set_app(app.app):
        app.app.layout.container.write_to_screen(
            screen, MouseHandlers(), WritePosition(0, 0, width, height),
            parent_style="", erase_bg=False, z_index=None,
        )
        screen.draw_all_floats()
    lines = []
    for y in range(height):
        row = screen.data_buffer[y]
        lines.append("".join(row[x].char for x in range(width)).rstrip())
    return lines


ARROW = {"right": "\x1b[C", "left": "\x1b[D", "up": "\x1b[A", "down": "\x1b[B",
         "home": "\x1b[H", "end": "\x1b[F"}
"""What a VT100 terminal sends for these keys (the pipe input parses them back)."""


def next_auction(model: ReplayModel, step: int, direction: int) -> int:
    """Where ↑/↓ should land, worked out from the states alone (not from the viewer)."""
    i = step + direction
    while 0 < i < len(model) - 1:
        if model.states[i].phase == Phase.BID and model.states[i - 1].phase != Phase.BID:
            return i
        i += direction
    return max(0, min(len(model) - 1, i))


async def drive_replay(model: ReplayModel) -> None:
    """Open the replay viewer on ``model`` and drive it only by keystrokes through a pipe:
    step, jump by auction, Home/End, a seat's view, the auditor's view, quit.  Asserts on
    the viewer's position and on what its view shows (hands, bag), not on screen bytes."""
    from prompt_toolkit.input import create_pipe_input

    from cli.replay.app import ReplayApp

    with create_pipe_input() as inp:
        app = ReplayApp(model, viewer=None, input=inp, output=DummyOutput())
        task = asyncio.create_task(app.app.run_async())
        await until(lambda: app.app.is_running)

        async def press(key: str, step: int, viewer: int | None = -1) -> None:
            inp.send_text(ARROW.get(key, key))
            await until(lambda: app.step == step and (viewer == -1 or app.viewer == viewer))

        last = len(model) - 1
        await press("right", 1)
        await press("right", 2)
        await press("right", 3)
        await press("left", 2)
        down = next_auction(model, 2, 1)
        assert down > 2
        await press("down", down)
        down2 = next_auction(model, down, 1)
        await press("down", down2)
        await press("up", next_auction(model, down2, -1))
        await press("end", last)
        await press("right", last)  # stays at the end
        await press("home", 0)
        await press("left", 0)  # stays at the start
        for _ in range(3):  # a few auctions in: goods in hands and in the bag
            await press("down", next_auction(model, app.step, 1))
        step = app.step
        s = model.states[step]
        assert any(s.goods[p] for p in range(model.players)) and s.bag
        for seat in (1, model.players - 1, 0):
            await press(str(seat), step, seat)
            shown = app.shown_hands()
            assert set(shown) == {seat}  # only this seat's own goods show in colour
            assert shown[seat] == model.hand(step, seat)
            assert set(shown[seat]) == set(s.goods[seat])
            assert app._view().hand == model.hand(step, seat)
            assert app.bag_counts() is None  # nobody at the table sees into the bag
            assert model.names[seat] in app.header()[0][1]
        await press("a", step, None)
        shown = app.shown_hands()
        assert set(shown) == set(range(model.players))
        for p in range(model.players):  # every colour of every hand
            assert set(shown[p]) == set(s.goods[p])
        bag = app.bag_counts()
        assert bag is not None and sum(bag) == len(s.bag)
        assert "auditor" in app.header()[0][1]
        await press(str(model.players), step, None)  # no such seat: nothing changes
        inp.send_text("q")
        await asyncio.wait_for(task, 5)


class StandInTable:
    """What :class:`p2p.handle.TableHandle` reads of a table, for screen tests that need no
    game: 3 seats, ours seat 0, no crypto op running, nobody talking.  ``transport`` may be
    a real mesh (the links the screen shows)."""

    def __init__(self, transport: Any = None) -> None:
        from engine.game import new_game
        from p2p.table.talk import TalkBook

        self.state = new_game(make_config(3))
        self.n = 3
        self.me = 0
        self.step = 0
        self.done = False
        self.failure = None
        self.on_step: Any = None
        self.session = type("S", (), {"current": None, "progress": lambda self: None})()
        self.transport = transport if transport is not None else object()
        self.talk = TalkBook(3, 0)
        self.stopped = asyncio.Event()

    def hand(self) -> dict[int, int]:
        return {}

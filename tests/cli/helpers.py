"""Shared helpers for the CLI tests: a real LocalSession driven through the real UI."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from prompt_toolkit.data_structures import Size
from prompt_toolkit.layout.mouse_handlers import MouseHandlers
from prompt_toolkit.layout.screen import Screen, WritePosition
from prompt_toolkit.output import DummyOutput

from cli.local_session import LocalSession
from cli.session import SeatInfo
from cli.table_app import TableApp
from engine.state import make_config

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

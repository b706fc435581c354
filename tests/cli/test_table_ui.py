"""The table screen: help, quit, mistyped input, table-life banners, and 80x24 rendering."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import ColorDepth

from cli.table.app import TableApp
from cli.table.local_session import LocalSession
from cli.table.session import PeerLink, SessionError, Status
from cli.theme import color_depth
from engine.actions import PassBid
from engine.errors import IllegalAction
from engine.state import Phase
from tests.cli.helpers import Output80x24, make_session, screen_text, until


class WordsSession(LocalSession):
    """A LocalSession that also has authentication words, as the p2p session will."""

    @property
    def auth_words(self) -> tuple[str, ...] | None:
        return ("amber", "camel", "lotus", "oasis")


async def _open(session: LocalSession) -> tuple[TableApp, asyncio.Task[str]]:
    app = TableApp(session)
    task = asyncio.create_task(app.run())
    await until(lambda: bool(session.legal()) or session.state.phase == Phase.OVER)

    def menu_ready() -> bool:
        parser = app.parser()
        return parser is not None and parser.legal == session.legal()

    await until(menu_ready)
    return app, task


def _run(coro_fn: Callable[[PipeInput], Awaitable[None]]) -> None:
    async def main() -> None:
        with create_pipe_input() as inp, create_app_session(input=inp, output=Output80x24()):
            await coro_fn(inp)

    asyncio.run(main())


def test_mistyped_and_illegal_input_explain_in_one_line() -> None:
    async def body(inp: PipeInput) -> None:
        session = make_session(4, 3)
        app, task = await _open(session)
        assert session.state.phase == Phase.BID
        n0 = len(session.log)
        for text, expect in (
            ("fly away\r", "unknown command 'fly'"),
            ("bid 999\r", "you have $10"),
            ("steal marco\r", "you cannot steal now"),
            ("exchange silk\r", "you cannot exchange now"),
        ):
            inp.send_text(text)
            def shown(expect: str = expect) -> bool:
                return expect in app.error

            await until(shown)
            assert "\n" not in app.error
        inp.send_text("9")  # a menu key with no entry behind it
        await until(lambda: "no entry 9" in app.error or app.sel >= 0)
        assert len(session.log) == n0  # nothing was played
        session.bot_delay = 30.0  # the bots now think for a long time
        inp.send_text("pass\r")
        await until(lambda: len(session.log) > n0)
        await until(lambda: "You pass." in app.log)
        # Out of turn: the session refuses with a readable IllegalAction, state unchanged.
        with pytest.raises(IllegalAction, match="not your turn"):
            await session.submit(PassBid())
        inp.send_text("pass\r")
        await until(lambda: "it is not your turn" in app.error)
        inp.send_text("\x11")  # Ctrl-Q asks first
        await until(lambda: app.overlay == "quit")
        inp.send_text("n")
        await until(lambda: app.overlay is None)
        inp.send_text("q")
        await until(lambda: app.overlay == "quit")
        inp.send_text("y")
        assert await asyncio.wait_for(task, 5) == "quit"
        await session.close()

    _run(body)


def test_help_overlay_and_escape() -> None:
    async def body(inp: PipeInput) -> None:
        session = make_session(4, 1)
        app, task = await _open(session)
        inp.send_text("?")
        await until(lambda: app.overlay == "help")
        text = "\n".join(screen_text(app))
        assert "Grand Vizier" in text and "Keys" in text and "q or Ctrl-Q quit" in text
        inp.send_text("x")  # any key closes it, and is not typed
        await until(lambda: app.overlay is None)
        assert app.input.text == ""
        inp.send_text("\x1bOP")  # F1
        await until(lambda: app.overlay == "help")
        inp.send_text("\x1b")
        await until(lambda: app.overlay is None)
        inp.send_text("bi")
        await until(lambda: app.input.text == "bi")
        inp.send_text("\x1b")  # Esc clears the line
        await until(lambda: app.input.text == "")
        app.app.exit(result="quit")
        await task
        await session.close()

    _run(body)


def test_table_life_banners_progress_and_auth_words() -> None:
    async def body(inp: PipeInput) -> None:
        session = WordsSession(make_session(4, 1).config, make_session(4, 1).seats, 0, 1,
                               bot_delay=0.0)
        app, task = await _open(session)
        assert app.banner() and "amber camel lotus oasis" in app.banner()[0][1]
        # Events arrive through the session's own stream, as the p2p session sends them.
        session._emit(Status("shuffling the bag", 3, 6))
        await until(lambda: app.status is not None)
        assert "shuffling the bag" in app.banner()[0][1] and "3/6" in app.banner()[0][1]
        assert "shuffling the bag" in "\n".join(screen_text(app))
        session._emit(Status(None))
        session._emit(PeerLink(2, "Leyla", connected=False))
        await until(lambda: 2 in app.away)
        banner = app.banner()[0]
        assert banner[0] == "class:banner.bad" and "Leyla disconnected" in banner[1]
        assert "Leyla lost the connection." in app.log
        assert not session.seats[2].connected
        session._emit(PeerLink(2, "Leyla", connected=True))
        await until(lambda: 2 not in app.away)
        assert "Leyla is back" in app.banner()[0][1] and session.seats[2].connected
        session._emit(SessionError("a peer sent a bad signature"))
        await until(lambda: any("bad signature" in x for x in app.log))
        assert app.fatal is None
        app.app.exit(result="quit")
        await task
        await session.close()

    _run(body)


@pytest.mark.parametrize("no_color", [False, True])
def test_screen_fits_80x24_with_and_without_colour(
    no_color: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)

    async def body(inp: PipeInput) -> None:
        for players in (3, 4, 6):
            session = make_session(players, 2)
            app, task = await _open(session)
            if no_color:  # (DummyOutput itself defaults to 1 bit, so only check NO_COLOR)
                assert app.app.color_depth == ColorDepth.DEPTH_1_BIT
            lines = screen_text(app)
            assert len(lines) == 24 and all(len(x) <= 80 for x in lines)
            text = "\n".join(lines)
            assert lines[0].startswith(" SILK ROAD")
            for city in ("Chang'An", "Samarkand", "Aleppo", "Antioch"):
                assert city in text, city
            for name in session.names:
                assert name[:6] in text
            assert "▶" in text and "Ivory Silk Fruit" in text and "sPice" in text
            assert lines[-1].startswith(">")
            assert any(x.startswith(" 1 ") for x in lines[-5:])  # the menu
            app.app.exit(result="quit")
            await task
            await session.close()

    _run(body)
    assert (color_depth() == ColorDepth.DEPTH_1_BIT) == no_color


def test_final_score_table_is_shown() -> None:
    async def body(inp: PipeInput) -> None:
        session = make_session(4, 3, seat=None)  # all bots: the screen as a spectator
        app = TableApp(session)
        task = asyncio.create_task(app.run())
        await until(lambda: app.over, timeout=10)
        text = "\n".join(screen_text(app))
        assert "Final scores" in text and "★ winner" in text and "majority" in text
        assert "game over" in text
        inp.send_text("q")  # no confirmation once the game is over
        assert await asyncio.wait_for(task, 5) == "over"
        await session.close()

    _run(body)

"""What the table screen answers to a key, on the real UI (pipe input, the real layout and
renderer): the completion popup leaves what is being decided and the menu in view, a move
shows as on its way before the session even has it (and a second press sends nothing), a
forced choice plays itself without a question, and the grace before a decline counts down
where the player looks, Esc to keep the tile."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import PipeInput, create_pipe_input

from cli.table import app as table_app
from cli.table.app import TableApp
from cli.table.local_session import LocalSession
from cli.table.session import SeatInfo
from cli.table.view import SENDING
from engine.actions import (
    RESOLVER,
    Action,
    Bid,
    Decline,
    ExchangeDone,
    ExchangePair,
    Move,
    PassBid,
)
from engine.rules import actors, apply, legal_actions
from engine.state import Phase, make_config
from engine.tiles import BARTERER, CROOK
from tests.cli.helpers import NAMES, Output80x24, make_session, screen_text, until


def _run(body: Callable[[PipeInput], Awaitable[None]]) -> None:
    async def main() -> None:
        with create_pipe_input() as inp, create_app_session(input=inp, output=Output80x24()):
            await body(inp)

    asyncio.run(main())


async def _open(session: LocalSession) -> tuple[TableApp, asyncio.Task[str]]:
    app = TableApp(session)
    task = asyncio.create_task(app.run())
    await until(lambda: app.app.is_running and bool(session.legal()))
    await until(lambda: (p := app.parser()) is not None and p.legal == session.legal())
    await until(lambda: app.app.render_counter > 0)
    return app, task


async def _close(app: TableApp, task: asyncio.Task[str], session: LocalSession) -> None:
    app.app.exit(result="quit")
    await task
    await session.close()


def drawn(app: TableApp) -> list[str]:
    """The screen as the application's renderer last drew it (not re-rendered here)."""
    screen = app.app.renderer._last_screen
    assert screen is not None, "nothing drawn yet"
    return ["".join(screen.data_buffer[y][x].char for x in range(80)).rstrip()
            for y in range(24)]


def _menu_top(lines: list[str]) -> int:
    """The line of the menu's first row (entries keyed 1, 2, …)."""
    return next(i for i, x in enumerate(lines) if x.startswith(" 1 "))


def _my_bid(session: LocalSession) -> None:
    """Play the engine until seat 0 is to bid (the others pass)."""
    s = session.state
    while not (s.phase == Phase.BID and s.bid_order[s.bid_pos] == 0):
        acts = actors(s)
        if acts[0] == RESOLVER:
            apply(s, session.dealer.resolve(s))
        else:
            p = acts[0]
            legal = legal_actions(s, p, session.dealer.hand(s, p))
            apply(s, PassBid() if PassBid() in legal else legal[0])


# --- the completion popup -------------------------------------------------------------
def test_the_completion_popup_leaves_the_title_and_the_menu_in_view() -> None:
    async def body(inp: PipeInput) -> None:
        session = make_session(4, 3)
        _my_bid(session)
        app, task = await _open(session)
        session.bot_delay = 30.0
        title = app.title_text()
        before = screen_text(app)
        menu = _menu_top(before)
        inp.send_text("b")  # every bid completes: a tall popup
        await until(lambda: app.input.buffer.complete_state is not None)
        lines = screen_text(app)
        assert any("bid 6" in x for x in lines[:menu - 1]), lines  # the popup is open
        assert lines[menu - 1] == before[menu - 1] and title in lines[menu - 1]
        assert lines[menu:-1] == before[menu:-1]  # every menu row, whole
        assert lines[-1].startswith("> b")
        await _close(app, task, session)

    _run(body)


# --- a move on its way --------------------------------------------------------------------
class SlowSession(LocalSession):
    """The real in-process table, whose submissions wait at a gate (as a networked move
    waits for its signature and the crypto): the screen must acknowledge the key first."""

    def __init__(self) -> None:
        seats = [SeatInfo(NAMES[i], "human" if i == 0 else "random") for i in range(4)]
        super().__init__(make_config(4), seats, 0, 3, bot_delay=0.0)
        self.gate = asyncio.Event()
        self.calls: list[Action] = []
        self.screen_at_call: list[str] = []
        self.app: TableApp | None = None

    async def submit(self, action: Action) -> None:
        self.calls.append(action)
        assert self.app is not None
        self.screen_at_call = drawn(self.app)
        await self.gate.wait()
        await super().submit(action)


class HandedOverSession(SlowSession):
    """Takes the move at once and plays it later, as a networked session does (its
    ``submit`` hands the move to the table, which signs and shares it afterwards)."""

    async def submit(self, action: Action) -> None:
        self.calls.append(action)
        assert self.app is not None
        self.screen_at_call = drawn(self.app)
        self.later = asyncio.create_task(self._play(action))

    async def _play(self, action: Action) -> None:
        await self.gate.wait()
        await LocalSession.submit(self, action)


@pytest.mark.parametrize("kind", [SlowSession, HandedOverSession],
                         ids=["slow-submit", "handed-over"])
def test_a_move_shows_as_sent_at_once_and_a_second_press_sends_nothing(
        kind: type[SlowSession], monkeypatch: pytest.MonkeyPatch) -> None:
    # the screen is drawn before the move goes, however loaded the machine
    monkeypatch.setattr(table_app, "DRAW_WAIT", 30.0)

    async def body(inp: PipeInput) -> None:
        session = kind()
        _my_bid(session)
        app, task = await _open(session)
        session.app = app
        session.bot_delay = 30.0
        pick = app.entries()[1]  # a bid
        assert pick.choice is not None
        n0 = len(session.log)
        inp.send_text("2")
        await until(lambda: bool(session.calls))
        # drawn by the application before the session was even asked
        text = "\n".join(session.screen_at_call)
        assert f"Sending your move: {pick.label}" in text, text
        assert f"{SENDING} {pick.label}" in text
        if kind is HandedOverSession:
            await until(lambda: not app.pending_busy())  # handed over: still on its way
        inp.send_text("2")  # pressed again: the table has not answered yet
        await until(lambda: "on its way" in app.error)
        inp.send_text("1\r")  # another key, Enter: still nothing more is sent
        await until(lambda: "on its way" in "\n".join(drawn(app)))
        assert "on its way" in "\n".join(screen_text(app))
        assert len(session.calls) == 1 and len(session.log) == n0
        session.gate.set()
        await until(lambda: len(session.log) > n0 and app.sending is None)
        assert session.calls == [pick.choice.action] and session.log[n0] == pick.choice.action
        assert [a for a in session.log[n0:] if isinstance(a, Bid | PassBid)][:1] == \
            [pick.choice.action]
        text = "\n".join(screen_text(app))
        assert "Sending" not in text and "on its way" not in text and not app.error
        await _close(app, task, session)

    _run(body)


# --- a forced choice, and the grace before a decline -----------------------------------
def _forced_done(session: LocalSession) -> bool:
    """Seat 0 at a printed exchange where only "done" is left (the pairs are chosen)."""
    s = session.state
    if s.phase != Phase.PERFORM or s.actor != 0 or not s.printed:
        return False
    legal = legal_actions(s, 0, session.dealer.hand(s, 0))
    return [a for a in legal if not (isinstance(a, ExchangePair) and a.give == a.receive)] \
        == [ExchangeDone()]


def _play_to_forced_done(session: LocalSession) -> None:
    """Seat 0 buys the lead, goes to printed exchanges and chooses pairs until only
    "done" remains (the engine plays every seat)."""
    s = session.state
    for _ in range(2000):
        if _forced_done(session):
            return
        acts = actors(s)
        assert acts, "the game ended first"
        if acts[0] == RESOLVER:
            apply(s, session.dealer.resolve(s))
            continue
        p = acts[0]
        legal = legal_actions(s, p, session.dealer.hand(s, p))
        pairs = [a for a in legal if isinstance(a, ExchangePair) and a.give != a.receive]
        if s.phase == Phase.BID and p == 0 and Bid(5) in legal:
            apply(s, Bid(5))
        elif s.phase == Phase.MOVE and p == 0:  # the exchange of the most goods
            moves = [a for a in legal if isinstance(a, Move)]
            apply(s, max(moves, key=lambda a: getattr(s.board.printed[a.city], "n", 0)))
        elif p == 0 and pairs:
            apply(s, pairs[0])
        else:
            apply(s, legal[-1] if isinstance(legal[0], PassBid) else legal[0])
    raise AssertionError("no forced exchange reached")


def test_a_forced_choice_plays_itself_with_no_question() -> None:
    """The menu says "(the only choice: it plays itself)": a key plays it at once, no
    "Are you sure?" (there is nothing else to go back to)."""
    async def body(inp: PipeInput) -> None:
        session = make_session(4, 2)
        session.bot_delay = 30.0
        _play_to_forced_done(session)
        app, task = await _open(session)
        assert "the only choice: it plays itself" in "\n".join(screen_text(app))
        n0 = len(session.log)
        inp.send_text("1")
        await until(lambda: len(session.log) > n0)
        assert isinstance(session.log[n0], ExchangeDone)
        assert app.overlay is None and app.confirm is None
        await _close(app, task, session)

    _run(body)


def test_the_grace_before_a_decline_counts_down_above_the_menu(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # a long grace, so that a loaded machine cannot let it run out before we look
    monkeypatch.setattr(table_app, "UNDO_SECONDS", 30.0)

    async def body(inp: PipeInput) -> None:
        session = make_session(4, 5)
        session.bot_delay = 30.0

        def perform_mine(sess: LocalSession) -> bool:
            s = sess.state
            return (s.phase == Phase.PERFORM and s.actor == 0 and not s.printed
                    and s.tile is not None and s.tile.kind not in (CROOK, BARTERER)
                    and len(legal_actions(s, 0, sess.dealer.hand(s, 0))) > 1)

        s = session.state
        while not perform_mine(session):
            acts = actors(s)
            assert acts
            if acts[0] == RESOLVER:
                apply(s, session.dealer.resolve(s))
                continue
            apply(s, legal_actions(s, acts[0], session.dealer.hand(s, acts[0]))[0])
        app, task = await _open(session)
        entries = app.entries()
        n0 = len(session.log)
        inp.send_text(str(len(entries) % 10))  # the last key: decline
        await until(lambda: app.undo is not None)
        await until(lambda: "Esc: keep the tile" in "\n".join(drawn(app)))
        lines = drawn(app)
        above = lines[_menu_top(lines) - 1]  # the line the player reads before the menu
        shown = re.search(r"Decline \(do nothing\) in (\d+) s", above)
        assert shown is not None and "Esc: keep the tile" in above, above
        first = int(shown[1])  # 30 on a quiet machine; a loaded one may draw it a second late
        assert 20 <= first <= 30, above

        def counted_down() -> bool:
            later = re.search(r"Decline \(do nothing\) in (\d+) s", "\n".join(drawn(app)))
            return later is not None and int(later[1]) < first

        await until(counted_down, 10)  # it counts down
        assert len(session.log) == n0
        inp.send_text("\x1b")  # Esc: the tile is kept
        await until(lambda: app.undo is None)
        await until(lambda: "Esc: keep the tile" not in "\n".join(drawn(app)))
        assert len(session.log) == n0 and Decline() in session.legal()  # still to choose
        await _close(app, task, session)

    _run(body)

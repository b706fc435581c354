"""The table screen's "abandon": when a peer stalls the status line names who we wait for
(from ``LockstepTable.waiting_for()``), ``a`` asks to confirm and ``y`` calls
``LockstepTable.abandon``.

The table here is a stand-in with the public surface the session's
:class:`p2p.handle.TableHandle` reads, so the stall is
immediate and deterministic (a real silent peer takes a stall timeout to show)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input

from cli.table import net_session
from cli.table.app import TableApp
from cli.table.net_session import NetSession, RunOutcome
from cli.table.session import SeatInfo
from p2p.handle import TableHandle
from p2p.table import TableStopped
from tests.cli.helpers import Output80x24, StandInTable, screen_text, until

NAMES = ["Ann", "Marco", "Leyla"]


class StalledTable(StandInTable):
    """Waits forever for seat 2's action until abandoned (then stops naming seat 2)."""

    def __init__(self) -> None:
        super().__init__()
        self.abandoned: list[str] = []

    def waiting_for(self) -> tuple[str, list[int]] | None:
        return ("the action of seat 2", [2])

    def abandon(self, reason: str = "abandoned by the player") -> None:
        self.abandoned.append(reason)
        self.stopped.set()


def _stalled_session(table: StalledTable, words: list[str] | None = None) -> NetSession:
    """Seat 0's session at the stand-in table (it stops once abandoned)."""

    async def runner(human: Any, handle: TableHandle) -> RunOutcome:
        handle.attach(table)  # type: ignore[arg-type]  # the stand-in is not a real LockstepTable
        await table.stopped.wait()
        raise TableStopped(2, "abandoned", "was waiting for the action of seat 2")

    seats = [SeatInfo(n, "human" if i == 0 else "peer") for i, n in enumerate(NAMES)]
    return NetSession(seats, 0, runner, words=words)


async def _abandon_flow() -> tuple[StalledTable, list[str], str]:
    table = StalledTable()
    with create_pipe_input() as inp, create_app_session(input=inp, output=Output80x24()):
        session = _stalled_session(table)
        app = TableApp(session)
        task = asyncio.create_task(app.run())
        await until(lambda: app.stalled(), 5)
        await until(lambda: app.status is not None and "Leyla (seat 2)" in
                    (app.status.text or ""), 5)
        screen = screen_text(app)
        inp.send_text("a")
        await until(lambda: app.overlay == "abandon", 5)
        confirm = "\n".join(screen_text(app))
        assert "Stop waiting for Leyla (seat 2)?" in confirm
        inp.send_text("y")
        await until(lambda: app.fatal is not None, 5)
        fatal = app.fatal or ""
        inp.send_text("q")
        assert await asyncio.wait_for(task, 5) == "quit"
        await session.close()
        return table, screen, fatal


@pytest.mark.timeout(30)
def test_abandon_a_stalled_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(net_session, "STALL_NOTICE", 0.0)
    monkeypatch.setattr(net_session, "THINK_LIMIT", 0.0)  # a move: offered after the limit
    table, screen, fatal = asyncio.run(asyncio.wait_for(_abandon_flow(), 20))
    banner = next(x for x in screen if "Waiting" in x)
    assert "Leyla (seat 2)" in banner and "a: abandon" in banner
    assert table.abandoned == ["abandoned by Ann"]
    assert "Leyla (seat 2)" in fatal and "abandoned" in fatal


def test_abandon_is_refused_at_a_local_table() -> None:
    from tests.cli.helpers import make_session

    async def go() -> str:
        with create_pipe_input() as inp, create_app_session(input=inp, output=Output80x24()):
            app = TableApp(make_session())
            app.run_command("abandon")
            return app.error

    assert "nothing to abandon" in asyncio.run(go())


async def _thinking_flow() -> tuple[list[str], bool, str]:
    table = StalledTable()
    with create_pipe_input() as inp, create_app_session(input=inp, output=Output80x24()):
        session = _stalled_session(table, ["amber", "falcon", "river", "salt"])
        app = TableApp(session)
        task = asyncio.create_task(app.run())
        await until(lambda: app.status is not None and "Waiting for Leyla (seat 2) to play"
                    in (app.status.text or ""), 5)
        screen = screen_text(app)
        stalled = app.stalled()
        inp.send_text("a")  # no abandon to offer: the key is typed into the command line
        await until(lambda: app.input.text == "a", 5)
        overlay = str(app.overlay)
        app.input.text = ""
        table.stopped.set()
        await until(lambda: app.fatal is not None, 5)
        inp.send_text("q")
        assert await asyncio.wait_for(task, 5) == "quit"
        await session.close()
        return screen, stalled, overlay


@pytest.mark.timeout(30)
def test_a_player_thinking_is_named_without_an_offer_to_abandon(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A person choosing a move is normal: the line says who is to play, offers nothing,
    and the authentication words stay on screen during the first moves."""
    monkeypatch.setattr(net_session, "STALL_NOTICE", 0.0)
    screen, stalled, overlay = asyncio.run(asyncio.wait_for(_thinking_flow(), 20))
    banner = next(x for x in screen if "to play" in x)
    assert "Compare aloud: amber falcon river salt · Leyla (seat 2) to play" in banner, banner
    assert "abandon" not in "\n".join(screen)
    assert not stalled and overlay == "None"


def test_a_reconnect_restarts_the_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """After "Bob reconnected." the wait counts from the reconnect, not from the drop."""

    async def go() -> tuple[Any, bool]:
        session = _stalled_session(StalledTable())
        loop = asyncio.get_running_loop()
        session._links = {1: True, 2: False}
        session._stall = (("the action of seat 2", (2,)), loop.time() - 100)
        offered_while_down = session.stalled_on() is not None
        monkeypatch.setattr(session.handle, "links", lambda: {1: True, 2: True})
        session._watch_links()
        return session._stall, offered_while_down

    stall, offered_while_down = asyncio.run(go())
    assert offered_while_down  # a seat whose link is down: abandon is offered
    assert stall is None

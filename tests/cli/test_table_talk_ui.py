"""Table talk on the real table screen: typed or on a key, signed by our table, shown in
the log in its own style, and kept in the game's record."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input

from cli.table.app import TableApp
from cli.table.net_session import NetSession, local_runner
from cli.table.session import SeatInfo, Talk
from cli.table.talk import TALK_MARK, log_line
from p2p.judge.game_audit import audit_folder
from tests.cli.helpers import Output80x24, make_session, screen_text, until

F2 = "\x1bOQ"
"""What a VT100 terminal sends for F2 (the pipe input parses it back)."""
NAMES = ["Ann", "Bea", "Cem"]


async def _talk(root: Path) -> tuple[list[str], list[str], Path | None]:
    with create_pipe_input() as inp, create_app_session(input=inp, output=Output80x24()):
        seats = [SeatInfo(n, "human" if i == 0 else "heuristic") for i, n in enumerate(NAMES)]
        runner = local_runner(NAMES, "heuristic", 3, "audit", root, one_process=True)
        session = NetSession(seats, 0, runner)
        app = TableApp(session)
        task = asyncio.create_task(app.run())
        await until(lambda: session.handle.ready and bool(app.log), 60)
        inp.send_text("'gg \x07well\u202e played\r")  # a bell and a bidi override: cleaned
        await until(lambda: any(line.startswith(f"{TALK_MARK}You: gg") for line in app.log),
                    20)
        inp.send_text(F2)
        await until(lambda: f"{TALK_MARK}You: gg" in app.log, 20)
        screen = screen_text(app)
        log = list(app.log)
        inp.send_text("q")
        await until(lambda: app.overlay == "quit", 10)
        inp.send_text("y")
        await asyncio.wait_for(task, 20)
        folder = session.folder
        await session.close()
        return log, screen, folder


@pytest.mark.timeout(120)
def test_a_line_said_at_the_table_is_shown_and_recorded(tmp_path: Path) -> None:
    log, screen, folder = asyncio.run(_talk(tmp_path))
    said = [line for line in log if line.startswith(TALK_MARK)]
    assert said[0] == f"{TALK_MARK}You: gg well? played"  # no bell; the override shown
    assert said[1] == f"{TALK_MARK}You: gg"
    assert any(f"{TALK_MARK}You: gg well? played" in row for row in screen)
    assert folder is not None
    report = audit_folder(folder)  # the game was left early: the record holds the talk
    assert report.replay is not None and report.replay.talk is not None
    assert [ev.envelope.body[0] for ev in report.replay.talk] == ["gg well? played", "gg"]


def test_a_local_table_of_bots_says_nobody_hears() -> None:
    async def go() -> str:
        with create_pipe_input(), create_app_session(output=Output80x24()):
            app = TableApp(make_session())
            app.run_command("say hello")
            return app.error

    assert "nobody to talk to" in asyncio.run(go())


def test_a_watchers_line_reads_as_the_watchers_and_its_pace_as_the_relaying_seats() -> None:
    assert log_line(Talk(0, "Ann", "nice move", 0, "Kim"), 1) == \
        f"{TALK_MARK}Kim (watching, via Ann): nice move"
    assert log_line(Talk(0, "Ann", "again", 3, "Kim"), 0) == (
        f"{TALK_MARK}Kim (watching, via You): again (+3 more lines from You not shown: "
        "talking too fast)")
    assert log_line(Talk(2, "Cem", "gg"), 1) == f"{TALK_MARK}Cem: gg"

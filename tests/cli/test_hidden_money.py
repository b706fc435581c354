"""Issue 10, item 14: a table may keep other players' money hidden (behind the screens, as
the rulebook has it).  The option is an agreed parameter (hashed into the game id) that
leaves tables without it exactly as they were, so old transcripts keep their game id."""

from __future__ import annotations

import asyncio
import hashlib

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.formatted_text.utils import fragment_list_to_text
from prompt_toolkit.input import create_pipe_input

from cli.local_session import LocalSession
from cli.session import SeatInfo
from cli.table_app import TableApp
from engine.state import Phase, make_config
from p2p.errors import ProtocolError
from p2p.framing import pack
from p2p.game import GameParams, compute_game_id
from p2p.mesh import RosterEntry
from tests.cli.helpers import NAMES, Output80x24, screen_text, until


def _roster() -> list[RosterEntry]:
    return [RosterEntry(i, bytes([i + 1]) * 32, f"p{i}", "127.0.0.1", 4000 + i)
            for i in range(3)]


def test_params_without_the_option_are_unchanged() -> None:
    open_ = GameParams(3, "base", b"\x01" * 32, "verified")
    assert open_.money == "open" and not open_.hidden_money
    assert len(open_.to_wire()) == 5  # the wire of every table made before the option
    roster = _roster()
    seats = [[e.seat, e.key, e.name] for e in roster]
    before = hashlib.sha256(b"silkroad/game-id/v1\0" + pack(
        [seats, [open_.protocol_version, 3, "base", b"\x01" * 32, "verified"]])).digest()
    assert compute_game_id(roster, open_) == before
    hidden = GameParams(3, "base", b"\x01" * 32, "verified", money="hidden")
    assert hidden.to_wire() == [*open_.to_wire(), "hidden"] and hidden.hidden_money
    assert compute_game_id(roster, hidden) != before  # agreed: a different table
    assert GameParams.from_wire(hidden.to_wire()) == hidden
    assert GameParams.from_wire(open_.to_wire()) == open_
    for bad in ("open", "secret", 1):
        with pytest.raises(ProtocolError, match="money"):
            GameParams.from_wire([*open_.to_wire(), bad])


@pytest.mark.parametrize("hidden", [False, True])
def test_table_shows_others_money_only_when_open(hidden: bool) -> None:
    async def go() -> tuple[list[str], str]:
        with create_pipe_input() as inp, create_app_session(input=inp, output=Output80x24()):
            seats = [SeatInfo(NAMES[i], "human" if i == 0 else "random") for i in range(4)]
            session = LocalSession(make_config(4), seats, 0, 3, bot_delay=0.0,
                                   hidden_money=hidden)
            app = TableApp(session)
            task = asyncio.create_task(app.run())
            await until(lambda: bool(session.legal()))
            session.bot_delay = 30.0
            s = session.state
            s.money[1], s.money[0] = 37, 21
            panel = fragment_list_to_text(app.players_text())
            screen = screen_text(app)
            app.app.exit(result="quit")
            await task
            await session.close()
            return screen, panel

    screen, panel = asyncio.run(go())
    text = "\n".join(screen)
    assert "$21" in panel  # my own money always shows
    if hidden:
        assert "$37" not in panel and panel.count("$?") == 3
    else:
        assert "$37" in panel and "$?" not in panel
    assert "Marco" in text


def test_scores_reveal_everyones_money_at_the_end() -> None:
    async def go() -> str:
        with create_pipe_input() as inp, create_app_session(input=inp, output=Output80x24()):
            seats = [SeatInfo(NAMES[i], "random") for i in range(4)]
            session = LocalSession(make_config(4), seats, None, 3, bot_delay=0.0,
                                   hidden_money=True)
            app = TableApp(session)
            task = asyncio.create_task(app.run())
            await until(lambda: app.over, 10)
            assert session.state.phase == Phase.OVER
            text = "\n".join(screen_text(app))
            inp.send_text("q")
            await asyncio.wait_for(task, 5)
            await session.close()
            return text

    text = asyncio.run(go())
    assert "Final scores" in text and "money" in text

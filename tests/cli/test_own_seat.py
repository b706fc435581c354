"""Every list of players marks our own seat "(you)", on our row only: the panels (wide,
narrow), the one-line players of a small terminal, the final score table and the
joiner's lobby; names the lobby numbered apart ("Root (2)") stay apart when cut to a
panel's width; and bots never take the human's name."""

from __future__ import annotations

import asyncio

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.formatted_text.utils import fragment_list_to_text
from prompt_toolkit.input import create_pipe_input

from cli.commands.join import seat_lines
from cli.commands.play import BOT_NAMES, bot_names
from cli.table.app import TableApp
from cli.table.local_session import LocalSession
from cli.table.panels import YOU, fit_name, render_players, render_scores
from cli.table.session import SeatInfo
from engine.actions import RESOLVER
from engine.rules import actors, apply
from engine.state import Phase, make_config
from tests.cli.helpers import NAMES, Output80x24


def _session(players: int, me: int | None, names: tuple[str, ...] = NAMES) -> LocalSession:
    """A table at its first auction, seen from seat ``me``."""
    seats = [SeatInfo(names[i], "human" if i == me else "random") for i in range(players)]
    session = LocalSession(make_config(players), seats, me, 5, bot_delay=0.0)
    s = session.state
    while actors(s) and actors(s)[0] == RESOLVER:
        apply(s, session.dealer.resolve(s))
    assert s.phase == Phase.BID
    return session


def _marked(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if YOU in line]


@pytest.mark.parametrize("width", [34, 24])
def test_panels_mark_our_seat_only(width: int) -> None:
    session = _session(4, 2)
    lines = fragment_list_to_text(render_players(session.view(), session.seats, 2, (),
                                                 width=width)).split("\n")
    assert _marked(lines) == [4]  # two lines per player: seat 2's first line
    assert lines[4].startswith(" Leyla") and all(len(x) <= width for x in lines)
    # the auditor (no seat of their own) sees no "(you)"
    audit = fragment_list_to_text(render_players(session.view(), session.seats, None, (),
                                                 width=width))
    assert YOU not in audit


def test_one_line_players_mark_our_seat_only() -> None:
    async def go() -> list[str]:
        with create_pipe_input() as inp, create_app_session(input=inp, output=Output80x24()):
            app = TableApp(_session(3, 1))
            return fragment_list_to_text(app.compact_players()).split("\n")

    lines = asyncio.run(go())
    assert _marked(lines) == [1] and lines[1][1:].startswith("Marco")  # [0]: ▶ or not


def test_score_table_marks_our_row_within_80_columns() -> None:
    names = ("Root", "Marco", "Root (2)")
    session = _session(3, 2, names)
    s = session.state
    s.final = ((0, 0, 1), (2,), (3, 3, 4, 4))
    s.money = [33, 43, 42]
    lines = fragment_list_to_text(render_scores(s, names, 2)).split("\n")
    assert [lines[i].split()[:3] for i in _marked(lines)] == [["Root", "(2)", "(you)"]]
    assert all(len(x) <= 80 for x in lines)
    # the others' rows keep their plain names; every column stays aligned with ours
    rows = [x for x in lines if x.startswith(("  Root", "  Marco"))]
    assert [x[2:17].rstrip() for x in rows] == ["Root (2) (you)", "Marco", "Root"]
    assert [x[17:].split()[0] for x in rows] == ["42", "43", "33"]
    assert YOU not in fragment_list_to_text(render_scores(s, names, None))


def test_joiner_lobby_marks_the_seat_with_our_key() -> None:
    seats = [("Root", "aaaaaaaa"), ("Root (2)", "bbbbbbbb"), ("Ann", "cccccccc")]
    lines = [text for _, text in seat_lines("Tea", seats, 4, "bbbbbbbb")]
    marked = [x for x in lines if YOU in x]
    assert marked == ["seat 1: Root (2) (you)  [bbbbbbbb]"]
    assert "seat 0: Root  [aaaaaaaa]" in lines and "3/4 seats" in lines[0]


def test_numbered_names_stay_apart_when_cut() -> None:
    assert fit_name("Christina (2)", 9) == "Christ(2)"
    assert fit_name("Christina", 9) == "Christina"
    assert fit_name("Root (2)", 9) == "Root (2)"
    assert fit_name("Alexandrina", 9) == "Alexandri"  # no number: a plain cut
    assert fit_name("Al (12345678)", 5) == "Al (1"  # the number alone would not fit


def test_bots_never_take_the_humans_name() -> None:
    assert bot_names(3, "Ann") == list(BOT_NAMES[:3])
    got = bot_names(5, "marco")
    assert len(got) == 5 and "Marco" not in got and len(set(got)) == 5

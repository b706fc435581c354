"""Whole games played through keystrokes against bots, on the real table UI.

The human seat is driven only through the pipe input: sometimes by typing the
command (with Enter), sometimes by the menu (digits, arrows, submenus). Every
interaction the rules offer must be reached over a few seeded games.
"""

from __future__ import annotations

import asyncio

from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import PipeInput, create_pipe_input

from cli.table.app import KEYS, TableApp
from cli.table.choices import Choice
from engine.actions import ExchangePair, TakeTile
from engine.rng import DetRng
from engine.state import GameState, Phase
from engine.tiles import BARTERER, CROOK
from tests.cli.helpers import Output80x24, make_session, until

RIGHT = "\x1b[C"
EVERY_INTERACTION = {
    "PassBid", "Bid", "SellLead", "KeepLead", "Move", "TakeTile", "PassPawn", "Decline",
    "Sell", "Buy", "Trade", "ExchangePair", "ExchangeDone", "Steal", "Vizier",
    "VizierChoice", "UseCrook", "PlayBarterer",
}


def _pick(choices: list[Choice], covered: set[str], rng: DetRng, s: GameState) -> Choice:
    fresh = [c for c in choices if type(c.action).__name__ not in covered]
    if "PlayBarterer" not in covered or "UseCrook" not in covered:
        kept = [c for c in choices if isinstance(c.action, TakeTile)
                and s.board.tileset.tiles[c.action.tile].kind in (CROOK, BARTERER)]
        fresh = fresh or kept
    pool = fresh or choices
    return pool[rng.below(len(pool))]


async def _menu_path(app: TableApp, choice: Choice) -> str:
    """Keys that select ``choice`` through the menu (a submenu first if it is grouped)."""
    entries = app.entries()
    hits = [i for i, e in enumerate(entries)
            if e.choice == choice or (e.group is not None and e.group == choice.group)]
    assert hits, f"{choice} not in the menu"
    i = hits[0]
    keys = KEYS[i] if i < len(KEYS) else RIGHT * (i - app.sel) + "\r"
    return keys


async def _answer(app: TableApp, inp: PipeInput) -> None:
    """A menu pick that asks first (an exchange) is confirmed with y; a decline waiting
    for Esc is done at once with Enter."""
    await asyncio.sleep(0.01)
    await until(lambda: app.overlay == "confirm" or app.undo is not None
                or not app.my_turn() or app.version > 0, 2)
    if app.overlay == "confirm":
        inp.send_text("y")
    elif app.undo is not None:
        inp.send_text("\r")


async def play_one(players: int, seed: int, covered: set[str]) -> TableApp:
    with create_pipe_input() as inp, create_app_session(input=inp, output=Output80x24()):
        session = make_session(players, seed)
        app = TableApp(session)
        task = asyncio.create_task(app.run())
        rng = DetRng(seed.to_bytes(4, "big"), b"test-driver")
        turn = 0
        while True:
            await until(lambda: session.state.phase == Phase.OVER or bool(session.legal()))
            if session.state.phase == Phase.OVER:
                break
            parser = app.parser()
            assert parser is not None and parser.legal == session.legal()
            choice = _pick(parser.choices, covered, rng, session.state)
            n0 = len(session.log)
            turn += 1
            a = choice.action
            off_menu = isinstance(a, ExchangePair) and a.give == a.receive  # typed only
            if (turn % 2 and choice.group is None) or off_menu:
                inp.send_text(choice.command + "\r")
            else:
                inp.send_text(await _menu_path(app, choice))
                if choice.group is not None:
                    await until(lambda: bool(app.stack))
                    sub = [e.choice for e in app.entries()]
                    j = sub.index(choice)
                    inp.send_text(KEYS[j] if j < len(KEYS) else RIGHT * j + "\r")
            await _answer(app, inp)

            def moved(n0: int = n0) -> bool:
                return len(session.log) > n0 or bool(app.error)

            await until(moved)
            assert not app.error, app.error
            covered.add(type(choice.action).__name__)
        await until(lambda: app.over)
        assert session.state.final is not None
        assert any("win" in line for line in app.log[-2:])
        inp.send_text("q")
        assert await asyncio.wait_for(task, 5) == "over"
        await session.close()
        return app


def test_whole_games_through_keystrokes_cover_every_interaction() -> None:
    covered: set[str] = set()

    async def main() -> None:
        for players, seed in ((4, 1), (3, 2), (5, 3), (4, 4), (3, 5), (6, 6), (4, 7), (3, 8)):
            await play_one(players, seed, covered)
            if EVERY_INTERACTION <= covered:
                break

    asyncio.run(main())
    assert EVERY_INTERACTION - covered == set()

"""The lobby screens, headless (pipe input + DummyOutput), against a real table.

A real host table (:class:`p2p.front_door.HostedTable`) is advertised with mDNS bound to
127.0.0.1; the joiner's lobby (:func:`cli.commands.join.join_lobby`) finds it, is refused with
a wrong join code, gets in with the right one, sees the seats fill and, after the host's
``s``, the authentication words — the same words as everybody else.  No game is played
here: that is what test_net.py does.

Other tables may be advertised on this machine at the same time (another copy of the
suite, a real game): the joiner only lists the table this test opened (a filter on its
key fingerprint), and a foreign table of the very same name is advertised throughout to
prove it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from cli.commands import host as cmd_host
from cli.commands import join as cmd_join
from cli.commands import net as cmd_net
from cli.lobby_app import LobbyScreen
from p2p.front_door import HostedTable, JoiningSeat, browse_tables
from p2p.identity import Identity
from p2p.lobby.discovery import Advertisement, Discovery, TableAd
from p2p.lobby.seating import join_table
from p2p.net.connection import Listener
from tests.cli.helpers import screen_text, until

LO = "127.0.0.1"


@contextlib.asynccontextmanager
async def foreign_table(name: str) -> AsyncIterator[Advertisement]:
    """A table of someone else's (another test run, a real game) advertised on 127.0.0.1
    with the real zeroconf for as long as the block runs."""
    async with Discovery([LO]) as disc:
        # its instance name sorts before any real key's: unfiltered, it would be entry 1
        fp = "00000000" + Identity.generate().fingerprint[8:]
        yield await disc.advertise(TableAd(name, 1, 4, fp, code_required=True), 9)


def _text(screen: LobbyScreen) -> str:
    return "\n".join(screen_text(screen))


@contextlib.asynccontextmanager
async def _screen(title: str) -> AsyncIterator[tuple[LobbyScreen, Any]]:
    """A lobby screen on its own pipe input (several run side by side in one loop)."""
    with create_pipe_input() as inp:
        yield LobbyScreen(title, input=inp, output=DummyOutput()), inp


async def _lobby_round_trip(root: Path) -> None:
    hosted = HostedTable(name="Lobby tea", seats=4, player="Ann", root=root, code="silk7",
                         shuffle="audit", interface=LO)
    others: list[Any] = []
    tasks: list[asyncio.Task[Any]] = []
    try:
        await hosted.open()
        listener_port = hosted.port
        mine = hosted.fingerprint
        hargs = argparse.Namespace(table="Lobby tea", seats=4, code="silk7")
        jargs = argparse.Namespace(interface=LO, target=None, code=None, timeout=30.0)
        async with _screen("hosting Lobby tea") as (hs, hin), _screen("lobby") as (js, jin):
            happ = asyncio.create_task(hs.app.run_async())
            host = asyncio.create_task(cmd_host.host_lobby(hosted, hargs, hs))
            tasks += [happ, host]
            await until(lambda: "1/4 seats" in _text(hs), 5)
            assert "seat 0: Ann (you)" in _text(hs) and "join code silk7" in _text(hs)
            bea = await JoiningSeat(name="Bea", interface=LO,
                                    match=lambda ad: ad.fingerprint == mine).open()
            others.append(bea)
            join = asyncio.create_task(cmd_join.join_lobby(bea, jargs, None, screen=js))
            tasks.append(join)
            # browsing: the table shows up as entry 1 with its seats and "code needed"
            await until(lambda: "Lobby tea" in _text(js), 10)
            row = next(x for x in screen_text(js) if "Lobby tea" in x)
            assert "1. " in row and "1/4 seats" in row and "code needed" in row
            # a wrong code: a clear refusal, back at the list
            jin.send_text("1")
            await until(lambda: js.prompt is not None, 5)
            assert "needs a join code" in _text(js)
            jin.send_text("nope\r")
            await until(lambda: "Refused" in js.error, 10)
            assert "wrong or missing join code" in js.error and "Refused" in _text(js)
            # the right one (spaces and case do not matter): seated, both screens agree
            await until(lambda: js.prompt is None and js.selectable >= 1, 5)
            jin.send_text("1")
            await until(lambda: js.prompt is not None, 5)
            jin.send_text("SILK 7\r")
            await until(lambda: "seat 1: Bea" in _text(hs), 10)
            await until(lambda: "seat 1: Bea" in _text(js) and "2/4 seats" in _text(js), 10)
            assert "Waiting for the host" in _text(js)
            # the joiner's own row (found by its key) says so; the host's row does not
            assert "seat 1: Bea (you)" in _text(js) and "seat 0: Ann  [" in _text(js)
            # s with two seated is refused on the host's screen
            hin.send_text("s")
            await until(lambda: "at least 3 players" in hs.error, 5)
            assert "at least 3 players" in _text(hs)
            cl = await Listener(Identity.generate(), host=LO, port=0).start()
            others.append(cl)
            third = asyncio.create_task(join_table(cl, LO, listener_port, name="Cem",
                                                   join_code="silk-7", start_timeout=30))
            tasks.append(third)
            await until(lambda: "3/4 seats" in _text(hs) and "seat 2: Cem" in _text(js), 10)
            hin.send_text("s")  # 3 of 4 seated: start now
            setup = await asyncio.wait_for(host, 15)
            assert setup is not None and len(setup.roster) == 3
            # the words are shown in the lobby, identical on every seat
            words = "   ".join(w.upper() for w in setup.words)
            await until(lambda: words in _text(js), 10)
            assert "compare" in _text(js) and "press q" in _text(js)
            hold = asyncio.create_task(cmd_net.show_words(hs, setup.words, hold=10))
            tasks.append(hold)
            await until(lambda: words in _text(hs), 5)
            hin.send_text("\r")
            assert await asyncio.wait_for(hold, 5) is True
            jin.send_text("\r")  # sit down
            got = await asyncio.wait_for(join, 5)
            assert got is not None and got[1] == "Lobby tea"
            assert got[0].words == setup.words and got[0].my_seat == 1
            assert (await asyncio.wait_for(third, 5)).words == setup.words
            hs.app.exit()
            await asyncio.wait_for(happ, 5)
    finally:
        for t in tasks:
            if not t.done():
                t.cancel()
            with contextlib.suppress(BaseException):
                await t
        await hosted.close()
        for x in others:
            await x.close()


async def _with_a_foreign_table(root: Path) -> None:
    """The round trip while someone else's table called "Lobby tea" is on the LAN (an
    unfiltered browser sees it first: it is really there)."""
    async with foreign_table("Lobby tea") as theirs:
        fp = theirs.ad.fingerprint
        seen = await browse_tables(LO, 15, until=lambda t: any(
            i.ad.fingerprint == fp for i in t.values()))
        assert any(i.ad.fingerprint == fp for i in seen.values())
        await _lobby_round_trip(root)


@pytest.mark.timeout(60)
def test_lobby_browse_code_seats_start_and_words(tmp_path: Path) -> None:
    asyncio.run(asyncio.wait_for(_with_a_foreign_table(tmp_path), 50))


class _FakeTable:
    """Just what the host lobby reads (quitting never starts the table)."""

    def __init__(self, names: list[str]) -> None:
        self.seated = list(names)
        self.bots = 0
        self.dial, self.port = LO, 1

    async def start(self) -> Any:
        raise AssertionError("q must not start the table")


async def _quit_both() -> None:
    hargs = argparse.Namespace(table="Quit tea", seats=3, code=None)
    async with _screen("hosting Quit tea") as (hs, hin):
        app = asyncio.create_task(hs.app.run_async())
        fake: Any = _FakeTable(["Ann", "Bea", "Cem"][:2])
        host = asyncio.create_task(cmd_host.host_lobby(fake, hargs, hs))
        await until(lambda: "2/3 seats" in _text(hs), 5)
        hin.send_text("q")
        assert await asyncio.wait_for(host, 5) is None
        hs.app.exit()
        await asyncio.wait_for(app, 5)
    jl = await JoiningSeat(name="Bea", interface=LO).open()
    try:
        jargs = argparse.Namespace(interface=LO, target=None, code=None, timeout=5.0)
        async with _screen("lobby") as (js, jin):
            join = asyncio.create_task(cmd_join.join_lobby(jl, jargs, None, screen=js))
            await until(lambda: "Tables on your network" in _text(js)
                        or "Looking for tables" in _text(js), 5)
            jin.send_text("q")
            assert await asyncio.wait_for(join, 5) is None
    finally:
        await jl.close()


@pytest.mark.timeout(30)
def test_lobby_quit_keys() -> None:
    asyncio.run(asyncio.wait_for(_quit_both(), 20))

""""Play again" on the end screen: ``silkroad host`` at the table screen with a bot table on
127.0.0.1, driven through a prompt_toolkit pipe.  The end screen offers the key; pressing it
re-opens the same table for a second game (a new game id, the first leader rotated, the
same seats), whose end screen shows both games in the series line; q still leaves.

The host's own seat is played by a bot agent (``HostedTable.play`` is wrapped): the test
drives the screens, not the game's moves."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input

import cli.commands.host as cmd_host
import cli.commands.net as cmd_net
from cli.bots import bot_spec
from cli.main import build_parser
from cli.table.app import TableApp
from cli.table.net_session import NetSession
from p2p.front_door import HostedTable, headless_agent
from p2p.lobby.series import read_series
from tests.cli.helpers import Output80x24, screen_text, until

LIMIT = 150.0


def _args(tmp_path: Path, *extra: str) -> argparse.Namespace:
    args = build_parser().parse_args([
        "host", "--table", "Again tea", "--seats", "3", "--bots", "2", "--shuffle", "audit",
        "--interface", "127.0.0.1", "--name", "Host", "--folder", str(tmp_path / "peers"),
        "--transcript", str(tmp_path / "again.silkroad"), "--timeout", "60", *extra])
    # what run_host settles before it opens the table (it also wants a terminal)
    args.bot_spec = bot_spec(args.bot_kind, args.bot_level, args.bot_budget)
    args.code_generated = False
    args.games = args.games or (1 if args.headless else cmd_host.MAX_SERIES)
    return args


def _ended(apps: list[TableApp], n: int,
           task: asyncio.Task[int | None]) -> Callable[[], bool]:
    """Game ``n``'s end screen is up with its series line (or the command ended early)."""
    return lambda: (len(apps) >= n and apps[-1].over
                    and apps[-1].series_line is not None) or task.done()


def _running(app: TableApp) -> Callable[[], bool]:
    return lambda: app.app.is_running


@pytest.mark.timeout(400)  # two whole games with crypto: minutes on a loaded machine
def test_play_again_on_the_host_plays_a_second_game(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    apps: list[TableApp] = []

    async def table(session: NetSession, hidden_money: bool | None = None,
                    again: bool = False) -> str:
        app = TableApp(session, hidden_money=hidden_money, again=again)
        apps.append(app)
        return await app.run()

    real_play = HostedTable.play

    async def bot_play(self: HostedTable, setup: Any, handle: Any, agent: Any = None,
                       human: Any = None) -> Any:
        return await real_play(self, setup, handle, headless_agent("heuristic", 1), None)

    monkeypatch.setattr(cmd_net, "run_table", table)
    monkeypatch.setattr(cmd_net, "WORDS_HOLD", 0.2)  # the words show; nobody reads them
    monkeypatch.setattr(HostedTable, "play", bot_play)
    args = _args(tmp_path)

    async def main() -> tuple[int | None, list[list[str]]]:
        shown: list[list[str]] = []
        with create_pipe_input() as inp, create_app_session(input=inp, output=Output80x24()):
            hosting = asyncio.create_task(cmd_host._host(args, "Host", []))
            for n in (1, 2):
                await until(_ended(apps, n, hosting), LIMIT)
                assert not hosting.done(), hosting.result()
                app = apps[-1]
                await until(_running(app), 5)
                shown.append(screen_text(app))
                assert app.can_play_again()
                inp.send_text("n" if n == 1 else "q")
            return await asyncio.wait_for(hosting, LIMIT), shown

    code, shown = asyncio.run(main())
    assert code == 0
    first, second = ("\n".join(s) for s in shown)
    # the end screen offers the key (and q), and says the series so far
    assert " n play again (same seats)" in first and "q: leave the table" in first
    assert "Series after 1 game:" in first
    assert "Series after 2 games:" in second
    # both games were played at one table: a new id, the same seats, the lead rotated
    folders = sorted((tmp_path / "peers").glob("*/series.json"))
    records = [read_series(f.parent) for f in folders]
    record = max((r for r in records if r is not None), key=lambda r: len(r.games))
    assert [g.game_no for g in record.games] == [1, 2]
    one, two = record.games
    assert one.game_id != two.game_id
    assert one.players == two.players and one.players[0] == "Host"
    assert one.first_leader is not None and two.first_leader is not None
    lead = one.players.index(one.first_leader)
    assert two.players.index(two.first_leader) == (lead + 1) % 3
    assert record.line() in second  # the line shows both results
    assert sum(record.wins.values()) >= 2
    assert [a.again for a in apps] == [True, True]


@pytest.mark.timeout(400)  # two whole games with crypto: minutes on a loaded machine
def test_play_again_on_a_joiner_dials_back_for_the_hosts_next_game(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``silkroad join HOST:PORT`` at the table screen: n on the end screen seats the same
    key at the same host's next game (the host here is in-process, headless)."""
    import cli.commands.join as cmd_join
    from p2p.front_door import JoiningSeat
    from p2p.handle import TableHandle

    apps: list[TableApp] = []

    async def table(session: NetSession, hidden_money: bool | None = None,
                    again: bool = False) -> str:
        app = TableApp(session, hidden_money=hidden_money, again=again)
        apps.append(app)
        return await app.run()

    real_play = JoiningSeat.play

    async def bot_play(self: JoiningSeat, setup: Any, root: Any, handle: Any,
                       agent: Any = None, human: Any = None) -> Any:
        return await real_play(self, setup, root, handle, headless_agent("heuristic", 2),
                               None)

    monkeypatch.setattr(cmd_net, "run_table", table)
    monkeypatch.setattr(cmd_net, "WORDS_HOLD", 0.2)
    monkeypatch.setattr(JoiningSeat, "play", bot_play)

    async def main() -> tuple[int | None, list[list[str]], list[bytes]]:
        hosted = HostedTable(name="Again tea", seats=3, player="Host",
                             root=tmp_path / "host", shuffle="audit",
                             interface="127.0.0.1", bots=1, bot_names=["Bot"])
        shown: list[list[str]] = []
        ids: list[bytes] = []
        try:
            await hosted.open()
            args = build_parser().parse_args([
                "join", f"127.0.0.1:{hosted.port}", "--name", "Ann", "--interface",
                "127.0.0.1", "--folder", str(tmp_path / "ann"), "--transcript",
                str(tmp_path / "ann.silkroad"), "--timeout", "60"])
            args.games = cmd_host.MAX_SERIES  # what run_join settles for the screen
            with create_pipe_input() as inp, \
                    create_app_session(input=inp, output=Output80x24()):
                joining = asyncio.create_task(cmd_join._join(args, []))
                for n in (1, 2):
                    if n == 2:
                        await hosted.next_game()
                    await hosted.wait_full(LIMIT)
                    setup = await hosted.start()
                    ids.append(setup.game_id)
                    await hosted.play(setup, TableHandle(), headless_agent("heuristic", 1))
                    await until(_ended(apps, n, joining), LIMIT)
                    assert not joining.done(), joining.result()
                    app = apps[-1]
                    await until(_running(app), 5)
                    shown.append(screen_text(app))
                    inp.send_text("n" if n == 1 else "q")
                return await asyncio.wait_for(joining, LIMIT), shown, ids
        finally:
            await hosted.close()

    code, shown, ids = asyncio.run(main())
    assert code == 0
    first, second = ("\n".join(s) for s in shown)
    assert " n play again (same seats)" in first
    assert "Series after 1 game:" in first and "Series after 2 games:" in second
    assert ids[0] != ids[1]
    record = read_series(next((tmp_path / "ann").glob(f"{ids[1].hex()[:16]}-*")))
    assert record is not None and [g.game_no for g in record.games] == [1, 2]
    assert record.games[0].players == record.games[1].players == ["Host", "Bot", "Ann"]
    assert record.line() in second


def test_the_help_names_the_play_again_key() -> None:
    from cli.table.help_text import KEYS_PAGE
    from cli.table.view import AGAIN_KEY

    assert f"{AGAIN_KEY} play again" in KEYS_PAGE

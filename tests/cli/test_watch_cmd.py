"""``silkroad watch`` against a real hosted table: zeroconf, sockets and processes.

A real :class:`p2p.front_door.HostedTable` on 127.0.0.1 with a bot seat (its own process),
a ``silkroad join --headless`` process and a bot at the host's seat; a ``silkroad watch
--headless --json`` process finds the table by name over mDNS, comes mid-game, and must
end with the seats' final hash and verdict.  The seats see the watcher: the host's hook,
the advertisement (``silkroad tables``' "watchers") and the joined seat's JSON line.
The host's seat waits for the watcher (and for the joined seat to hear of it) before its
next move past step :data:`MID_GAME`, so the watcher comes mid-game by construction, not
by timing.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from cli.commands.tables import table_row
from engine.actions import Action
from engine.bots import make_bot
from engine.view import PlayerView
from p2p.front_door import HostedTable, TableHandle, TableInfo, browse_tables
from p2p.judge.game_audit import CERTIFIED, audit_game

ROOT = Path(__file__).resolve().parents[2]
MID_GAME = 30
"""The host's seat holds its first move after this step until the watcher is there."""


class HeldBot:
    """The host's seat: a heuristic bot that, past step ``at``, waits for ``go`` (it
    thinks in a worker thread, so the table keeps answering meanwhile)."""

    def __init__(self, handle: TableHandle, at: int, go: threading.Event) -> None:
        self.bot = make_bot("heuristic", 3)
        self.handle = handle
        self.at = at
        self.go = go

    def choose(self, view: PlayerView, legal: list[Action]) -> Action:
        if self.handle.step >= self.at:
            self.go.wait(120)
        return self.bot.choose(view, legal)


def _silkroad(*argv: str) -> list[str]:
    return [sys.executable, "-m", "cli.main", *argv]


async def _spawn(*argv: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *_silkroad(*argv), cwd=ROOT, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})


async def _heard(proc: asyncio.subprocess.Process, event: dict[str, Any]) -> list[str]:
    """Read ``proc``'s JSON lines until one holds ``event``'s items; the lines read."""
    assert proc.stdout is not None
    lines: list[str] = []
    while True:
        line = (await proc.stdout.readline()).decode()
        assert line, f"ended before {event}: {lines}"
        lines.append(line)
        got = json.loads(line)
        if all(got.get(k) == v for k, v in event.items()):
            return lines


async def _watched(tmp_path: Path) -> dict[str, Any]:
    name = f"watch-{uuid.uuid4().hex[:8]}"
    hosted = HostedTable(name=name, seats=3, player="Host", root=tmp_path / "hp",
                         shuffle="audit", interface="127.0.0.1", bots=1)
    counts: list[int] = []
    came = asyncio.Event()
    go = threading.Event()

    def on_watchers(n: int) -> None:
        counts.append(n)
        if n:
            came.set()

    hosted.on_watchers = on_watchers
    await hosted.open()
    procs: list[asyncio.subprocess.Process] = []
    try:
        joiner = await _spawn("join", f"127.0.0.1:{hosted.port}", "--name", "Dee",
                              "--interface", "127.0.0.1", "--headless", "--json",
                              "--timeout", "60", "--folder", str(tmp_path / "jd"),
                              "--transcript", str(tmp_path / "dee.silkroad"))
        procs.append(joiner)
        await hosted.wait_full(60)
        setup = await hosted.start()
        handle = TableHandle()
        reached = asyncio.Event()
        handle.subscribe(lambda _a: reached.set() if handle.step >= MID_GAME else None)
        play = asyncio.ensure_future(hosted.play(setup, handle, HeldBot(handle, MID_GAME, go)))
        await asyncio.wait_for(reached.wait(), 120)
        watcher = await _spawn("watch", name, "--interface", "127.0.0.1", "--headless",
                               "--json", "--timeout", "60", "--every", "0.5",
                               "--transcript", str(tmp_path / "watched.silkroad"))
        procs.append(watcher)
        await asyncio.wait_for(came.wait(), 60)
        at_join = handle.step

        def advertised(tables: dict[str, TableInfo]) -> bool:
            return any(i.ad.name == name and i.ad.watchers == 1 for i in tables.values())

        seen = await browse_tables("127.0.0.1", 30, until=advertised,
                                   match=lambda ad: ad.name == name)
        # the joined seat hears of the watcher too (through the LAN's record)
        told = await asyncio.wait_for(_heard(joiner, {"event": "watchers", "count": 1}), 30)
        go.set()
        result = await asyncio.wait_for(play, 120)
        out, err = await asyncio.wait_for(watcher.communicate(), 90)
        j_out, j_err = await asyncio.wait_for(joiner.communicate(), 90)
        return {"result": result, "out": out.decode(), "err": err.decode(),
                "rc": watcher.returncode, "counts": counts, "seen": seen, "at_join": at_join,
                "watchers_after": hosted.watchers, "joiner_told": told,
                "joiner_rc": joiner.returncode, "joiner_out": j_out.decode(),
                "joiner_err": j_err.decode()}
    finally:
        go.set()
        for proc in procs:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        await hosted.close()


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_watcher_found_by_name_joins_mid_game_and_ends_with_the_seats(
        tmp_path: Path) -> None:
    got = asyncio.run(_watched(tmp_path))
    assert got["rc"] == 0, (got["err"], got["out"][-2000:])
    assert "Traceback" not in got["err"], got["err"]
    lines = got["out"].strip().splitlines()
    assert len(lines) == 1, lines  # --json: one object
    verdict = json.loads(lines[0])
    seats = audit_game(got["result"].export)
    assert seats.status == CERTIFIED
    # the same final state and verdict as the seats' transcript
    assert verdict["status"] == CERTIFIED and verdict["exit_code"] == 0, verdict
    assert verdict["final_hash"] == seats.final_hash.hex() == got["result"].state_hash.hex()
    assert verdict["steps"] == seats.steps and verdict["culprit"] is None
    assert verdict["seen_to_end"] is True and verdict["forged"] == 0
    # it came mid-game: the game had played MID_GAME steps when it was admitted
    assert got["at_join"] >= MID_GAME and verdict["steps_at_first_audit"] >= MID_GAME
    # and left with a file the offline audit certifies on its own
    kept = audit_game(verdict["transcript"])
    assert kept.status == CERTIFIED and kept.final_hash == seats.final_hash
    # the host saw it come and go, and told the LAN while it watched
    assert got["counts"][:1] == [1] and got["counts"][-1] == 0, got["counts"]
    assert got["watchers_after"] == 0
    rows = [table_row(i) for i in got["seen"].values()]
    assert any(r["watchers"] == 1 for r in rows), rows
    # the joined seat played the same game to the end, and was told someone watched
    assert got["joiner_rc"] == 0, got["joiner_err"]
    dee = json.loads(got["joiner_out"].strip().splitlines()[-1])
    assert dee["audit"]["final_hash"] == verdict["final_hash"]
    assert json.loads(got["joiner_told"][-1]) == {"event": "watchers", "count": 1}


# --- the command's arguments ---------------------------------------------------------------
def test_watch_arguments_parse_like_join() -> None:
    from cli.main import build_parser

    args = build_parser().parse_args(
        ["watch", "Friday tea", "--code", "silk7", "--interface", "127.0.0.1", "--timeout",
         "5", "--transcript", "w.silkroad", "--headless", "--json", "--every", "0.5"])
    assert (args.target, args.code, args.interface, args.timeout) == \
        ("Friday tea", "silk7", "127.0.0.1", 5.0)
    assert (args.transcript, args.headless, args.json, args.every) == \
        ("w.silkroad", True, True, 0.5)
    bare = build_parser().parse_args(["watch"])
    assert bare.target is None and bare.code is None and not bare.headless
    assert bare.transcript is None and bare.func.__name__ == "run_watch"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["watch", "t", "--json"], "--json needs --headless"),
        (["watch", "--headless"], "--headless needs a table name or HOST:PORT"),
        (["watch", "t", "--headless", "--timeout", "0"], "--timeout must be positive"),
        (["watch", "t", "--headless", "--every", "-1"], "--every must be positive"),
        (["watch", "t"], "needs a terminal"),  # pytest's stdin is not a terminal
        (["watch", "t", "--timeout", "soon"], "invalid float value"),
    ],
)
def test_watch_usage_errors_exit_2_with_a_clear_message(
        argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    from cli.main import main

    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_watching_a_port_that_is_no_table_exits_2_naming_it(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing listens there: the watcher says it could not reach it (exit 2, as audit's
    "cannot read")."""
    import socket

    from cli.main import main

    with socket.socket() as sock:  # a port that was just free: nobody listens on it
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code = main(["watch", f"127.0.0.1:{port}", "--headless", "--timeout", "1",
                 "--transcript", os.devnull])
    err = capsys.readouterr().err
    assert code == 2 and f"127.0.0.1:{port}" in err and "Traceback" not in err, err
    # --json: one object on stdout all the same, saying why
    code = main(["watch", f"127.0.0.1:{port}", "--headless", "--json", "--timeout", "1",
                 "--transcript", os.devnull])
    out = capsys.readouterr().out
    said = json.loads(out)
    assert code == 2 and said["exit_code"] == 2 and said["status"] == "unwatched"
    assert f"127.0.0.1:{port}" in said["error"]


def test_watch_help_lists_its_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    from cli.main import main

    with pytest.raises(SystemExit):
        main(["watch", "--help"])
    out = capsys.readouterr().out
    assert "0 certified" in out and "1 unfair" in out and "--code" in out
    assert "silkroad watch 'Friday tea' --headless --json" in out


def test_the_hosts_header_says_how_many_watch() -> None:
    """The host's seat hears the watcher count (:meth:`NetSession.set_watching`, the hook
    of :class:`HostedTable`): the header says "2 watching" and still fits 80 columns."""
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input

    from cli.table.app import TableApp
    from cli.table.net_session import NetSession, RunOutcome
    from cli.table.session import SeatInfo, StateChanged
    from tests.cli.helpers import NAMES, Output80x24, screen_text

    async def never(_human: object, _handle: TableHandle) -> RunOutcome:
        raise AssertionError("the table is not played here")

    async def go() -> None:
        with create_pipe_input() as inp, create_app_session(input=inp, output=Output80x24()):
            seats = [SeatInfo(n, "human" if i == 0 else "peer") for i, n in
                     enumerate(NAMES[:3])]
            session = NetSession(seats, 0, never)
            app = TableApp(session)
            assert "watching" not in screen_text(app)[0]
            session.set_watching(2)
            events = session.events().__aiter__()
            app.handle(await asyncio.wait_for(events.__anext__(), 5))  # redrawn on news
            top = screen_text(app)[0]
            assert "2 watching" in top and len(top) <= 80, top
            session.set_watching(2)  # no change, no event
            session.set_watching(0)
            assert isinstance(await asyncio.wait_for(events.__anext__(), 5), StateChanged)
            assert "watching" not in screen_text(app)[0]

    asyncio.run(go())


def test_the_join_code_applies_to_watchers(tmp_path: Path) -> None:
    """A table with a join code: a watcher without it, or with a wrong one, is refused
    naming the code; with it, it is admitted (and counted) while the lobby fills, and
    told why when the table closes before the game began (no transcript: no game)."""
    from p2p.front_door import WatchError, watch_table

    async def go() -> None:
        hosted = HostedTable(name=f"coded-{uuid.uuid4().hex[:8]}", seats=3, player="Host",
                             root=tmp_path / "hp", code="silk 7", interface="127.0.0.1")
        counts: list[int] = []
        came = asyncio.Event()

        def on_watchers(n: int) -> None:
            counts.append(n)
            came.set()

        hosted.on_watchers = on_watchers
        await hosted.open()
        try:
            where = ("127.0.0.1", hosted.port)
            for code in (None, "silk 8"):
                with pytest.raises(WatchError, match="join code"):
                    await watch_table(where, code=code, timeout=5, transcript=None)
            assert hosted.watchers == 0 and counts == []
            watching = asyncio.ensure_future(watch_table(where, code="SILK-7", timeout=5,
                                                         transcript=None))
            await asyncio.wait_for(came.wait(), 10)
            assert counts == [1] and hosted.watchers == 1
        finally:
            await hosted.close()
        with pytest.raises(WatchError, match="the table closed"):
            await asyncio.wait_for(watching, 10)
        assert counts[-1] == 0

    asyncio.run(go())


def test_the_watchers_screen_names_a_cheat_as_the_judge_does() -> None:
    """The screen's verification line and verdict come from the judge's report: an unfair
    verdict names the seat (by name and number) and the rule, in red, within 80x24."""
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input

    from cli.replay.live import WatchScreen
    from crypto.audit import AuditReport, Violation
    from p2p.judge.game_audit import INCOMPLETE, UNFAIR, GameAuditReport
    from tests.cli.helpers import Output80x24, screen_text

    names = ["Ann", "Marco", "Leyla"]
    with create_pipe_input() as inp, create_app_session(input=inp, output=Output80x24()):
        screen = WatchScreen("Friday tea", Path("w.silkroad"))
        screen.on_event("connected", {"host": "127.0.0.1", "port": 4000, "table_key": "ab"})
        screen.on_event("table", {"table": "Friday tea", "names": names, "words": [],
                                  "game_id": "00" * 32, "hidden_money": False,
                                  "players": 3})
        fine = GameAuditReport(False, None, AuditReport(True, envelopes=40, ops=7), steps=12,
                               status=INCOMPLETE, names=names)
        screen.on_event("progress", {"envelopes": 40, "report": fine})
        lines = screen_text(screen)
        assert lines[0].startswith(" WATCHING Friday tea")
        assert lines[1] == " checked: 12 steps, 40 envelopes, 7 crypto ops — nothing wrong " \
            "so far"
        cheat = Violation(1, 41, (1, 9), "action.illegal", "bid 1000000 with 12 silver")
        bad = GameAuditReport(False, cheat, AuditReport(False, cheat, envelopes=41, ops=7),
                              steps=13, status=UNFAIR, names=names)
        screen.on_event("progress", {"envelopes": 41, "report": bad})
        screen.on_event("end", {"ended": "the table stopped", "report": bad,
                                "transcript": "w.silkroad"})
        lines = screen_text(screen)
        assert len(lines) == 24 and all(len(x) <= 80 for x in lines)
        assert "UNFAIR: Marco (seat 1), rule action.illegal" in lines[1], lines[1]
        text = "\n".join(lines)
        assert "UNFAIR: Marco (seat 1) signed something false at envelope #41" in text
        assert "The watch ended: the table stopped." in text
        assert "transcript kept: w.silkroad" in lines[-1]


class CheatingHandle(TableHandle):
    """The host's seat, which, once ``armed``, bids more than anyone has at its next turn
    to bid (a move the rules refuse: every seat, and the watcher, must name seat 0)."""

    def __init__(self, armed: list[bool]) -> None:
        super().__init__()
        self.armed = armed
        self.cheated: list[int] = []

    def attach(self, table: Any, folder: Path | None = None) -> None:
        from engine.actions import Bid, encode
        from engine.rules import actors
        from engine.state import Phase
        from p2p.protocol.wire import ACTION_KIND

        super().attach(table, folder)
        previous = table.on_step

        def cheat(t: Any, action: Action) -> None:
            previous(t, action)
            if self.armed and not self.cheated and t.state.phase == Phase.BID \
                    and actors(t.state) == (t.me,):
                self.cheated.append(t.step)
                t.emit(ACTION_KIND, [t.step, encode(Bid(1_000_000))])

        table.on_step = cheat


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_cheating_host_is_named_by_the_watch_process_as_by_the_seats(
        tmp_path: Path) -> None:
    """The host itself cheats once a ``watch --headless --json`` process is there: the
    relaying host cannot hide its own envelope (the watcher holds what the seats hold), and
    the watcher names it as the bot seats' folders name it (exit 1, as ``audit``)."""
    from p2p.front_door import TableStopped, headless_agent
    from p2p.judge.game_audit import EXIT_UNFAIR, audit_folder

    async def go() -> dict[str, Any]:
        name = f"cheat-{uuid.uuid4().hex[:8]}"
        hosted = HostedTable(name=name, seats=3, player="Host", root=tmp_path / "hp",
                             shuffle="audit", interface="127.0.0.1", bots=2)
        armed: list[bool] = []
        came = asyncio.Event()

        def on_watchers(n: int) -> None:
            if n and not armed:
                armed.append(True)
                came.set()

        hosted.on_watchers = on_watchers
        await hosted.open()
        proc: asyncio.subprocess.Process | None = None
        try:
            watcher = await _spawn("watch", f"127.0.0.1:{hosted.port}", "--headless",
                                   "--json", "--timeout", "60", "--every", "0.5",
                                   "--transcript", str(tmp_path / "watched.silkroad"))
            proc = watcher
            await asyncio.wait_for(came.wait(), 60)  # it waits in the lobby for the game
            await hosted.wait_full(60)
            setup = await hosted.start()
            handle = CheatingHandle(armed)
            with pytest.raises(TableStopped):
                await hosted.play(setup, handle, headless_agent("heuristic", 1))
            out, err = await asyncio.wait_for(watcher.communicate(), 90)
            return {"out": out.decode(), "err": err.decode(), "rc": watcher.returncode,
                    "cheated": handle.cheated}
        finally:
            if proc is not None and proc.returncode is None:
                proc.kill()
                await proc.wait()
            await hosted.close()

    got = asyncio.run(go())
    assert got["cheated"], "the host never got to bid"
    assert got["rc"] == EXIT_UNFAIR, (got["err"], got["out"][-2000:])
    verdict = json.loads(got["out"].strip().splitlines()[-1])
    assert verdict["culprit"] == 0 and verdict["culprit_name"] == "Host", verdict
    folders = sorted(p.parent for p in (tmp_path / "hp").glob("bot*/*/meta.json"))
    assert len(folders) == 2
    for folder in folders:
        seat = audit_folder(folder)
        assert seat.exit_code == EXIT_UNFAIR and seat.violation is not None, str(seat)
        assert (seat.violation.party, seat.violation.rule) == (0, verdict["rule"])
    kept = audit_game(verdict["transcript"])
    assert kept.exit_code == EXIT_UNFAIR and kept.violation is not None
    assert kept.violation.party == 0


def test_a_watcher_talks_from_its_screen_and_reads_the_tables_talk(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """' opens a line on the watcher's screen (Enter sends it through the watcher, Escape
    closes it), F2 says "gg"; the lines the judge took in from the transcript show in the
    log, a watcher's marked "(watching)", within 80x24."""
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input

    from cli.replay.live import WatchScreen
    from cli.table.talk import TALK_MARK
    from crypto.audit import AuditReport, EnvelopeEvent
    from crypto.transcript import Envelope
    from p2p.judge.engine_replay import EngineReplay
    from p2p.judge.game_audit import INCOMPLETE, GameAuditReport
    from p2p.protocol.wire import TALK_KIND
    from tests.cli.helpers import Output80x24, screen_text, until

    names = ["Ann", "Marco", "Leyla"]
    said: list[str] = []

    async def go() -> list[str]:
        with create_pipe_input() as inp, create_app_session(input=inp,
                                                            output=Output80x24()):
            screen = WatchScreen("Friday tea", Path("w.silkroad"))
            monkeypatch.setattr(screen.watcher, "say", said.append)
            screen.on_event("table", {"table": "Friday tea", "names": names, "words": [],
                                      "game_id": "00" * 32, "hidden_money": False,
                                      "players": 3})
            replay = EngineReplay(3)
            for i, (seat, body) in enumerate([(0, ["nice \u202emove", "Kim"]),
                                              (1, ["thanks"])]):
                replay(EnvelopeEvent(i, Envelope(b"g" * 16, seat, 0, b"\0" * 32, TALK_KIND,
                                                 body, b"")))
            report = GameAuditReport(False, None, AuditReport(True, envelopes=2, ops=0),
                                     steps=0, status=INCOMPLETE, names=names, replay=replay)
            screen.on_event("progress", {"envelopes": 2, "report": report})
            task = asyncio.ensure_future(screen.app.run_async())
            await until(lambda: screen.app.is_running, 10)
            inp.send_text("hello\r")  # no line open: the keys say nothing
            inp.send_text("\x1bOR")  # F3, so we know the keys before it were read
            await until(lambda: said == ["thinking…"], 10)
            said.clear()
            inp.send_text("'")
            await until(lambda: screen.talking, 10)
            assert any("say (Enter sends" in row for row in screen_text(screen))
            inp.send_text("q is a letter here\r")
            await until(lambda: said == ["q is a letter here"] and not screen.talking, 10)
            inp.send_text("\x1bOQ")  # F2
            await until(lambda: said[-1:] == ["gg"], 10)
            inp.send_text("'abc")
            await until(lambda: screen.talk_buffer.text == "abc", 10)
            inp.send_text("\x1b")  # Escape closes the line, says nothing
            await until(lambda: not screen.talking, 10)
            rows = screen_text(screen)
            inp.send_text("q")
            await asyncio.wait_for(task, 10)
            return rows

    rows = asyncio.run(go())
    assert said == ["q is a letter here", "gg"]
    assert len(rows) == 24 and all(len(x) <= 80 for x in rows)
    text = "\n".join(rows)
    assert f"{TALK_MARK}Kim (watching, via Ann): nice ?move" in text, text  # cleaned
    assert f"{TALK_MARK}Marco: thanks" in text, text
    assert "' talk" in rows[-1]

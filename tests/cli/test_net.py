"""Networked play from the CLI: NetSession through the real table UI against bot peers,
``play`` with real peers, ``tables``/``host``/``join`` over 127.0.0.1, ``audit`` exit
codes and ``replay`` of a network transcript.  Every peer is real (own keys, TCP on
127.0.0.1); the shuffle mode is ``audit`` for speed (the proofs are checked afterwards).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input

from cli.main import main
from cli.replay.app import ReplayApp
from cli.replay.model import ReplayModel
from cli.replay.network import build_net_replay
from cli.table.app import KEYS, TableApp
from cli.table.net_session import NetSession, local_runner
from cli.table.session import SeatInfo
from engine.rng import DetRng
from engine.state import Phase
from p2p.judge.game_audit import audit_game
from tests.cli.helpers import Output80x24, drive_replay, screen_text, until

NAMES = ["Ann", "Marco", "Leyla"]


async def _keystroke_game(root: Path) -> tuple[NetSession, TableApp, list[str], bool]:
    with create_pipe_input() as inp, create_app_session(input=inp, output=Output80x24()):
        seats = [SeatInfo(n, "human" if i == 0 else "heuristic") for i, n in enumerate(NAMES)]
        session = NetSession(seats, 0, local_runner(NAMES, "heuristic", 5, "audit", root))
        app = TableApp(session)
        task = asyncio.create_task(app.run())
        rng = DetRng(b"net", b"keys")
        progress_seen = False
        first_screen: list[str] = []
        turn = 0
        while True:
            await until(lambda: session.finished.is_set() or bool(session.legal()), 60)
            if app.status is not None and "Shuffling" in (app.status.text or ""):
                progress_seen = True
            if session.finished.is_set():
                break
            if not first_screen:
                first_screen = screen_text(app)
            parser = app.parser()
            assert parser is not None
            choices = [c for c in parser.choices if c.group is None] or parser.choices
            choice = choices[rng.below(len(choices))]
            entries = app.entries()
            turn += 1
            n0 = len(session.history)
            idx = next((i for i, e in enumerate(entries) if e.choice == choice), None)
            if turn % 2 and idx is not None and idx < len(KEYS):
                inp.send_text(KEYS[idx])
            else:
                inp.send_text(choice.command + "\r")
            def moved(n0: int = n0) -> bool:
                return len(session.history) > n0 or bool(app.error) \
                    or session.finished.is_set() or not session.legal()

            await until(moved, 30)
            assert not app.error, app.error
        await until(lambda: app.over or app.fatal is not None, 10)
        assert app.fatal is None, app.fatal
        # the end screen audits the transcript while the scores show, and says the verdict
        await until(lambda: app.verdict is not None and app.verdict.done, 60)
        assert app.verdict is not None and app.verdict.fair, app.verdict
        assert any("CERTIFIED" in row for row in screen_text(app)), screen_text(app)
        assert session.verdict is not None and session.verdict["exit_code"] == 0
        inp.send_text("q")
        assert await asyncio.wait_for(task, 5) == "over"
        await session.close()
        return session, app, first_screen, progress_seen


@pytest.fixture(scope="module")
def net_game(tmp_path_factory: pytest.TempPathFactory) -> tuple[NetSession, TableApp, list[str],
                                                                Path]:
    root = tmp_path_factory.mktemp("net")
    session, app, screen, _progress = asyncio.run(
        asyncio.wait_for(_keystroke_game(root / "peers"), 90))
    assert session.outcome is not None and session.outcome.transcript is not None
    return session, app, screen, session.outcome.transcript


@pytest.mark.timeout(120)
def test_keystroke_game_over_real_peers_audits_fair(
        net_game: tuple[NetSession, TableApp, list[str], Path],
        capsys: pytest.CaptureFixture[str]) -> None:
    session, app, screen, transcript = net_game
    assert session.state.phase == Phase.OVER and session.state.final is not None
    assert any("win" in line for line in app.log[-3:])
    assert "SILK ROAD" in screen[0] and len(screen) <= 24
    assert main(["audit", str(transcript), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "fair" and out["steps"] > 50


@pytest.mark.timeout(30)
def test_audit_exit_codes(net_game: tuple[NetSession, TableApp, list[str], Path],
                          tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    transcript = net_game[3]
    bad = tmp_path / "tampered.silkroad"
    from p2p.store import read_export

    data = bytearray(transcript.read_bytes())
    last = read_export(transcript).wires[-1]
    at = bytes(data).rfind(last)
    assert at > 0
    data[at + len(last) - 5] ^= 1  # one bit of the last envelope's signature
    bad.write_bytes(bytes(data))
    # a damaged file proves no finished game but names no one: exit 3, "not
    # certified"; 1 is kept for a seat named on evidence it signed
    assert main(["audit", str(bad)]) == 3
    out = capsys.readouterr().out
    assert out.startswith("NOT CERTIFIED") and "signature" in out
    # a forged signature names nobody (anyone can forge); a culprit is named as a player
    assert "party 2" not in out and "Leyla" not in out and "seat 2 broke" not in out
    from cli.commands.audit import _who

    assert _who(2, NAMES) == "Leyla (seat 2)" and _who(None, NAMES) == "an unidentified party"
    garbage = tmp_path / "garbage.silkroad"
    garbage.write_bytes(b"\x00not a transcript\xff" * 10)
    assert main(["audit", str(garbage)]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert main(["audit", str(tmp_path / "missing.silkroad"), "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["verdict"] == "unreadable"
    # the help states every exit code a script can get
    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    helptext = " ".join(capsys.readouterr().out.split())
    for stated in ("0: fair", "1: unfair", "2: it cannot be read", "3: not certified"):
        assert stated in helptext, (stated, helptext)


@pytest.fixture(scope="module")
def net_model(net_game: tuple[NetSession, TableApp, list[str], Path]) -> ReplayModel:
    """The finished game's replay model, built (= audited) once for every replay check."""
    return build_net_replay(net_game[3])


@pytest.mark.timeout(60)
def test_replay_of_a_network_transcript(net_game: tuple[NetSession, TableApp, list[str], Path],
                                        net_model: ReplayModel,
                                        monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    session, _app, _screen, transcript = net_game
    model = net_model
    assert model.complete and model.names == NAMES
    assert model.states[-1].hash() == session.state.hash()
    mid = len(model) // 2
    mine, everything = model.hand(mid, 0), model.hand(mid, None)
    assert set(mine) == set(model.states[mid].goods[0]) and set(mine) <= set(everything)
    assert len(everything) > len(mine)  # the auditor sees the bag and the others' goods
    app = ReplayApp(model, viewer=1)
    app.go(mid)
    assert app._view().hand == model.hand(mid, 1)
    app.set_viewer(None)
    # the command: same transcript, the model built above (building it is a full audit)
    import cli.replay.network

    monkeypatch.setattr(cli.replay.network, "build_net_replay", lambda path: model)
    assert main(["replay", str(transcript), "--summary", "--as", "Ann"]) == 0
    assert "win" in capsys.readouterr().out


@pytest.mark.timeout(30)
def test_replay_keys_on_a_network_transcript(net_model: ReplayModel) -> None:
    """The viewer over the audited network transcript, driven only by keystrokes: each
    seat's view shows that seat's own decrypted goods, the auditor sees every colour."""
    asyncio.run(asyncio.wait_for(drive_replay(net_model), 20))


# --- LAN commands in subprocesses ---------------------------------------------------------------
def _silkroad(*args: str, cwd: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "cli.main", *args], cwd=cwd, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def _first_line(proc: subprocess.Popen[str], timeout: float = 15.0) -> dict[str, object]:
    assert proc.stdout is not None
    end = time.monotonic() + timeout
    line = proc.stdout.readline()
    assert line, (proc.stderr.read() if proc.stderr else "") or "no output"
    assert time.monotonic() < end
    return dict(json.loads(line))


def _actions_stored(folder: Path) -> int:
    """Action envelopes in a live peer's ``transcript.bin`` (read-only: the peer is still
    writing it, so a torn last record is simply not counted — never truncated)."""
    import msgpack

    from p2p.protocol.wire import ACTION_KIND

    files = list(folder.glob("*/transcript.bin"))
    if not files:
        return 0
    data = files[0].read_bytes()
    pos = count = 0
    while pos + 4 <= len(data):
        n = int.from_bytes(data[pos:pos + 4], "big")
        if pos + 4 + n > len(data):
            break
        try:
            env = msgpack.unpackb(msgpack.unpackb(data[pos + 4:pos + 4 + n])[0])
            count += env[5] == ACTION_KIND
        except (ValueError, IndexError, TypeError):
            pass
        pos += 4 + n
    return count


def _wait_actions(folder: Path, proc: subprocess.Popen[str], at_least: int,
                  timeout: float) -> int:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = _actions_stored(folder)
        if got >= at_least:
            return got
        assert proc.poll() is None, "the peer ended before it was to be killed"
        time.sleep(0.05)
    raise AssertionError(f"fewer than {at_least} actions stored in {timeout} s")


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen[str]]]:
    """Every subprocess a test starts; whatever is still running at the end is killed."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait(5)


@pytest.mark.timeout(90)
def test_host_two_joiners_a_code_and_a_killed_seat_resumed(
        procs: list[subprocess.Popen[str]], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``host`` + two ``join`` processes on 127.0.0.1: the table is listed, a wrong code is
    refused, one joiner is SIGKILLed mid-game and ``join --resume FOLDER`` finishes its
    seat; every seat ends on the same final state and the transcripts audit fair."""
    root = Path(__file__).resolve().parents[2]
    common = ["--interface", "127.0.0.1", "--headless", "--json", "--timeout", "40",
              "--shuffle", "audit"]
    host = _silkroad("host", "--table", "Test tea", "--seats", "3", "--code", "silk 7",
                     "--folder", str(tmp_path / "hp"), "--transcript",
                     str(tmp_path / "host.silkroad"), *common, cwd=root)
    procs.append(host)
    opened = _first_line(host)
    assert opened["event"] == "open" and opened["code_required"] is True
    port = opened["port"]
    join = ["--interface", "127.0.0.1", "--headless", "--json", "--timeout", "40"]
    # a wrong code (in the background while we browse)
    wrong = _silkroad("join", f"127.0.0.1:{port}", "--code", "nope", *join, cwd=root)
    procs.append(wrong)
    # the table is visible on the LAN (mDNS on 127.0.0.1)
    # other tables of that name may be up on this machine (another copy of the suite):
    # ours is the one on our port; with their traffic and load, give it a few browses
    mine: list[dict[str, object]] = []
    for _ in range(4):
        assert main(["tables", "--interface", "127.0.0.1", "--timeout", "2", "--json"]) == 0
        rows = json.loads(capsys.readouterr().out)
        mine = [r for r in rows if r["name"] == "Test tea" and r["port"] == port]
        if mine:
            break
    assert mine and mine[0]["port"] == port and mine[0]["code_required"] is True
    assert mine[0]["seats_total"] == 3 and mine[0]["phase"] == "lobby"
    _out, err = wrong.communicate(timeout=20)
    assert wrong.returncode == 1 and "wrong or missing join code" in err
    assert "Traceback" not in err
    bea = _silkroad("join", f"127.0.0.1:{port}", "--code", "SILK-7", "--name", "Bea",
                    "--folder", str(tmp_path / "jb"), "--transcript",
                    str(tmp_path / "bea.silkroad"), *join, cwd=root)
    procs.append(bea)
    cem_folder = tmp_path / "jc"
    cem = _silkroad("join", f"127.0.0.1:{port}", "--code", "silk7", "--name", "Cem",
                    "--folder", str(cem_folder), *join, cwd=root)
    procs.append(cem)
    seated = {"Bea": _first_line(bea), "Cem": _first_line(cem)}  # the game has started
    assert {x["event"] for x in seated.values()} == {"seated"}
    assert {x["seat"] for x in seated.values()} == {1, 2}
    assert seated["Bea"]["words"] == seated["Cem"]["words"]
    # SIGKILL Cem once a few steps are applied (its own transcript says so), then resume
    _wait_actions(cem_folder, cem, 15, 40)
    cem.send_signal(signal.SIGKILL)
    cem.wait(5)
    games = list(cem_folder.iterdir())
    assert len(games) == 1 and (games[0] / "secrets.bin").exists()
    from p2p.front_door import read_seat

    # the folder keeps the table's name: the resumed seat's files are named after it
    assert read_seat(games[0]).table == "Test tea"
    back = _silkroad("join", "--resume", str(games[0]), "--headless", "--json",
                     "--transcript", str(tmp_path / "cem.silkroad"), cwd=root)
    procs.append(back)
    outs: dict[str, dict[str, object]] = {}
    for name, proc in (("Cem", back), ("Bea", bea), ("host", host)):
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, f"{name}: {err} {out[-3000:]}"
        assert "Traceback" not in err, err
        outs[name] = json.loads(out.splitlines()[-1])
    hashes = set()
    for name, res in outs.items():
        # each headless seat ran 'silkroad audit' on its own transcript (the same
        # p2p.judge.game_audit.audit_game, its exit code in the JSON): 0, fair, for all three
        assert res["verdict"] == "fair", name
        audit = res["audit"]
        assert isinstance(audit, dict) and audit["exit_code"] == 0, name
        hashes.add(audit["final_hash"])
        assert res["scores"] == outs["host"]["scores"], name
    assert len(hashes) == 1 and None not in hashes
    for name in ("Bea", "Cem"):
        assert outs[name]["seat"] == seated[name]["seat"], name
    # the result line a script reads (the same report as 'play --headless --json')
    host_out = outs["host"]
    for key in ("scores", "winners", "wall_time_s", "transcript", "verdict", "audit", "kinds"):
        for res in outs.values():
            assert key in res, key
    assert host_out["transcript"] == str(tmp_path / "host.silkroad") and host_out["players"] == 3
    names, winners = host_out["names"], host_out["winners"]
    assert isinstance(names, list) and isinstance(winners, list)
    assert sorted(names[1:]) == ["Bea", "Cem"] and set(winners) <= set(names)
    # headless seats are played by bots and say so; the others are peers
    assert host_out["kinds"] == ["heuristic", "peer", "peer"]
    cem_seat = seated["Cem"]["seat"]
    assert outs["Cem"]["kinds"] == ["heuristic" if i == cem_seat else "peer" for i in range(3)]


@pytest.mark.timeout(90)
def test_host_with_bot_seats_and_one_joiner(procs: list[subprocess.Popen[str]],
                                            tmp_path: Path) -> None:
    """``host --bots 2`` as a subprocess: the host runs two bot peers (each plays in its
    own child process after joining), one ``join`` fills the last seat, and the 4-player
    game ends fair on every seat — the bots' own exports included."""
    root = Path(__file__).resolve().parents[2]
    common = ["--interface", "127.0.0.1", "--headless", "--json", "--timeout", "40"]
    host = _silkroad("host", "--seats", "4", "--bots", "2", "--shuffle", "audit",
                     "--folder", str(tmp_path / "hp"), "--transcript",
                     str(tmp_path / "host.silkroad"), *common, cwd=root)
    procs.append(host)
    opened = _first_line(host)
    assert opened["event"] == "open" and opened["code_required"] is False
    dee = _silkroad("join", f"127.0.0.1:{opened['port']}", "--name", "Dee", "--folder",
                    str(tmp_path / "jd"), "--transcript", str(tmp_path / "dee.silkroad"),
                    *common, cwd=root)
    procs.append(dee)
    outs = {}
    for name, proc in (("Dee", dee), ("host", host)):
        out, err = proc.communicate(timeout=70)
        assert proc.returncode == 0, f"{name}: {err} {out[-3000:]}"
        assert "Traceback" not in err, err
        outs[name] = json.loads(out.splitlines()[-1])
    assert outs["host"]["players"] == 4 and outs["Dee"]["scores"] == outs["host"]["scores"]
    assert all(res["verdict"] == "fair" for res in outs.values())
    assert outs["host"]["audit"]["final_hash"] == outs["Dee"]["audit"]["final_hash"]
    # the host's seat and its two bot seats are bots here; Dee is a peer from the host's side
    kinds = outs["host"]["kinds"]
    assert kinds.count("peer") == 1 and len(kinds) == 4
    # the bot seats played in child processes (their quiet logs) and finished the same game
    logs = sorted((tmp_path / "hp").glob("bot*/*/peer.log"))
    assert len(logs) == 2 and all(p.read_text() == "" for p in logs)
    # the host's own folder records its bot seats' folders, so a resume brings them back
    from p2p.front_door import read_seat

    host_seat = [f for f in (tmp_path / "hp").iterdir() if (f / "meta.json").exists()]
    assert len(host_seat) == 1
    recorded = read_seat(host_seat[0]).bots
    assert sorted(Path(b.folder) for b in recorded) == sorted(p.parent.resolve() for p in logs)
    for log in logs:
        report = audit_game(log.parent / "game.silkroad")
        assert report.fair and report.final_hash.hex() == outs["Dee"]["audit"]["final_hash"]


def test_two_seats_on_one_folder_is_a_local_error(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A seat's folder in use by another peer (here: this process holds its lock, as a
    second ``join --resume`` of a running seat would meet it): ``join --resume`` stops at
    once with one line naming the folder — a local mistake, never a cheating verdict."""
    from p2p.local_table import make_local_setup, prepare_folder
    from p2p.store import FolderLock

    async def folder() -> Path:
        peers = await make_local_setup(3, "audit", tmp_path / "peers")
        for p in peers:
            await p.listener.close()
        p = peers[1]
        prepare_folder(p.folder, p.roster, p.params, p.seat, p.game_id, p.identity)
        return p.folder

    seat = asyncio.run(folder())
    with FolderLock(seat):
        t0 = time.monotonic()
        code = main(["join", "--resume", str(seat), "--headless", "--json"])
    err = capsys.readouterr().err
    assert code == 1 and time.monotonic() - t0 < 10
    assert str(seat) in err and "in use by another peer" in err, err
    for word in ("cheat", "broke", "unfair", "Traceback"):
        assert word not in err, err


@pytest.mark.timeout(150)
def test_host_with_bots_killed_then_resumed_brings_the_bots_back(
        procs: list[subprocess.Popen[str]], tmp_path: Path) -> None:
    """``host --bots 2`` (a table of the host and its bots), SIGKILLed mid-game: its bot
    children leave with it.  ``join --resume`` of the host's folder starts them again from
    their own folders and the game ends fair on all three seats."""
    root = Path(__file__).resolve().parents[2]
    hp = tmp_path / "hp"
    host = _silkroad("host", "--seats", "3", "--bots", "2", "--shuffle", "audit",
                     "--folder", str(hp), "--interface", "127.0.0.1", "--headless", "--json",
                     "--timeout", "40", cwd=root)
    procs.append(host)
    assert _first_line(host)["event"] == "open"
    _wait_actions(hp, host, 12, 60)
    host.send_signal(signal.SIGKILL)
    host.wait(5)
    seat = next(f for f in hp.iterdir() if (f / "bots.json").exists())
    deadline = time.monotonic() + 15  # the orphaned bots see their stdin close and leave
    while any(_lock_held(f) for f in hp.glob("bot*/*")):
        assert time.monotonic() < deadline, "the bot children outlived the host"
        time.sleep(0.1)
    back = _silkroad("join", "--resume", str(seat), "--headless", "--json", "--transcript",
                     str(tmp_path / "host.silkroad"), cwd=root)
    procs.append(back)
    out, err = back.communicate(timeout=90)
    assert back.returncode == 0, f"{err} {out[-3000:]}"
    res = json.loads(out.splitlines()[-1])
    assert res["verdict"] == "fair" and res["players"] == 3
    for export in hp.glob("bot*/*/game.silkroad"):
        report = audit_game(export)
        assert report.fair and report.final_hash.hex() == res["audit"]["final_hash"]
    assert len(list(hp.glob("bot*/*/game.silkroad"))) == 2


def _lock_held(folder: Path) -> bool:
    """Whether a peer process still plays from ``folder`` (holds its lock)."""
    from p2p.store import FolderInUse, FolderLock

    try:
        FolderLock(folder).acquire().release()
    except FolderInUse:
        return True
    return False


@pytest.mark.timeout(120)
def test_host_and_join_from_one_directory(procs: list[subprocess.Popen[str]],
                                         tmp_path: Path) -> None:
    """Issue: ``host`` and ``join`` started from one directory shared the game folder
    ``games/peers/<id>`` and the host named the joiner a cheat ("envelope 0/0 delivered
    again").  With the default ``--folder`` each seat gets its own and both end fair."""
    common = ["--interface", "127.0.0.1", "--headless", "--json", "--timeout", "40"]
    host = _silkroad("host", "--table", "Tea", "--seats", "3", "--code", "silk7", "--bots", "1",
                     "--shuffle", "audit", *common, cwd=tmp_path)
    procs.append(host)
    opened = _first_line(host)
    join = _silkroad("join", f"127.0.0.1:{opened['port']}", "--code", "SILK-7", *common,
                     cwd=tmp_path)
    procs.append(join)
    outs = {}
    for name, proc in (("join", join), ("host", host)):
        out, err = proc.communicate(timeout=90)
        assert proc.returncode == 0, f"{name}: {err} {out[-2000:]}"
        assert "Traceback" not in err and "broke rule" not in err, err
        outs[name] = json.loads(out.splitlines()[-1])
    assert {r["verdict"] for r in outs.values()} == {"fair"}
    seats = [f for f in (tmp_path / "games" / "peers").iterdir() if (f / "meta.json").exists()]
    assert len(seats) == 2 and len({f.name[:16] for f in seats}) == 1  # one game, two folders

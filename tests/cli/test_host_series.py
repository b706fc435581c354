"""``silkroad host --games N`` and ``join --games N`` as processes on 127.0.0.1: a series
of three games, the host's bot kept, Ann leaving after game 1 and Bob taking her seat for
games 2 and 3, then following the host until it stops."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from p2p.judge.game_audit import CERTIFIED, audit_game

ROOT = Path(__file__).resolve().parents[2]
COMMON = ["--interface", "127.0.0.1", "--headless", "--json", "--timeout", "300"]


def _silkroad(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "cli.main", *args], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def _next_line(proc: subprocess.Popen[str]) -> dict[str, Any]:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, (proc.stderr.read() if proc.stderr else "") or "no output"
    return dict(json.loads(line))


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait(5)


@pytest.mark.timeout(1200)  # three whole games with crypto: minutes on a loaded machine
def test_host_games_three_with_a_seat_replaced(procs: list[subprocess.Popen[str]],
                                               tmp_path: Path) -> None:
    host = _silkroad("host", "--seats", "3", "--bots", "1", "--games", "3", "--shuffle",
                     "audit", "--name", "Host", "--folder", str(tmp_path / "hp"),
                     "--transcript", str(tmp_path / "host.silkroad"), *COMMON)
    procs.append(host)
    opened = _next_line(host)
    assert opened["event"] == "open" and opened["games"] == 3
    port = opened["port"]
    ann = _silkroad("join", f"127.0.0.1:{port}", "--name", "Ann", "--folder",
                    str(tmp_path / "ja"), "--transcript", str(tmp_path / "ann.silkroad"),
                    *COMMON)
    procs.append(ann)
    lines = [_next_line(host)]
    while lines[-1].get("event") != "next":  # game 1 seated, played and reported
        lines.append(_next_line(host))
    assert lines[0]["event"] == "seated" and lines[0]["game"] == 1
    first = lines[-2]
    assert first["verdict"] == "fair" and "series" not in first  # one game is no series
    assert lines[-1]["game"] == 2
    _out, err = ann.communicate(timeout=300)
    assert ann.returncode == 0, err
    # Bob takes the seat Ann left, and stays for up to 4 games: the host stops after 3
    bob = _silkroad("join", f"127.0.0.1:{port}", "--name", "Bob", "--games", "4",
                    "--folder", str(tmp_path / "jb"), "--transcript",
                    str(tmp_path / "bob.silkroad"), *COMMON)
    procs.append(bob)
    hout, herr = host.communicate(timeout=900)
    assert host.returncode == 0, herr
    assert "Traceback" not in herr, herr
    hlines = [json.loads(x) for x in hout.splitlines()]
    assert hlines[0]["event"] == "seated" and hlines[0]["game"] == 2
    assert hlines[0]["players"] == ["Host", first["names"][1], "Bob"]  # Ann's seat
    games = [first] + [x for x in hlines if "verdict" in x]
    assert [g["verdict"] for g in games] == ["fair"] * 3
    series = games[-1]["series"]
    assert [g["game_no"] for g in series["games"]] == [1, 2, 3]
    assert [g["players"] for g in series["games"]] == [g["names"] for g in games]
    assert [g["winners"] for g in series["games"]] == [g["winners"] for g in games]
    assert games[2]["names"] == games[1]["names"]  # same seats for the rematch
    wins = {n: 0 for n in ("Host", first["names"][1], "Ann", "Bob")}
    for game in games:
        for name in game["winners"]:
            wins[name] += 1
    assert series["wins"] == wins
    assert len({g["game_id"] for g in series["games"]}) == 3
    # each game's transcript is its own, and certified
    for n in (1, 2, 3):
        assert audit_game(tmp_path / f"host-g{n}.silkroad").status == CERTIFIED
    bout, berr = bob.communicate(timeout=120)
    assert bob.returncode == 0, berr
    blines = [json.loads(x) for x in bout.splitlines()]
    assert blines[-1]["event"] == "series-over"  # the host opened no fourth game
    bob_games = [x for x in blines if "verdict" in x]
    assert [g["series"]["games"][0]["game_no"] for g in bob_games] == [2, 2]
    assert [len(g["series"]["games"]) for g in bob_games] == [1, 2]
    assert [g["scores"] for g in bob_games] == [g["scores"] for g in games[1:]]
    for n in (2, 3):
        assert audit_game(tmp_path / f"bob-g{n}.silkroad").status == CERTIFIED

"""The ``silkroad`` command line: play --headless, replay, bench, errors and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli.main import main
from cli.replay.app import ReplayApp
from cli.replay.model import build_replay
from cli.table.save_file import load_game


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.startswith("silkroad ")


def _networked_json(out: dict, transcript: Path, players: int) -> None:
    """What ``silkroad play --headless --json`` promises a script."""
    assert out["players"] == players and out["transcript"] == str(transcript)
    assert out["verdict"] == "fair" and out["audit"]["fair"] and out["wall_time_s"] > 0
    assert set(out["winners"]) <= set(out["names"]) and len(out["scores"]) == players
    assert out["audit"]["scores"] == [s["total"] for s in out["scores"]]
    assert transcript.is_file()


@pytest.mark.timeout(120)
def test_networked_headless_json_with_bot_processes(tmp_path: Path) -> None:
    """The installed command as a script runs it: every bot peer its own process."""
    t = tmp_path / "g.silkroad"
    proc = subprocess.run(
        [sys.executable, "-m", "cli.main", "play", "--headless", "--json", "--bots", "2",
         "--seed", "3", "--shuffle", "audit", "--transcript", str(t)],
        cwd=tmp_path, capture_output=True, text=True, timeout=110,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.returncode == 0, proc.stderr
    _networked_json(json.loads(proc.stdout), t, 3)
    logs = list(tmp_path.rglob("peer.log"))
    assert len(logs) == 2 and all(p.read_text() == "" for p in logs)  # quiet children


@pytest.mark.timeout(120)
def test_networked_headless_json_in_one_process(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    t = tmp_path / "g.silkroad"
    assert main(["play", "--headless", "--json", "--bots", "2", "--seed", "5", "--shuffle",
                 "audit", "--one-process", "--transcript", str(t)]) == 0
    _networked_json(json.loads(capsys.readouterr().out), t, 3)
    assert not list(tmp_path.rglob("peer.log"))
    # the transcript is self-contained: the offline audit agrees
    assert main(["audit", str(t), "--json"]) == 0
    capsys.readouterr()
    assert main(["audit", str(t)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("CERTIFIED:") and "Scores: Marco " in text and "[" not in text


def test_headless_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    save = tmp_path / "g.silkroad"
    assert main(["play", "--local", "--headless", "--json", "--seed", "3",
                 "--save", str(save)]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("seed", "players", "names", "scores", "winners", "wall_time_s", "save"):
        assert key in out
    assert out["seed"] == 3 and out["players"] == 4 and out["save"] == str(save)
    assert set(out["winners"]) <= set(out["names"])
    assert {"total", "money", "goods", "per_colour", "majorities"} <= set(out["scores"][0])
    game = load_game(save)
    assert not game.truncated and game.header.dealer_seed == 3
    model = build_replay(game)
    assert model.complete and model.states[-1].final is not None
    best = max(s["total"] for s in out["scores"])
    assert [s["name"] for s in out["scores"] if s["total"] == best] == out["winners"]


def test_headless_text_and_same_seed_same_game(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "--local", "--headless", "--seed", "5", "--bots", "2",
                 "--bot-kind", "random",
                 "--no-save"]) == 0
    first = capsys.readouterr().out
    assert "★ winner" in first and "3 players" in first
    assert main(["play", "--local", "--headless", "--seed", "5", "--bots", "2",
                 "--bot-kind", "random",
                 "--no-save"]) == 0
    second = capsys.readouterr().out
    strip = [line for line in first.splitlines()[1:]]
    assert strip == second.splitlines()[1:]


def test_replay_steps_views_and_truncated_record(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    save = tmp_path / "g.silkroad"
    assert main(["play", "--local", "--headless", "--seed", "4", "--save", str(save)]) == 0
    capsys.readouterr()
    assert main(["replay", str(save), "--summary", "--as", "1"]) == 0
    text = capsys.readouterr().out
    assert "You " in text and "Everyone reveals" in text
    model = build_replay(load_game(save))
    viewer = ReplayApp(model, viewer=None)
    viewer.go(10)
    assert viewer.step == 10
    viewer.next_city(1)
    assert model.states[viewer.step].phase.name == "BID"
    viewer.go(10_000)
    assert viewer.step == len(model) - 1
    # Auditor sees every colour; a seat sees only its own goods.
    s = model.states[20]
    assert set(model.hand(20, None)) >= {h for p in range(s.players) for h in s.goods[p]}
    assert set(model.hand(20, 2)) == set(s.goods[2])
    # A killed game leaves a valid prefix.
    data = save.read_bytes()
    cut = tmp_path / "cut.silkroad"
    cut.write_bytes(data[: len(data) // 2 + 1])
    game = load_game(cut)
    assert 0 < len(game.actions) < len(model.actions)
    assert not build_replay(game).complete
    assert main(["replay", str(cut), "--summary"]) == 0
    assert "interrupted" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["play", "--bots", "9"], "--bots must be 2..5"),
        (["play", "--json"], "--json needs --headless"),
        (["play", "--local", "--board", "/nonexistent/board.json",
          "--headless"], "cannot read board"),
        (["replay", "/nonexistent.silkroad"], "cannot read"),
        (["replay", __file__], "not a silkroad game record"),
        (["play", "--variant", "sideways"], "invalid choice"),
        (["frobnicate"], "invalid choice"),
        (["bench", "warp"], "invalid choice"),
    ],
)
def test_bad_arguments_exit_2_with_a_clear_message(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_play_needs_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "--no-save"]) == 2  # pytest's stdin is not a terminal
    assert "--headless" in capsys.readouterr().err

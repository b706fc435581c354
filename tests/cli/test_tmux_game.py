"""Whole games through the real terminal UI (tmux) with typed keys only, at 80×24 and 120×40.

The player's seat has no bot behind it: the test reads the screen like a person and types
(a command with Enter in auctions, menu digits elsewhere, y when the table asks, Enter to
decline at once), until the final score screen.  ``--local`` with a seed and no bot delay
keeps each game well under two minutes; tmux is required (see test_tmux_smoke.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

TMUX = shutil.which("tmux")


@pytest.fixture
def tmux() -> Iterator[list[str]]:
    if TMUX is None:
        pytest.fail("tmux is not installed: the whole-game terminal tests need it "
                    "(install it, e.g. 'apt-get install tmux'; ./dev test installs it)")
    base = [TMUX, "-L", f"silkroad-game-{uuid.uuid4().hex[:8]}"]
    yield base
    subprocess.run([*base, "kill-server"], capture_output=True, check=False)


def _capture(base: list[str]) -> str:
    return subprocess.run([*base, "capture-pane", "-p", "-t", "t"], capture_output=True,
                          text=True, check=False).stdout


def _keys(base: list[str], *keys: str, literal: bool = False) -> None:
    flags = ["-l"] if literal else []
    subprocess.run([*base, "send-keys", "-t", "t", *flags, *keys], check=True)


def _command() -> str:
    exe = Path(sys.executable).with_name("silkroad")
    return str(exe) if exe.exists() else f"{sys.executable} -m cli.main"


def _play_whole_game(base: list[str], tmp_path: Path, cols: int, rows: int,
                     seed: int) -> tuple[str, dict[str, int]]:
    done = tmp_path / "exit-code"
    save = tmp_path / "game.silkroad"
    shell = (f"cd {tmp_path} && {_command()} play --local --seed {seed} --name Ann "
             f"--delay 0 --save {save}; echo $? > {done}; sleep 60")
    env = {**os.environ, "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    subprocess.run([*base, "new-session", "-d", "-s", "t", "-x", str(cols), "-y", str(rows),
                    shell], check=True, env=env)
    typed: dict[str, int] = {"command": 0, "digit": 0, "confirm": 0, "decline": 0}
    end = time.monotonic() + 200
    screen = ""
    while time.monotonic() < end:
        screen = _capture(base)
        lines = screen.splitlines()
        assert len(lines) <= rows and all(len(x) <= cols for x in lines), screen
        assert "Traceback" not in screen, screen
        if "Final scores" in screen:
            break
        if "Are you sure?" in screen:
            _keys(base, "y")
            typed["confirm"] += 1
        elif "Esc keeps the tile" in screen:
            _keys(base, "Enter")  # a decline waiting for Esc: do it now
            typed["decline"] += 1
        elif lines and "YOUR TURN" in lines[0]:
            title = next((x for x in lines if "Auction for the lead (" in x), "")
            if title:
                _keys(base, "pass", literal=True)  # typed, like a person
                _keys(base, "Enter")
                typed["command"] += 1
            else:
                _keys(base, "1")
                typed["digit"] += 1
        else:
            time.sleep(0.05)
            continue
        # wait until the screen reacts before reading it again (a loaded machine may take
        # seconds; reading the old screen again would type a second key into it)
        react = time.monotonic() + 15
        while time.monotonic() < react and _capture(base) == screen:
            time.sleep(0.03)
    else:
        raise AssertionError(f"the game did not end in time; screen:\n{screen}")
    return screen, typed


@pytest.mark.slow
@pytest.mark.timeout(280)
@pytest.mark.parametrize(("cols", "rows", "seed"), [(80, 24, 11), (120, 40, 12)])
def test_whole_game_typed_in_a_real_terminal(tmux: list[str], tmp_path: Path, cols: int,
                                             rows: int, seed: int) -> None:
    screen, typed = _play_whole_game(tmux, tmp_path, cols, rows, seed)
    # typed commands and digit keys both drove the game (how many auctions reach the player
    # depends on how the game goes once a loaded machine shifts a key by a screen)
    assert typed["command"] >= 1 and typed["digit"] >= 5, typed
    for must in ("Final scores", "★ winner", "majority", "Ann", "Marco", "Leyla", "Zhang",
                 "The journey ends in Antioch", "game over"):
        assert must in screen, (must, screen)
    log = [x for x in screen.split("Final scores")[1].splitlines() if x.startswith(" ")
           and not x.startswith("  ")]
    assert any("wins with" in x or "win with" in x for x in log), screen  # the log's end
    if rows >= 40:  # a tall terminal shows more of the log under the scores
        assert len(log) >= 12, screen
    _keys(tmux, "q")  # the game is over: no question
    done = tmp_path / "exit-code"
    end = time.monotonic() + 15
    while not done.exists() and time.monotonic() < end:
        time.sleep(0.05)
    assert done.exists() and done.read_text().strip() == "0", _capture(tmux)
    after = _capture(tmux)
    assert "Game saved to" in after and "replay" in after

"""Smoke test of the installed command in a real terminal (tmux, 80x24)."""

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
pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[tuple[list[str], str]]:
    sock = f"silkroad-test-{uuid.uuid4().hex[:8]}"
    base = [TMUX or "tmux", "-L", sock]
    yield base, sock
    subprocess.run([*base, "kill-server"], capture_output=True, check=False)


def _capture(base: list[str]) -> str:
    return subprocess.run([*base, "capture-pane", "-p", "-t", "t"], capture_output=True,
                          text=True, check=False).stdout


def _wait_for(base: list[str], text: str, timeout: float = 15.0) -> str:
    end = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < end:
        screen = _capture(base)
        if text in screen:
            return screen
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never appeared; screen:\n{screen}")


def test_play_in_a_real_terminal(tmux: tuple[list[str], str], tmp_path: Path) -> None:
    base, _ = tmux
    exe = shutil.which("silkroad")
    cmd = f"{exe}" if exe else f"{sys.executable} -m cli.main"
    done = tmp_path / "exit-code"
    save = tmp_path / "game.silkroad"
    shell = (f"cd {tmp_path} && {cmd} play --local --seed 1 --name Ann --delay 0 --save {save}; "
             f"echo $? > {done}; sleep 30")
    env = {**os.environ, "TERM": "xterm-256color"}
    subprocess.run([*base, "new-session", "-d", "-s", "t", "-x", "80", "-y", "24", shell],
                   check=True, env=env)
    screen = _wait_for(base, "YOUR TURN")
    for must in ("SILK ROAD", "Chang'An", "Samarkand", "Antioch", "Ann", "Marco", "bid"):
        assert must in screen, must
    lines = screen.splitlines()
    assert len(lines) <= 24 and all(len(x) <= 80 for x in lines)
    before = save.stat().st_size
    subprocess.run([*base, "send-keys", "-t", "t", "1"], check=True)  # the first menu entry
    end = time.monotonic() + 10
    while save.stat().st_size == before and time.monotonic() < end:
        time.sleep(0.05)
    assert save.stat().st_size > before  # an action was played and recorded
    subprocess.run([*base, "send-keys", "-t", "t", "q"], check=True)
    _wait_for(base, "Leave the table?")
    subprocess.run([*base, "send-keys", "-t", "t", "y"], check=True)
    end = time.monotonic() + 10
    while not done.exists() and time.monotonic() < end:
        time.sleep(0.05)
    assert done.read_text().strip() == "0"
    assert "Game saved to" in _capture(base)

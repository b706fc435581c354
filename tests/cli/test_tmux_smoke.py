"""Smoke tests of the installed command in a real terminal (tmux, 80x24).

tmux is required: without it these tests fail with a message saying to install it (CI
installs it), rather than skipping and leaving the real-terminal path untested."""

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
def tmux(tmp_path: Path) -> Iterator[tuple[list[str], str]]:
    if TMUX is None:
        pytest.fail("tmux is not installed: the real-terminal smoke tests need it "
                    "(install it, e.g. 'apt-get install tmux'; CI installs it)")
    sock = f"silkroad-test-{uuid.uuid4().hex[:8]}"
    base = [TMUX, "-L", sock]
    yield base, sock
    subprocess.run([*base, "kill-server"], capture_output=True, check=False)


def _capture(base: list[str], joined: bool = False) -> str:
    """The pane's text; ``joined`` undoes the terminal's wrapping of long lines."""
    flags = ["-p", "-J"] if joined else ["-p"]
    return subprocess.run([*base, "capture-pane", *flags, "-t", "t"], capture_output=True,
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


def _start(base: list[str], shell: str) -> None:
    env = {**os.environ, "TERM": "xterm-256color"}
    subprocess.run([*base, "new-session", "-d", "-s", "t", "-x", "80", "-y", "24", shell],
                   check=True, env=env)


def _exit_code(done: Path, timeout: float = 15.0) -> str:
    end = time.monotonic() + timeout
    while not done.exists() and time.monotonic() < end:
        time.sleep(0.05)
    assert done.exists(), "the command did not exit"
    return done.read_text().strip()


def _command() -> str:
    exe = shutil.which("silkroad")
    return f"{exe}" if exe else f"{sys.executable} -m cli.main"


@pytest.mark.timeout(60)
def test_networked_play_in_a_real_terminal(tmux: tuple[list[str], str], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """``silkroad play`` with real peers (bots in their own processes): the deal's progress
    line (a verified deal: with bot processes an audit-mode deal is too quick to catch),
    the table, one action by key, then q/y leaves with exit code 0 and one line saying
    where the game folder is and that ``silkroad audit`` checks the part played (which it
    then does)."""
    base, _ = tmux
    done = tmp_path / "exit-code"
    shell = (f"cd {tmp_path} && {_command()} play --bots 2 --seed 1 --shuffle verified "
             f"--name Ann --delay 0 --transcript {tmp_path / 'g.silkroad'}; "
             f"echo $? > {done}; sleep 30")
    _start(base, shell)
    progress = ""
    end = time.monotonic() + 30
    screen = ""
    while time.monotonic() < end and "YOUR TURN" not in screen:
        screen = _capture(base)
        progress = progress or next((x for x in screen.splitlines() if "the bag" in x
                                     and "/3" in x), "")
        time.sleep(0.03)
    assert progress, f"the deal's progress line was never seen; screen:\n{screen}"
    assert "YOUR TURN" in screen, screen
    for must in ("SILK ROAD", "Chang'An", "Samarkand", "Antioch", "Ann", "Marco", "Leyla",
                 "bid"):
        assert must in screen, must
    lines = screen.splitlines()
    assert len(lines) <= 24 and all(len(x) <= 80 for x in lines)
    subprocess.run([*base, "send-keys", "-t", "t", "1"], check=True)  # pass (or bid)
    after = _wait_for(base, "You ", 10)  # the log tells what we did
    assert "✗" not in after, after
    subprocess.run([*base, "send-keys", "-t", "t", "q"], check=True)
    _wait_for(base, "Leave the table?")
    subprocess.run([*base, "send-keys", "-t", "t", "y"], check=True)
    assert _exit_code(done) == "0", _capture(base)
    text = _capture(base, joined=True)
    assert "Traceback" not in text
    left = [x for x in text.splitlines() if x.startswith("Check the part played with: ")]
    assert len(left) == 1 and "You left the table" in text, text
    folder = Path(left[0].split(" audit ")[1].strip().strip("'"))
    if not folder.is_absolute():
        folder = tmp_path / folder
    assert (folder / "transcript.bin").exists() and (folder / "meta.json").exists()
    from cli.main import main

    assert main(["audit", str(folder)]) == 3  # not a finished game: not certified, not unfair
    out = capsys.readouterr().out
    # the player's own stop notice (it left) is in its folder: stopped, or incomplete
    assert out.startswith(("NOT CERTIFIED (incomplete):", "NOT CERTIFIED (stopped):")), out
    assert "nobody is named" in out, out
    assert "UNFAIR" not in out and "broke the rules" not in out


@pytest.mark.timeout(60)
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

"""``silkroad watch`` in a real terminal (tmux, 80x24) at a real hosted table.

The host is ``silkroad host --headless`` with two bot seats (processes, 127.0.0.1) and
hidden money; the watcher's screen must fit 80x24, show the verification line while the
game runs, never show a seat's money before the final reveal, end with the verdict, and
leave (q) with exit code 0 and the transcript kept, which the offline audit certifies
with the seats' final hash.

tmux is required: without it this test fails saying to install it (as the other terminal
tests do), rather than skipping.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from p2p.judge.game_audit import CERTIFIED, audit_game

TMUX = shutil.which("tmux")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def tmux() -> Iterator[list[str]]:
    if TMUX is None:
        pytest.fail("tmux is not installed: the terminal tests need it "
                    "(install it, e.g. 'apt-get install tmux'; ./dev test installs it)")
    base = [TMUX, "-L", f"silkroad-watch-{uuid.uuid4().hex[:8]}"]
    yield base
    subprocess.run([*base, "kill-server"], capture_output=True, check=False)


def _capture(base: list[str], joined: bool = False) -> str:
    flags = ["-p", "-J"] if joined else ["-p"]
    return subprocess.run([*base, "capture-pane", *flags, "-t", "t"], capture_output=True,
                          text=True, check=False).stdout


def _command() -> str:
    exe = Path(sys.executable).with_name("silkroad")
    return str(exe) if exe.exists() else f"{sys.executable} -m cli.main"


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_watch_in_a_real_terminal_shows_the_checks_and_the_verdict(
        tmux: list[str], tmp_path: Path) -> None:
    host = subprocess.Popen(
        [sys.executable, "-m", "cli.main", "host", "--table", "Watched tea", "--seats", "3",
         "--bots", "2", "--shuffle", "audit", "--money", "hidden", "--interface",
         "127.0.0.1", "--headless", "--json", "--timeout", "60", "--folder",
         str(tmp_path / "hp"), "--transcript", str(tmp_path / "host.silkroad")],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert host.stdout is not None
        opened = json.loads(host.stdout.readline())
        assert opened["event"] == "open", opened
        done = tmp_path / "exit-code"
        kept = tmp_path / "watched.silkroad"
        shell = (f"cd {tmp_path} && {_command()} watch 127.0.0.1:{opened['port']} "
                 f"--every 0.5 --transcript {kept}; echo $? > {done}; sleep 60")
        env = {**os.environ, "TERM": "xterm-256color"}
        subprocess.run([*tmux, "new-session", "-d", "-s", "t", "-x", "80", "-y", "24",
                        shell], check=True, env=env)
        mid = ""
        screen = ""
        end = time.monotonic() + 180
        while time.monotonic() < end:
            screen = _capture(tmux)
            lines = screen.splitlines()
            assert len(lines) <= 24 and all(len(x) <= 80 for x in lines), screen
            if "nothing wrong so far" in screen and "$?" in screen:
                mid = mid or screen
                # hidden money: no seat's amount in the panels before the final reveal
                panels = [x.split("│")[-1] for x in lines if "│" in x]
                assert not any(re.search(r"\$\d", p) for p in panels), screen
            if "The watch ended" in screen:
                break
            time.sleep(0.1)
        assert mid, f"the verification line was never seen mid-game; last screen:\n{screen}"
        first = mid.splitlines()
        assert first[0].startswith(" WATCHING ")
        assert re.match(r" checked: \d+ steps, \d+ envelopes, \d+ crypto ops — nothing "
                        r"wrong so far", first[1]), first[1]
        assert "The watch ended" in screen, screen
        assert "CERTIFIED" in screen.splitlines()[1], screen
        assert "CERTIFIED: " in screen and "Final scores" in screen, screen
        subprocess.run([*tmux, "send-keys", "-t", "t", "q"], check=True)
        t_end = time.monotonic() + 20
        while not done.exists() and time.monotonic() < t_end:
            time.sleep(0.05)
        assert done.exists() and done.read_text().strip() == "0", _capture(tmux, True)
        after = _capture(tmux, joined=True)
        assert "The transcript you watched is in" in after and "Traceback" not in after
        out, err = host.communicate(timeout=60)
        assert host.returncode == 0, err
        seat = json.loads(out.splitlines()[-1])
        report = audit_game(kept)
        assert report.status == CERTIFIED
        assert report.final_hash is not None
        assert report.final_hash.hex() == seat["audit"]["final_hash"]
    finally:
        if host.poll() is None:
            host.kill()
        host.wait(10)

"""Peers as separate processes over loopback; one is SIGKILLed mid-game and restarted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from table_kit import LAM, run

from p2p.game_audit import audit_game
from p2p.local_table import make_local_setup
from p2p.peer import prepare_folder


async def _folders(root: Path, players: int) -> list[Path]:
    peers = await make_local_setup(players, "audit", root, lam=LAM)
    for p in peers:
        await p.listener.close()  # the processes bind these ports themselves
        prepare_folder(p.folder, p.roster, p.params, p.seat, p.game_id, p.identity, LAM)
    return [p.folder for p in peers]


def _spawn(folder: Path, seed: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "p2p.peer", str(folder), "--bot", "random", "--seed",
         str(seed), "--abandon", "60"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def _envelopes(folder: Path) -> int:
    p = folder / "transcript.bin"
    return p.stat().st_size if p.exists() else 0


@pytest.mark.timeout(240)
def test_three_processes_with_a_sigkill_and_restart(tmp_path: Path) -> None:
    folders = run(lambda: _folders(tmp_path, 3), timeout=20)
    procs = [_spawn(f, 1) for f in folders]
    victim = 2
    try:
        deadline = time.monotonic() + 60
        while _envelopes(folders[victim]) < 150_000 and time.monotonic() < deadline:
            assert procs[victim].poll() is None, "victim ended before the kill"
            time.sleep(0.02)
        os.kill(procs[victim].pid, signal.SIGKILL)
        procs[victim].wait(10)
        time.sleep(0.5)
        procs[victim] = _spawn(folders[victim], 1)
        outs = [p.communicate(timeout=200)[0] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    done = []
    for out in outs:
        events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        assert events and events[-1]["event"] == "done", out[-2000:]
        done.append(events[-1])
    assert len({d["hash"] for d in done}) == 1
    report = audit_game(done[0]["export"])
    assert report.fair, str(report)

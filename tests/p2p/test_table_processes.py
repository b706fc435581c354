"""Peers as separate processes over loopback; one is SIGKILLed mid-game — while a bag draw
(``withdraw`` op) is running — and restarted from its folder: the game ends fair."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import msgpack
import pytest
from table_kit import LAM, run

from p2p.judge.game_audit import audit_game
from p2p.local_table import make_local_setup, prepare_folder


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


def _op_started(folder: Path, op: str) -> bool:
    """Whether the peer's stored transcript holds a crypto message of op ``op`` (read the
    way a crash would leave it: whole records only)."""
    p = folder / "transcript.bin"
    if not p.exists():
        return False
    data = p.read_bytes()
    pos = 0
    while pos + 4 <= len(data):
        n = int.from_bytes(data[pos:pos + 4], "big")
        if pos + 4 + n > len(data):
            break
        env = msgpack.unpackb(msgpack.unpackb(data[pos + 4:pos + 4 + n])[0], raw=False)
        kind, body = env[5], env[6]
        if kind == "crypto" and isinstance(body, list) and len(body) > 1 and body[1] == op:
            return True
        pos += 4 + n
    return False


@pytest.mark.timeout(240)
def test_three_processes_with_a_sigkill_and_restart(tmp_path: Path) -> None:
    folders = run(lambda: _folders(tmp_path, 3), timeout=20)
    procs = [_spawn(f, 1) for f in folders]
    victim = 2
    try:
        deadline = time.monotonic() + 60
        while not _op_started(folders[victim], "withdraw"):
            assert procs[victim].poll() is None, "victim ended before the kill"
            assert time.monotonic() < deadline, "no withdraw op started"
            time.sleep(0.01)
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
    first = json.loads(outs[victim].splitlines()[0])
    assert first["event"] == "started" and first["resumed"], first
    assert len({d["hash"] for d in done}) == 1
    report = audit_game(done[0]["export"])
    assert report.fair, str(report)

"""Separate processes: a host and two joiners (one via mDNS on 127.0.0.1, one via host:port).

This runs python-zeroconf with its *default* timings (no patches reach subprocesses).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOOPBACK = "127.0.0.1"


def spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "p2p" / "demo_peer.py"), *args,
         "--bind", LOOPBACK, "--timeout", "15"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def events(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


@pytest.mark.timeout(40)
def test_three_processes_join_and_exchange() -> None:
    table = f"Proc {os.urandom(3).hex()}"
    common = ["--table", table, "--code", "Caravan 9", "--messages", "4"]
    host = spawn("host", "--seats", "3", "--player", "alice", "--mdns-interface", LOOPBACK, *common)
    procs = [host]
    try:
        assert host.stdout is not None
        first = json.loads(host.stdout.readline())
        assert first["event"] == "listening"
        port = first["port"]
        procs.append(spawn("join", "--player", "bob", "--mdns-interface", LOOPBACK, *common))
        time.sleep(0.2)
        procs.append(spawn("join", "--player", "carol", "--connect", f"{LOOPBACK}:{port}", *common))
        outs = [p.communicate(timeout=35) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    logs = [[first], *[[] for _ in procs[1:]]]
    for log, (out, err) in zip(logs, outs, strict=True):
        log.extend(events(out))
        assert log[-1]["event"] == "done", (log, err[-2000:])
    assert all(p.returncode == 0 for p in procs)
    setups = [next(e for e in log if e["event"] == "setup") for log in logs]
    assert len({s["game_id"] for s in setups}) == 1
    assert len({tuple(s["words"]) for s in setups}) == 1
    assert sorted(s["seat"] for s in setups) == [0, 1, 2]
    assert any(e["event"] == "found" for e in logs[1])  # bob found the table over mDNS
    for log, setup in zip(logs, setups, strict=True):
        received = next(e for e in log if e["event"] == "received")["messages"]
        others = [s for s in range(3) if s != setup["seat"]]
        assert received == sorted(f"{s}:{i}" for s in others for i in range(4))

"""``silkroad play``'s bot peers as child processes (p2p/peer_process.py): a whole game on
every core, a child that dies mid-game is named by the player's table at once, and
children never outlive a parent that was killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from table_kit import LAM, run

from engine.actions import Action
from p2p.local_table import run_local_game
from p2p.table import LockstepTable, TableStopped


def _peer_pids(root: Path) -> list[int]:
    """PIDs of ``python -m p2p.peer`` processes playing a folder under ``root`` (Linux)."""
    out = []
    mark = str(root).encode()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"p2p.peer" in cmd and any(mark in c for c in cmd):
            out.append(int(d.name))
    return out


def _gone_within(root: Path, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while _peer_pids(root):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


@pytest.mark.timeout(120)
def test_bot_processes_play_a_fair_game(tmp_path: Path) -> None:
    res = run(lambda: run_local_game(3, "random", 2, "audit", tmp_path, lam=LAM,
                                     bot_processes=True, pace=0.001), timeout=110)
    assert [e["event"] for e in res.peer_events] == ["done"] * 2
    assert [e["seat"] for e in res.peer_events] == [1, 2]
    assert len(res.state_hashes) == 3 and len(set(res.state_hashes)) == 1
    assert res.audit is not None and res.audit.fair
    # the children's own plain-move timings arrived (the bench merges them)
    assert all(e["timings"] and e["applied"] for e in res.peer_events)
    assert len(res.step_times) == res.results[0].steps
    assert _gone_within(tmp_path, 5)


@pytest.mark.timeout(120)
def test_a_bot_process_that_dies_is_named_at_once(tmp_path: Path) -> None:
    """Without the watcher our table would wait for the dead seat until its timeout."""
    killed: list[int] = []

    def hook(t: LockstepTable, _a: Action) -> None:
        if t.step >= 12 and not killed:
            pids = _peer_pids(tmp_path / "seat2")
            if pids:
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])

    def on_tables(tables: list[LockstepTable]) -> None:
        tables[0].on_step = hook

    t0 = time.monotonic()
    with pytest.raises(TableStopped) as err:
        run(lambda: run_local_game(3, "random", 4, "audit", tmp_path, lam=LAM,
                                   bot_processes=True, on_tables=on_tables), timeout=110)
    assert killed
    assert err.value.culprit == 2 and err.value.rule == "peer-exited", err.value
    assert "peer.log" in err.value.detail
    assert time.monotonic() - t0 < 50  # well before the 60 s abandon timeout
    assert _gone_within(tmp_path, 5)


@pytest.mark.timeout(60)
def test_children_leave_when_the_parent_is_killed(tmp_path: Path) -> None:
    """A SIGKILLed player's process cannot clean up: its children see their stdin close
    and leave by themselves (they would otherwise wait for the dead seat forever)."""
    script = textwrap.dedent(f"""
        import asyncio
        from p2p.local_table import run_local_game
        asyncio.run(run_local_game(3, "random", 1, "audit", {str(tmp_path)!r}, lam={LAM},
                                   bot_processes=True, pace=5.0))
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while len(_peer_pids(tmp_path)) < 2:
            assert time.monotonic() < deadline, "the bot processes never started"
            assert parent.poll() is None, "the parent ended early"
            time.sleep(0.1)
        parent.kill()
        parent.wait()
        assert _gone_within(tmp_path, 10), _peer_pids(tmp_path)
    finally:
        if parent.poll() is None:
            parent.kill()
        for pid in _peer_pids(tmp_path):
            os.kill(pid, signal.SIGKILL)

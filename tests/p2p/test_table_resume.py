"""Kill a peer at awkward moments, restart it from its game folder, finish the game."""

from __future__ import annotations

from pathlib import Path

import pytest
from table_kit import OneDrawBot, finished, op_running, play_with_restart, run

from engine.state import Phase
from p2p.judge.game_audit import audit_game
from p2p.table import LockstepTable


def _ok(results: list, killed: bool) -> None:
    assert killed, "the game ended before the kill point came up"
    res = finished(results)
    assert len({r.state_hash for r in res}) == 1, "peers disagree after the restart"
    report = audit_game(res[0].export)
    assert report.fair, str(report)
    for r in res:
        assert audit_game(r.export).fair


@pytest.mark.timeout(120)
def test_kill_during_the_deal(tmp_path: Path) -> None:
    results, killed = run(lambda: play_with_restart(tmp_path, 3, 1, op_running("deal")),
                          timeout=110)
    _ok(results, killed)


@pytest.mark.timeout(120)
def test_kill_mid_auction(tmp_path: Path) -> None:
    def when(t: LockstepTable) -> bool:
        return t.state.phase == Phase.BID and t.step > 6

    results, killed = run(lambda: play_with_restart(tmp_path, 3, 2, when), timeout=110)
    _ok(results, killed)


@pytest.mark.timeout(150)
def test_kill_during_a_withdraw(tmp_path: Path) -> None:
    results, killed = run(lambda: play_with_restart(
        tmp_path, 3, 0, op_running("withdraw"), bot=OneDrawBot, seed=2), timeout=140)
    _ok(results, killed)


@pytest.mark.timeout(120)
def test_kill_during_a_vizier(tmp_path: Path) -> None:
    results, killed = run(lambda: play_with_restart(tmp_path, 3, 1, op_running("sealed")),
                          timeout=110)
    _ok(results, killed)

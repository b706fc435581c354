"""Complete networked games: N real peers over 127.0.0.1, real crypto, then the offline audit."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from table_kit import finished, play_tables, run

from crypto import remembered
from engine.actions import Action
from engine.view import PlayerView
from p2p.judge.game_audit import EXIT_FAIR, audit_game, summary
from p2p.store import read_export


def _check_game(results: list, players: int) -> None:
    res = finished(results)
    assert len({r.state_hash for r in res}) == 1, "peers disagree on the final state"
    assert all(r.steps == res[0].steps for r in res)
    exports = [r.export for r in res]
    assert all(e is not None and e.exists() for e in exports)
    report = audit_game(exports[0])
    assert report.fair, str(report)
    assert report.exit_code == EXIT_FAIR
    assert report.engine_replayed and report.steps == res[0].steps
    assert report.final_hash == res[0].state_hash
    assert report.scores == res[0].scores
    game = read_export(exports[0])
    assert len(game.roster) == players
    assert not [r for r in res[0].refusals if "replayed" not in r.reason]


@pytest.mark.timeout(200)
def test_three_peers_heuristic_full_game(tmp_path: Path) -> None:
    """Heuristic bots buy, trade and exchange: every crypto path of the resolver runs."""
    _peers, results = run(lambda: play_tables(tmp_path, 3, frugal=False, seed=3), timeout=150)
    _check_game(results, 3)


@pytest.mark.timeout(200)
@pytest.mark.parametrize("players", [4, 5, 6])
def test_larger_tables(tmp_path: Path, players: int) -> None:
    _peers, results = run(lambda: play_tables(tmp_path, players, seed=players), timeout=150)
    _check_game(results, players)


@pytest.mark.timeout(200)
def test_verified_shuffle_game(tmp_path: Path) -> None:
    """Also: the audit right after the game, in the process whose tables checked every proof
    live, takes those checks from memory (crypto.remembered) and says exactly what a cold
    audit (``silkroad audit`` in a new process) says."""
    remembered.forget()
    _peers, results = run(lambda: play_tables(tmp_path, 3, mode="verified", seed=7), timeout=150)
    _check_game(results, 3)
    export = finished(results)[0].export
    hits = remembered.stats()["hits"]
    warm = summary(audit_game(export))
    assert remembered.stats()["hits"] > hits
    remembered.forget()
    cold = summary(audit_game(export))
    assert remembered.stats()["hits"] == 0
    assert warm == cold


@pytest.mark.timeout(150)
def test_run_local_game_with_a_human_callback(tmp_path: Path) -> None:
    """What ``silkroad play`` calls: seat 0 answers through an async callback (the UI)."""
    from table_kit import FrugalBot

    from p2p.local_table import run_local_game

    me = FrugalBot(99)
    asked: list[int] = []

    async def human(view: PlayerView, legal: list[Action]) -> Action:
        asked.append(len(legal))
        await asyncio.sleep(0)
        return me.choose(view, legal)

    bots = [FrugalBot(s) for s in range(3)]
    result = run(lambda: run_local_game(3, bots, 5, "audit", tmp_path, human),
                 timeout=140)
    assert asked, "the human callback was never asked"
    assert len(set(result.state_hashes)) == 1
    assert result.audit is not None and result.audit.fair, str(result.audit)
    assert result.transcript.exists() and result.transcript_bytes > 0
    assert result.winners and len(result.scores) == 3

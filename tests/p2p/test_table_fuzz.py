"""Fuzz: 10,000 malformed or mutated inputs (from real signed envelopes of the game in
progress) fed to a live table: never a crash, never a state change, every one refused with
a reason; the game then finishes fair.  ``python -m bench.net_bench --fuzz N`` runs more."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from table_kit import finished, play_tables, run

from bench.table_fuzz import fuzz_table
from engine.actions import Action
from p2p.judge.game_audit import audit_game
from p2p.table import LockstepTable

FUZZ = 10_000


@pytest.mark.timeout(120)
def test_fuzzed_envelopes_are_refused_and_the_game_finishes_fair(tmp_path: Path) -> None:
    tables: dict[int, LockstepTable] = {}
    report: list[dict[str, Any]] = []

    def prepare(t: LockstepTable) -> None:
        tables[t.me] = t

    def hook(t: LockstepTable, _a: Action) -> None:
        if t.me == 1 and t.step == 12 and not report:
            report.append(fuzz_table(tables[0], t, FUZZ, seed=7))
            # (bodies with bad contents signed in the real chain of a roster member are the
            # signer's violation: test_table_cheats.test_signed_junk_names_its_signer_…)

    _peers, results = run(lambda: play_tables(tmp_path, 3, prepare=prepare, on_step=hook),
                          timeout=110)
    assert report, "the fuzz never ran"
    r = report[0]
    assert r["unrefused"] == 0, r
    assert r["unchanged"] and r["failure"] is None and r["early"] == 0, r
    res = finished(results)
    assert len({x.state_hash for x in res}) == 1
    assert audit_game(res[0].export).fair

"""A live adversary at a real table: whatever one seat does, no honest seat is named.

Six games of :mod:`bench.live_adversary`, each with one seat armed by
:mod:`bench.live_cheats`: the misbehaviour is fixed here so that the run covers different
ones (a wrong decryption share, a false accusation, an equivocated move, a crypto message
shown to one peer only, a stop notice, delayed envelopes); the cheater, the moment and the
details come from the seed.  Every honest seat's live verdict, its verdicts on abort
notices and the audits of its folder and export must name nobody or the cheater — never an
honest seat, and never "unfair" naming nobody.  The bench runs the same check over many
random games (``silkroad bench live``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.live_adversary import GameReport, run_game

CASES = [(9, "wrong-share"), (6, "false-abort"), (8, "equivocate-action"),
         (7, "partial-crypto"), (17, "stop-silent"), (1, "delay")]
"""(seed, misbehaviour): seeds whose cheater starts early enough for the misbehaviour to
fire in any game, and whose cheaters sit at different seats."""


@pytest.mark.timeout(240)
def test_no_honest_seat_is_named_by_a_live_adversary(tmp_path: Path) -> None:
    reports: list[GameReport] = [run_game(tmp_path / f"game{seed}", seed, 3, (kind,),
                                          timeout=60.0)
                                 for seed, kind in CASES]
    silent = [r.description for r in reports if not r.plan.fired]
    assert not silent, f"misbehaviours that never fired: {silent}"
    found = [f"{r.description}\n    {v}" for r in reports for v in r.violations]
    assert not found, "honest seats named (or games hung):\n" + "\n".join(found)

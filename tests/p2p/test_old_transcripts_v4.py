"""A version-4 transcript still audits certified and replays after version 5.

``tests/golden/net_v4_3p.silkroad`` is a real 3-seat game recorded by protocol version 4
(``silkroad play --bots 2 --headless --seed 2``, the game.silkroad of its folder), made
just before version 5 changed one rule: a Grand Vizier now sets a goods token of its
colour aside (docs/rules.md, "The Grand Vizier's marker").  The game has four Grand
Viziers, none of which removed a token; the audit must replay it by its own version's
rules, so it stays certified, with the scores it was played to.
"""

from __future__ import annotations

from pathlib import Path

from cli.replay.network import build_net_replay
from engine.actions import VizierReveals
from p2p.judge.game_audit import CERTIFIED, EXIT_FAIR, audit_game
from p2p.store import read_export

V4 = Path(__file__).resolve().parents[1] / "golden" / "net_v4_3p.silkroad"


def test_a_version_4_game_audits_certified_by_its_own_rules() -> None:
    assert read_export(V4).params.protocol_version == 4
    report = audit_game(V4)
    assert report.status == CERTIFIED and report.exit_code == EXIT_FAIR, str(report)
    assert report.violation is None
    assert report.steps == 214 and report.scores == [38, 39, 40], str(report)


def test_a_version_4_game_replays_with_no_vizier_marker() -> None:
    model = build_net_replay(V4)
    assert len(model.states) == 215 and model.complete
    viziers = [i for i, a in enumerate(model.actions) if isinstance(a, VizierReveals)]
    assert len(viziers) == 4
    # version 4 rules: after each reveal the tile is done and no token leaves the bag
    for i in viziers:
        before, after = model.states[i], model.states[i + 1]
        assert len(after.bag) == len(before.bag)
    final = model.states[-1]
    held = sum(len(g) for g in final.goods)
    assert held + len(final.bag) == 75

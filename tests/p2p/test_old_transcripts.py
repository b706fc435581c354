"""Transcripts written before this version still audit and replay.

``tests/golden/net_v3_3p.silkroad`` is a real 3-seat game recorded by protocol version 3
(commit 02bbf4d: ``silkroad play --bots 2 --headless --seed 2``).  Version 4 changed what a
game records (closing acknowledgements) and one rule (the caravan's last move into the end
city), so the audit must replay an old game by its own version's rules: everything in it
checks out, and it is *not certified* only because version 3 had no closing
acknowledgements — never unfair, never naming an honest seat.
"""

from __future__ import annotations

from pathlib import Path

from cli.replay.network import build_net_replay
from p2p.judge.game_audit import EXIT_NOT_CERTIFIED, NOT_CERTIFIED, audit_game
from p2p.store import read_export

OLD = Path(__file__).resolve().parents[1] / "golden" / "net_v3_3p.silkroad"


def test_a_version_3_game_audits_as_played_and_is_not_certified() -> None:
    assert read_export(OLD).params.protocol_version == 3
    report = audit_game(OLD)
    assert report.status == NOT_CERTIFIED and report.exit_code == EXIT_NOT_CERTIFIED, str(report)
    v = report.violation
    assert v is not None and v.party is None and v.rule == "not-certified", str(report)
    assert "protocol version 3" in str(report)
    assert report.steps == 201 and report.scores == [44, 37, 54], str(report)


def test_a_version_3_game_replays() -> None:
    model = build_net_replay(OLD)
    assert len(model.states) == 202 and model.complete

"""A version-6 transcript still audits certified and replays after version 7.

``tests/golden/net_v6_3p.silkroad`` is a real 3-seat game recorded by protocol version 6
(``silkroad play --bots 2 --headless --seed 2``, its transcript), made just before
version 7 let a seat relay its watchers' lines of talk (``[text, watcher]``).  Version 7
changed nothing a version 6 game holds, so it stays certified with the scores it was
played to; in it a two-element talk body stays malformed (``test_table_talk``).
"""

from __future__ import annotations

from pathlib import Path

from cli.replay.network import build_net_replay
from p2p.judge.game_audit import CERTIFIED, EXIT_FAIR, audit_game
from p2p.store import read_export

V6 = Path(__file__).resolve().parents[1] / "golden" / "net_v6_3p.silkroad"


def test_a_version_6_game_audits_certified() -> None:
    game = read_export(V6)
    assert game.params.protocol_version == 6
    report = audit_game(V6)
    assert report.status == CERTIFIED and report.exit_code == EXIT_FAIR, str(report)
    assert report.violation is None
    assert report.steps == 203 and report.scores == [38, 46, 44], str(report)


def test_a_version_6_game_replays() -> None:
    model = build_net_replay(V6)
    assert len(model.states) == 204 and model.complete

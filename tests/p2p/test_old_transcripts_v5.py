"""A version-5 transcript still audits certified and replays after version 6.

``tests/golden/net_v5_3p.silkroad`` is a real 3-seat game recorded by protocol version 5
(``silkroad play --bots 2 --headless --seed 2``, its transcript), made just before
version 6 added the heads to every crypto body (docs/protocol.md).  Its crypto bodies
have five elements; the audit must read them by version 5's rules (no heads, the ack
frontier alone), so it stays certified, with the scores it was played to.
"""

from __future__ import annotations

from pathlib import Path

from cli.replay.network import build_net_replay
from crypto.transcript import CRYPTO_KIND, parse, signing_key
from p2p.judge.game_audit import CERTIFIED, EXIT_FAIR, audit_game
from p2p.store import read_export

V5 = Path(__file__).resolve().parents[1] / "golden" / "net_v5_3p.silkroad"


def test_a_version_5_game_audits_certified_by_its_own_rules() -> None:
    game = read_export(V5)
    assert game.params.protocol_version == 5
    keys = [signing_key(e.key) for e in game.roster]
    envs = [parse(w, keys, game.game_id) for w in game.wires]
    bodies = [e.body for e in envs if e.kind == CRYPTO_KIND]
    assert bodies and all(len(b) == 5 for b in bodies)  # version 5: no heads
    report = audit_game(V5)
    assert report.status == CERTIFIED and report.exit_code == EXIT_FAIR, str(report)
    assert report.violation is None
    assert report.steps == 197 and report.scores == [44, 44, 37], str(report)


def test_a_version_5_game_replays() -> None:
    model = build_net_replay(V5)
    assert len(model.states) == 198 and model.complete

"""Files a forger holding one seat's key could write, searched for a wrong verdict.

The audit must name only a seat that signed something false, never say "unfair" naming
no one, and never certify a file whose signed contents are not the game that was played.
:mod:`bench.forge` makes such files from a real certified game (drop, reorder, repeat,
re-sign the forger's own chain with a change, sign new envelopes, edit the unsigned
header); hypothesis draws the forger and a composition of those operators, and
:func:`bench.forge.check` is the property.  The plain tests pin the library itself.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from bench import forge as fg
from crypto.audit import Violation
from engine.actions import encode
from p2p.judge.game_audit import GameAuditReport, audit_game

PLAYERS = 3


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> fg.HonestGame:
    """One certified 3-seat game with every seat's key, replayed once for legal moves."""
    game = fg.make_honest_game(tmp_path_factory.mktemp("honest"), PLAYERS, "audit", seed=5)
    game.facts()
    return game


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("forged")


@pytest.mark.timeout(120)
@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          phases=[Phase.explicit, Phase.generate],  # one audit per example: no shrinking
          suppress_health_check=[HealthCheck.too_slow])
@given(forger=st.integers(0, PLAYERS - 1),
       ops=st.lists(st.sampled_from(fg.weighted_op_names()), min_size=1, max_size=3),
       seed=st.integers(0, 2**32 - 1))
def test_no_forgery_by_one_seat_gets_a_wrong_verdict(honest: fg.HonestGame, workdir: Path,
                                                     forger: int, ops: list[str],
                                                     seed: int) -> None:
    f = fg.forge(honest, forger, random.Random(seed), ops=ops)
    path = f.write(workdir / "forged.silkroad")
    report = audit_game(path)
    problem = fg.check(report, forger, honest, path)
    assert problem is None, f"{f.text()}\n  -> {problem}\n  (ops {ops}, seed {seed})"


def _report(party: int | None, rule: str = "some-rule") -> GameAuditReport:
    """A made-up "unfair" verdict, to test the check alone."""
    return GameAuditReport(False, Violation(party, None, None, rule, "test"), None,
                           status="unfair")


def _certified() -> GameAuditReport:
    return GameAuditReport(True, None, None, status="certified")


@pytest.mark.parametrize("op", ["interleave", "seat_first", "reverse", "shuffle", "duplicate",
                                "sort_by_seq"])
def test_a_pure_reorder_or_repeat_keeps_the_signed_contents(honest: fg.HonestGame,
                                                            workdir: Path, op: str) -> None:
    f = fg.forge(honest, 1, random.Random(7), ops=[op])
    assert f.wires != honest.wires and sorted(set(f.wires)) == sorted(set(honest.wires))
    sets = fg.signed_sets(f.wires, honest.public_keys(), honest.game_id)
    assert sets == honest.signed()
    path = f.write(workdir / f"{op}.silkroad")
    assert fg.check(_certified(), 1, honest, path) is None  # may be certified
    assert fg.check(_report(1), 1, honest, path) is not None  # but not name the exporter


def test_re_signing_an_unchanged_chain_gives_the_same_bytes(honest: fg.HonestGame) -> None:
    """Ed25519 is deterministic: the forger re-signing its own envelopes as they were
    reproduces the file byte for byte (so every difference a forgery makes is its own)."""
    seq = len(honest.signed()[1]) // 2
    again = fg.resign_from(honest.wires, honest.keys[1], 1, seq, lambda env: [env])
    assert again == honest.wires


def test_a_re_signed_changed_move_changes_the_forgers_signed_contents_only(
        honest: fg.HonestGame, workdir: Path) -> None:
    forger = 2
    f = fg.Forge(honest, forger, honest.wires)
    moves = [e for e in f.chain(forger) if e[5] == "action"]
    env = moves[len(moves) // 2]
    step = env[6][0]
    alts = honest.facts().alternatives(step, forger)
    new = encode(alts[0]) if alts else b"\x91\x63"
    fg.apply_step(f, "resign", {"seq": env[3], "change": {"what": "move", "action": new}})
    sets = fg.signed_sets(f.wires, honest.public_keys(), honest.game_id)
    assert sets[forger] != honest.signed()[forger]
    assert all(sets[s] == honest.signed()[s] for s in range(PLAYERS) if s != forger)
    path = f.write(workdir / "rebid.silkroad")
    assert fg.check(_certified(), forger, honest, path) is not None
    assert fg.check(_report(forger), forger, honest, path) is None


def test_the_check_flags_wrong_verdicts(honest: fg.HonestGame, workdir: Path) -> None:
    f = fg.forge(honest, 0, random.Random(3), ops=["append"])
    path = f.write(workdir / "appended.silkroad")
    problem = fg.check(_report(1), 0, honest, path)
    assert problem is not None and problem.startswith("named-honest-seat"), problem
    problem = fg.check(_report(None), 0, honest, path)
    assert problem is not None and problem.startswith("unfair-naming-no-one"), problem
    assert fg.check(_report(0), 0, honest, path) is None
    problem = fg.check(GameAuditReport(False, Violation(None, None, None, "audit-error", "bug"),
                                       None, status="incomplete"), 0, honest, path)
    assert problem is not None and problem.startswith("audit-error"), problem
    # the honest file itself: certified is right, naming anyone is not
    assert fg.check(_certified(), 0, honest, honest.path) is None
    problem = fg.check(_report(0), 0, honest, honest.path)
    assert problem is not None and problem.startswith("named-forger-for-nothing"), problem


def test_an_edited_header_is_no_seats_violation(honest: fg.HonestGame, workdir: Path) -> None:
    f = fg.Forge(honest, 0, honest.wires)
    fg.apply_step(f, "header", {"field": "name", "seat": 1, "value": "Mallory", "lam": 1})
    path = f.write(workdir / "renamed.silkroad")
    assert fg.check(_report(None, "game-id"), 0, honest, path) is None
    problem = fg.check(_report(0), 0, honest, path)
    assert problem is not None and problem.startswith("header-edit-named-seat"), problem

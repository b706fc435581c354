"""Audit mode is not private: the last shuffler can output fresh encryptions of
a layout it chose and so know every hand, unseen until the audit. ``"audit-last-tw"`` (audit
mode with the last shuffle TW-proven) names that shuffler live."""

from __future__ import annotations

from typing import Any

import pytest
from crypto_testkit import make_bus, spec

from crypto import group as g
from crypto import shuffle as sh
from crypto.audit import audit
from crypto.elgamal import public_token, reencrypt
from crypto.errors import CheatDetected
from crypto.protocols.deal import Deal, ReshuffleBag

N = 3
LAYOUT: list[str] = []  # what the cheater chose, position by position


class ChosenLayoutDeal(Deal):
    """Ignores its input deck: fresh encryptions of the labels in an order it knows."""

    def shuffle_for_me(self, deck: list[Any]) -> tuple[list[Any], sh.Witness]:
        joint = self.ctx.require_keys()
        LAYOUT[:] = sorted(self.labels)
        out = [reencrypt(public_token(lab, joint), g.random_scalar(), joint) for lab in LAYOUT]
        fake = sh.Witness(tuple(range(len(deck))), tuple(g.random_scalar() for _ in deck))
        return out, fake


def _cheating_bus() -> Any:
    return make_bus(N, cheats={N - 1: {"deal": ChosenLayoutDeal}})


def test_plain_audit_mode_lets_the_last_shuffler_know_every_hand() -> None:
    bus = _cheating_bus()
    bus.run(lambda s: s.deal(spec(2), 2, False))  # nobody notices anything live
    for p in range(N):
        assert bus.sessions[p].my_labels() == LAYOUT[2 * p:2 * p + 2]  # the cheater knows
    bus.run(lambda s: s.reveal_secrets())
    report = audit(bus.transcript, bus.keys, bus.sessions[0].ctx.game_id, lam=8)
    assert report.violation is not None, str(report)
    assert (report.violation.party, report.violation.rule) == (N - 1,
                                                               "shuffle-not-permutation")


def test_audit_mode_with_a_proven_last_shuffle_names_the_last_shuffler_live() -> None:
    bus = _cheating_bus()
    with pytest.raises(CheatDetected) as e:
        bus.run(lambda s: s.deal(spec(2), 2, False, last_proven=True))
    assert (e.value.culprit, e.value.rule) == (N - 1, "shuffle-proof-invalid")
    report = audit(bus.transcript, bus.keys, bus.sessions[0].ctx.game_id, lam=8)
    assert report.violation is not None
    assert (report.violation.party, report.violation.rule) == (N - 1, "shuffle-proof-invalid")


def test_a_proven_last_shuffle_hides_an_earlier_cheaters_layout() -> None:
    """An earlier shuffler may still substitute (caught at the audit), but the honest,
    proven last shuffle re-permutes its layout: it no longer knows the hands."""
    bus = make_bus(N, cheats={0: {"deal": ChosenLayoutDeal}})
    bus.run(lambda s: s.deal(spec(3), 3, False, last_proven=True))
    hands = [lab for p in range(N) for lab in bus.sessions[p].my_labels()]
    assert hands != LAYOUT[:3 * N]  # chance of a match: about 1e-7
    bus.run(lambda s: s.reveal_secrets())
    report = audit(bus.transcript, bus.keys, bus.sessions[0].ctx.game_id, lam=8)
    assert report.violation is not None
    assert (report.violation.party, report.violation.rule) == (0, "shuffle-not-permutation")


def test_honest_games_in_audit_last_tw_mode_audit_fair() -> None:
    bus = make_bus(N)
    bus.run(lambda s: s.deal(spec(3), 2, False, last_proven=True))
    ops = bus.run(lambda s: s.reshuffle_bag(False, last_proven=True))
    assert isinstance(ops[0], ReshuffleBag) and ops[0].args == [sh.AUDIT_LAST_PROVEN]
    assert all(op.witness is not None for op in ops)
    bus.run(lambda s: s.reveal_secrets())
    report = audit(bus.transcript, bus.keys, bus.sessions[0].ctx.game_id, lam=8)
    assert report.fair and report.violation is None, str(report)


def test_only_the_last_shuffle_carries_a_proof() -> None:
    bus = make_bus(N)
    seen: list[tuple[str, bool]] = []
    bus.intercept = lambda sender, body: (seen.append((body[3], body[4][1] is not None))
                                          if body[3].startswith("shuffle") else None) or [body]
    bus.run(lambda s: s.deal(spec(2), 1, False, last_proven=True))
    assert seen == [(f"shuffle_{k}", k == N - 1) for k in range(N)]

"""Deferred ("verify what you need") checks: every cheat is still named — live by the party
that needs the cheated value, and always by the auditor from the transcript."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from crypto_testkit import LABELS, dealt_bus, make_bus, spec

from crypto import group as g
from crypto.audit import audit
from crypto.elgamal import decrypt_with_key, label_point
from crypto.errors import CheatDetected, InvalidPoint, ProofInvalid
from crypto.ledger import BAG
from crypto.protocols.base import Step
from crypto.protocols.deal import Deal
from crypto.protocols.sealed import SealedReveal
from crypto.protocols.withdraw import Withdraw

ORDER8 = bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")


def _named(bus: Any, party: int, rule: str) -> None:
    report = audit(bus.transcript, bus.keys, bus.sessions[0].ctx.game_id, lam=8)
    assert report.violation is not None, str(report)
    assert (report.violation.party, report.violation.rule) == (party, rule), str(report)


class TaggingDeal(Deal):
    """Adds a small-order (torsion) component to one token of its audit-mode output."""

    def make_shuffle(self, st: Step) -> list[Any]:
        raw, proof = super().make_shuffle(st)
        raw[3][1] = g.add(raw[3][1], ORDER8)
        return [raw, proof]


@pytest.mark.parametrize(("n", "cheater"), [(3, 0), (4, 1), (4, 3)])
def test_torsion_tag_in_audit_mode_deck_is_named(n: int, cheater: int) -> None:
    # intermediate deck: caught by the next shuffler before it shuffles; final deck: by all
    bus = make_bus(n, cheats={cheater: {"deal": TaggingDeal}})
    with pytest.raises(CheatDetected) as e:
        bus.run(lambda s: s.deal(spec(2), 1, False))
    assert (e.value.culprit, e.value.rule) == (cheater, "invalid-point")
    _named(bus, cheater, "invalid-point")


class WrongShareDeal(Deal):
    def make_share(self, st: Step) -> list[Any]:
        real = self.ctx.x
        assert real is not None
        self.ctx.x = (real + 1) % g.L
        try:
            return super().make_share(st)
        finally:
            self.ctx.x = real


def test_bad_deal_share_is_named_by_its_recipient_and_the_auditor() -> None:
    bus = make_bus(4, cheats={2: {"deal": WrongShareDeal}})
    with pytest.raises(CheatDetected) as e:
        bus.run(lambda s: s.deal(spec(3), 2, False))
    assert (e.value.culprit, e.value.rule) == (2, "dleq-invalid")
    _named(bus, 2, "dleq-invalid")


def _bag_labels(bus: Any) -> list[str | None]:
    x = sum(s.ctx.x for s in bus.sessions) % g.L
    table = {label_point(lab): lab for lab in LABELS}
    return [table.get(decrypt_with_key(sl.ct, x)) for sl in bus.sessions[0].ledger.bag]


class ProofTamperingBlinder(Withdraw):
    """Honest blinded values, but the proofs of the listed positions are broken."""

    positions: ClassVar[set[int]] = set()

    def make_blind(self, st: Step) -> list[Any]:
        out = super().make_blind(st)
        for row in out:
            for i in self.positions:
                c, z = row[i][2]
                row[i][2] = [z, c]
        return out


def _blinder(positions: set[int]) -> type[Withdraw]:
    return type("B", (ProofTamperingBlinder,), {"positions": positions})


def test_bad_blinding_of_a_taken_token_is_named_live() -> None:
    bus = dealt_bus(3, per_label=4, k=1)
    labels = _bag_labels(bus)
    silk = {i for i, lab in enumerate(labels) if lab == "silk"}
    for s in bus.sessions:
        s.ops["withdraw"] = _blinder(silk) if s.me == 2 else Withdraw
    with pytest.raises(CheatDetected) as e:
        bus.run(lambda s: s.withdraw(0, [("silk", 1)], False))
    assert (e.value.culprit, e.value.rule) == (2, "pet-blind-invalid")


def test_bad_blinding_of_an_untaken_token_is_named_by_the_auditor() -> None:
    bus = dealt_bus(3, per_label=4, k=1)
    labels = _bag_labels(bus)
    other = {i for i, lab in enumerate(labels) if lab != "silk"}
    for s in bus.sessions:
        s.ops["withdraw"] = _blinder(other) if s.me == 1 else Withdraw
    # only the taker's private view depends on it and its count is not short: no live abort
    ops = bus.run(lambda s: s.withdraw(0, [("silk", 1)], False))
    assert ops[0].result["claimed"] == [1]
    _named(bus, 1, "pet-blind-invalid")


def test_bad_blinding_when_the_count_is_short_is_named_live_by_the_taker() -> None:
    bus = dealt_bus(3, per_label=4, k=1)
    labels = _bag_labels(bus)
    other = {i for i, lab in enumerate(labels) if lab != "silk"}
    for s in bus.sessions:
        s.ops["withdraw"] = _blinder(other) if s.me == 1 else Withdraw
    # asking for more silk than the bag holds makes the taker check every proof
    with pytest.raises(CheatDetected) as e:
        bus.run(lambda s: s.withdraw(0, [("silk", 99)], False))
    assert (e.value.culprit, e.value.rule) == (1, "pet-blind-invalid")


class HidingBlinder(Withdraw):
    """Blinds Q with a different factor than A: hides every match (unproven)."""

    def make_blind(self, st: Step) -> list[Any]:
        out = super().make_blind(st)
        for row in out:
            for item in row:
                item[1] = g.add(item[1], g.G)
        return out


def test_hidden_matches_are_caught_live() -> None:
    bus = dealt_bus(4, per_label=4, k=1, cheats={3: {"withdraw": HidingBlinder}})
    with pytest.raises(CheatDetected) as e:
        bus.run(lambda s: s.withdraw(1, [("tea", 1)], False))
    assert (e.value.culprit, e.value.rule) == (3, "pet-blind-invalid")
    _named(bus, 3, "pet-blind-invalid")


class SmallOrderBlinder(Withdraw):
    def make_blind(self, st: Step) -> list[Any]:
        out = super().make_blind(st)
        out[0][2][0] = g.add(out[0][2][0], ORDER8)
        return out


def test_invalid_blinded_point_is_named_by_everyone() -> None:
    bus = dealt_bus(3, per_label=4, k=1, cheats={1: {"withdraw": SmallOrderBlinder}})
    with pytest.raises(CheatDetected) as e:
        bus.run(lambda s: s.withdraw(0, [("jade", 1)], False))
    assert (e.value.culprit, e.value.rule) == (1, "invalid-point")
    _named(bus, 1, "invalid-point")


class WrongPShare(Withdraw):
    def make_pshare(self, st: Step) -> list[Any]:
        real = self.ctx.x
        assert real is not None
        self.ctx.x = (real + 1) % g.L
        try:
            return super().make_pshare(st)
        finally:
            self.ctx.x = real


@pytest.mark.parametrize("want", [1, 99])  # taken-position check / short taker's batch check
def test_bad_pet_share_is_named_live(want: int) -> None:
    bus = dealt_bus(3, per_label=4, k=1, cheats={1: {"withdraw": WrongPShare}})
    with pytest.raises(CheatDetected) as e:
        bus.run(lambda s: s.withdraw(0, [("salt", want)], False))
    assert (e.value.culprit, e.value.rule) == (1, "dleq-invalid")
    _named(bus, 1, "dleq-invalid")


def test_open_after_deferred_deal_is_consistent() -> None:
    bus = dealt_bus(5, per_label=3, k=2)
    ops = bus.run(lambda s: s.open(BAG, [0, 1, 2]))
    assert len({tuple(op.result["labels"]) for op in ops}) == 1


# --- batched DLEQ (sealed reveal) -----------------------------------------------------------

def test_batched_dleq_accepts_honest_rejects_any_wrong_share() -> None:
    from crypto import dleq

    x = g.random_scalar()
    y = g.base_mul(x)
    bases = [g.base_mul(g.random_scalar()) for _ in range(5)]
    ds = [g.mul(x, b) for b in bases]
    proof = dleq.prove_batch(x, y, bases, ds, ["ctx"])
    assert dleq.verify_batch(y, bases, ds, proof, ["ctx"]) is None
    with pytest.raises(ProofInvalid):
        dleq.verify_batch(y, bases, ds, proof, ["other"])
    for j in range(5):
        bad = list(ds)
        bad[j] = g.mul(x + 1, bases[j])
        with pytest.raises(ProofInvalid):
            dleq.verify_batch(y, bases, bad, proof, ["ctx"])
        with pytest.raises(ProofInvalid):
            dleq.verify_batch(y, bases, bad, dleq.prove_batch(x, y, bases, bad, ["ctx"]),
                              ["ctx"])
    with pytest.raises(ProofInvalid):
        dleq.verify_batch(y, list(reversed(bases)), ds, proof, ["ctx"])
    with pytest.raises(InvalidPoint):
        dleq.verify_batch(y, bases, [ORDER8, *ds[1:]], proof, ["ctx"])


class WrongShareSealed(SealedReveal):
    def make_share(self, st: Step) -> list[Any]:
        real = self.ctx.x
        assert real is not None
        self.ctx.x = (real + 1) % g.L
        try:
            return super().make_share(st)
        finally:
            self.ctx.x = real


def test_wrong_sealed_share_is_named_live() -> None:
    bus = dealt_bus(3, per_label=3, k=3, cheats={1: {"sealed": WrongShareSealed}})
    with pytest.raises(CheatDetected) as e:
        bus.run(lambda s: s.sealed_reveal("silk", [0] if s.me == 0 else []))
    assert (e.value.culprit, e.value.rule) == (1, "dleq-invalid")

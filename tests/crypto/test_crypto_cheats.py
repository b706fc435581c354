"""Cheat catalogue: each cheater is a patched honest party doing real crypto; it must be
caught and named (party index + rule), live where possible, otherwise by the auditor.
See docs/security.md for the guarantee behind each test."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from crypto_testkit import dealt_bus, make_bus, spec

from bench.local_bus import Stalled
from crypto import group as g
from crypto import schnorr
from crypto import shuffle as sh
from crypto.audit import audit
from crypto.errors import CheatDetected, ProtocolStateError
from crypto.ledger import BAG
from crypto.protocols.deal import Deal
from crypto.protocols.keys import KeySetup
from crypto.protocols.open import Open
from crypto.protocols.sealed import SealedReveal
from crypto.protocols.shares import make_shares
from crypto.protocols.steal import Steal
from crypto.protocols.withdraw import Withdraw
from crypto.transcript import parse

ORDER8 = bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")


def _caught(exc: pytest.ExceptionInfo[CheatDetected], party: int, rule: str) -> None:
    assert (exc.value.culprit, exc.value.rule) == (party, rule), str(exc.value)


def _dup_witness(deck: list, joint: bytes) -> tuple[list, sh.Witness]:
    perm = list(sh.random_permutation(len(deck)))
    perm[1] = perm[0]  # token perm[0] duplicated, another one dropped
    w = sh.Witness(tuple(perm), tuple(g.random_scalar() for _ in deck))
    return sh.apply(deck, w, joint), w


class WrongShareOpen(Open):
    def make_share(self, st: Any) -> list[Any]:
        real = self.ctx.x
        self.ctx.x = (real + 1) % g.L  # shares (and proofs) under a wrong key
        try:
            return make_shares(self, [c[0] for c in self.cts], "open")
        finally:
            self.ctx.x = real


def test_wrong_decryption_share_is_named_live() -> None:
    bus = dealt_bus(4, cheats={2: {"open": WrongShareOpen}})
    with pytest.raises(CheatDetected) as e:
        bus.run(lambda s: s.open(BAG, [0, 1]))
    _caught(e, 2, "dleq-invalid")


class DuplicatingDeal(Deal):
    def shuffle_for_me(self, deck: list) -> tuple[list, sh.Witness]:
        return _dup_witness(deck, self.ctx.require_keys())


def test_shuffle_substitution_verified_mode_is_named_live() -> None:
    bus = make_bus(3, lam=40, cheats={1: {"deal": DuplicatingDeal}})
    with pytest.raises(CheatDetected) as e:
        bus.run(lambda s: s.deal(spec(2), 1, True))
    _caught(e, 1, "shuffle-proof-invalid")


def test_shuffle_substitution_audit_mode_is_named_at_audit() -> None:
    bus = make_bus(3, cheats={2: {"deal": DuplicatingDeal}})
    bus.run(lambda s: s.deal(spec(2), 1, False))  # not detectable live in audit mode
    bus.run(lambda s: s.reveal_secrets())
    report = audit(bus.transcript, bus.keys, bus.sessions[0].ctx.game_id, lam=8)
    assert not report.fair and report.violation is not None
    v = report.violation
    assert (v.party, v.rule) == (2, "shuffle-not-permutation"), str(report)
    assert v.envelope is not None


class NonPermutingVictim(Steal):
    def shuffle_for_me(self, deck: list) -> tuple[list, sh.Witness]:
        return _dup_witness(deck, self.ctx.require_keys())


def test_victim_reshuffle_not_a_permutation_is_named_live() -> None:
    bus = make_bus(3, lam=40, cheats={0: {"steal": NonPermutingVictim}})
    bus.run(lambda s: s.deal(spec(2), 3, False))
    with pytest.raises(CheatDetected) as e:
        bus.run(lambda s: s.steal(1, 0))
    _caught(e, 0, "shuffle-proof-invalid")


class SwitchingRevealer(SealedReveal):
    def reveal_value(self) -> tuple[list[int], bytes]:
        other = [i for i in range(len(self.ledger.hands[self.ctx.me])) if i not in self.choice]
        return other[:1], self._nonce


def test_sealed_opening_not_matching_commitment() -> None:
    bus = dealt_bus(3, cheats={1: {"sealed": SwitchingRevealer}})
    with pytest.raises(CheatDetected) as e:
        bus.run(lambda s: s.sealed_reveal("silk", []))
    _caught(e, 1, "commitment-mismatch")


def test_revealing_a_token_as_the_wrong_label() -> None:
    bus = dealt_bus(4)
    liar = bus.sessions[3]
    claimed = next(lab for lab in ("silk", "tea") if lab != liar.my_labels()[0])
    with pytest.raises(CheatDetected) as e:
        bus.run(lambda s: s.sealed_reveal(claimed, [0] if s.me == 3 else []))
    _caught(e, 3, "sealed-wrong-label")


def test_copied_commitment_cannot_be_opened() -> None:
    victim_ops: list[SealedReveal] = []

    class Copier(SealedReveal):
        def make_commit(self, st: Any) -> list[Any]:
            return [victim_ops[0].commits[0]]  # rushing: copies party 0's commitment

        def reveal_value(self) -> tuple[list[int], bytes]:
            return victim_ops[0].choice, victim_ops[0]._nonce  # even a perfect copy fails

    bus = dealt_bus(3, cheats={2: {"sealed": Copier}})

    def start(s: Any) -> list[Any]:
        out = s.sealed_reveal("silk", [0] if s.me == 0 else [])
        if s.me == 0:
            victim_ops.append(s.current)
        return out

    with pytest.raises(CheatDetected) as e:
        bus.run(start)
    _caught(e, 2, "commitment-mismatch")


def test_withheld_reveal_is_an_identifiable_abort() -> None:
    bus = dealt_bus(4)
    bus.intercept = lambda sender, body: [] if (sender == 1 and body[3] == "reveal") else [body]
    with pytest.raises(Stalled) as e:
        bus.run(lambda s: s.sealed_reveal("tea", []))
    assert all(w == [1] for p, w in e.value.waiting.items() if p != 1)
    with pytest.raises(ProtocolStateError):  # no silent restart
        bus.sessions[0].open(BAG, [0])
    # live, the others see whom they wait for (above); a file that lacks seat 1's reveal is
    # only incomplete: whoever hands the file out could have cut it, so it names nobody
    report = audit(bus.transcript, bus.keys, bus.sessions[0].ctx.game_id, lam=8)
    assert report.violation is None and not report.complete
    assert any("waits for the messages of seats [1]" in m for m in report.missing), report


class RogueKey(KeySetup):
    peers: ClassVar[list[Any]] = []

    def make_key(self, st: Any) -> list[Any]:
        others = [op._keys[p] for p, op in enumerate(self.peers) if p != self.ctx.me]
        a = g.random_scalar()
        rogue = g.sub(g.base_mul(a), g.sum_points(others))  # Y would be a·G
        return [rogue, schnorr.prove_key(a, rogue, self.ctx.game_id, self.ctx.me)]


def test_rogue_key_is_rejected() -> None:
    from bench.local_bus import LocalBus
    from crypto.session import TokenSession

    sessions = [TokenSession(b"rogue", 3, i, op_classes={"keys": RogueKey} if i == 2 else None)
                for i in range(3)]
    bus = LocalBus(sessions)
    for s in sessions[:2]:
        bus._post(s.me, s.setup_keys())
    RogueKey.peers = [sessions[0].current, sessions[1].current]
    sessions[0].current._keys[0] = g.base_mul(sessions[0].ctx.x)
    sessions[1].current._keys[1] = g.base_mul(sessions[1].ctx.x)
    bus._post(2, sessions[2].setup_keys())
    with pytest.raises(CheatDetected) as e:
        bus.pump()
    _caught(e, 2, "key-proof-invalid")


class SmallOrderKey(KeySetup):
    def make_key(self, st: Any) -> list[Any]:
        return [ORDER8, [g.encode_scalar(1), g.encode_scalar(1)]]


class SmallOrderShare(Open):
    def make_share(self, st: Any) -> list[Any]:
        good = make_shares(self, [c[0] for c in self.cts], "open")
        return [[ORDER8, pr] for _, pr in good]


def test_small_order_key_is_rejected() -> None:
    with pytest.raises(CheatDetected) as e:
        make_bus(3, cheats={1: {"keys": SmallOrderKey}})
    _caught(e, 1, "invalid-point")


def test_small_order_share_is_rejected() -> None:
    bus = dealt_bus(3, cheats={0: {"open": SmallOrderShare}})
    with pytest.raises(CheatDetected) as e:
        bus.run(lambda s: s.open(BAG, [0]))
    _caught(e, 0, "invalid-point")


class LyingTaker(Withdraw):
    def claimed_counts(self) -> list[int]:
        return [0 for _ in self.requests]

    def choose(self) -> list[list[int]]:
        return [[] for _ in self.requests]


def test_false_bag_has_none_claim_is_caught_at_audit() -> None:
    bus = dealt_bus(3, per_label=4, k=1, cheats={1: {"withdraw": LyingTaker}})
    ops = bus.run(lambda s: s.withdraw(1, [("spice", 1)], False))
    assert ops[0].result["claimed"] == [0]  # accepted live: cannot be refuted there
    bus.run(lambda s: s.reveal_secrets())
    report = audit(bus.transcript, bus.keys, bus.sessions[0].ctx.game_id, lam=8)
    assert report.violation is not None
    assert (report.violation.party, report.violation.rule) == (1, "withdraw-false-count")


class GreedyTaker(Withdraw):
    def choose(self) -> list[list[int]]:
        wrong = [i for i in range(self.m) if i not in self.matches[0]]
        return [wrong[:1]]


def test_taking_a_non_matching_token_is_named_live() -> None:
    bus = dealt_bus(3, per_label=4, k=1, cheats={0: {"withdraw": GreedyTaker}})
    with pytest.raises(CheatDetected) as e:
        bus.run(lambda s: s.withdraw(0, [("jade", 1)], False))
    _caught(e, 0, "withdraw-not-matching")


# --- degenerate blinding -----------------------------------------------------------------------

def _deliver_collecting(bus: Any, start: Any) -> dict[int, CheatDetected]:
    """Like ``LocalBus.run`` but every party keeps going until it names someone: the verdict
    of each live party, by seat (a party that named someone gets nothing more)."""
    from crypto.transcript import CRYPTO_KIND

    for i, s in enumerate(bus.sessions):
        bus._post(i, start(s))
    named: dict[int, CheatDetected] = {}
    while bus.queue:
        sender, body = bus.queue.popleft()
        wire = bus.signers[sender].sign(CRYPTO_KIND, body)
        bus.transcript.append(wire)
        for i, s in enumerate(bus.sessions):
            if i == sender or i in named:
                continue
            env = bus.logs[i].add(wire, via=sender)
            try:
                bus._post(i, s.receive(sender, env.body))
            except CheatDetected as exc:
                named[i] = exc
    return named


def test_degenerate_blinding_names_the_seat_that_cancelled_the_others() -> None:
    made: dict[int, list[Any]] = {}

    class Recording(Withdraw):
        def make_blind(self, st: Any) -> list[Any]:
            out = super().make_blind(st)
            made[self.ctx.me] = out
            return out

    class Canceller(Withdraw):
        """Rushing blinder: once the others' blindings are known, sends minus their sum at
        position 0, so ``Z[0][0]`` is the identity (it cannot prove that factor)."""

        def make_blind(self, st: Any) -> list[Any]:
            out = super().make_blind(st)
            theirs = [made[p][0][0] for p in self.others if p != self.ctx.me]
            for half in (0, 1):
                total = g.sum_points([item[half] for item in theirs])
                out[0][0][half] = g.mul(g.L - 1, total)
            return out

    taker, cheater = 0, 3
    bus = dealt_bus(4, per_label=4, k=1,
                    cheats={p: {"withdraw": Canceller if p == cheater else Recording}
                            for p in range(1, 4)})
    named = _deliver_collecting(bus, lambda s: s.withdraw(taker, [("silk", 1)], False))
    for seat in (0, 1, 2):  # every honest party, the taker included, names the canceller
        assert seat in named, f"seat {seat} named nobody"
        assert (named[seat].culprit, named[seat].rule) == (cheater, "pet-blind-invalid"), \
            str(named[seat])
    report = audit(bus.transcript, bus.keys, bus.sessions[0].ctx.game_id, lam=8)
    assert report.violation is not None, str(report)
    v = report.violation
    assert (v.party, v.rule) == (cheater, "pet-blind-invalid"), str(report)


def test_an_audit_mode_substitution_is_named_without_an_accomplices_secrets() -> None:
    """A witness needs only public data and its own seat's secrets: seat 1's duplicating
    shuffle is named although seat 0 (an accomplice) withholds its secrets, which only the
    decryption checks need."""
    bus = make_bus(3, cheats={1: {"deal": DuplicatingDeal}})
    bus.run(lambda s: s.deal(spec(2), 1, False))
    bus.run(lambda s: s.reveal_secrets())
    gid = bus.sessions[0].ctx.game_id
    kept = [w for w in bus.transcript
            if not (parse(w, bus.keys, gid).sender == 0
                    and parse(w, bus.keys, gid).body[1] == "secrets")]
    assert len(kept) == len(bus.transcript) - 1
    report = audit(kept, bus.keys, gid, lam=8)
    v = report.violation
    assert v is not None and (v.party, v.rule) == (1, "shuffle-not-permutation"), str(report)
    assert v.sender_seq is not None and v.sender_seq[0] == 1, str(report)

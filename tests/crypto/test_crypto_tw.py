"""Terelius–Wikström shuffle proofs: honest proofs verify, every forgery is rejected and the
shuffler named (live and by the auditor); the cut-and-choose option still works."""

from __future__ import annotations

import sys
import threading
from typing import Any, ClassVar

import msgpack
import pytest
from crypto_testkit import LABELS, dealt_bus, make_bus, spec

from crypto import group as g
from crypto import shuffle as sh
from crypto import twproof as tw
from crypto.audit import audit
from crypto.elgamal import encode_deck, public_token, reencrypt
from crypto.errors import CheatDetected, InvalidPoint, MalformedInput, ProofInvalid
from crypto.protocols.base import Step
from crypto.protocols.chain import ShuffleChain
from crypto.protocols.deal import Deal
from crypto.protocols.steal import Steal

ORDER8 = bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")


def _deck(n: int = 12) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    y = g.base_mul(g.random_scalar())
    # re-randomised: every input ciphertext distinct (public tokens of a label are equal)
    return y, [reencrypt(public_token(LABELS[i % len(LABELS)], y), g.random_scalar(), y)
               for i in range(n)]


def _caught(exc: pytest.ExceptionInfo[CheatDetected], party: int, rule: str) -> None:
    assert (exc.value.culprit, exc.value.rule) == (party, rule), str(exc.value)


# --- unit level -----------------------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 2, 12])
def test_honest_tw_proof_verifies_and_is_bound_to_context(n: int) -> None:
    y, deck = _deck(n)
    out, w = sh.shuffle(deck, y)
    proof = tw.prove(deck, out, w.perm, w.scalars, y, ["game", 1, "deal", 0])
    assert tw.verify(deck, out, proof, y, ["game", 1, "deal", 0]) is None
    if n:
        with pytest.raises(ProofInvalid):
            tw.verify(deck, out, proof, y, ["game", 1, "deal", 1])  # prover id
        with pytest.raises(ProofInvalid):
            tw.verify(deck, out, proof, y, ["game", 2, "deal", 0])  # round
        other = g.base_mul(g.random_scalar())
        with pytest.raises(ProofInvalid):
            tw.verify(deck, out, proof, other, ["game", 1, "deal", 0])  # key
        if n > 1:  # one token reversed is the same deck
            with pytest.raises(ProofInvalid):
                tw.verify(list(reversed(deck)), out, proof, y, ["game", 1, "deal", 0])


def _mutations(proof: list[Any]) -> list[tuple[str, list[Any]]]:
    """One tampered copy per field (lists: one entry changed)."""
    out = []
    for f, val in enumerate(proof):
        bad = [list(x) if isinstance(x, list) else x for x in proof]
        if isinstance(val, list):
            j = len(val) // 2
            if len(val[j]) == 32 and f < 2:  # a point: another valid point
                bad[f][j] = g.base_mul(g.random_scalar())
            else:
                bad[f][j] = g.encode_scalar((int.from_bytes(val[j], "little") + 1) % g.L or 1)
        else:
            bad[f] = g.encode_scalar((int.from_bytes(val, "little") + 1) % g.L or 1)
        out.append((f"field {f}", bad))
    # swapping two responses, two commitments, and dropping an entry
    swapped = [list(x) if isinstance(x, list) else x for x in proof]
    swapped[8][0], swapped[8][1] = swapped[8][1], swapped[8][0]
    out.append(("swapped s'", swapped))
    swapped_c = [list(x) if isinstance(x, list) else x for x in proof]
    swapped_c[0][0], swapped_c[0][1] = swapped_c[0][1], swapped_c[0][0]
    out.append(("swapped C", swapped_c))
    short = [list(x) if isinstance(x, list) else x for x in proof]
    short[7] = short[7][:-1]
    out.append(("short ŝ", short))
    out.append(("truncated", proof[:8]))
    return out


def test_every_tampered_field_is_rejected() -> None:
    y, deck = _deck(8)
    out, w = sh.shuffle(deck, y)
    proof = tw.prove(deck, out, w.perm, w.scalars, y, ["ctx"])
    for what, bad in _mutations(proof):
        with pytest.raises(ProofInvalid):
            tw.verify(deck, out, bad, y, ["ctx"])
            pytest.fail(f"accepted: {what}")


def test_invalid_points_in_proof_or_output_raise_invalid_point() -> None:
    y, deck = _deck(6)
    out, w = sh.shuffle(deck, y)
    proof = tw.prove(deck, out, w.perm, w.scalars, y, ["ctx"])
    for f in (0, 1):
        bad = [list(x) if isinstance(x, list) else x for x in proof]
        bad[f][2] = ORDER8
        with pytest.raises(InvalidPoint):
            tw.verify(deck, out, bad, y, ["ctx"])
    bad_out = list(out)
    bad_out[3] = (out[3][0], ORDER8)
    with pytest.raises(InvalidPoint):
        tw.verify(deck, bad_out, proof, y, ["ctx"])
    with pytest.raises(InvalidPoint):
        tw.verify(deck, [(out[0][0], b"\xff" * 32), *out[1:]], proof, y, ["ctx"])


def test_zero_scalars_are_refused() -> None:
    y, deck = _deck(4)
    out, w = sh.shuffle(deck, y)
    proof = tw.prove(deck, out, w.perm, w.scalars, y, ["ctx"])
    for f in (2, 5):
        bad = list(proof)
        bad[f] = bytes(32)
        with pytest.raises(ProofInvalid):
            tw.verify(deck, out, bad, y, ["ctx"])
    bad = [list(x) if isinstance(x, list) else x for x in proof]
    bad[8][0] = g.L.to_bytes(32, "little")  # non-canonical
    with pytest.raises(ProofInvalid):
        tw.verify(deck, out, bad, y, ["ctx"])


def test_substitution_and_duplication_are_rejected() -> None:
    y, deck = _deck(10)
    out, w = sh.shuffle(deck, y)
    # substitution: one output token replaced by a re-encryption of another label
    sub = list(out)
    sub[4] = reencrypt(public_token("not-a-label", y), g.random_scalar(), y)
    with pytest.raises(ProofInvalid):
        tw.verify(deck, sub, tw.prove(deck, sub, w.perm, w.scalars, y, ["c"]), y, ["c"])
    # substitution by a copy of another input token (re-encrypted)
    perm = list(w.perm)
    perm[1] = perm[0]
    dup_w = sh.Witness(tuple(perm), w.scalars)
    dup = sh.apply(deck, dup_w, y)
    with pytest.raises(ProofInvalid):
        tw.verify(deck, dup, tw.prove(deck, dup, perm, w.scalars, y, ["c"]), y, ["c"])
    # a proof of the honest shuffle does not transfer to another output deck
    proof = tw.prove(deck, out, w.perm, w.scalars, y, ["c"])
    with pytest.raises(ProofInvalid):
        tw.verify(deck, dup, proof, y, ["c"])


def test_generators_are_independent_points() -> None:
    hs = tw.generators(20)
    assert len(set(hs)) == 20 and tw._H0 not in hs and g.G not in hs
    assert all(g.is_point(h) for h in hs)
    assert tw.generators(5) == hs[:5]


# --- protocol level -------------------------------------------------------------------------

class TamperingDeal(Deal):
    """Honest shuffle, then one field of its TW proof is altered."""

    mutation: ClassVar[int] = 0

    def make_shuffle(self, st: Step) -> list[Any]:
        raw, proof = super().make_shuffle(st)
        return [raw, _mutations(proof)[self.mutation][1]]


class SubstitutingDeal(Deal):
    def shuffle_for_me(self, deck: list) -> tuple[list, sh.Witness]:
        joint = self.ctx.require_keys()
        out, w = sh.shuffle(deck, joint)
        # replace output 0 by a re-encryption of a *different* input ciphertext
        k = next(k for k, ct in enumerate(deck) if ct != deck[w.perm[0]])
        out[0] = reencrypt(deck[k], g.random_scalar(), joint)
        return out, w


class DuplicatingDeal(Deal):
    def shuffle_for_me(self, deck: list) -> tuple[list, sh.Witness]:
        perm = list(sh.random_permutation(len(deck)))
        # duplicate input perm[0] in place of a token with a different ciphertext
        j = next(j for j, k in enumerate(perm) if deck[k] != deck[perm[0]])
        perm[j] = perm[0]
        w = sh.Witness(tuple(perm), tuple(g.random_scalar() for _ in deck))
        return sh.apply(deck, w, self.ctx.require_keys()), w


class SmallOrderDeal(Deal):
    def make_shuffle(self, st: Step) -> list[Any]:
        raw, proof = super().make_shuffle(st)
        raw[2][1] = ORDER8
        return [raw, proof]


@pytest.mark.parametrize("mutation", range(13))
def test_tampered_tw_proof_names_the_shuffler(mutation: int) -> None:
    cls = type("T", (TamperingDeal,), {"mutation": mutation})
    bus = make_bus(3, cheats={1: {"deal": cls}})
    with pytest.raises(CheatDetected) as e:
        bus.run(lambda s: s.deal(spec(2), 1, True))
    _caught(e, 1, "shuffle-proof-invalid")


@pytest.mark.parametrize(("n", "cheater", "cls"), [(3, 0, SubstitutingDeal),
                                                   (4, 3, DuplicatingDeal),
                                                   (5, 2, SubstitutingDeal),
                                                   (6, 4, DuplicatingDeal)])
def test_non_permutation_shuffle_is_named_live_and_by_auditor(n: int, cheater: int,
                                                              cls: type[Deal]) -> None:
    bus = make_bus(n, cheats={cheater: {"deal": cls}})
    with pytest.raises(CheatDetected) as e:
        bus.run(lambda s: s.deal(spec(2), 1, True))
    _caught(e, cheater, "shuffle-proof-invalid")
    # the auditor re-verifies the TW proof from the transcript and names the same shuffler
    report = audit(bus.transcript, bus.keys, bus.sessions[0].ctx.game_id, lam=8)
    assert report.violation is not None
    assert (report.violation.party, report.violation.rule) == (cheater,
                                                              "shuffle-proof-invalid")


def test_invalid_point_in_tw_deck_is_named() -> None:
    bus = make_bus(3, cheats={2: {"deal": SmallOrderDeal}})
    with pytest.raises(CheatDetected) as e:
        bus.run(lambda s: s.deal(spec(2), 1, True))
    _caught(e, 2, "invalid-point")


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_honest_tw_deal_verifies_and_audits_fair(n: int) -> None:
    bus = dealt_bus(n, per_label=2, k=1, verified=True)
    assert all(None not in s.my_labels() for s in bus.sessions)
    deal = bus.sessions[0].history[-1]
    assert isinstance(deal, ShuffleChain) and deal.proof_kind == sh.PROOF_TW
    bus.run(lambda s: s.reshuffle_bag(True))
    bus.run(lambda s: s.steal(1, 0))
    bus.run(lambda s: s.reveal_secrets())
    report = audit(bus.transcript, bus.keys, bus.sessions[0].ctx.game_id, lam=8)
    assert report.fair and report.complete, str(report)


class TamperingVictim(Steal):
    def make_reshuffle(self, st: Step) -> list[Any]:
        raw, proof = super().make_reshuffle(st)
        return [raw, _mutations(proof)[8][1]]


def test_victim_tw_proof_tampered_is_named() -> None:
    bus = dealt_bus(3, k=2, cheats={0: {"steal": TamperingVictim}})
    with pytest.raises(CheatDetected) as e:
        bus.run(lambda s: s.steal(1, 0))
    _caught(e, 0, "shuffle-proof-invalid")


# --- cut-and-choose stays available ---------------------------------------------------------

def test_cut_and_choose_option_honest_and_cheating() -> None:
    bus = make_bus(3, lam=8)
    bus.run(lambda s: s.deal(spec(2), 1, True, proof=sh.PROOF_CC))
    op = bus.sessions[0].history[-1]
    assert isinstance(op, ShuffleChain) and op.proof_kind == sh.PROOF_CC
    assert op.args[2] == sh.PROOF_CC
    bus.run(lambda s: s.reshuffle_bag(True, proof=sh.PROOF_CC))
    bus.run(lambda s: s.steal(1, 0, proof=sh.PROOF_CC))
    bus.run(lambda s: s.reveal_secrets())
    assert audit(bus.transcript, bus.keys, bus.sessions[0].ctx.game_id, lam=8).fair
    cheat = make_bus(3, lam=40, cheats={1: {"deal": DuplicatingDeal}})
    with pytest.raises(CheatDetected) as e:
        cheat.run(lambda s: s.deal(spec(2), 1, True, proof=sh.PROOF_CC))
    _caught(e, 1, "shuffle-proof-invalid")


def test_mode_arguments() -> None:
    assert sh.parse_mode(False) is None
    assert sh.parse_mode(True) == sh.parse_mode("tw") == sh.PROOF_TW
    assert sh.parse_mode("cut-and-choose") == sh.PROOF_CC
    for bad in (1, 0, None, "groth", [True]):
        with pytest.raises(MalformedInput):
            sh.parse_mode(bad)
    assert sh.mode_arg(False, sh.PROOF_CC) is False
    assert sh.mode_arg(True) is True
    with pytest.raises(MalformedInput):
        sh.mode_arg(True, "nope")


def test_tw_proof_is_much_smaller_than_cut_and_choose() -> None:
    y, deck = _deck(20)
    out, w = sh.shuffle(deck, y)
    tw_size = len(msgpack.packb(tw.prove(deck, out, w.perm, w.scalars, y, ["c"])))
    cc_size = len(msgpack.packb(sh.prove(deck, out, w, y, ["c"], 40)))
    assert tw_size * 3 < cc_size
    assert len(msgpack.packb(encode_deck(out))) < tw_size


def test_threads_filling_the_generator_cache_at_once_agree_with_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A table checks shuffles while its audit runs ahead in a thread: threads extending
    the generators' cache together must not append an index twice (which would shift every
    later generator and fail every honest proof for the rest of the process)."""
    want = [g.hash_to_point(tw.TAG + "-generator", ["h_i", i]) for i in range(120)]
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    try:
        for _ in range(10):
            monkeypatch.setattr(tw, "_GENS", [])
            got: list[list[bytes]] = []
            threads = [threading.Thread(target=lambda out=got: out.append(tw.generators(120)))
                       for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert got == [want] * 4 and tw._GENS == want
    finally:
        sys.setswitchinterval(old)

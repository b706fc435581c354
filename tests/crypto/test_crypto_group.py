"""Group layer, primitives and their input validation."""

from __future__ import annotations

import pytest

from crypto import commitment, dleq, schnorr
from crypto import group as g
from crypto import shuffle as sh
from crypto.coinflip import below, combine
from crypto.elgamal import label_point, public_token, reencrypt
from crypto.errors import InvalidPoint, InvalidScalar, MalformedInput, ProofInvalid

ORDER8 = bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")


def test_identity_and_small_order_points_are_rejected() -> None:
    for bad in (g.IDENTITY, ORDER8, bytes(32), b"\xff" * 32, b"short", 5):
        with pytest.raises(InvalidPoint):
            g.decode_point(bad, "test point")
    # a torsion component added to a good point is rejected too
    p = g.base_mul(7)
    mixed = g.add(p, ORDER8)
    with pytest.raises(InvalidPoint):
        g.decode_point(mixed)
    with pytest.raises(InvalidPoint):
        g.mul(3, ORDER8)


def test_scalar_zero_is_never_used() -> None:
    with pytest.raises(InvalidScalar):
        g.base_mul(0)
    with pytest.raises(InvalidScalar):
        g.decode_scalar(bytes(32))
    with pytest.raises(InvalidScalar):
        g.decode_scalar(g.L.to_bytes(32, "little"))
    assert all(0 < g.random_scalar() < g.L for _ in range(50))


def test_hash_fields_is_length_prefixed() -> None:
    assert g.hash_fields("t", [b"ab", b"c"]) != g.hash_fields("t", [b"a", b"bc"])
    assert g.hash_fields("t", ["1"]) != g.hash_fields("t", [1])
    assert g.hash_fields("t", [[1, 2]]) != g.hash_fields("t", [1, 2])
    with pytest.raises(MalformedInput):
        g.hash_fields("t", [1.5])


def test_elgamal_roundtrip_and_reencryption() -> None:
    x = g.random_scalar()
    y = g.base_mul(x)
    ct = public_token("silk", y)
    ct2 = reencrypt(ct, g.random_scalar(), y)
    assert ct2 != ct
    assert g.sub(ct2[1], g.mul(x, ct2[0])) == label_point("silk")


def test_schnorr_binds_game_and_party() -> None:
    x = g.random_scalar()
    y = g.base_mul(x)
    pr = schnorr.prove_key(x, y, b"game", 2)
    schnorr.verify_key(y, pr, b"game", 2)  # holds: returns
    for key, game, party in ((y, b"game", 3), (y, b"other", 2),
                             (g.base_mul(x + 1), b"game", 2)):
        with pytest.raises(ProofInvalid):
            schnorr.verify_key(key, pr, game, party)


def test_dleq_rejects_wrong_share() -> None:
    x = g.random_scalar()
    y = g.base_mul(x)
    a = g.base_mul(g.random_scalar())
    d = g.mul(x, a)
    pr = dleq.prove(x, g.G, y, a, d, ["c"])
    assert dleq.verify(g.G, y, a, d, pr, ["c"]) is None
    with pytest.raises(ProofInvalid):
        dleq.verify(g.G, y, a, d, pr, ["other"])
    with pytest.raises(ProofInvalid):
        dleq.verify(g.G, y, a, g.mul(x + 1, a), pr, ["c"])


@pytest.mark.parametrize("lam", [1, 8, 40])
def test_shuffle_proof_accepts_honest_rejects_substitution(lam: int) -> None:
    y = g.base_mul(g.random_scalar())
    deck = [public_token(lab, y) for lab in ["a", "b", "c", "d"]]
    out, w = sh.shuffle(deck, y)
    proof = sh.prove(deck, out, w, y, ["ctx"], lam)
    assert sh.verify(deck, out, proof, y, ["ctx"], lam) is None
    if lam >= 40:  # a proof survives another context with probability 2^-λ (1/256 at 8)
        with pytest.raises(ProofInvalid):
            sh.verify(deck, out, proof, y, ["other ctx"], lam)
    assert sh.check_witness(deck, out, w, y) is None
    bad = sh.Witness((0, 0, 1, 2), w.scalars)
    with pytest.raises(ProofInvalid):
        sh.check_witness(deck, sh.apply(deck, bad, y), bad, y)


def test_commitment_binds_context() -> None:
    c, nonce = commitment.commit(b"g", 1, 2, "p", [1, 2])
    assert commitment.check_opening(c, b"g", 1, 2, "p", [1, 2], nonce)
    assert not commitment.check_opening(c, b"g", 1, 3, "p", [1, 2], nonce)
    assert not commitment.check_opening(c, b"g", 1, 2, "p", [1], nonce)
    with pytest.raises(MalformedInput):
        commitment.check_opening(c, b"g", 1, 2, "p", [1, 2], b"x")


def test_coin_combination_is_order_sensitive() -> None:
    a, b = b"a" * 32, b"b" * 32
    assert combine(b"g", 0, "p", [a, b]) != combine(b"g", 0, "p", [b, a])
    assert 0 <= below(combine(b"g", 0, "p", [a, b]), 7) < 7


def test_hash_field_encoding_is_unchanged_by_the_bytes_fast_path() -> None:
    """Fiat–Shamir challenges and commitments depend on these exact bytes."""
    from crypto.group import _encode_field

    assert _encode_field(b"ab") == b"y" + (2).to_bytes(8, "big") + b"ab"
    assert _encode_field([b"", 1]) == (b"l" + (19).to_bytes(8, "big") + b"y" + bytes(8)
                                       + b"i" + (1).to_bytes(8, "big") + b"\x01")
    assert g.hash_fields("t", [b"ab", 1, True, "x", [b"c", None, (2, b"")]]).hex()[:32] == \
        "4f295bb105ad158600fceb1b964e1d9d"

"""Envelopes: signatures on received bytes, chains, replay, re-order, equivocation."""

from __future__ import annotations

import msgpack
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from crypto import remembered
from crypto import transcript as tr
from crypto.errors import CheatDetected, MalformedInput
from crypto.transcript import (
    Equivocation,
    Signer,
    TranscriptLog,
    ack_body,
    compare_acks,
    parse,
)


def _setup(n: int = 3) -> tuple[list[Signer], TranscriptLog]:
    signers = [Signer(b"gid", i) for i in range(n)]
    return signers, TranscriptLog(b"gid", [s.public_key for s in signers])


def test_roundtrip_and_chain() -> None:
    ss, log = _setup()
    w0 = ss[0].sign("action", [1, b"x", "y", None, True])
    w1 = ss[0].sign("action", [[2]])
    assert log.add(w0).body == [1, b"x", "y", None, True]
    assert log.add(w1).seq == 1
    assert log.wires() == [w0, w1]


def test_maps_and_floats_are_refused() -> None:
    ss, _ = _setup()
    for bad in ({"a": 1}, 1.5, [{"a": 1}]):
        with pytest.raises(MalformedInput):
            ss[0].sign("action", bad)


def test_forged_signature_names_the_relay() -> None:
    ss, log = _setup()
    w = ss[1].sign("action", [1])
    env, sig = msgpack.unpackb(w)
    forged = msgpack.packb([env, bytes([sig[0] ^ 1]) + sig[1:]])
    with pytest.raises(CheatDetected) as e:
        log.add(forged, via=2)
    assert (e.value.culprit, e.value.rule) == (2, "bad-signature")
    # a different signer's key cannot sign for party 1
    fake = Signer(b"gid", 1)
    with pytest.raises(CheatDetected) as e:
        log.add(fake.sign("action", [1]), via=0)
    assert (e.value.culprit, e.value.rule) == (0, "bad-signature")


def test_replay_and_reorder() -> None:
    ss, log = _setup()
    w0, w1, w2 = (ss[0].sign("a", [i]) for i in range(3))
    log.add(w0)
    with pytest.raises(CheatDetected) as e:
        log.add(w2, via=1)
    assert (e.value.culprit, e.value.rule) == (1, "out-of-order")
    log.add(w1)
    with pytest.raises(CheatDetected) as e:
        log.add(w1, via=2)
    assert (e.value.culprit, e.value.rule) == (2, "replay")


def test_equivocation_gives_transferable_proof() -> None:
    ss, log = _setup()
    log.add(ss[2].sign("a", [0]))
    ss[2].seq, ss[2].prev = 0, bytes(32)
    other = ss[2].sign("a", [999])
    with pytest.raises(Equivocation) as e:
        log.add(other)
    assert (e.value.culprit, e.value.rule) == (2, "equivocation")
    assert e.value.proof.equivocator([s.public_key for s in ss], b"gid") == 2


def test_bad_chain_and_other_game() -> None:
    ss, log = _setup()
    log.add(ss[0].sign("a", [0]))
    ss[0].prev = bytes(32)
    with pytest.raises(CheatDetected) as e:
        log.add(ss[0].sign("a", [1]))
    assert (e.value.culprit, e.value.rule) == (0, "bad-chain")
    other = Signer(b"other", 1, ss[1].key)
    with pytest.raises(CheatDetected) as e:
        log.add(other.sign("a", []), via=1)
    assert e.value.rule == "malformed"
    with pytest.raises(CheatDetected):
        parse(b"\xc1garbage", [s.public_key for s in ss], b"gid", via=0)


def test_acks_expose_state_divergence() -> None:
    ss, log = _setup()
    log.add(ss[0].sign("a", [0]))
    acks = [log.add(ss[i].sign("ack", ack_body(1, b"H" if i < 2 else b"X", log)))
            for i in (1, 2)]
    mine = log.add(ss[0].sign("ack", ack_body(1, b"H", log)))
    assert compare_acks([mine, *acks]) == [(2, "state-hash-mismatch")]


def test_weak_signing_keys_are_refused() -> None:
    """A small-order Ed25519 key "verifies" forged signatures of every message with pyca
    (OpenSSL), so a party with one could deny everything it signed: refused on load."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    from crypto.transcript import is_signing_key, signing_key

    identity = bytes([1]) + bytes(31)
    weak = Ed25519PublicKey.from_public_bytes(identity)
    for message in (b"I never sent this", b"nor this"):
        weak.verify(identity + bytes(32), message)  # the forgery pyca accepts
    order_8 = bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")
    good = Signer(b"g" * 32, 0).public_key.public_bytes_raw()
    mixed = nacl_add(good, order_8)
    for bad in (identity, order_8, mixed, b"\xff" * 32, good[:31], "not bytes"):
        assert not is_signing_key(bad)
        with pytest.raises(MalformedInput, match="not a valid Ed25519 public key"):
            signing_key(bad, "seat 1's key")
    assert is_signing_key(good) and signing_key(good).public_bytes_raw() == good


def nacl_add(p: bytes, q: bytes) -> bytes:
    from nacl.bindings import crypto_core_ed25519_add

    return crypto_core_ed25519_add(p, q)


def test_reencoded_wrapper_is_blamed_on_the_relay_not_the_sender() -> None:
    """The signature covers the inner envelope bytes only.  A relay that re-encodes the
    outer ``[envelope, signature]`` array (same values, other msgpack headers) would give
    the envelope another id: without the canonical-form check the honest sender would be
    blamed for equivocation (two "different" envelopes with one seq) or a broken chain."""
    s = Signer(b"g" * 32, 0)
    keys = [s.public_key]
    wire = s.sign("note", [1])
    env, sig = msgpack.unpackb(wire)
    reencoded = (bytes([0x92, 0xC5]) + len(env).to_bytes(2, "big") + env
                 + msgpack.packb(sig, use_bin_type=True))
    assert msgpack.unpackb(reencoded) == [env, sig] and reencoded != wire
    with pytest.raises(CheatDetected) as info:
        parse(reencoded, keys, b"g" * 32, via=3)
    assert (info.value.culprit, info.value.rule) == (3, "malformed")
    log = TranscriptLog(b"g" * 32, keys)
    log.add(wire, via=1)
    with pytest.raises(CheatDetected) as info:
        log.add(reencoded, via=2)
    assert (info.value.culprit, info.value.rule) == (2, "malformed"), info.value


def test_ack_heads_name_the_acker_in_the_minority_not_the_sender() -> None:
    """An ack's heads are only the acker's word: a peer that lies about the id of another
    sender's envelope is named, never the sender (who could otherwise be framed)."""
    ss, log = _setup(4)
    log.add(ss[3].sign("a", [0]))
    acks = [log.add(ss[i].sign("ack", ack_body(1, b"H", log))) for i in range(3)]
    liar_heads = [[s, q, b"\x00" * 32 if s == 3 else e] for s, q, e in log.heads()]
    liar = log.add(ss[3].sign("ack", [1, b"H", liar_heads]))
    assert compare_acks([*acks, liar]) == [(3, "head-mismatch")]


def test_a_signature_is_checked_once_and_a_forgery_after_it_still_fails(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The end audit parses what the table parsed live: a signature that held is taken
    from memory, while a changed signature or message over the same key is checked and
    refused, however often the genuine one was seen."""
    ss, _ = _setup()
    keys = [s.public_key for s in ss]
    w = ss[1].sign("action", [1])
    calls = {"n": 0}
    real = tr._public_key

    def counting(raw: bytes) -> Ed25519PublicKey:
        calls["n"] += 1
        return real(raw)

    monkeypatch.setattr(tr, "_public_key", counting)
    assert parse(w, keys, b"gid").body == [1]
    assert calls["n"] == 1 and remembered.stats()["entries"] == 1
    for _ in range(3):
        assert parse(w, keys, b"gid").body == [1]
    assert calls["n"] == 1  # taken from memory: verified once
    env, sig = msgpack.unpackb(w)
    forged = msgpack.packb([env, bytes([sig[0] ^ 1]) + sig[1:]])
    other = ss[1].sign("action", [2])
    o_env, _o_sig = msgpack.unpackb(other)
    spliced = msgpack.packb([o_env, sig])  # the genuine signature on another message
    for bad in (forged, spliced):
        with pytest.raises(CheatDetected) as e:
            parse(bad, keys, b"gid", via=2)
        assert (e.value.culprit, e.value.rule) == (2, "bad-signature")
    # the same message and signature under another seat's key is another check
    with pytest.raises(CheatDetected):
        parse(msgpack.packb([env, sig]), [keys[0], keys[0], keys[2]], b"gid", via=0)

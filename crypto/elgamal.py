"""ElGamal tokens over the joint key.

A token is ``(A, B) = (r·G, M_label + r·Y)`` where ``Y = Σ y_j`` is the joint public key and
``M_label`` is a hash-to-group of the (opaque, game-chosen) label string. ElGamal rather than
SRA because it is randomised (the 15 tokens of a label are indistinguishable and a token can
be re-randomised to break linkage) and homomorphic (plaintext-equality tests for withdraw).

Decryption needs one share ``x_j·A`` per party; shares travel with DLEQ proofs (dleq.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from . import group as g
from .errors import MalformedInput

Ciphertext = tuple[bytes, bytes]


def label_point(label: str) -> g.Point:
    """Public plaintext point of a label; fixed before any key exists (Coppersmith)."""
    if not isinstance(label, str) or not label:
        raise MalformedInput("a label must be a non-empty string")
    p = _LABELS.get(label)
    if p is None:
        p = g.hash_to_point("label", [label])
        if len(_LABELS) < 4096:  # labels are a small fixed set; bound the cache anyway
            _LABELS[label] = p
    return p


_LABELS: dict[str, g.Point] = {}


def public_token(label: str, joint_key: g.Point) -> Ciphertext:
    """Encryption with r = 1 that every peer can recompute (the initial deck)."""
    return (g.G, g.add(label_point(label), joint_key))


def reencrypt(ct: Ciphertext, s: g.Scalar, joint_key: g.Point) -> Ciphertext:
    """``(A + s·G, B + s·Y)``: same plaintext, unlinkable ciphertext."""
    return (g.add(ct[0], g.base_mul(s)), g.add(ct[1], g.mul(s, joint_key)))


def decode_ciphertext(obj: object, what: str = "ciphertext") -> Ciphertext:
    """Validate a received ``[A, B]`` pair (both points checked)."""
    if not isinstance(obj, list | tuple) or len(obj) != 2:
        raise MalformedInput(f"{what} must be a pair [A, B]")
    return (g.decode_point(obj[0], f"{what}.A"), g.decode_point(obj[1], f"{what}.B"))


def decode_deck(obj: object, what: str = "deck", length: int | None = None) -> list[Ciphertext]:
    """Validate a received list of ciphertexts (optionally of a fixed length)."""
    if not isinstance(obj, list):
        raise MalformedInput(f"{what} must be a list")
    if length is not None and len(obj) != length:
        raise MalformedInput(f"{what} has {len(obj)} entries, expected {length}")
    return [decode_ciphertext(c, f"{what}[{i}]") for i, c in enumerate(obj)]


def parse_deck(obj: object, what: str = "deck", length: int | None = None) -> list[Ciphertext]:
    """Shape-only parse of a received deck (32-byte strings, *not* validated as points).

    Only for decks whose every point is about to be validated anyway (e.g. by the
    multiplications of a TW shuffle-proof verification).
    """
    if not isinstance(obj, list):
        raise MalformedInput(f"{what} must be a list")
    if length is not None and len(obj) != length:
        raise MalformedInput(f"{what} has {len(obj)} entries, expected {length}")
    out: list[Ciphertext] = []
    for i, c in enumerate(obj):
        if not (isinstance(c, list | tuple) and len(c) == 2 and isinstance(c[0], bytes)
                and isinstance(c[1], bytes) and len(c[0]) == g.POINT_BYTES
                and len(c[1]) == g.POINT_BYTES):
            raise MalformedInput(f"{what}[{i}] must be a pair of 32-byte points")
        out.append((c[0], c[1]))
    return out


def encode_deck(deck: Sequence[Ciphertext]) -> list[list[bytes]]:
    """msgpack-safe form of a deck."""
    return [[a, b] for a, b in deck]


def combine(ct: Ciphertext, shares: Sequence[g.Point]) -> g.Point:
    """Plaintext point ``B − Σ shares`` (may be the identity, e.g. in a PET)."""
    return g.sub(ct[1], g.sum_points(shares))


def decrypt_with_key(ct: Ciphertext, x: g.Scalar) -> g.Point:
    """Decrypt with the full secret ``x = Σ x_j`` (auditor only, after the game)."""
    return g.sub(ct[1], g.mul(x, ct[0], "ciphertext.A"))

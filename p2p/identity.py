"""Per-game Ed25519 identities.

Each peer generates a *fresh* identity for every game (keys are never reused across games,
so a transcript cannot be linked to a player's other games and a leaked key only affects one
table).  The private key is exportable because phase 2 persists it: a crashed peer restarts
with the same key and the table lets it back in.
"""

from __future__ import annotations

import hashlib

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
)

from crypto.transcript import is_signing_key

KEY_LEN = 32
SIG_LEN = 64


def fingerprint(public_key: bytes) -> str:
    """A 128-bit hex fingerprint of a public key (advertised in TXT, shown in logs)."""
    return hashlib.sha256(b"silkroad/p2p/fingerprint/v1\0" + public_key).hexdigest()[:32]


def signature_ok(public_key: bytes, signature: bytes, data: bytes) -> bool:
    """True iff ``signature`` is a valid Ed25519 signature of ``data`` by ``public_key``
    (a predicate, named ``*_ok`` like every check that answers rather than raises).

    Never raises on garbage input: a malformed key or signature simply does not verify.
    """
    if len(public_key) != KEY_LEN or len(signature) != SIG_LEN or not is_signing_key(public_key):
        return False  # a small-order key would "verify" forged signatures (is_signing_key)
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, data)
    except (InvalidSignature, ValueError):
        return False
    return True


class Identity:
    """An Ed25519 signing key plus its public bytes and fingerprint."""

    __slots__ = ("_private", "fingerprint", "public")

    def __init__(self, private: Ed25519PrivateKey) -> None:
        self._private = private
        self.public: bytes = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.fingerprint: str = fingerprint(self.public)

    @classmethod
    def generate(cls) -> Identity:
        """A fresh random identity (one per game)."""
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_bytes(cls, seed: bytes) -> Identity:
        """Restore an identity from :meth:`to_bytes` (32-byte seed)."""
        return cls(Ed25519PrivateKey.from_private_bytes(seed))

    def to_bytes(self) -> bytes:
        """The 32-byte private seed, for the peer's own persistence only."""
        return self._private.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())

    def sign(self, data: bytes) -> bytes:
        """Ed25519 signature of ``data``."""
        return self._private.sign(data)

    def __repr__(self) -> str:
        return f"Identity({self.fingerprint[:8]})"

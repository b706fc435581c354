"""The table's join code checked by a PAKE (CPace on edwards25519), not by a MAC anyone can
test guesses against.

Why: join codes are short words read aloud.  With ``HMAC(code key, transcript)`` sent in
the clear, a LAN eavesdropper who recorded one honest join — or a fake table a joiner
connected to — could try every likely code offline.  CPace (Haase & Labrique; IETF
draft-irtf-cfrg-cpace) turns the code into a secret *generator* instead: each side sends
``Y = y·G_code`` for a fresh scalar ``y`` and derives ``Z = y·Y_other``.  Both get the same
``Z`` only if both used the same code; testing a guess against a recorded exchange needs a
Diffie–Hellman solution, so an attacker gets **one guess per connection** it makes, and a
bystander none.

Construction (all inside the handshake's signed transcript ``T``, which binds both nonces,
both identity keys and both ephemeral keys):

* ``G = hash_to_point("silkroad/p2p/cpace/v1", [K, T])`` with ``K`` the scrypt key of the
  code salted with the host's key (:func:`p2p.net.handshake.join_key`; it keeps guesses slow
  and per-table);
* shares ``Y_D = y_D·G`` (dialer, in M3) and ``Y_A = y_A·G`` (acceptor, encrypted); a share
  must be a valid prime-order point other than the identity;
* ``ISK = H(T ‖ Y_D ‖ Y_A ‖ Z)``; each side proves it with ``HMAC(ISK, role)`` (role tags
  stop reflection).  The acceptor answers with its share and its proof at once (safe: a
  proof under a guessed code is worthless without the discrete log), the dialer then sends
  its proof, and only then is it welcomed.
"""

from __future__ import annotations

import hashlib
import hmac

from crypto import group as g
from crypto.errors import InvalidPoint

from ..errors import HandshakeError

GENERATOR_TAG = "silkroad/p2p/cpace/v1"
ISK_TAG = "silkroad/p2p/cpace/isk/v1"
DIALER = b"dialer"
ACCEPTOR = b"acceptor"


class CodeExchange:
    """One side of the exchange: our share now, the session key once the other share is in."""

    def __init__(self, join_key: bytes, transcript: bytes) -> None:
        self._transcript = transcript
        self._g = g.hash_to_point(GENERATOR_TAG, [join_key, transcript])
        self._y = g.random_scalar()
        self.share = g.mul(self._y, self._g)

    def key(self, dialer_share: bytes, acceptor_share: bytes, remote: bytes) -> bytes:
        """``ISK`` from the other side's share ``remote`` (one of the two shares given)."""
        try:
            z = g.mul(self._y, g.decode_point(remote, "join-code share"), "join-code share")
        except InvalidPoint:
            raise HandshakeError("the join-code share is not a valid point") from None
        if z == g.IDENTITY or remote == g.IDENTITY:
            raise HandshakeError("the join-code share is the identity")
        return g.hash_fields(ISK_TAG, [self._transcript, dialer_share, acceptor_share, z])


def proof(isk: bytes, role: bytes) -> bytes:
    """Key confirmation: ``HMAC-SHA256(ISK, role)``."""
    return hmac.new(isk, role, hashlib.sha256).digest()


def proof_ok(isk: bytes, role: bytes, got: object) -> bool:
    return isinstance(got, bytes) and hmac.compare_digest(got, proof(isk, role))

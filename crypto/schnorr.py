"""Schnorr proof of knowledge of a secret key, bound to game id and seat.

Why: with a joint key ``Y = Σ y_j`` a party that speaks last could publish
``y' = a·G − Σ others`` and control ``Y`` alone ("rogue key"). Requiring a proof of knowledge
of the discrete log of each ``y_j`` — with the game id and seat in the challenge so a proof
cannot be copied from another game or seat — rules that out.
"""

from __future__ import annotations

from . import group as g
from . import remembered
from .errors import MalformedInput, ProofInvalid

TAG = "schnorr-key"


def prove_key(x: g.Scalar, y: g.Point, game_id: bytes, party: int) -> list[bytes]:
    """Non-interactive proof ``[c, z]`` that the prover knows ``x`` with ``y = x·G``."""
    k = g.random_scalar()
    t = g.base_mul(k)
    c = g.hash_to_scalar(TAG, [game_id, party, g.G, y, t])
    z = (k + c * x) % g.L
    if z == 0:  # pragma: no cover - probability 2^-252
        return prove_key(x, y, game_id, party)
    return [g.encode_scalar(c), g.encode_scalar(z)]


@remembered.remembered
def verify_key(y: g.Point, proof: object, game_id: bytes, party: int) -> None:
    """Check a key proof: return if it holds, raise :class:`ProofInvalid` if not (the
    convention of every ``verify``); ``y`` must already be validated; a malformed proof
    raises :class:`MalformedInput`."""
    if not isinstance(proof, list) or len(proof) != 2:
        raise MalformedInput("key proof must be [c, z]")
    c = g.decode_scalar(proof[0], "key proof c")
    z = g.decode_scalar(proof[1], "key proof z")
    t = g.sub(g.base_mul(z), g.mul(c, y, "public key"))
    if t == g.IDENTITY or g.hash_to_scalar(TAG, [game_id, party, g.G, y, t]) != c:
        raise ProofInvalid("Schnorr proof of key knowledge does not verify")

"""Chaum–Pedersen proof of discrete-log equality.

Used for every decryption share (``log_G y_j = log_A D``: the share really is ``x_j·A``) and
for every PET blinding (``log_A A' = log_Q Q'``: both halves blinded by the same factor).
The Fiat–Shamir challenge covers a caller-supplied context (game id, op, party, purpose) and
the whole statement, so proofs cannot be replayed elsewhere (Frozen Heart).
"""

from __future__ import annotations

from collections.abc import Sequence

from . import group as g
from . import parallel, remembered
from .errors import MalformedInput, ProofInvalid

TAG = "dleq"


def prove(
    w: g.Scalar,
    base1: g.Point,
    pub1: g.Point,
    base2: g.Point,
    pub2: g.Point,
    context: Sequence[object],
) -> list[bytes]:
    """Proof ``[c, z]`` that ``pub1 = w·base1`` and ``pub2 = w·base2``."""
    k = g.random_scalar()
    t1 = g.base_mul(k) if base1 == g.G else g.mul(k, base1)
    t2 = g.mul(k, base2)
    c = g.hash_to_scalar(TAG, [list(context), base1, pub1, base2, pub2, t1, t2])
    z = (k + c * w) % g.L
    if z == 0:  # pragma: no cover - probability 2^-252
        return prove(w, base1, pub1, base2, pub2, context)
    return [g.encode_scalar(c), g.encode_scalar(z)]


@remembered.remembered
def verify(
    base1: g.Point,
    pub1: g.Point,
    base2: g.Point,
    pub2: g.Point,
    proof: object,
    context: Sequence[object],
) -> None:
    """Check a proof: return if it holds, raise :class:`ProofInvalid` if not.

    The points must be valid (``pub2`` is re-validated by the multiplication); a malformed
    proof raises :class:`MalformedInput`."""
    if not isinstance(proof, list) or len(proof) != 2:
        raise MalformedInput("DLEQ proof must be [c, z]")
    c = g.decode_scalar(proof[0], "DLEQ c")
    z = g.decode_scalar(proof[1], "DLEQ z")
    zb1 = g.base_mul(z) if base1 == g.G else g.mul(z, base1)
    t1 = g.sub(zb1, g.mul(c, pub1, "DLEQ pub1"))
    t2 = g.sub(g.mul(z, base2, "DLEQ base2"), g.mul(c, pub2, "DLEQ pub2"))
    if g.hash_to_scalar(TAG, [list(context), base1, pub1, base2, pub2, t1, t2]) != c:
        raise ProofInvalid("DLEQ proof does not verify")


@remembered.remembered
def verify_share_known(x: g.Scalar, pub1: g.Point, base2: g.Point, pub2: g.Point,
                       proof: object, context: Sequence[object]) -> bool:
    """:func:`verify` of a decryption-share proof (``base1 = G``) by a verifier that knows the
    witness ``x`` with ``x·G = pub1`` (the auditor, once every key share is published).

    Exactly the same verdict as ``verify(G, pub1, base2, pub2, proof, context)`` for every
    input, for one multiplication less: when ``pub2 = x·base2`` the commitments the verifier
    recomputes are ``t1 = z·G − c·pub1 = (z − c·x)·G`` and ``t2 = z·base2 − c·pub2 =
    (z − c·x)·base2``, the very points :func:`verify` computes; otherwise (a wrong share)
    the full verification runs and fails as it would have. The caller guarantees
    ``x·G = pub1``. Returns whether ``pub2 = x·base2`` was established (the fast path)."""
    if not isinstance(proof, list) or len(proof) != 2:
        raise MalformedInput("DLEQ proof must be [c, z]")
    c = g.decode_scalar(proof[0], "DLEQ c")
    z = g.decode_scalar(proof[1], "DLEQ z")
    k = (z - c * x) % g.L
    if k and remembered.lookup(verify, (g.G, pub1, base2, pub2, proof, context))[0]:
        # this very proof passed :func:`verify` (the table checked it live): the fast
        # path's commitments are the ones that hashed to ``c`` there, so only the share
        # itself is left to establish
        if g.mul(x, base2, "DLEQ base2") == pub2:
            return True
    if k == 0 or g.mul(x, base2, "DLEQ base2") != pub2:
        verify(g.G, pub1, base2, pub2, proof, context)
        return False
    t1, t2 = g.base_mul(k), g.mul(k, base2, "DLEQ base2")
    if g.hash_to_scalar(TAG, [list(context), g.G, pub1, base2, pub2, t1, t2]) != c:
        raise ProofInvalid("DLEQ proof does not verify")
    return True


BATCH_TAG = "dleq-batch"


def prove_batch(w: g.Scalar, pub: g.Point, bases: Sequence[g.Point], pubs: Sequence[g.Point],
                context: Sequence[object]) -> list[bytes]:
    """One proof ``[c, z]`` that ``pub = w·G`` and ``pubs[j] = w·bases[j]`` for every j.

    A single Σ-protocol with one nonce and one Fiat–Shamir challenge over *all* statements
    (special soundness: two accepting transcripts with different challenges yield ``w``,
    which satisfies every equation). Verifying costs 2 + 2n multiplications instead of 3n.
    """
    k = g.random_scalar()
    t0 = g.base_mul(k)
    ts = [g.mul(k, b) for b in bases]
    c = g.hash_to_scalar(BATCH_TAG, [list(context), pub, b"".join(bases), b"".join(pubs),
                                     t0, b"".join(ts)])
    z = (k + c * w) % g.L
    if z == 0:  # pragma: no cover - probability 2^-252
        return prove_batch(w, pub, bases, pubs, context)
    return [g.encode_scalar(c), g.encode_scalar(z)]


@remembered.remembered
def verify_batch(pub: g.Point, bases: Sequence[g.Point], pubs: Sequence[g.Point],
                 proof: object, context: Sequence[object], known_x: g.Scalar | None = None
                 ) -> None:
    """Check a :func:`prove_batch` proof: return if it holds, raise :class:`ProofInvalid` if
    not. ``pubs`` need not be pre-validated: each is multiplied, and libsodium rejects
    invalid points (:class:`~crypto.errors.InvalidPoint`).

    ``known_x``: a verifier that knows the witness and has established ``pub = x·G`` and
    ``pubs[j] = x·bases[j]`` for every j (the auditor, after the per-share checks of
    :func:`verify_share_known`) recomputes every commitment as ``(z − c·x)·base``: the same
    points, so the same verdict, for half the multiplications."""
    if not isinstance(proof, list) or len(proof) != 2:
        raise MalformedInput("batch DLEQ proof must be [c, z]")
    if len(bases) != len(pubs):
        raise MalformedInput("batch DLEQ: as many bases as public points")
    c = g.decode_scalar(proof[0], "DLEQ c")
    z = g.decode_scalar(proof[1], "DLEQ z")
    k = 0 if known_x is None else (z - c * known_x) % g.L
    if k and remembered.lookup(verify_batch, (pub, bases, pubs, proof, context))[0]:
        return  # passed the full check before (live): the same verdict, see above
    if k:
        t0 = g.base_mul(k)
        ts = parallel.map_ordered(g.mul, [(k, b, "DLEQ base") for b in bases])
        if g.hash_to_scalar(BATCH_TAG, [list(context), pub, b"".join(bases), b"".join(pubs),
                                        t0, b"".join(ts)]) != c:
            raise ProofInvalid("batched DLEQ proof does not verify")
        return
    t0 = g.sub(g.base_mul(z), g.mul(c, pub, "DLEQ pub"))
    # 2 multiplications per statement, independent: spread over the active workers (if any)
    ts = parallel.map_ordered(_batch_term, [(z, c, b, d) for b, d in
                                            zip(bases, pubs, strict=True)])
    if g.hash_to_scalar(BATCH_TAG, [list(context), pub, b"".join(bases), b"".join(pubs),
                                    t0, b"".join(ts)]) != c:
        raise ProofInvalid("batched DLEQ proof does not verify")


def _batch_term(z: g.Scalar, c: g.Scalar, base: g.Point, share: g.Point) -> g.Point:
    """``z·base − c·share``: one statement's commitment in :func:`verify_batch`."""
    return g.sub(g.mul(z, base, "DLEQ base"), g.mul(c, share, "DLEQ share"))

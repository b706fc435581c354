"""Re-encryption shuffle, its cut-and-choose proof, and audit-mode witnesses.

A shuffle maps an input deck to ``out[j] = reencrypt(in[perm[j]], s_j)``.

*Verified mode* proves it with a Sako–Kilian cut-and-choose argument made non-interactive by
Fiat–Shamir: the prover builds λ shadow shuffles of the input and commits to each by a hash of
its bytes; challenge bits are a hash of the **whole statement** (context, joint key, input
deck, output deck, all shadow hashes). For bit 0 it opens input→shadow (a 32-byte seed from
which the shadow permutation and randomness are derived), for bit 1 shadow→output (a
permutation and randomness differences). A prover whose output is not a permutation of
re-encryptions of its input fails each round with probability 1/2, so it survives with
probability 2^-λ per attempt. Committing to shadows by hash (rather than sending them) is
sound because the verifier can rebuild every opened shadow from the input *or* the output,
both already validated; it shrinks the proof about 3×.

*Proof kinds*: verified mode defaults to the O(n) Terelius–Wikström proof (twproof.py,
``PROOF_TW``); the cut-and-choose proof above (``PROOF_CC``, λ rounds) stays available. The
kind is fixed by the op arguments (never chosen by the prover), see :func:`parse_mode`.

*λ*: the non-interactive cut-and-choose proof is only as strong as its Fiat–Shamir
challenge is hard to grind. A cheating prover re-draws its shadow commitments until the
λ challenge bits fall where its forgery survives: 2^λ hashes per forged shuffle offline
(a substitution was ground through at λ = 16 in 0.45 s of Python; λ = 40 is about five
core-days of native SHA-512). So a cut-and-choose proof is made, verified or asked for only
with ``λ ≥ MIN_LAMBDA`` (128: grinding is then as hard as breaking the group), checked by
:func:`check_lambda`; tests lower the floor with :func:`lambda_floor_for_tests`, which
refuses to run outside pytest. The TW proof does not use λ at all.

*Audit mode* sends no proof; the shuffler keeps the witness (perm, scalars) and publishes it
with its secrets at the end of the game, where :func:`check_witness` verifies it.
"""

from __future__ import annotations

import hashlib
import secrets
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from . import group as g
from . import remembered, twproof
from .elgamal import Ciphertext, reencrypt
from .errors import MalformedInput, ProofInvalid

MIN_LAMBDA = 128
"""Fewest cut-and-choose rounds a proof may have outside tests (see the module docstring)."""
MAX_LAMBDA = 256
"""Most rounds: a verifier's work is λ re-encrypted decks, so a larger λ would only let a
file or a peer make us compute for nothing."""
DEFAULT_LAMBDA = MIN_LAMBDA
TAG = "shuffle"
#: Terelius–Wikström proof (default verified mode).
PROOF_TW = "tw"
#: Sako–Kilian cut-and-choose proof with λ rounds.
PROOF_CC = "cut-and-choose"
PROOF_KINDS = (PROOF_TW, PROOF_CC)
#: Audit mode whose *last* shuffle is TW-proven: see :func:`parse_mode`.
AUDIT_LAST_PROVEN = "audit-last-tw"


class LambdaRefused(MalformedInput):
    """A cut-and-choose parameter λ that is not an integer in ``[floor, MAX_LAMBDA]``."""


_floor = MIN_LAMBDA


def lambda_floor() -> int:
    """The λ below which cut-and-choose proofs are refused: :data:`MIN_LAMBDA`, unless a test
    lowered it with :func:`lambda_floor_for_tests`."""
    return _floor


@contextmanager
def lambda_floor_for_tests(floor: int = 1) -> Iterator[None]:
    """Tests only: accept cut-and-choose proofs down to ``floor`` rounds while the block runs
    (small λ keeps the proofs fast; the grinding attack is irrelevant in a test).

    Refuses to run unless pytest is loaded, so no ``silkroad`` command and no production
    code path can weaken the proofs it makes or accepts."""
    global _floor
    if "pytest" not in sys.modules:
        raise RuntimeError("lambda_floor_for_tests is for the test suite only")
    if isinstance(floor, bool) or not isinstance(floor, int) or floor < 1:
        raise ValueError("the test floor must be a positive integer")
    saved, _floor = _floor, floor
    try:
        yield
    finally:
        _floor = saved


def check_lambda_range(lam: object) -> int:
    """λ as a session parameter: an integer in ``[1, MAX_LAMBDA]`` (its strength is checked by
    :func:`check_lambda` where a cut-and-choose proof is used). Returns it."""
    if isinstance(lam, bool) or not isinstance(lam, int) or not 1 <= lam <= MAX_LAMBDA:
        raise LambdaRefused(f"lambda must be an integer in [1, {MAX_LAMBDA}], got {lam!r:.40}")
    return lam


def check_lambda(lam: object) -> None:
    """Refuse a λ too weak (or too large) for cut-and-choose proofs: raises
    :class:`LambdaRefused` unless ``lambda_floor() <= lam <= MAX_LAMBDA``.

    Called wherever a cut-and-choose proof is made, verified or requested by an op, and by
    whoever reads a game's λ from a file or a peer (p2p's export reader)."""
    check_lambda_range(lam)
    assert isinstance(lam, int)
    if lam < _floor:
        raise LambdaRefused(
            f"lambda {lam} is below {_floor}: a cut-and-choose proof with so few rounds can "
            "be forged by grinding its Fiat-Shamir challenge")


def parse_mode(v: object) -> str | None:
    """Op-argument shuffle mode → proof kind (``None`` = audit mode, no proof).

    ``False`` audit mode; ``True`` or ``"tw"`` Terelius–Wikström; ``"cut-and-choose"``;
    ``"audit-last-tw"`` audit mode except that the chain's last shuffle carries a TW proof
    (see :meth:`crypto.protocols.chain.ShuffleChain.step_proof`): plain audit mode lets the
    last shuffler output fresh encryptions of a layout it chose, and so know every hand,
    unseen until the audit; with its shuffle proven, privacy holds against every coalition
    that does not hold both of the last two seats, for one TW proof per chain.
    """
    if v is False or v == AUDIT_LAST_PROVEN:
        return None
    if v is True or v == PROOF_TW:
        return PROOF_TW
    if v == PROOF_CC:
        return PROOF_CC
    raise MalformedInput(f"shuffle mode must be False, True, {PROOF_TW!r}, {PROOF_CC!r} or "
                         f"{AUDIT_LAST_PROVEN!r}")


def mode_arg(verified: bool, proof: str = PROOF_TW, *, last_proven: bool = False
             ) -> bool | str:
    """Op argument for ``verified``/``proof`` (``True`` keeps meaning the default TW);
    ``last_proven`` asks audit mode to prove the last shuffle (:data:`AUDIT_LAST_PROVEN`)."""
    if proof not in PROOF_KINDS:
        raise MalformedInput(f"unknown shuffle proof kind {proof!r}")
    if not verified:
        return AUDIT_LAST_PROVEN if last_proven else False
    return True if proof == PROOF_TW else proof


@dataclass(frozen=True)
class Witness:
    """Secret of one shuffle: ``out[j] = reencrypt(in[perm[j]], scalars[j])``."""

    perm: tuple[int, ...]
    scalars: tuple[int, ...]

    def encode(self) -> list[object]:
        """msgpack-safe form ``[perm, scalars]``."""
        return [list(self.perm), [g.encode_scalar(s) for s in self.scalars]]

    @staticmethod
    def decode(obj: object, n: int) -> Witness:
        """Parse a published witness for a deck of ``n`` tokens (no permutation check)."""
        if not isinstance(obj, list) or len(obj) != 2:
            raise MalformedInput("witness must be [perm, scalars]")
        perm, scal = obj
        if not isinstance(perm, list) or not isinstance(scal, list):
            raise MalformedInput("witness fields must be lists")
        if len(perm) != n or len(scal) != n:
            raise MalformedInput(f"witness must have {n} entries")
        if not all(isinstance(i, int) and not isinstance(i, bool) for i in perm):
            raise MalformedInput("witness permutation must hold integers")
        return Witness(tuple(perm), tuple(g.decode_scalar(s, "witness scalar") for s in scal))


class _Stream:
    """Deterministic byte stream SHA-512(seed ‖ counter) used to expand shadow seeds."""

    def __init__(self, seed: bytes) -> None:
        self._seed = seed
        self._ctr = 0
        self._buf = b""

    def take(self, n: int) -> bytes:
        while len(self._buf) < n:
            self._buf += hashlib.sha512(
                b"silkroad/shadow" + self._seed + self._ctr.to_bytes(8, "big")
            ).digest()
            self._ctr += 1
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def below(self, bound: int) -> int:
        """Uniform integer in ``[0, bound)`` by rejection sampling."""
        nbytes = (bound.bit_length() + 7) // 8 + 1
        limit = (256**nbytes // bound) * bound
        while True:
            v = int.from_bytes(self.take(nbytes), "big")
            if v < limit:
                return v % bound

    def scalar(self) -> int:
        while True:
            s = int.from_bytes(self.take(64), "little") % g.L
            if s:
                return s


def random_permutation(n: int) -> list[int]:
    """Fisher–Yates over ``secrets.randbelow`` (uniform, CSPRNG)."""
    p = list(range(n))
    for i in range(n - 1, 0, -1):
        j = secrets.randbelow(i + 1)
        p[i], p[j] = p[j], p[i]
    return p


def _seeded_permutation(st: _Stream, n: int) -> list[int]:
    p = list(range(n))
    for i in range(n - 1, 0, -1):
        j = st.below(i + 1)
        p[i], p[j] = p[j], p[i]
    return p


def _expand_seed(seed: bytes, n: int) -> tuple[list[int], list[int]]:
    st = _Stream(seed)
    perm = _seeded_permutation(st, n)
    return perm, [st.scalar() for _ in range(n)]


def apply(deck: Sequence[Ciphertext], w: Witness, joint_key: g.Point) -> list[Ciphertext]:
    """Output of the shuffle described by witness ``w`` (no checks on ``w``)."""
    return [reencrypt(deck[i], s, joint_key) for i, s in zip(w.perm, w.scalars, strict=True)]


def shuffle(deck: Sequence[Ciphertext], joint_key: g.Point) -> tuple[list[Ciphertext], Witness]:
    """Fresh uniformly random shuffle of ``deck``."""
    w = Witness(
        tuple(random_permutation(len(deck))), tuple(g.random_scalar() for _ in deck)
    )
    return apply(deck, w, joint_key), w


def is_permutation(perm: Sequence[int], n: int) -> bool:
    """True iff ``perm`` is a permutation of ``range(n)``."""
    return len(perm) == n and sorted(perm) == list(range(n))


def _deck_hash(deck: Sequence[Ciphertext]) -> bytes:
    h = hashlib.sha256(b"silkroad/shadow-deck")
    for a, b in deck:
        h.update(a)
        h.update(b)
    return h.digest()


def _bits(context: Sequence[object], joint_key: g.Point, inp: Sequence[Ciphertext],
          out: Sequence[Ciphertext], hashes: Sequence[bytes], lam: int) -> list[int]:
    stmt = [list(context), joint_key, lam, [list(c) for c in inp], [list(c) for c in out],
            list(hashes)]
    bits: list[int] = []
    ctr = 0
    while len(bits) < lam:
        d = g.hash_fields(TAG + "-challenge", [*stmt, ctr])
        bits.extend((byte >> k) & 1 for byte in d for k in range(8))
        ctr += 1
    return bits[:lam]


def prove(
    inp: Sequence[Ciphertext],
    out: Sequence[Ciphertext],
    w: Witness,
    joint_key: g.Point,
    context: Sequence[object],
    lam: int = DEFAULT_LAMBDA,
) -> list[object]:
    """Cut-and-choose proof ``[shadow_hashes, openings]`` for ``out = apply(inp, w)``.

    Works on any ``w`` (a cheater's fake witness yields a proof that fails verification).
    Refuses a weak λ (:func:`check_lambda`).
    """
    check_lambda(lam)
    n = len(inp)
    seeds: list[bytes] = []
    hashes: list[bytes] = []
    shadows: list[tuple[list[int], list[int]]] = []
    for _ in range(lam):
        seed = secrets.token_bytes(32)
        phi, u = _expand_seed(seed, n)
        shadow = [reencrypt(inp[phi[j]], u[j], joint_key) for j in range(n)]
        seeds.append(seed)
        hashes.append(_deck_hash(shadow))
        shadows.append((phi, u))
    bits = _bits(context, joint_key, inp, out, hashes, lam)
    openings: list[object] = []
    for t, bit in enumerate(bits):
        if bit == 0:
            openings.append([seeds[t]])
            continue
        phi, u = shadows[t]
        inv = {v: i for i, v in enumerate(phi)}
        sigma = [inv.get(w.perm[j], 0) for j in range(n)]
        diffs = []
        for j in range(n):
            d = (w.scalars[j] - u[sigma[j]]) % g.L
            diffs.append(g.encode_scalar(d) if d else bytes(32))
        openings.append([sigma, diffs])
    return [hashes, openings]


def verify(
    inp: Sequence[Ciphertext],
    out: Sequence[Ciphertext],
    proof: object,
    joint_key: g.Point,
    context: Sequence[object],
    lam: int = DEFAULT_LAMBDA,
) -> None:
    """Check a proof against validated decks: return if valid, else raise
    :class:`ProofInvalid` with the reason. A weak λ is refused (:class:`LambdaRefused`):
    no number of rounds below the floor makes a proof worth accepting."""
    check_lambda(lam)  # the floor is this process's setting: checked on every call
    _verify_rounds(inp, out, proof, joint_key, context, lam)


@remembered.remembered
def _verify_rounds(inp: Sequence[Ciphertext], out: Sequence[Ciphertext], proof: object,
                   joint_key: g.Point, context: Sequence[object], lam: int) -> None:
    """:func:`verify` once λ is accepted: a pure function of its arguments."""
    n = len(inp)
    if len(out) != n:
        raise ProofInvalid(f"output has {len(out)} tokens, input has {n}")
    if not isinstance(proof, list) or len(proof) != 2:
        raise ProofInvalid("proof must be [shadow_hashes, openings]")
    hashes, openings = proof
    if not isinstance(hashes, list) or not isinstance(openings, list):
        raise ProofInvalid("proof fields must be lists")
    if len(hashes) != lam or len(openings) != lam:
        raise ProofInvalid(f"proof must have {lam} rounds")
    if not all(isinstance(h, bytes) and len(h) == 32 for h in hashes):
        raise ProofInvalid("shadow hashes must be 32 bytes")
    bits = _bits(context, joint_key, inp, out, hashes, lam)
    neg = g.L
    for t, bit in enumerate(bits):
        op = openings[t]
        if bit == 0:
            if not (isinstance(op, list) and len(op) == 1 and isinstance(op[0], bytes)
                    and len(op[0]) == 32):
                raise ProofInvalid(f"round {t}: bad input-side opening")
            phi, u = _expand_seed(op[0], n)
            shadow = [reencrypt(inp[phi[j]], u[j], joint_key) for j in range(n)]
        else:
            if not (isinstance(op, list) and len(op) == 2 and isinstance(op[0], list)
                    and isinstance(op[1], list) and len(op[1]) == n):
                raise ProofInvalid(f"round {t}: bad output-side opening")
            sigma = op[0]
            if not all(isinstance(i, int) and not isinstance(i, bool) for i in sigma) or \
                    not is_permutation(sigma, n):
                raise ProofInvalid(f"round {t}: output is not a permutation of the shadow")
            slots: list[Ciphertext | None] = [None] * n
            for j in range(n):
                try:
                    d = g.decode_scalar(op[1][j], "difference")
                except MalformedInput as exc:
                    raise ProofInvalid(f"round {t}: bad randomness difference") from exc
                slots[sigma[j]] = reencrypt(out[j], neg - d, joint_key)
            shadow = [c for c in slots if c is not None]
        if _deck_hash(shadow) != hashes[t]:
            raise ProofInvalid(f"round {t}: opened shadow does not match its commitment")


def prove_kind(kind: str, inp: Sequence[Ciphertext], out: Sequence[Ciphertext], w: Witness,
               joint_key: g.Point, context: Sequence[object], lam: int = DEFAULT_LAMBDA
               ) -> list[object]:
    """Proof of ``kind`` (``PROOF_TW`` or ``PROOF_CC``) for ``out = apply(inp, w)``."""
    if kind == PROOF_TW:
        return twproof.prove(inp, out, w.perm, w.scalars, joint_key, context)
    return prove(inp, out, w, joint_key, context, lam)


def verify_kind(kind: str, inp: Sequence[Ciphertext], out: Sequence[Ciphertext], proof: object,
                joint_key: g.Point, context: Sequence[object], lam: int = DEFAULT_LAMBDA
                ) -> None:
    """Check a proof of ``kind``: return if valid, else raise :class:`ProofInvalid`.

    ``inp`` must be validated. For TW, ``out`` need only be well-formed: the verification
    validates every output point (an invalid one raises :class:`~crypto.errors.InvalidPoint`);
    for cut-and-choose ``out`` must already be validated.
    """
    if kind == PROOF_TW:
        twproof.verify(inp, out, proof, joint_key, context)
    else:
        verify(inp, out, proof, joint_key, context, lam)


@remembered.remembered
def check_witness(
    inp: Sequence[Ciphertext], out: Sequence[Ciphertext], w: Witness, joint_key: g.Point
) -> None:
    """Audit-mode check of a published witness: return if it explains ``out``, else raise
    :class:`ProofInvalid` saying which token it fails to explain."""
    if not is_permutation(w.perm, len(inp)):
        raise ProofInvalid(
            "witness permutation is not a permutation (token duplicated or dropped)")
    if len(out) != len(inp):
        raise ProofInvalid("output length differs from input length")
    for j, ct in enumerate(apply(inp, w, joint_key)):
        if ct != out[j]:
            raise ProofInvalid(
                f"output token {j} is not a re-encryption of input token {w.perm[j]}")

"""Terelius–Wikström proof of a re-encryption shuffle (O(n), non-interactive).

Follows GenShuffleProof / CheckShuffleProof of Haenni, Locher, Koenig, Dubuis, "Pseudo-code
algorithms for verifiable re-encryption mix-nets" (FC 2017 workshops), written additively
for ElGamal over the prime-order edwards25519 group (``A = r·G``, ``B = M + r·Y``).

Statement: ``out[i] = reencrypt(inp[ψ(i)], s_i)`` for a permutation ψ (``Witness.perm``) and
scalars ``s_i`` (``Witness.scalars``), under the joint key ``Y``.

Generators ``H`` and ``H_1 … H_N`` are hash-to-group outputs (libsodium ``from_uniform`` of
domain-separated SHA-512 digests) whose discrete logarithms nobody knows.

Prover (≈ 3N base + 4N variable-base multiplications):

1. permutation commitment ``C_{ψ(i)} = r_{ψ(i)}·G + H_i``;
2. challenges ``u_k = H(statement, k)`` where the statement is the context (game id, op
   index, op name, prover seat, purpose, round), ``Y``, ``N``, the input deck, the output deck
   and ``C``; ``u'_i = u_{ψ(i)}``;
3. commitment chain ``Ĉ_0 = H``, ``Ĉ_i = r̂_i·G + u'_i·Ĉ_{i−1}``;
4. a Σ-protocol (Fiat–Shamir, challenge ``c`` over the statement, ``Ĉ`` and the
   commitments ``t``) for knowledge of ``r̄ = Σ r_k``, ``r̂ = Σ r̂_i Π_{m>i} u'_m``,
   ``r̃ = Σ r_k u_k``, ``r' = Σ s_i u'_i``, ``r̂_i`` and ``u'_i`` such that::

       Σ C_k − Σ H_i            = r̄·G
       Ĉ_N − (Π u_k)·H          = r̂·G
       Σ u_k·C_k                = r̃·G + Σ u'_i·H_i
       Σ u'_i·out_i             = Σ u_k·inp_k + r'·(G, Y)
       Ĉ_i                      = r̂_i·G + u'_i·Ĉ_{i−1}

The proof is sent in challenge form ``[C, Ĉ, c, s1, s2, s3, s4, ŝ, s']``: the verifier
recomputes every ``t`` from the responses and checks that they hash to ``c``
(≈ N base + 8N variable-base multiplications). Every received point of the proof (and of the
output deck) is multiplied by a non-zero scalar during verification, and libsodium's
``scalarmult_ed25519_noclamp`` rejects non-canonical, off-curve, small-order and
non-subgroup points: an invalid point raises :class:`~crypto.errors.InvalidPoint`, which the
protocol layer attributes to the prover (rule ``invalid-point``). Every response scalar must
be canonical and non-zero; the prover retries (probability ≈ N·2^-252) instead of sending 0.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence

from nacl import bindings as _nb
from nacl import exceptions as _nexc

from . import group as g
from . import parallel, remembered
from .elgamal import Ciphertext
from .errors import InvalidPoint, MalformedInput, ProofInvalid

TAG = "shuffle-tw"
L = g.L

_GENS: list[g.Point] = []
_GENS_LOCK = threading.Lock()
_H0: g.Point = g.hash_to_point(TAG + "-generator", ["h"])


def generators(n: int) -> list[g.Point]:
    """``H_1 … H_n`` (cached; identical for every game, nobody knows their logs).

    Filled under a lock: a seat's table checks shuffles while its audit runs ahead in a
    thread (and a watcher audits in threads too); two threads extending the cache at once
    could both append the same index and shift every later generator for the life of
    the process, so that every honest shuffle proof after would fail."""
    if len(_GENS) < n:
        with _GENS_LOCK:
            while len(_GENS) < n:
                _GENS.append(g.hash_to_point(TAG + "-generator", ["h_i", len(_GENS)]))
    return _GENS[:n]


def _sb(s: int) -> bytes:
    return s.to_bytes(32, "little")


def _mul(s: int, p: bytes) -> bytes:
    """``s·P`` for ``0 < s < L``; libsodium validates ``P`` (subgroup, canonical, not small)."""
    try:
        return _nb.crypto_scalarmult_ed25519_noclamp(_sb(s), p)
    except (_nexc.RuntimeError, _nexc.TypeError, _nexc.ValueError) as exc:
        raise InvalidPoint("shuffle proof: point rejected by scalar multiplication") from exc


_base = _nb.crypto_scalarmult_ed25519_base_noclamp
_add = _nb.crypto_core_ed25519_add
_sub = _nb.crypto_core_ed25519_sub


def _sum(points: Sequence[bytes], start: bytes | None = None) -> bytes | None:
    acc = start
    for p in points:
        acc = p if acc is None else _add(acc, p)
    return acc


def _total(points: Sequence[bytes], start: bytes | None = None) -> bytes:
    """Sum of a non-empty list of points (the verifier only sums lists of length n >= 1)."""
    acc = _sum(points, start)
    if acc is None:
        raise MalformedInput("empty sum of points")
    return acc


def _scalar(s: int) -> int:
    """Reduce mod L; 0 is mapped to 1 (only for hash outputs, probability 2^-252)."""
    s %= L
    return s or 1


def _statement(context: Sequence[object], joint: g.Point, inp: Sequence[Ciphertext],
               out: Sequence[Ciphertext], comm: Sequence[bytes]) -> bytes:
    return g.hash_fields(TAG + "-statement", [
        list(context), joint, len(inp), _H0, b"".join(a + b for a, b in inp),
        b"".join(a + b for a, b in out), b"".join(comm)])


def _challenges(stmt: bytes, n: int) -> list[int]:
    pre = g.DOMAIN + TAG.encode() + b"-u" + stmt
    return [_scalar(int.from_bytes(hashlib.sha512(pre + k.to_bytes(4, "big")).digest(),
                                   "little")) for k in range(n)]


def _final_challenge(stmt: bytes, chain: Sequence[bytes], ts: Sequence[bytes],
                     that: Sequence[bytes]) -> int:
    return g.hash_to_scalar(TAG + "-challenge",
                            [stmt, b"".join(chain), b"".join(ts), b"".join(that)])


def _nz(*vals: int) -> bool:
    return all(v % L for v in vals)


def prove(inp: Sequence[Ciphertext], out: Sequence[Ciphertext], perm: Sequence[int],
          scalars: Sequence[int], joint: g.Point, context: Sequence[object]) -> list[object]:
    """Proof ``[C, Ĉ, c, s1, s2, s3, s4, ŝ, s']`` that ``out`` shuffles ``inp``.

    Works on any witness (a false one yields a proof that fails verification).
    """
    n = len(inp)
    if n == 0:
        return []
    rs = g.random_scalar
    hs = generators(n)
    while True:
        # 1. permutation commitment, indexed by input position k = ψ(i)
        r = [0] * n
        comm = [b""] * n
        for i, k in enumerate(perm):
            r[k] = rs()
            comm[k] = _add(_base(_sb(r[k])), hs[i])
        if any(not c for c in comm):  # a fake (non-permutation) witness leaves holes
            filler = [k for k in range(n) if not comm[k]]
            for k in filler:
                r[k] = rs()
                comm[k] = _base(_sb(r[k]))
        stmt = _statement(context, joint, inp, out, comm)
        u = _challenges(stmt, n)
        up = [u[k] for k in perm]
        # 2. commitment chain
        rhat = [rs() for _ in range(n)]
        chain: list[bytes] = []
        prev = _H0
        for i in range(n):
            prev = _add(_base(_sb(rhat[i])), _mul(up[i], prev))
            chain.append(prev)
        r_bar = sum(r) % L
        v = 1
        r_hat = 0
        for i in range(n - 1, -1, -1):
            r_hat = (r_hat + rhat[i] * v) % L
            v = v * up[i] % L
        r_tilde = sum(rk * uk for rk, uk in zip(r, u, strict=True)) % L
        r_prime = sum(s * x for s, x in zip(scalars, up, strict=True)) % L
        if not _nz(r_bar, r_hat):  # the verifier multiplies r̄·G and r̂·G: keep them ≠ 0
            continue
        # 3. Σ-protocol commitments
        w1, w2, w3, w4 = rs(), rs(), rs(), rs()
        what = [rs() for _ in range(n)]
        wp = [rs() for _ in range(n)]
        t1 = _base(_sb(w1))
        t2 = _base(_sb(w2))
        t3 = _total([_mul(x, h) for x, h in zip(wp, hs, strict=True)], _base(_sb(w3)))
        t4a = _sub(_total([_mul(x, ct[0]) for x, ct in zip(wp, out, strict=True)]),
                   _base(_sb(w4)))
        t4b = _sub(_total([_mul(x, ct[1]) for x, ct in zip(wp, out, strict=True)]),
                   _mul(w4, joint))
        that = []
        prev = _H0
        for i in range(n):
            that.append(_add(_base(_sb(what[i])), _mul(wp[i], prev)))
            prev = chain[i]
        c = _final_challenge(stmt, chain, [t1, t2, t3, t4a, t4b], that)
        s1 = (w1 + c * r_bar) % L
        s2 = (w2 + c * r_hat) % L
        s3 = (w3 + c * r_tilde) % L
        s4 = (w4 + c * r_prime) % L
        shat = [(a + c * b) % L for a, b in zip(what, rhat, strict=True)]
        sp = [(a + c * b) % L for a, b in zip(wp, up, strict=True)]
        if not _nz(s1, s2, s3, s4, *shat, *sp):  # pragma: no cover - probability n·2^-252
            continue
        return [comm, chain, _sb(c), _sb(s1), _sb(s2), _sb(s3), _sb(s4),
                [_sb(x) for x in shat], [_sb(x) for x in sp]]


def _points(obj: object, n: int, what: str) -> list[bytes]:
    if not isinstance(obj, list) or len(obj) != n:
        raise MalformedInput(f"{what} must be a list of {n} points")
    for p in obj:
        if not isinstance(p, bytes) or len(p) != g.POINT_BYTES:
            raise MalformedInput(f"{what} entries must be {g.POINT_BYTES}-byte points")
    return obj


def _scalars(obj: object, n: int, what: str) -> list[int]:
    if not isinstance(obj, list) or len(obj) != n:
        raise MalformedInput(f"{what} must be a list of {n} scalars")
    return [g.decode_scalar(s, what) for s in obj]


@remembered.remembered
def verify(inp: Sequence[Ciphertext], out: Sequence[Ciphertext], proof: object,
           joint: g.Point, context: Sequence[object]) -> None:
    """Check a proof: return if valid, else raise :class:`ProofInvalid` with the reason.

    ``inp`` must be validated; ``out`` need only be well-formed (32-byte strings): each of its
    points is validated by the multiplications here (:class:`InvalidPoint` propagates).
    """
    n = len(inp)
    if len(out) != n:
        raise ProofInvalid(f"output has {len(out)} tokens, input has {n}")
    if n == 0:
        if proof != []:
            raise ProofInvalid("proof of an empty shuffle must be empty")
        return
    try:
        if not isinstance(proof, list) or len(proof) != 9:
            raise ProofInvalid("TW proof must be [C, Ĉ, c, s1, s2, s3, s4, ŝ, s']")
        comm = _points(proof[0], n, "permutation commitment")
        chain = _points(proof[1], n, "commitment chain")
        c, s1, s2, s3, s4 = (g.decode_scalar(x, "TW response") for x in proof[2:7])
        shat = _scalars(proof[7], n, "TW chain responses")
        sp = _scalars(proof[8], n, "TW permutation responses")
    except MalformedInput as exc:
        raise ProofInvalid(f"malformed TW proof: {exc}") from exc
    for ct in out:
        _points(list(ct), 2, "output token")
    stmt = _statement(context, joint, inp, out, comm)
    try:
        ts, that = _recompute(inp, out, joint, comm, chain, c, s1, s2, s3, s4, shat, sp, stmt)
    except (_nexc.RuntimeError, _nexc.TypeError, _nexc.ValueError) as exc:
        raise InvalidPoint("shuffle proof: invalid point") from exc
    if ts is None:
        raise ProofInvalid("degenerate permutation commitment")
    if _final_challenge(stmt, chain, ts, that) != c:
        raise ProofInvalid(
            "TW shuffle proof does not verify (output is not a re-encrypted permutation)")


def _recompute(inp: Sequence[Ciphertext], out: Sequence[Ciphertext], joint: g.Point,
               comm: list[bytes], chain: list[bytes], c: int, s1: int, s2: int, s3: int,
               s4: int, shat: list[int], sp: list[int], stmt: bytes
               ) -> tuple[list[bytes] | None, list[bytes]]:
    """The verifier's ``t`` values. Every received point is multiplied (hence validated by
    libsodium) before it is used in an addition."""
    n = len(inp)
    hs = generators(n)
    u = _challenges(stmt, n)
    prod_u = 1
    for x in u:
        prod_u = prod_u * x % L
    cu = [c * x % L for x in u]
    # The 7n variable-base multiplications are independent: computed as one batch (spread
    # over the active workers, if any). Any invalid point makes the batch raise the same
    # InvalidPoint, whichever multiplication meets it first, so the verdict is unchanged.
    prevs = [_H0, *chain[:-1]]
    jobs = [*zip(cu, comm, strict=True),                        # Σ c·u_k·C_k (validates C)
            *zip(sp, prevs, strict=True),                       # s'_i·Ĉ_{i−1}
            *((c, ch) for ch in chain),                         # c·Ĉ_i (validates Ĉ)
            *((x, ct[0]) for x, ct in zip(sp, out, strict=True)),   # Σ s'_i·out_i
            *((x, ct[1]) for x, ct in zip(sp, out, strict=True)),   # (validates out)
            *((x, ct[0]) for x, ct in zip(cu, inp, strict=True)),   # Σ c·u_k·inp_k
            *((x, ct[1]) for x, ct in zip(cu, inp, strict=True))]
    prods = parallel.map_ordered(_mul, jobs)
    part = [prods[k * n:(k + 1) * n] for k in range(7)]
    cu_c = _total(part[0])
    # t̂_i = ŝ_i·G + s'_i·Ĉ_{i−1} − c·Ĉ_i
    that = [_sub(_add(_base(_sb(shat[i])), part[1][i]), part[2][i]) for i in range(n)]
    # Σ s'_i·out_i − s4·(G, Y) − Σ c·u_k·inp_k
    outa, outb, ina, inb = (_total(part[k]) for k in (3, 4, 5, 6))
    # Σ C_k − Σ H_i = r̄·G ;  Ĉ_N − (Π u_k)·H = r̂·G
    c_bar = _sub(_total(comm), _total(hs))
    c_hat = _sub(chain[-1], _mul(prod_u, _H0))
    if c_bar == g.IDENTITY or c_hat == g.IDENTITY:
        return None, that
    t1 = _sub(_base(_sb(s1)), _mul(c, c_bar))
    t2 = _sub(_base(_sb(s2)), _mul(c, c_hat))
    t3 = _sub(_total([_mul(x, h) for x, h in zip(sp, hs, strict=True)],
                   _base(_sb(s3))), cu_c)
    t4a = _sub(_sub(outa, _base(_sb(s4))), ina)
    t4b = _sub(_sub(outb, _mul(s4, joint)), inb)
    return [t1, t2, t3, t4a, t4b], that

"""Decryption shares with DLEQ proofs (used by deal, open, steal, sealed reveal, withdraw).

A share of party j for ciphertext ``(A, B)`` is ``D = x_j·A`` with a Chaum–Pedersen proof that
``log_G y_j = log_A D``. Public opening: all N shares are broadcast. Private reveal to party
t: every *other* party broadcasts its share and t adds its own locally — the public can
never compute ``x_t·A``, so no private channel is needed.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from .. import dleq, parallel, remembered
from .. import group as g
from ..elgamal import Ciphertext
from ..errors import CheatDetected, MalformedInput, ProofInvalid, ProtocolStateError
from .base import Op, check_list


def make_shares(op: Op, points: Sequence[g.Point], purpose: str) -> list[list[Any]]:
    """``[[D, proof], …]`` for the given ``A`` points (this party's key); ``D`` is a point,
    ``proof`` the DLEQ proof ``[c, z]`` (a list of bytes)."""
    ctx = op.ctx
    if ctx.x is None or ctx.me is None:
        raise ProtocolStateError("an observer cannot produce shares")
    y = ctx.keys[ctx.me]
    out: list[list[Any]] = []
    for j, a in enumerate(points):
        d = g.mul(ctx.x, a)
        out.append([d, dleq.prove(ctx.x, g.G, y, a, d, op.dleq_ctx(ctx.me, purpose, j))])
    return out


def check_shares(op: Op, sender: int, points: Sequence[g.Point], payload: Any,
                 purpose: str, only: Collection[int] | None = None,
                 established: list[bool] | None = None) -> list[g.Point]:
    """Verify ``sender``'s shares for ``points``; returns the shares or names the sender.

    ``only``: indices to verify now (default all); the others are only shape-checked and
    must not be used unless verified later with :func:`verify_share` (the returned points
    at those indices are unvalidated). ``established`` (a list to fill) receives, per checked
    share, whether ``D = x·A`` was established with the sender's known key share (see
    :func:`share_check`).
    """
    items = check_list(payload, f"{purpose} shares", len(points))
    out: list[g.Point] = []
    checks: list[tuple[Callable[..., object], tuple[Any, ...]]] = []
    where: list[int] = []
    shape_error: MalformedInput | None = None
    for j, (a, item) in enumerate(zip(points, items, strict=True)):
        try:
            pair = check_list(item, "share", 2)
            d = pair[0]
            if not isinstance(d, bytes) or len(d) != g.POINT_BYTES:
                raise MalformedInput(f"decryption share must be {g.POINT_BYTES} bytes")
        except MalformedInput as bad:
            shape_error = bad  # raised after the proofs of the shares before it
            break
        if only is None or j in only:
            checks.append(share_check(op, sender, j, a, d, pair[1], purpose))
            where.append(j)
        out.append(d)
    # the proofs, in share order, on the active workers if any: the first failure is the
    # one a share-by-share loop would have raised
    results, fail = parallel.run_all(_check, checks)
    if established is not None:
        established.extend(r is True for r in results)
    if fail is not None:
        k, err = fail
        if isinstance(err, ProofInvalid):
            raise CheatDetected(sender, "dleq-invalid",
                                f"decryption share {where[k]} ({purpose}) has an invalid "
                                "DLEQ proof") from err
        raise err
    if shape_error is not None:
        raise shape_error
    return out


def share_check(op: Op, sender: int, j: int, a: g.Point, d: g.Point, proof: Any,
                purpose: str) -> tuple[Callable[..., object], tuple[Any, ...]]:
    """The check of share ``j`` of ``sender``: :func:`crypto.dleq.verify` and its arguments,
    or, when the session knows the sender's key share (an auditor, see
    :meth:`crypto.session.TokenSession.know_secrets`), the exactly equivalent and cheaper
    :func:`crypto.dleq.verify_share_known`.

    Except when this very proof already passed :func:`crypto.dleq.verify` in this process
    (:mod:`crypto.remembered`: the table checked it live, or an earlier pass of the audit
    did before the key shares were published): then the check is that one again, taken
    from memory for no multiplication, where the known-share check would still multiply
    once to establish ``D = x·A``. Both give the same verdict; the share is then reported
    not established, so a batch over it takes its full check (remembered as well)."""
    ctx_ = op.dleq_ctx(sender, purpose, j)
    full = (g.G, op.ctx.keys[sender], a, d, proof, ctx_)
    x = known_secret(op, sender)
    if x is not None and not remembered.lookup(dleq.verify, full)[0]:
        return dleq.verify_share_known, (x, op.ctx.keys[sender], a, d, proof, ctx_)
    return dleq.verify, full


def known_secret(op: Op, party: int) -> int | None:
    """``party``'s key share if the session was given it and it matches the party's public
    key (checked once per party), else None."""
    known: dict[int, int] | None = getattr(op.ctx, "known_secrets", None)
    if not known or party not in known or party >= len(op.ctx.keys):
        return None
    x = known[party]
    checked = op.ctx.known_checked
    if party not in checked:
        checked[party] = g.base_mul(x) == op.ctx.keys[party]
    return x if checked[party] else None


@remembered.dispatcher
def _check(fn: Callable[..., object], args: tuple[Any, ...]) -> object:
    """Worker entry: run one check ``fn(*args)`` (both are picklable module-level names)."""
    return fn(*args)


def verify_share(op: Op, sender: int, j: int, a: g.Point, d: g.Point, proof: Any,
                 purpose: str) -> None:
    """Check one share ``d`` (index ``j``) of ``sender`` for point ``a``, or name the sender.

    ``d`` needs no prior validation: the DLEQ check multiplies it, and libsodium rejects
    invalid points (→ rule ``invalid-point``).
    """
    fn, args = share_check(op, sender, j, a, d, proof, purpose)
    try:
        fn(*args)
    except ProofInvalid as exc:
        raise CheatDetected(sender, "dleq-invalid",
                            f"decryption share {j} ({purpose}) has an invalid DLEQ proof"
                            ) from exc


def own_share(op: Op, a: g.Point) -> g.Point:
    """This party's share, computed locally (never needs a proof)."""
    if op.ctx.x is None:
        raise ProtocolStateError("an observer has no key share")
    return g.mul(op.ctx.x, a)


def decode_label(op: Op, ct: Ciphertext, shares: Sequence[g.Point]) -> str | None:
    """Label of ``ct`` given all N shares, or ``None`` if it decrypts to no label."""
    return op.ctx.label_of.get(g.sub(ct[1], g.sum_points(shares)))


def make_shares_batch(op: Op, points: Sequence[g.Point], purpose: str) -> list[Any]:
    """``[[D_0, D_1, …], proof]``: this party's shares with one batched DLEQ proof."""
    ctx = op.ctx
    if ctx.x is None or ctx.me is None:
        raise ProtocolStateError("an observer cannot produce shares")
    ds = [g.mul(ctx.x, a) for a in points]
    if not ds:
        return [[], None]
    return [ds, dleq.prove_batch(ctx.x, ctx.keys[ctx.me], points, ds,
                                 op.dleq_ctx(ctx.me, purpose, len(ds)))]


def check_shares_batch(op: Op, sender: int, points: Sequence[g.Point], payload: Any,
                       purpose: str) -> list[g.Point]:
    """Verify a :func:`make_shares_batch` payload; returns the shares or names the sender."""
    ds, proof = check_list(payload, f"{purpose} shares", 2)
    check_list(ds, f"{purpose} shares", len(points))
    for d in ds:
        if not isinstance(d, bytes) or len(d) != g.POINT_BYTES:
            raise MalformedInput(f"decryption share must be {g.POINT_BYTES} bytes")
    if not ds:
        if proof is not None:
            raise MalformedInput("an empty share batch carries no proof")
        return []
    try:
        dleq.verify_batch(op.ctx.keys[sender], points, ds, proof,
                          op.dleq_ctx(sender, purpose, len(ds)))
    except ProofInvalid as exc:
        raise CheatDetected(sender, "dleq-invalid",
                            f"decryption shares ({purpose}) have an invalid batched DLEQ proof"
                            ) from exc
    return list(ds)

"""Decryption shares with DLEQ proofs (used by deal, open, steal, sealed reveal, withdraw).

A share of party j for ciphertext ``(A, B)`` is ``D = x_j·A`` with a Chaum–Pedersen proof that
``log_G y_j = log_A D``. Public opening: all N shares are broadcast. Private reveal to party
t: every *other* party broadcasts its share and t adds its own locally — the public can
never compute ``x_t·A``, so no private channel is needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import dleq
from .. import group as g
from ..elgamal import Ciphertext
from ..errors import CheatDetected, ProtocolStateError
from .base import Op, check_list


def make_shares(op: Op, points: Sequence[g.Point], purpose: str) -> list[list[bytes]]:
    """``[[D, proof], …]`` for the given ``A`` points (this party's key)."""
    ctx = op.ctx
    if ctx.x is None or ctx.me is None:
        raise ProtocolStateError("an observer cannot produce shares")
    y = ctx.keys[ctx.me]
    out = []
    for j, a in enumerate(points):
        d = g.mul(ctx.x, a)
        out.append([d, dleq.prove(ctx.x, g.G, y, a, d, op.dleq_ctx(ctx.me, purpose, j))])
    return out


def check_shares(op: Op, sender: int, points: Sequence[g.Point], payload: Any,
                 purpose: str) -> list[g.Point]:
    """Verify ``sender``'s shares for ``points``; returns the shares or names the sender."""
    items = check_list(payload, f"{purpose} shares", len(points))
    y = op.ctx.keys[sender]
    out = []
    for j, (a, item) in enumerate(zip(points, items, strict=True)):
        pair = check_list(item, "share", 2)
        d = g.decode_point(pair[0], "decryption share")
        if not dleq.verify(g.G, y, a, d, pair[1], op.dleq_ctx(sender, purpose, j)):
            raise CheatDetected(sender, "dleq-invalid",
                                f"decryption share {j} ({purpose}) has an invalid DLEQ proof")
        out.append(d)
    return out


def own_share(op: Op, a: g.Point) -> g.Point:
    """This party's share, computed locally (never needs a proof)."""
    if op.ctx.x is None:
        raise ProtocolStateError("an observer has no key share")
    return g.mul(op.ctx.x, a)


def decode_label(op: Op, ct: Ciphertext, shares: Sequence[g.Point]) -> str | None:
    """Label of ``ct`` given all N shares, or ``None`` if it decrypts to no label."""
    return op.ctx.label_of.get(g.sub(ct[1], g.sum_points(shares)))

"""Withdraw tokens of named labels from the bag by plaintext-equality test (PET).

Args ``[taker, [[label, k], …], all_or_nothing]`` (labels distinct, k ≥ 1).

1. ``blind`` (all, parallel): for each request r and bag position i, with
   ``Q = (A_i, B_i − M_r)`` (an encryption of the identity iff the token has label r), party j
   sends ``[ρ·A_i, ρ·(B_i − M_r), proof]`` for a fresh ρ and a DLEQ proof over the bases
   ``(A_i, B_i − M_r)``. ``Z_{r,i} = Σ_j`` of the blinded pairs.
2. ``pshare`` (all but the taker): ``[D, proof]`` for every ``Z_{r,i}`` first half.
3. ``choose`` (taker): per request ``[claimed, positions, shares]`` where
   ``claimed = min(available, k)``, ``positions`` the bag positions taken (``claimed`` of them,
   or none when all-or-nothing fails) and ``shares`` the taker's own ``[D, proof]`` for them.
   Receivers check that each taken ``Z`` decrypts to the identity (the token has that label),
   that the counts are consistent, and positions are distinct. A false "not available"
   claim cannot be refuted live; it is recorded and checked at the audit.

Zone order: the taken positions (pre-op bag numbering) are removed from the bag and appended
to the taker's hand in request order, then in listed order; they become publicly labelled.
Learned: the taker, which bag positions hold each requested label; everyone,
``min(available, k)`` per label and which positions were taken; nothing else (the blinding by
every honest party randomises non-matching quotients).
"""

from __future__ import annotations

import secrets
from typing import Any

from .. import dleq
from .. import group as g
from ..errors import CheatDetected, MalformedInput, ProtocolStateError
from ..ledger import BAG
from .base import Op, Step, check_int, check_list
from .shares import check_shares, make_shares


class Withdraw(Op):
    """Op ``withdraw``."""

    name = "withdraw"

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        taker, reqs, aon = check_list(self.args, "withdraw args", 3)
        n = self.ctx.n
        self.taker = check_int(taker, "taker", 0, n)
        self.requests: list[tuple[str, int]] = []
        for item in check_list(reqs, "requests"):
            lab, k = check_list(item, "request", 2)
            if not isinstance(lab, str) or not lab:
                raise MalformedInput("request label must be a non-empty string")
            self.requests.append((lab, check_int(k, "requested count", 1, 10_000)))
        if not self.requests or len({r[0] for r in self.requests}) != len(self.requests):
            raise MalformedInput("requests must be non-empty with distinct labels")
        if not isinstance(aon, bool):
            raise MalformedInput("all_or_nothing must be a bool")
        self.aon = aon
        self.ctx.require_keys()
        self.bag = self.ledger.tokens(BAG)
        self.m = len(self.bag)
        # Quotients Q_{r,i} = (A_i, B_i − M_r): computed once, identical everywhere.
        self.quot = [[(a, g.sub(b, self.ctx.point_of(lab))) for a, b in self.bag]
                     for lab, _ in self.requests]
        self.z: list[list[tuple[bytes, bytes]]] = [[] for _ in self.requests]
        self.pshares: list[list[list[bytes]]] = [[[] for _ in range(self.m)]
                                                  for _ in self.requests]
        others = [p for p in range(n) if p != self.taker]
        self.steps = [Step("blind", list(range(n))), Step("pshare", others),
                      Step("choose", [self.taker])]
        self.matches: list[list[int]] = []

    # step 1 --------------------------------------------------------------------------------
    def make_blind(self, st: Step) -> list[Any]:
        assert self.ctx.me is not None
        out = []
        for r, qs in enumerate(self.quot):
            row = []
            for i, (a, q) in enumerate(qs):
                rho = g.random_scalar()
                a2, q2 = g.mul(rho, a), g.mul(rho, q)
                row.append([a2, q2, dleq.prove(rho, a, a2, q, q2,
                                               self.dleq_ctx(self.ctx.me, "pet-blind", r, i))])
            out.append(row)
        return out

    def on_blind(self, st: Step, sender: int, payload: Any) -> None:
        rows = check_list(payload, "blinding", len(self.requests))
        for r, (qs, row) in enumerate(zip(self.quot, rows, strict=True)):
            items = check_list(row, "blinding row", self.m)
            for i, ((a, q), item) in enumerate(zip(qs, items, strict=True)):
                a2, q2, proof = check_list(item, "blinded pair", 3)
                if sender != self.ctx.me:
                    a2 = g.decode_point(a2, "blinded A")
                    q2 = g.decode_point(q2, "blinded Q")
                    if not dleq.verify(a, a2, q, q2, proof,
                                       self.dleq_ctx(sender, "pet-blind", r, i)):
                        raise CheatDetected(sender, "pet-blind-invalid",
                                            f"blinding of request {r} position {i} is not proven")
                if len(self.z[r]) <= i:
                    self.z[r].append((a2, q2))
                else:
                    za, zq = self.z[r][i]
                    self.z[r][i] = (g.add(za, a2), g.add(zq, q2))

    def step_done(self, st: Step) -> None:
        if st.name == "blind":
            for r in range(len(self.requests)):
                for i, (za, zq) in enumerate(self.z[r]):
                    if za == g.IDENTITY or zq == g.IDENTITY:  # pragma: no cover - 2^-252
                        raise CheatDetected(None, "degenerate-blinding", f"Z[{r}][{i}]")
        elif st.name == "pshare" and self.ctx.me == self.taker:
            self._find_matches()

    # step 2 --------------------------------------------------------------------------------
    def make_pshare(self, st: Step) -> list[Any]:
        return [make_shares(self, [za for za, _ in self.z[r]], f"pet-share-{r}")
                for r in range(len(self.requests))]

    def on_pshare(self, st: Step, sender: int, payload: Any) -> None:
        rows = check_list(payload, "PET shares", len(self.requests))
        for r, row in enumerate(rows):
            if sender == self.ctx.me:
                shares = [item[0] for item in row]
            else:
                shares = check_shares(self, sender, [za for za, _ in self.z[r]], row,
                                      f"pet-share-{r}")
            for i, d in enumerate(shares):
                self.pshares[r][i].append(d)

    def _find_matches(self) -> None:
        x = self.ctx.x
        if x is None:
            raise ProtocolStateError("taker without a key")
        self.matches = []
        for r in range(len(self.requests)):
            found = []
            for i, (za, zq) in enumerate(self.z[r]):
                total = g.sum_points([*self.pshares[r][i], g.mul(x, za)])
                if zq == total:
                    found.append(i)
            self.matches.append(found)

    # step 3 --------------------------------------------------------------------------------
    def choose(self) -> list[list[int]]:
        """Positions taken per request (honest: uniformly random among the matches)."""
        avail = [len(m) for m in self.matches]
        short = any(a < k for a, (_, k) in zip(avail, self.requests, strict=True))
        picks: list[list[int]] = []
        for found, (_, k) in zip(self.matches, self.requests, strict=True):
            pool = list(found)
            pick = []
            for _ in range(min(k, len(pool))):
                pick.append(pool.pop(secrets.randbelow(len(pool))))
            picks.append([] if (self.aon and short) else pick)
        return picks

    def claimed_counts(self) -> list[int]:
        """``min(available, k)`` per request (the public claim)."""
        return [min(len(m), k) for m, (_, k) in zip(self.matches, self.requests, strict=True)]

    def make_choose(self, st: Step) -> list[Any]:
        out = []
        for r, (claim, pos) in enumerate(zip(self.claimed_counts(), self.choose(),
                                             strict=True)):
            shares = make_shares(self, [self.z[r][i][0] for i in pos], f"pet-open-{r}")
            out.append([claim, pos, shares])
        return out

    def on_choose(self, st: Step, sender: int, payload: Any) -> None:
        rows = check_list(payload, "choice", len(self.requests))
        claims, taken = [], []
        seen: set[int] = set()
        for r, row in enumerate(rows):
            claim, pos, shares = check_list(row, "choice row", 3)
            k = self.requests[r][1]
            claim = check_int(claim, "claimed count", 0, k + 1)
            pos = [check_int(p, "bag position", 0, self.m) for p in check_list(pos, "positions")]
            if len(set(pos)) != len(pos) or seen & set(pos):
                raise CheatDetected(sender, "withdraw-bad-choice", "repeated bag position")
            seen |= set(pos)
            claims.append(claim)
            taken.append(pos)
            if sender != self.ctx.me:
                own = check_shares(self, sender, [self.z[r][i][0] for i in pos], shares,
                                   f"pet-open-{r}")
                for i, d in zip(pos, own, strict=True):
                    zq = self.z[r][i][1]
                    if zq != g.sum_points([*self.pshares[r][i], d]):
                        raise CheatDetected(sender, "withdraw-not-matching",
                                            f"bag position {i} is not {self.requests[r][0]!r}")
        short = any(c < k for c, (_, k) in zip(claims, self.requests, strict=True))
        for c, pos in zip(claims, taken, strict=True):
            want = 0 if (self.aon and short) else c
            if len(pos) != want:
                raise CheatDetected(sender, "withdraw-bad-choice",
                                    f"took {len(pos)} tokens where the claim implies {want}")
        self.claims = claims
        self.taken = taken

    def finish(self) -> None:
        flat = [(i, self.requests[r][0]) for r, pos in enumerate(self.taken) for i in pos]
        slots = self.ledger.remove(BAG, [i for i, _ in flat])
        hand = self.ledger.hands[self.taker]
        start = len(hand)
        for slot, (_, lab) in zip(slots, flat, strict=True):
            slot.public = lab
            hand.append(slot)
        self.result = {
            "taker": self.taker,
            "requests": [list(r) for r in self.requests],
            "claimed": list(self.claims),
            "taken": [list(p) for p in self.taken],
            "success": all(c == k for c, (_, k) in zip(self.claims, self.requests,
                                                        strict=True)),
            "hand_positions": list(range(start, start + len(flat))),
        }
        if self.ctx.me == self.taker:
            self.private = {"matches": [list(m) for m in self.matches]}

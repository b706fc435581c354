"""Withdraw tokens of named labels from the bag by plaintext-equality test (PET).

Args ``[taker, [[label, k], …], all_or_nothing]`` (labels distinct, k ≥ 1).

1. ``blind`` (all but the taker, parallel): for each request r and bag position i, with
   ``Q = (A_i, B_i − M_r)`` (an encryption of the identity iff the token has label r), party j
   sends ``[ρ·A_i, ρ·(B_i − M_r), proof]`` for a fresh ρ and a DLEQ proof over the bases
   ``(A_i, B_i − M_r)``. ``Z_{r,i} = Σ_j`` of the blinded pairs. (The taker does not blind:
   blinding hides the non-matching plaintexts *from the taker*, so only the others' ρ
   matter.)
2. ``pshare`` (all but the taker): per request ``[[[D, proof], …], batch]`` — a share of
   every ``Z_{r,i}`` first half with its own DLEQ proof (checked per taken position) and one
   batched DLEQ proof over all of them (dleq.prove_batch; checked by a short taker).
3. ``choose`` (taker): per request ``[claimed, positions, shares]`` where
   ``claimed = min(available, k)``, ``positions`` the bag positions taken (``claimed`` of them,
   or none when all-or-nothing fails) and ``shares`` the taker's own ``[D, proof]`` for them.
   Receivers check that each taken ``Z`` decrypts to the identity (the token has that label),
   that the counts are consistent, and positions are distinct. A false "not available"
   claim cannot be refuted live; it is recorded and checked at the audit.

Deferred verification (what each party needs): every blinding proof and PET share of a
*taken* position is checked by every party before the taken token is accepted (the taker
checks them before choosing it). The taker additionally checks every proof of every position
whenever its count is short (a short claim is public, so no match may have been hidden by a
bad blinding or share). Other proofs only influence the taker's private view and are checked
by observers (the auditor) on receipt. An invalid blinded ``A'`` is caught by everyone when
multiplying ``Z.A`` (its sender is named); an off-curve point by the addition that receives it.

Zone order: the taken positions (pre-op bag numbering) are removed from the bag and appended
to the taker's hand in request order, then in listed order; they become publicly labelled.
Learned: the taker, which bag positions hold each requested label; everyone,
``min(available, k)`` per label and which positions were taken; nothing else (the blinding by
every honest party randomises non-matching quotients).
"""

from __future__ import annotations

import secrets
from typing import Any

from .. import dleq, parallel, remembered
from .. import group as g
from ..errors import (
    CheatDetected,
    InvalidPoint,
    MalformedInput,
    ProofInvalid,
    ProtocolStateError,
)
from ..ledger import BAG
from .base import Op, Step, StepHandlers, check_int, check_list
from .shares import check_shares, known_secret, make_shares, verify_share


@remembered.remembered
def _verify_and_add(a: bytes, a2: bytes, q: bytes, q2: bytes, proof: object,
                    context: list[object], za: bytes, zq: bytes) -> tuple[bytes, bytes]:
    """An observer's step for one blinded pair: its proof, then ``Z + (A', Q')`` (both points
    are valid once the proof holds, so the additions cannot fail)."""
    dleq.verify(a, a2, q, q2, proof, context)
    return g.add(za, a2), g.add(zq, q2)


def _check_bytes(v: object, what: str) -> None:
    if not isinstance(v, bytes) or len(v) != g.POINT_BYTES:
        raise MalformedInput(f"{what} must be {g.POINT_BYTES} bytes")


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
        nreq = len(self.requests)
        # Quotients Q_{r,i} = (A_i, B_i − M_r): computed once, identical everywhere.
        self.quot = [[(a, g.sub(b, self.ctx.point_of(lab))) for a, b in self.bag]
                     for lab, _ in self.requests]
        # Aggregates start at the identity so that every addition checks the new operand.
        self.z: list[list[tuple[bytes, bytes]]] = [[(g.IDENTITY, g.IDENTITY)] * self.m
                                                    for _ in self.requests]
        self.pshares: list[list[list[bytes]]] = [[[] for _ in range(self.m)]
                                                  for _ in self.requests]
        self.others = [p for p in range(n) if p != self.taker]
        #: raw blinded pairs / PET shares per sender, kept for deferred verification
        self._blinds: dict[int, list[list[Any]]] = {}
        self._pshare_raw: dict[int, list[list[Any]]] = {}
        self._verified: set[tuple[int, int]] = set()
        self._xza: list[list[bytes]] = [[] for _ in range(nreq)]
        self.steps = [Step("blind", list(self.others)), Step("pshare", list(self.others)),
                      Step("choose", [self.taker])]
        self.matches: list[list[int]] = []

    @property
    def observer(self) -> bool:
        """An observer (the auditor) verifies every proof on receipt."""
        return self.ctx.me is None

    def step_handlers(self) -> dict[str, StepHandlers]:
        """Handlers of this op's steps (see :meth:`Op.step_handlers`)."""
        return {
            "blind": StepHandlers(self.make_blind, self.on_blind),
            "pshare": StepHandlers(self.make_pshare, self.on_pshare),
            "choose": StepHandlers(self.make_choose, self.on_choose),
        }

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
        parsed = []
        for row in rows:
            items = check_list(row, "blinding row", self.m)
            prow = []
            for item in items:
                a2, q2, proof = check_list(item, "blinded pair", 3)
                _check_bytes(a2, "blinded A")
                _check_bytes(q2, "blinded Q")
                prow.append([a2, q2, proof])
            parsed.append(prow)
        self._blinds[sender] = parsed
        if self.observer:
            # every proof checked and, once all hold, every sum taken in the same batch
            which = [(sender, r, i) for r in range(len(self.requests)) for i in range(self.m)]
            sums = self._verify_blinds(which, with_sums=True)
            for (_p, r, i), zri in zip(which, sums, strict=True):
                self.z[r][i] = zri
            return
        for r, prow in enumerate(parsed):
            zr = self.z[r]
            for i, (a2, q2, _proof) in enumerate(prow):
                za, zq = zr[i]
                # add() checks that the new operand is on the curve (→ names the sender)
                zr[i] = (g.add(za, a2), g.add(zq, q2))

    def _verify_blind(self, sender: int, r: int, i: int) -> None:
        self._verify_blinds([(sender, r, i)])

    def _verify_blinds(self, which: list[tuple[int, int, int]], with_sums: bool = False
                       ) -> list[tuple[bytes, bytes]]:
        """Check the blinding proofs ``(sender, r, i)`` in that order (spread over the active
        workers, if any) and name the sender of the first that fails. ``with_sums``: also
        return each ``Z_{r,i}`` plus its blinded pair (an observer's whole ``on_blind`` in
        one batch; the additions come after the proof, as a serial loop would do them)."""
        items: list[tuple[Any, ...]] = []
        for sender, r, i in which:
            a, q = self.quot[r][i]
            a2, q2, proof = self._blinds[sender][r][i]
            item: tuple[Any, ...] = (a, a2, q, q2, proof,
                                     self.dleq_ctx(sender, "pet-blind", r, i))
            items.append((*item, *self.z[r][i]) if with_sums else item)
        fn: Any = _verify_and_add if with_sums else dleq.verify
        sums: list[tuple[bytes, bytes]]
        sums, fail = parallel.run_all(fn, items)
        if fail is None:
            return sums if with_sums else []
        k, exc = fail
        sender, r, i = which[k]
        if isinstance(exc, InvalidPoint):
            raise CheatDetected(sender, "invalid-point", str(exc)) from exc
        if isinstance(exc, MalformedInput):
            raise CheatDetected(sender, "malformed", str(exc)) from exc
        if isinstance(exc, ProofInvalid):
            raise CheatDetected(sender, "pet-blind-invalid",
                                f"blinding of request {r} position {i} is not proven") from exc
        raise exc  # pragma: no cover - first_failure only reports the errors above

    def _blame_degenerate(self, r: int, i: int) -> CheatDetected:
        """``Z_{r,i}`` has an identity half: name the blinder that caused it.

        Honest blinders send ``ρ_j·Q`` with a DLEQ proof for a fresh secret ρ_j, so the sum of
        the honest contributions is ``(Σρ_j)·Q``, uniform and unknown to everyone else. A
        blinder that cancels that sum must send ``−(Σρ_j)·Q``, whose factor it does not know:
        its blinding proof fails. Every blinder's proof at this position is checked in seat
        order and the first that fails is named (``pet-blind-invalid``); only when every proof
        holds is it the 2^-252 accident of honest factors summing to zero, blamed on nobody.
        (An observer has checked every proof on receipt already, so it never gets here with
        a cheater.)"""
        for p in self.others:
            if p != self.ctx.me:
                try:
                    self._verify_blind(p, r, i)
                except CheatDetected as exc:
                    return exc
        return CheatDetected(None, "degenerate-blinding",  # pragma: no cover - 2^-252
                             f"Z[{r}][{i}] is degenerate though every blinding is proven")

    def _blame_blinded_a(self, r: int, i: int) -> CheatDetected:
        """``Z_{r,i}.A`` was rejected: name the first blinder whose ``A'`` is invalid."""
        for p in self.others:
            if not g.is_point(self._blinds[p][r][i][0]):
                return CheatDetected(p, "invalid-point",
                                     f"blinded A of request {r} position {i} is invalid")
        return CheatDetected(None, "degenerate-blinding", f"Z[{r}][{i}]")  # pragma: no cover

    def step_done(self, st: Step) -> None:
        if st.name == "blind":
            for r in range(len(self.requests)):
                for i, (za, zq) in enumerate(self.z[r]):
                    if za == g.IDENTITY or zq == g.IDENTITY:
                        raise self._blame_degenerate(r, i)
            if self.ctx.me == self.taker:
                x = self.ctx.x
                if x is None:
                    raise ProtocolStateError("taker without a key")
                for r in range(len(self.requests)):
                    row = []
                    for i, (za, _zq) in enumerate(self.z[r]):
                        try:
                            row.append(g.mul(x, za))
                        except InvalidPoint:
                            raise self._blame_blinded_a(r, i) from None
                    self._xza[r] = row
        elif st.name == "pshare" and self.ctx.me == self.taker:
            self._find_matches()

    # step 2 --------------------------------------------------------------------------------
    def make_pshare(self, st: Step) -> list[Any]:
        assert self.ctx.me is not None and self.ctx.x is not None
        out = []
        for r in range(len(self.requests)):
            pts = [za for za, _ in self.z[r]]
            try:
                items = make_shares(self, pts, f"pet-share-{r}")
            except InvalidPoint:
                bad = next(i for i, p in enumerate(pts) if not g.is_point(p))
                raise self._blame_blinded_a(r, bad) from None
            batch = dleq.prove_batch(self.ctx.x, self.ctx.keys[self.ctx.me], pts,
                                     [d for d, _ in items], self._batch_ctx(self.ctx.me, r))
            out.append([items, batch])
        return out

    def _batch_ctx(self, sender: int, r: int) -> list[object]:
        return self.dleq_ctx(sender, f"pet-share-batch-{r}", self.m)

    def on_pshare(self, st: Step, sender: int, payload: Any) -> None:
        rows = check_list(payload, "PET shares", len(self.requests))
        raw = []
        for r, row in enumerate(rows):
            items, batch = check_list(row, "PET share row", 2)
            pts = [za for za, _ in self.z[r]]
            if sender == self.ctx.me:
                shares = [item[0] for item in items]
            else:
                # parties defer the checks (see _verify_position); observers check all
                established: list[bool] = []
                shares = check_shares(self, sender, pts, items, f"pet-share-{r}",
                                      None if self.observer else (), established)
                if self.observer:
                    # every share known to be x·Za: the batch's cheaper exact check
                    known = known_secret(self, sender) if all(established) else None
                    self._verify_batch(sender, r, shares, batch, known)
            raw.append([check_list(items, "PET shares", self.m), batch])
            for i, d in enumerate(shares):
                self.pshares[r][i].append(d)
        self._pshare_raw[sender] = raw

    def _verify_batch(self, sender: int, r: int, shares: list[bytes], batch: Any,
                      known_x: int | None = None) -> None:
        """All of ``sender``'s PET shares for request r at once (2 + 2m multiplications, or
        1 + m for an auditor that knows the sender's key and has seen every share equal
        ``x·Za``: see :func:`crypto.dleq.verify_batch`)."""
        try:
            dleq.verify_batch(self.ctx.keys[sender], [za for za, _ in self.z[r]], shares,
                              batch, self._batch_ctx(sender, r), known_x)
        except InvalidPoint as exc:
            raise CheatDetected(sender, "invalid-point", str(exc)) from exc
        except MalformedInput as exc:
            raise CheatDetected(sender, "malformed", str(exc)) from exc
        except ProofInvalid as exc:
            raise CheatDetected(sender, "dleq-invalid",
                                f"PET shares of request {r} have an invalid batched proof"
                                ) from exc

    def _verify_position(self, r: int, i: int) -> None:
        """Check every blinding and PET share of ``Z_{r,i}`` (deferred, once)."""
        if self.observer or (r, i) in self._verified:
            return
        self._verify_blinds([(p, r, i) for p in self.others if p != self.ctx.me])
        za = self.z[r][i][0]
        for p in self.others:
            if p != self.ctx.me:
                d, proof = self._pshare_raw[p][r][0][i]
                try:
                    verify_share(self, p, i, za, d, proof, f"pet-share-{r}")
                except InvalidPoint as exc:
                    raise CheatDetected(p, "invalid-point", str(exc)) from exc
                except MalformedInput as exc:
                    raise CheatDetected(p, "malformed", str(exc)) from exc
        self._verified.add((r, i))

    def _verify_all(self) -> None:
        """Taker with a short count: every blinding proof, every PET share (batched)."""
        if self.observer:
            return
        for r in range(len(self.requests)):
            self._verify_blinds([(p, r, i) for i in range(self.m) for p in self.others])
            for p in self.others:
                shares = [d for d, _ in self._pshare_raw[p][r][0]]
                self._verify_batch(p, r, shares, self._pshare_raw[p][r][1])
            self._verified.update((r, i) for i in range(self.m))

    def _find_matches(self) -> None:
        self.matches = []
        for r in range(len(self.requests)):
            found = []
            for i, (_za, zq) in enumerate(self.z[r]):
                try:
                    total = g.sum_points([*self.pshares[r][i], self._xza[r][i]])
                except InvalidPoint:
                    # an off-curve share: name its sender (first in seat order)
                    self._verify_position(r, i)
                    raise
                if zq == total:
                    found.append(i)
            self.matches.append(found)
        if any(len(f) < k for f, (_, k) in zip(self.matches, self.requests, strict=True)):
            # A short claim is public: make sure no match was hidden by a bad blinding or
            # share (every proof of every position is checked before claiming).
            self._verify_all()

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
            for i in pos:  # the taker checks what it takes before taking it
                if 0 <= i < self.m:
                    self._verify_position(r, i)
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
                for i in pos:  # every blinding and PET share of a taken token is checked
                    self._verify_position(r, i)
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

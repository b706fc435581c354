"""Steal: the thief takes a uniformly random token of the victim; only they learn its label.

Args ``[thief, victim]`` or ``[thief, victim, "cut-and-choose"]`` (distinct; the victim's
hand must not be empty).

1. ``reshuffle`` (victim): ``[deck, proof]`` — the victim re-encrypts and permutes its own
   hand with a Terelius–Wikström proof (or, with the third argument, a cut-and-choose proof
   with the session's λ). This breaks every public linkage
   (e.g. a token shown to the Vizier), so the thief cannot aim at a known token.
2. ``pick`` (thief): ``[i]`` chosen with the CSPRNG. It is uniform if either the victim's
   shuffle or the thief's pick is honest.
3. ``share`` (all but the thief): ``[[D, proof]]`` for token i; the thief adds its own share.

Zone order: the victim's hand is replaced by the re-shuffled list, then position i is removed
and appended to the thief's hand. Public labels of the victim's hand are forgotten.
Learned: thief and victim the stolen label; the public only that one token moved.
"""

from __future__ import annotations

import secrets
from typing import Any

from .. import shuffle as sh
from ..elgamal import Ciphertext, decode_deck, encode_deck, parse_deck
from ..errors import CheatDetected, MalformedInput, ProofInvalid, ProtocolStateError
from ..ledger import Slot
from .base import Op, Step, StepHandlers, check_int, check_list
from .shares import check_shares, decode_label, make_shares, own_share


class Steal(Op):
    """Op ``steal``."""

    name = "steal"

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        if isinstance(self.args, list) and len(self.args) == 3:
            thief, victim, kind = self.args
            if kind != sh.PROOF_CC:
                raise MalformedInput("steal proof kind must be 'cut-and-choose' if given")
            sh.check_lambda(self.ctx.lam)  # no cut-and-choose steal under a weak λ
        else:
            thief, victim = check_list(self.args, "steal args", 2)
            kind = sh.PROOF_TW
        self.proof_kind: str = kind
        self.thief = check_int(thief, "thief", 0, self.ctx.n)
        self.victim = check_int(victim, "victim", 0, self.ctx.n)
        if self.thief == self.victim:
            raise MalformedInput("a party cannot steal from itself")
        self.old = self.ledger.hands[self.victim]
        if not self.old:
            raise MalformedInput("the victim has no token")
        self.ctx.require_keys()
        others = [p for p in range(self.ctx.n) if p != self.thief]
        self.steps = [Step("reshuffle", [self.victim]), Step("pick", [self.thief]),
                      Step("share", others)]
        self.deck: list[Ciphertext] = []
        self.witness: sh.Witness | None = None
        self.pick = -1
        self._shares: list[bytes] = []

    def shuffle_for_me(self, deck: list[Ciphertext]) -> tuple[list[Ciphertext], sh.Witness]:
        """Honest self-shuffle (tests subclass this to build cheaters)."""
        return sh.shuffle(deck, self.ctx.require_keys())

    def step_handlers(self) -> dict[str, StepHandlers]:
        """Handlers of this op's steps (see :meth:`Op.step_handlers`)."""
        return {
            "reshuffle": StepHandlers(self.make_reshuffle, self.on_reshuffle),
            "pick": StepHandlers(self.make_pick, self.on_pick),
            "share": StepHandlers(self.make_share, self.on_share),
        }

    def make_reshuffle(self, st: Step) -> list[Any]:
        inp = [s.ct for s in self.old]
        out, w = self.shuffle_for_me(inp)
        self.witness = w
        proof = sh.prove_kind(self.proof_kind, inp, out, w, self.ctx.require_keys(),
                              self.dleq_ctx(self.victim, "steal-shuffle"), self.ctx.lam)
        return [encode_deck(out), proof]

    def on_reshuffle(self, st: Step, sender: int, payload: Any) -> None:
        raw, proof = check_list(payload, "reshuffle", 2)
        if sender == self.ctx.me:
            self.deck = [(a, b) for a, b in raw]
            return
        inp = [s.ct for s in self.old]
        if self.proof_kind == sh.PROOF_TW:  # the verification validates every output point
            out = parse_deck(raw, "victim deck", len(inp))
        else:
            out = decode_deck(raw, "victim deck", len(inp))
        try:
            sh.verify_kind(self.proof_kind, inp, out, proof, self.ctx.require_keys(),
                           self.dleq_ctx(self.victim, "steal-shuffle"), self.ctx.lam)
        except ProofInvalid as exc:
            raise CheatDetected(sender, "shuffle-proof-invalid", exc.reason) from exc
        except sh.LambdaRefused as exc:  # our parameter, never the prover's fault
            raise ProtocolStateError(str(exc)) from exc
        self.deck = out

    def choose_index(self) -> int:
        """Honest thief: uniform index from the CSPRNG."""
        return secrets.randbelow(len(self.deck))

    def make_pick(self, st: Step) -> list[Any]:
        return [self.choose_index()]

    def on_pick(self, st: Step, sender: int, payload: Any) -> None:
        (i,) = check_list(payload, "pick", 1)
        self.pick = check_int(i, "picked index", 0, len(self.deck))

    def make_share(self, st: Step) -> list[Any]:
        return make_shares(self, [self.deck[self.pick][0]], "steal")

    def on_share(self, st: Step, sender: int, payload: Any) -> None:
        if sender == self.ctx.me:
            self._shares.append(payload[0][0])
        else:
            self._shares.extend(check_shares(self, sender, [self.deck[self.pick][0]], payload,
                                             "steal"))

    def finish(self) -> None:
        me = self.ctx.me
        label = None
        if me == self.thief:
            ct = self.deck[self.pick]
            label = decode_label(self, ct, [*self._shares, own_share(self, ct[0])])
            if label is None:
                raise CheatDetected(None, "invalid-plaintext", "stolen token is no label")
        new = [Slot(ct) for ct in self.deck]
        if me == self.victim and self.witness is not None:
            for slot, src in zip(new, self.witness.perm, strict=True):
                slot.known = self.old[src].label()
            label = new[self.pick].known
        stolen = new.pop(self.pick)
        stolen.known = label
        self.ledger.hands[self.victim] = new
        self.ledger.hands[self.thief].append(stolen)
        self.result = {"thief": self.thief, "victim": self.victim, "index": self.pick,
                       "thief_position": len(self.ledger.hands[self.thief]) - 1}
        if me in (self.thief, self.victim):
            self.private = {"label": label}
        if me == self.victim:
            self.private["new_order"] = list(self.witness.perm) if self.witness else []

"""Shuffle chain shared by the deal and the bag reshuffle.

Steps ``shuffle_0 … shuffle_{N-1}``, one sender each, in seat order: party k re-encrypts and
permutes the deck output by party k−1 and broadcasts ``[deck, proof]`` (verified mode: a
cut-and-choose proof with the session's λ) or ``[deck, None]`` (audit mode: the witness is
kept and published with the secrets). Every receiver validates every point of every deck and,
in verified mode, the proof; a bad deck names its shuffler (rule ``shuffle-proof-invalid``).
The result is uniform as long as one shuffler is honest.
"""

from __future__ import annotations

from typing import Any

from .. import shuffle as sh
from ..elgamal import Ciphertext, decode_deck, encode_deck
from ..errors import CheatDetected, MalformedInput
from .base import Op, Step, check_list


class ShuffleChain(Op):
    """Mixin op: runs the chain on ``self.deck`` when ``self.verified`` says how to prove."""

    verified: bool
    deck: list[Ciphertext]

    def chain_steps(self) -> list[Step]:
        """The N sequential shuffle steps."""
        return [Step(f"shuffle_{k}", [k]) for k in range(self.ctx.n)]

    def init_chain(self, deck: list[Ciphertext], verified: bool) -> None:
        """Set the input deck and mode; the decks of every step are kept for the auditor."""
        self.deck = deck
        self.verified = verified
        self.decks: list[list[Ciphertext]] = [deck]
        #: This party's own witness (published at the end in audit mode).
        self.witness: sh.Witness | None = None

    def proof_context(self, k: int) -> list[object]:
        """Fiat–Shamir context of shuffler ``k``'s proof."""
        return self.dleq_ctx(k, "shuffle", len(self.decks) - 1)

    def make_shuffle(self, st: Step) -> list[Any]:
        joint = self.ctx.require_keys()
        out, w = self.shuffle_for_me(self.deck)
        self.witness = w
        proof = None
        if self.verified:
            proof = sh.prove(self.deck, out, w, joint, self.proof_context(st.senders[0]),
                             self.ctx.lam)
        return [encode_deck(out), proof]

    def shuffle_for_me(self, deck: list[Ciphertext]) -> tuple[list[Ciphertext], sh.Witness]:
        """Honest shuffle (tests subclass this to build cheaters)."""
        return sh.shuffle(deck, self.ctx.require_keys())

    def on_shuffle(self, st: Step, sender: int, payload: Any) -> None:
        raw, proof = check_list(payload, "shuffle message", 2)
        if sender == self.ctx.me:  # produced locally: already valid, no self-verification
            self.deck = [(a, b) for a, b in raw]
            self.decks.append(self.deck)
            return
        out = decode_deck(raw, "shuffled deck", len(self.deck))
        if self.verified:
            if proof is None:
                raise MalformedInput("verified-mode shuffle without a proof")
            why = sh.verify(self.deck, out, proof, self.ctx.require_keys(),
                            self.proof_context(sender), self.ctx.lam)
            if why is not None:
                raise CheatDetected(sender, "shuffle-proof-invalid", why)
        elif proof is not None:
            raise MalformedInput("audit-mode shuffle must not carry a proof")
        self.deck = out
        self.decks.append(out)

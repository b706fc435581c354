"""Shuffle chain shared by the deal and the bag reshuffle.

Steps ``shuffle_0 … shuffle_{N-1}``, one sender each, in seat order: party k re-encrypts and
permutes the deck output by party k−1 and broadcasts ``[deck, proof]`` (verified mode: a
Terelius–Wikström proof by default, or a cut-and-choose proof with the session's λ when the
op's mode argument is ``"cut-and-choose"``) or ``[deck, None]`` (audit mode: the witness is
kept and published with the secrets). In verified mode every receiver checks the proof and
validates every point of every deck (for TW, through the verification's multiplications);
in audit mode a party validates its own input deck and the final deck (see
:meth:`ShuffleChain.must_validate`). A bad deck names its shuffler (rule
``shuffle-proof-invalid``, or ``invalid-point``).
The result is uniform as long as one shuffler is honest.
"""

from __future__ import annotations

from typing import Any

from .. import shuffle as sh
from ..elgamal import Ciphertext, decode_deck, encode_deck, parse_deck
from ..errors import CheatDetected, MalformedInput, ProofInvalid, ProtocolStateError
from .base import Op, Step, StepHandlers, check_list


class ShuffleChain(Op):
    """Mixin op: runs the chain on ``self.deck`` when ``self.verified`` says how to prove."""

    verified: bool
    proof_kind: str | None
    deck: list[Ciphertext]

    def chain_steps(self) -> list[Step]:
        """The N sequential shuffle steps."""
        return [Step(f"shuffle_{k}", [k]) for k in range(self.ctx.n)]

    def init_chain(self, deck: list[Ciphertext], verified: object) -> None:
        """Set the input deck and mode (see :func:`crypto.shuffle.parse_mode`); the decks of
        every step are kept for the auditor."""
        self.deck = deck
        self.proof_kind = sh.parse_mode(verified)
        #: audit mode with a TW-proven last shuffle (``"audit-last-tw"``)
        self.last_proven = verified == sh.AUDIT_LAST_PROVEN
        if self.proof_kind == sh.PROOF_CC:
            sh.check_lambda(self.ctx.lam)  # no cut-and-choose chain under a weak λ
        self.verified = self.proof_kind is not None
        self.decks: list[list[Ciphertext]] = [deck]
        #: This party's own witness (published at the end in audit mode).
        self.witness: sh.Witness | None = None

    def progress(self) -> tuple[int, int] | None:
        """Shuffles finished so far out of N (the input deck plus one deck per shuffle)."""
        decks = getattr(self, "decks", None)
        if decks is None:
            return (0, self.ctx.n)
        return (min(len(decks) - 1, self.ctx.n), self.ctx.n)

    def proof_context(self, k: int) -> list[object]:
        """Fiat–Shamir context of shuffler ``k``'s proof."""
        return self.dleq_ctx(k, "shuffle", len(self.decks) - 1)

    def step_proof(self, k: int) -> str | None:
        """Proof kind of shuffler ``k``'s step: the chain's kind, except that in
        ``"audit-last-tw"`` mode the last shuffle is TW-proven.

        Why the last one: in audit mode a shuffler may output fresh encryptions of a layout
        it chose; any honest shuffler after it re-permutes that layout unseen by it, so only
        a cheater with no honest seat after it learns the hands. Proving the last shuffle
        makes its output a true re-encrypted permutation of its input: a coalition must hold
        the last seat *and* an unproven seat after every honest one — both of the last two
        seats at least. Integrity of the other shuffles is still only checked at the audit
        (their witnesses)."""
        if getattr(self, "last_proven", False) and k == self.ctx.n - 1:  # older snapshots
            return sh.PROOF_TW
        return self.proof_kind

    def must_validate(self, sender: int) -> bool:
        """Whether this party validates every point of ``sender``'s output deck on receipt.

        Observers (the auditor) validate every deck; a party validates the deck it is about
        to shuffle itself (an honest shuffler never re-encrypts an invalid point, so a
        torsion "tag" can never be carried through an honest shuffle) and the final deck
        (which everybody uses). An invalid intermediate deck is thus caught live by the
        next shuffler, which aborts naming its producer; every other peer names the same
        producer by auditing the transcript.
        """
        me = self.ctx.me
        n = self.ctx.n
        # a proven last shuffle is verified by everyone, and TW needs a validated input
        return (me is None or sender == me - 1 or sender == n - 1
                or (getattr(self, "last_proven", False) and sender == n - 2))

    def step_handlers(self) -> dict[str, StepHandlers]:
        """The chain's ``shuffle_k`` steps (ops with more steps add theirs)."""
        return {"shuffle": StepHandlers(self.make_shuffle, self.on_shuffle)}

    def make_shuffle(self, st: Step) -> list[Any]:
        joint = self.ctx.require_keys()
        out, w = self.shuffle_for_me(self.deck)
        self.witness = w
        proof = None
        kind = self.step_proof(st.senders[0])
        if kind is not None:
            proof = sh.prove_kind(kind, self.deck, out, w, joint,
                                  self.proof_context(st.senders[0]), self.ctx.lam)
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
        kind = self.step_proof(sender)
        if kind == sh.PROOF_TW or not self.must_validate(sender):
            # TW: the proof verification validates every output point. Audit mode: an
            # intermediate deck is validated by the next shuffler only (see must_validate).
            out = parse_deck(raw, "shuffled deck", len(self.deck))
        else:
            out = decode_deck(raw, "shuffled deck", len(self.deck))
        if kind is not None:
            if proof is None:
                raise MalformedInput("verified-mode shuffle without a proof")
            try:
                sh.verify_kind(kind, self.deck, out, proof, self.ctx.require_keys(),
                               self.proof_context(sender), self.ctx.lam)
            except ProofInvalid as exc:
                raise CheatDetected(sender, "shuffle-proof-invalid", exc.reason) from exc
            except sh.LambdaRefused as exc:  # our parameter, never the prover's fault
                raise ProtocolStateError(str(exc)) from exc
        elif proof is not None:
            raise MalformedInput("an unproven (audit-mode) shuffle must not carry a proof")
        self.deck = out
        self.decks.append(out)

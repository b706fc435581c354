"""Sealed (simultaneous) reveal: every party shows any subset of its tokens of one label.

Args ``[label]``; each party's subset (positions in its own hand) is a private input.

1. ``commit`` (all): ``[C]`` with ``C = commit(game, op, party, "sealed:"+label,
   [positions, hand-ciphertexts])`` — nonce'd, bound to the party (copying is useless).
2. ``reveal`` (all, only after every commitment): ``[positions, nonce]``; receivers check the
   opening (``commitment-mismatch``) and that positions are sorted, distinct, in range.
3. ``share`` (all): ``[[D, …], proof]`` — the shares of every revealed token (parties in
   seat order) with one batched DLEQ proof (dleq.prove_batch; ``proof`` is ``None`` when
   nothing is revealed).
   Every revealed token must decrypt to the label, else the revealer is named
   (``sealed-wrong-label``).

Zone order unchanged; revealed slots become publicly labelled. Everyone learns which
positions each party revealed and that they carry the label. A party that never sends its
reveal is named by ``waiting_for()`` (identifiable abort).
"""

from __future__ import annotations

from typing import Any

from .. import commitment
from .. import group as g
from ..errors import CheatDetected, MalformedInput
from .base import Op, Step, StepHandlers, check_int, check_list
from .shares import check_shares_batch, decode_label, make_shares_batch


class SealedReveal(Op):
    """Op ``sealed``."""

    name = "sealed"

    def __init__(self, *a: Any, choice: list[int] | None = None, **kw: Any) -> None:
        super().__init__(*a, **kw)
        (label,) = check_list(self.args, "sealed args", 1)
        if not isinstance(label, str) or not label:
            raise MalformedInput("sealed label must be a non-empty string")
        self.label = label
        self.ctx.point_of(label)
        me = self.ctx.me
        if me is not None:
            choice = sorted(choice or [])
            self.ledger.check_positions(me, choice)
        self.choice = choice or []
        n = self.ctx.n
        self.steps = [Step("commit", list(range(n))), Step("reveal", list(range(n))),
                      Step("share", list(range(n)))]
        self.commits: list[bytes] = [b""] * n
        self.revealed: list[list[int]] = [[] for _ in range(n)]
        self._nonce = b""
        self._shares: list[list[g.Point]] = []

    def _value(self, party: int, positions: list[int]) -> list[object]:
        hand = [list(ct) for ct in self.ledger.tokens(party)]
        return [positions, hand]

    def _purpose(self) -> str:
        return "sealed:" + self.label

    def commit_value(self) -> list[int]:
        """Positions committed to (tests override to build cheaters)."""
        return self.choice

    def step_handlers(self) -> dict[str, StepHandlers]:
        """Handlers of this op's steps (see :meth:`Op.step_handlers`)."""
        return {
            "commit": StepHandlers(self.make_commit, self.on_commit),
            "reveal": StepHandlers(self.make_reveal, self.on_reveal),
            "share": StepHandlers(self.make_share, self.on_share),
        }

    def make_commit(self, st: Step) -> list[Any]:
        assert self.ctx.me is not None
        c, self._nonce = commitment.commit(self.ctx.game_id, self.index, self.ctx.me,
                                           self._purpose(),
                                           self._value(self.ctx.me, self.commit_value()))
        return [c]

    def on_commit(self, st: Step, sender: int, payload: Any) -> None:
        (c,) = check_list(payload, "commitment", 1)
        if not isinstance(c, bytes) or len(c) != 32:
            raise MalformedInput("commitment must be 32 bytes")
        self.commits[sender] = c

    def reveal_value(self) -> tuple[list[int], bytes]:
        """Opening sent (tests override to build cheaters)."""
        return self.choice, self._nonce

    def make_reveal(self, st: Step) -> list[Any]:
        pos, nonce = self.reveal_value()
        return [list(pos), nonce]

    def on_reveal(self, st: Step, sender: int, payload: Any) -> None:
        pos, nonce = check_list(payload, "reveal", 2)
        size = len(self.ledger.hands[sender])
        pos = [check_int(p, "revealed position", 0, size) for p in check_list(pos, "positions")]
        if pos != sorted(set(pos)):
            raise MalformedInput("revealed positions must be sorted and distinct")
        if not commitment.check_opening(self.commits[sender], self.ctx.game_id, self.index,
                                        sender, self._purpose(), self._value(sender, pos),
                                        nonce):
            raise CheatDetected(sender, "commitment-mismatch",
                                "sealed-reveal opening does not match the commitment")
        self.revealed[sender] = pos

    def _targets(self) -> list[tuple[int, int]]:
        return [(p, i) for p in range(self.ctx.n) for i in self.revealed[p]]

    def make_share(self, st: Step) -> list[Any]:
        return make_shares_batch(self, [self.ledger.hands[p][i].ct[0]
                                        for p, i in self._targets()], "sealed")

    def on_share(self, st: Step, sender: int, payload: Any) -> None:
        pts = [self.ledger.hands[p][i].ct[0] for p, i in self._targets()]
        if not self._shares:
            self._shares = [[] for _ in pts]
        if sender == self.ctx.me:
            shares = list(payload[0])
        else:
            shares = check_shares_batch(self, sender, pts, payload, "sealed")
        for j, d in enumerate(shares):
            self._shares[j].append(d)

    def finish(self) -> None:
        for j, (p, i) in enumerate(self._targets()):
            slot = self.ledger.hands[p][i]
            lab = decode_label(self, slot.ct, self._shares[j])
            if lab != self.label:
                raise CheatDetected(p, "sealed-wrong-label",
                                    f"party {p} revealed position {i} as {self.label!r} "
                                    f"but it is {lab!r}")
            slot.public = lab
        self.result = {"label": self.label, "revealed": [list(r) for r in self.revealed]}

"""Key set-up: every party publishes ``y_j`` with a Schnorr proof bound to game and seat.

Messages: step ``key`` (all, parallel): ``[y_j, proof]``.
Checks: ``y_j`` is a valid non-identity subgroup point; the proof verifies for (game id, j).
Result: the public keys and the joint key ``Y = Σ y_j`` (identical everywhere).
"""

from __future__ import annotations

from typing import Any

from .. import group as g
from .. import schnorr
from ..errors import CheatDetected, ProofInvalid
from .base import Op, Step, StepHandlers, check_list


class KeySetup(Op):
    """Op ``keys``: establish the joint ElGamal key."""

    name = "keys"

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.steps = [Step("key", list(range(self.ctx.n)))]
        self._keys: list[g.Point | None] = [None] * self.ctx.n

    def step_handlers(self) -> dict[str, StepHandlers]:
        """Handlers of this op's steps (see :meth:`Op.step_handlers`)."""
        return {"key": StepHandlers(self.make_key, self.on_key)}

    def make_key(self, st: Step) -> list[Any]:
        assert self.ctx.x is not None and self.ctx.me is not None
        y = g.base_mul(self.ctx.x)
        return [y, schnorr.prove_key(self.ctx.x, y, self.ctx.game_id, self.ctx.me)]

    def on_key(self, st: Step, sender: int, payload: Any) -> None:
        y_raw, proof = check_list(payload, "key message", 2)
        y = g.decode_point(y_raw, "public key")  # InvalidPoint → rule "invalid-point"
        try:
            schnorr.verify_key(y, proof, self.ctx.game_id, sender)
        except ProofInvalid as exc:
            raise CheatDetected(sender, "key-proof-invalid",
                                "Schnorr proof of key knowledge does not verify (rogue key?)"
                                ) from exc
        self._keys[sender] = y

    def finish(self) -> None:
        keys = [k for k in self._keys if k is not None]
        joint = g.sum_points(keys)
        if joint == g.IDENTITY:  # pragma: no cover - needs a 2^-252 coincidence
            raise CheatDetected(self.ctx.n - 1, "invalid-point", "joint key is the identity")
        self.ctx.keys = keys
        self.ctx.joint = joint
        self.result = {"keys": keys, "joint": joint}

"""End-of-game secret reveal: every party publishes its key share and shuffle witnesses.

Args ``[]``. Step ``secrets`` (all): ``[x_j, [[op_index, witness], …]]`` where the witnesses
are those of this party's audit-mode shuffles. Check: ``x_j·G = y_j`` (``secret-key-mismatch``).
After this op the session is closed: nothing is hidden any more.
"""

from __future__ import annotations

from typing import Any

from .. import group as g
from ..errors import CheatDetected, MalformedInput
from .base import Op, Step, StepHandlers, check_int, check_list


class RevealSecrets(Op):
    """Op ``secrets``."""

    name = "secrets"

    def __init__(self, *a: Any, witnesses: list[list[Any]] | None = None, **kw: Any) -> None:
        super().__init__(*a, **kw)
        check_list(self.args, "secrets args", 0)
        self.witnesses = witnesses or []
        self.steps = [Step("secrets", list(range(self.ctx.n)))]
        self.keys: list[int] = [0] * self.ctx.n
        self.published: list[dict[int, Any]] = [{} for _ in range(self.ctx.n)]

    def step_handlers(self) -> dict[str, StepHandlers]:
        """Handlers of this op's steps (see :meth:`Op.step_handlers`)."""
        return {"secrets": StepHandlers(self.make_secrets, self.on_secrets)}

    def make_secrets(self, st: Step) -> list[Any]:
        assert self.ctx.x is not None
        return [g.encode_scalar(self.ctx.x), self.witnesses]

    def on_secrets(self, st: Step, sender: int, payload: Any) -> None:
        xb, wits = check_list(payload, "secrets", 2)
        x = g.decode_scalar(xb, "secret key")
        if g.base_mul(x) != self.ctx.keys[sender]:
            raise CheatDetected(sender, "secret-key-mismatch",
                                "published secret key does not match the public key")
        self.keys[sender] = x
        for item in check_list(wits, "witness list"):
            idx, w = check_list(item, "witness entry", 2)
            idx = check_int(idx, "op index", 0)
            if idx in self.published[sender]:
                raise MalformedInput(f"two witnesses for op {idx}")
            self.published[sender][idx] = w

    def finish(self) -> None:
        self.result = {"secret_keys": list(self.keys),
                       "witnesses": [dict(sorted(w.items())) for w in self.published]}

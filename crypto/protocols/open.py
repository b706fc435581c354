"""Public open of tokens in one zone (sales, give-aways, Grand Vizier, final reveal).

Args ``[zone, positions]``. Messages: ``share`` (all, parallel): ``[[D, proof], …]`` in the
order of ``positions``. Checks: every DLEQ proof; the opened plaintexts must be labels
(otherwise ``invalid-plaintext``, attributable only at the audit). Zone order unchanged; the
slots become publicly labelled. Everyone learns the labels of exactly those positions.
"""

from __future__ import annotations

from typing import Any

from ..errors import CheatDetected
from .base import Op, Step, StepHandlers, check_int, check_list
from .shares import check_shares, decode_label, make_shares


class Open(Op):
    """Op ``open``."""

    name = "open"

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        zone, positions = check_list(self.args, "open args", 2)
        self.zone = check_int(zone, "zone", -1, self.ctx.n)
        self.ledger.check_positions(self.zone, positions)
        self.positions: list[int] = list(positions)
        toks = self.ledger.tokens(self.zone)
        self.cts = [toks[p] for p in self.positions]
        self.steps = [Step("share", list(range(self.ctx.n)))]
        self._shares: list[list] = [[] for _ in self.cts]

    def step_handlers(self) -> dict[str, StepHandlers]:
        """Handlers of this op's steps (see :meth:`Op.step_handlers`)."""
        return {"share": StepHandlers(self.make_share, self.on_share)}

    def make_share(self, st: Step) -> list[Any]:
        return make_shares(self, [c[0] for c in self.cts], "open")

    def on_share(self, st: Step, sender: int, payload: Any) -> None:
        if sender == self.ctx.me:
            shares = [item[0] for item in payload]
        else:
            shares = check_shares(self, sender, [c[0] for c in self.cts], payload, "open")
        for i, d in enumerate(shares):
            self._shares[i].append(d)

    def finish(self) -> None:
        labels = []
        zone = self.ledger.zone(self.zone)
        for i, (p, ct) in enumerate(zip(self.positions, self.cts, strict=True)):
            lab = decode_label(self, ct, self._shares[i])
            if lab is None:
                raise CheatDetected(None, "invalid-plaintext",
                                    f"zone {self.zone} position {p} decrypts to no label")
            labels.append(lab)
            zone[p].public = lab
        self.result = {"zone": self.zone, "positions": self.positions, "labels": labels}

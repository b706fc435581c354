"""Deal: shuffle chain over the public initial deck, then private reveal of k tokens each.

Args ``[[[label, count], …], k, verified]`` where ``verified`` is ``False`` (audit mode),
``True``/``"tw"`` (Terelius–Wikström proofs) or ``"cut-and-choose"`` (λ-round proofs).
The initial deck is the public encryption
(r = 1) of the labels expanded in the given order; every peer recomputes it.

Messages: ``shuffle_0 … shuffle_{N-1}`` (see chain.py), then ``share`` (all, parallel): for
every dealt position not owned by the sender, in position order, ``[D, proof]``.
Checks: the DLEQ proof of every share the checking party uses (its own positions; an
observer checks all); the recipient checks its tokens decrypt to a label.
Result / zone order: final deck positions ``p·k … p·k+k−1`` become party p's hand (in that
order); the remaining positions, in order, become the bag. Requires an empty ledger.
Learned: each party the labels of its own k tokens; the public nothing.
"""

from __future__ import annotations

from typing import Any

from .. import shuffle as sh
from ..elgamal import public_token
from ..errors import CheatDetected, MalformedInput, ProtocolStateError
from ..ledger import Slot
from .base import Step, StepHandlers, check_int, check_list
from .chain import ShuffleChain
from .shares import check_shares, decode_label, make_shares, own_share


def expand_labels(spec: Any) -> list[str]:
    """``[[label, count], …]`` → the list of labels of the initial deck."""
    out: list[str] = []
    for item in check_list(spec, "deck spec"):
        label, count = check_list(item, "deck spec entry", 2)
        if not isinstance(label, str) or not label:
            raise MalformedInput("deck labels must be non-empty strings")
        out.extend([label] * check_int(count, "label count", 0, 10_000))
    return out


class Deal(ShuffleChain):
    """Op ``deal``."""

    name = "deal"

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        spec, k, verified = check_list(self.args, "deal args", 3)
        self.labels = expand_labels(spec)
        n = self.ctx.n
        self.k = check_int(k, "tokens per party", 0, len(self.labels) // n + 1)
        sh.parse_mode(verified)  # MalformedInput unless a known mode
        if self.ledger.bag or any(self.ledger.hands):
            raise ProtocolStateError("deal requires an empty ledger")
        joint = self.ctx.require_keys()
        for lab in self.labels:
            self.ctx.point_of(lab)
        self.initial = [public_token(lab, joint) for lab in self.labels]
        self.init_chain(list(self.initial), verified)
        self.steps = [*self.chain_steps(), Step("share", list(range(n)))]
        self._shares: dict[int, list] = {}

    def owner(self, pos: int) -> int | None:
        """Party that receives final position ``pos`` (None: stays in the bag)."""
        return pos // self.k if self.k and pos < self.k * self.ctx.n else None

    def _others_positions(self, party: int) -> list[int]:
        return [p for p in range(self.k * self.ctx.n) if self.owner(p) != party]

    def step_handlers(self) -> dict[str, StepHandlers]:
        """The shuffle chain's steps, then the private reveal of the hands."""
        return {**super().step_handlers(), "share": StepHandlers(self.make_share, self.on_share)}

    def make_share(self, st: Step) -> list[Any]:
        assert self.ctx.me is not None
        pos = self._others_positions(self.ctx.me)
        return make_shares(self, [self.deck[p][0] for p in pos], "deal")

    def on_share(self, st: Step, sender: int, payload: Any) -> None:
        pos = self._others_positions(sender)
        me = self.ctx.me
        if sender == me:
            shares = [item[0] for item in payload]
        else:
            # A party verifies only the shares it uses (those of its own positions); a bad
            # share for party t aborts t, naming the sender. Observers verify every share.
            only = None if me is None else {j for j, p in enumerate(pos) if self.owner(p) == me}
            shares = check_shares(self, sender, [self.deck[p][0] for p in pos], payload, "deal",
                                  only)
        for p, d in zip(pos, shares, strict=True):
            self._shares.setdefault(p, []).append(d)

    def finish(self) -> None:
        n, k = self.ctx.n, self.k
        me = self.ctx.me
        mine: list[str] = []
        if me is not None and k:
            for p in range(me * k, me * k + k):
                ct = self.deck[p]
                lab = decode_label(self, ct, [*self._shares[p], own_share(self, ct[0])])
                if lab is None:
                    raise CheatDetected(None, "invalid-plaintext",
                                        f"dealt position {p} decrypts to no label")
                mine.append(lab)
        for q in range(n):
            self.ledger.hands[q] = [Slot(self.deck[p]) for p in range(q * k, q * k + k)]
        if me is not None:
            for slot, lab in zip(self.ledger.hands[me], mine, strict=True):
                slot.known = lab
        self.ledger.bag = [Slot(ct) for ct in self.deck[n * k:]]
        self.result = {"hand_sizes": [k] * n, "bag_size": len(self.deck) - n * k}
        self.private = {"labels": mine}


class ReshuffleBag(ShuffleChain):
    """Op ``reshuffle_bag`` (args ``[verified]``): joint re-shuffle of the bag.

    ``verified`` as for the deal. Used when the bag is "dirty" (publicly known or
    taker-known positions) before a random draw.
    Zone order: the bag is replaced by the final deck; public labels are forgotten.
    """

    name = "reshuffle_bag"

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        (verified,) = check_list(self.args, "reshuffle args", 1)
        self.ctx.require_keys()
        self.init_chain(self.ledger.tokens(-1), verified)
        self.steps = self.chain_steps()

    def finish(self) -> None:
        self.ledger.bag = [Slot(ct) for ct in self.deck]
        self.result = {"bag_size": len(self.deck)}

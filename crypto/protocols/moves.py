"""Public moves that need no cryptography: return to bag, transfer between hands, set aside.

Both are announced by the party giving the tokens (step ``announce``, payload ``[]``) so every
op appears in the signed transcript and the auditor can replay it.

* ``return`` args ``[party, positions]``: the positions (pre-op numbering) are removed from
  the party's hand and appended to the bag in the listed order, keeping public labels.
* ``transfer`` args ``[src, dst, positions]``: removed from src's hand, appended to dst's
  hand in the listed order, keeping public labels.
* ``aside`` args ``[party, positions]``: removed from the party's hand and appended to the
  tokens set aside (zone ``ASIDE``: out of play for good) in the listed order.  Only
  publicly labelled tokens may be set aside, so what leaves play is known to everyone
  (Silk Road sets aside the Grand Vizier's marker, just withdrawn from the bag by label).
"""

from __future__ import annotations

from typing import Any

from ..errors import MalformedInput
from ..ledger import ASIDE, BAG
from .base import Op, Step, StepHandlers, check_int, check_list


class Return(Op):
    """Op ``return``."""

    name = "return"

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        party, positions = check_list(self.args, f"{self.name} args", 2)
        self.party = check_int(party, "party", 0, self.ctx.n)
        self.ledger.check_positions(self.party, positions)
        self.positions: list[int] = list(positions)
        self.steps = [Step("announce", [self.party])]

    def step_handlers(self) -> dict[str, StepHandlers]:
        """Handlers of this op's steps (see :meth:`Op.step_handlers`)."""
        return {"announce": StepHandlers(self.make_announce, self.on_announce)}

    def make_announce(self, st: Step) -> list[Any]:
        return []

    def on_announce(self, st: Step, sender: int, payload: Any) -> None:
        if payload != []:
            raise MalformedInput("announce payload must be empty")

    def finish(self) -> None:
        start = len(self.ledger.bag)
        slots = self.ledger.remove(self.party, self.positions)
        self.ledger.zone(BAG).extend(slots)
        self.result = {"party": self.party, "bag_positions": list(range(start, start + len(slots)))}


class Transfer(Op):
    """Op ``transfer``."""

    name = "transfer"

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        src, dst, positions = check_list(self.args, "transfer args", 3)
        self.src = check_int(src, "src", 0, self.ctx.n)
        self.dst = check_int(dst, "dst", 0, self.ctx.n)
        if self.src == self.dst:
            raise MalformedInput("transfer to oneself")
        self.ledger.check_positions(self.src, positions)
        self.positions: list[int] = list(positions)
        self.steps = [Step("announce", [self.src])]

    def step_handlers(self) -> dict[str, StepHandlers]:
        """Handlers of this op's steps (see :meth:`Op.step_handlers`)."""
        return {"announce": StepHandlers(self.make_announce, self.on_announce)}

    def make_announce(self, st: Step) -> list[Any]:
        return []

    def on_announce(self, st: Step, sender: int, payload: Any) -> None:
        if payload != []:
            raise MalformedInput("announce payload must be empty")

    def finish(self) -> None:
        start = len(self.ledger.hands[self.dst])
        slots = self.ledger.remove(self.src, self.positions)
        self.ledger.hands[self.dst].extend(slots)
        self.result = {"src": self.src, "dst": self.dst,
                       "dst_positions": list(range(start, start + len(slots)))}


class SetAside(Return):
    """Op ``aside``: like ``return`` (the party announces, nothing to prove), but the tokens
    leave play instead of going back to the bag, and only tokens whose colour is public
    may go (a Grand Vizier's marker: its colour was just withdrawn in the open)."""

    name = "aside"

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        hand = self.ledger.hands[self.party]
        if any(hand[p].public is None for p in self.positions):
            raise MalformedInput("only publicly labelled tokens may be set aside")

    def finish(self) -> None:
        start = len(self.ledger.aside)
        slots = self.ledger.remove(self.party, self.positions)
        self.ledger.zone(ASIDE).extend(slots)
        self.result = {"party": self.party,
                       "aside_positions": list(range(start, start + len(slots)))}

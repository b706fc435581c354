"""Step machinery: every op declares its step handlers explicitly, and an op with a step
that has none fails before it makes or handles any message."""

from __future__ import annotations

from typing import Any

import pytest

from crypto.ledger import Ledger
from crypto.protocols.base import Context, Op, Step, StepHandlers
from crypto.session import OPS


class _Half(Op):
    """Two kinds of step, handlers for one of them only."""

    name = "half"

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.steps = [Step("ping_0", [0]), Step("ping_1", [1]), Step("pong", [0, 1])]
        self.made: list[str] = []

    def step_handlers(self) -> dict[str, StepHandlers]:
        return {"ping": StepHandlers(self.make_ping, self.on_ping)}

    def make_ping(self, st: Step) -> list[Any]:
        self.made.append(st.name)
        return []

    def on_ping(self, st: Step, sender: int, payload: Any) -> None:
        """Nothing to check."""


def test_step_kind_drops_the_index() -> None:
    assert [Step(n, [0]).kind for n in ("shuffle_0", "shuffle_12", "share", "pshare")] == \
        ["shuffle", "shuffle", "share", "pshare"]


def test_a_step_without_handlers_fails_at_start() -> None:
    op = _Half(Context(game_id=b"g", n=2, me=0), 0, [], Ledger(2))
    with pytest.raises(TypeError, match=r"_Half\.step_handlers\(\).*\['pong'\]"):
        op.start()
    assert op.made == [] and not op.started


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_handler_method_is_in_its_ops_table(name: str) -> None:
    """A ``make_x``/``on_x`` pair defined on an op is wired under kind ``x`` (the table
    needs no op state: it only binds methods)."""
    cls = OPS[name]
    op = cls.__new__(cls)
    table = op.step_handlers()
    kinds = sorted({m[len("make_"):] for m in dir(cls) if m.startswith("make_")})
    assert kinds and sorted(table) == kinds
    for kind, h in table.items():
        assert h.make == getattr(op, "make_" + kind)
        assert h.on == getattr(op, "on_" + kind)

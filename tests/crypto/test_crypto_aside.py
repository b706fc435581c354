"""The ``aside`` op: a publicly labelled token leaves play for good (zone ``ASIDE``).

Silk Road sets aside the Grand Vizier's marker right after withdrawing it from the bag by
label (p2p/protocol/resolution.py): no hand holds it afterwards (a theft cannot take it, the end
reveal does not show it), no withdraw can draw it again, and the audit still counts it in
its conservation check.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from crypto_testkit import LABELS, dealt_bus

from crypto.audit import OpEvent, audit
from crypto.errors import MalformedInput
from crypto.ledger import ASIDE, BAG
from crypto.protocols.moves import SetAside


def _withdraw_one(bus: Any, taker: int, label: str) -> None:
    ops = bus.run(lambda s: s.withdraw(taker, [(label, 1)], False))
    assert ops[0].result["success"]


def test_set_aside_leaves_play_and_audits_fair() -> None:
    bus = dealt_bus(3, per_label=4, k=1)  # 3 dealt: the bag keeps a silk whatever the deal
    ss = bus.sessions
    _withdraw_one(bus, 0, "silk")
    hand = len(ss[0].ledger.hands[0])
    pos = hand - 1
    assert ss[1].ledger.hands[0][pos].public == "silk"
    ops = bus.run(lambda s: s.set_aside(0, [pos]))
    assert ops[0].result == {"party": 0, "aside_positions": [0]}
    for s in ss:
        assert len(s.ledger.hands[0]) == hand - 1
        assert [sl.public for sl in s.ledger.zone(ASIDE)] == ["silk"]
    # the token set aside is no longer the bag's: a withdraw can find only the others
    ops = bus.run(lambda s: s.withdraw(1, [("silk", 9)], False))
    assert ops[1].result["claimed"][0] == len(ops[1].private["matches"][0])
    # a theft from party 0 re-shuffles its hand only: the token set aside stays put
    bus.run(lambda s: s.steal(2, 0))
    assert [sl.public for sl in ss[2].ledger.aside] == ["silk"]
    bus.run(lambda s: s.reveal_secrets())

    events: list[OpEvent] = []
    report = audit(bus.transcript, bus.keys, ss[0].ctx.game_id, lam=8,
                   hook=lambda e: events.append(e) if isinstance(e, OpEvent) else None)
    assert report.fair and report.complete, str(report)
    final = events[-2].zones  # before the secrets
    assert final[ASIDE] == ["silk"]
    in_play = Counter(lab for z, labs in final.items() if z != ASIDE for lab in labs)
    assert in_play == Counter({lab: 4 for lab in LABELS}) - Counter(["silk"])
    # the second silk withdraw saw every silk but the one set aside and those held
    aside_ev = next(e for e in events if e.name == "aside")
    held = sum(labs.count("silk") for z, labs in aside_ev.zones.items() if z not in (BAG, ASIDE))
    second = [e for e in events if e.name == "withdraw"][1]
    assert second.extra["available"] == [4 - 1 - held] == [aside_ev.zones[BAG].count("silk")]


def test_only_public_tokens_can_be_set_aside() -> None:
    bus = dealt_bus(3, per_label=2, k=2)
    s0 = bus.sessions[0]
    assert s0.ledger.hands[0][0].public is None  # dealt: hidden from the others
    with pytest.raises(MalformedInput, match="publicly labelled"):
        s0.set_aside(0, [0])
    with pytest.raises(MalformedInput):
        s0.set_aside(0, [5])  # no such position
    assert s0.ledger.zone(ASIDE) == [] and s0.ledger.zone_ids() == [BAG, 0, 1, 2, ASIDE]


class _HiddenAside(SetAside):
    """A cheater's ``aside`` that does not check the token is public."""

    def __init__(self, ctx: Any, index: int, args: Any, ledger: Any, **kw: Any) -> None:
        slot = ledger.hands[args[0]][args[1][0]]
        saved, slot.public = slot.public, "silk"
        try:
            super().__init__(ctx, index, args, ledger, **kw)
        finally:
            slot.public = saved


def test_the_audit_names_whoever_sets_a_hidden_token_aside() -> None:
    bus = dealt_bus(3, per_label=2, k=2, cheats={p: {"aside": _HiddenAside} for p in range(3)})
    bus.run(lambda s: s.set_aside(0, [0]))
    bus.run(lambda s: s.reveal_secrets())
    report = audit(bus.transcript, bus.keys, bus.sessions[0].ctx.game_id, lam=8)
    assert not report.fair and report.violation is not None
    assert report.violation.party == 0 and report.violation.rule == "malformed", str(report)

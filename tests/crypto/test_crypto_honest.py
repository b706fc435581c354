"""Honest runs of every protocol with 3–6 parties, followed by a fair audit."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from crypto_testkit import LABELS, dealt_bus, make_bus, public_state, spec

from crypto.audit import OpEvent, audit
from crypto.errors import ProtocolStateError
from crypto.ledger import BAG


def _same_everywhere(bus) -> None:
    ref = public_state(bus.sessions[0])
    assert all(public_state(s) == ref for s in bus.sessions[1:])


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_full_game_every_protocol(n: int) -> None:
    bus = dealt_bus(n, per_label=3 if n < 5 else 4, k=2)
    ss = bus.sessions
    total = Counter({lab: 3 if n < 5 else 4 for lab in LABELS})
    for s in ss:
        assert len(s.ledger.hands[s.me]) == 2 and None not in s.my_labels()
    _same_everywhere(bus)

    ops = bus.run(lambda s: s.open(1, [0]))
    assert ops[0].result["labels"] == [ss[1].my_labels()[0]]

    # withdraw two labels all-or-nothing, then an impossible request
    ops = bus.run(lambda s: s.withdraw(0, [("silk", 1), ("tea", 1)], True))
    res = ops[0].result
    matches = ops[0].private["matches"]
    assert len(matches) == 2 and not ops[1].private
    assert res["success"] == all(matches)
    assert res["claimed"] == [min(len(m), 1) for m in matches]
    if res["success"]:
        assert ss[0].my_labels()[-2:] == ["silk", "tea"]
        assert ss[1].ledger.hands[0][-1].public == "tea"
    ops = bus.run(lambda s: s.withdraw(2, [("jade", 99)], True))
    assert not ops[0].result["success"] and ops[0].result["taken"] == [[]]

    before = list(ss[0].my_labels())
    ops = bus.run(lambda s: s.steal(1, 0))
    stolen = ops[1].private["label"]
    assert stolen == ops[0].private["label"]
    assert ss[1].my_labels()[-1] == stolen
    assert Counter(ss[0].my_labels()) + Counter([stolen]) == Counter(before)
    assert ops[2].private == {}

    choice = {s.me: [i for i, lab in enumerate(s.my_labels()) if lab == "silk"] for s in ss}
    ops = bus.run(lambda s: s.sealed_reveal("silk", choice[s.me]))
    assert ops[0].result["revealed"] == [choice[p] for p in range(n)]

    bag = len(ss[0].ledger.bag)
    ops = bus.run(lambda s: s.return_to_bag(1, [0]))
    assert len(ss[0].ledger.bag) == bag + 1 and ops[0].result["bag_positions"] == [bag]
    bus.run(lambda s: s.transfer(2, 0, [0]))
    bus.run(lambda s: s.reshuffle_bag(False))
    ops = bus.run(lambda s: s.coin_flip("first player"))
    assert len({op.result["coin"] for op in ops}) == 1
    _same_everywhere(bus)
    bus.run(lambda s: s.reveal_secrets())
    with pytest.raises(ProtocolStateError):
        ss[0].open(BAG, [0])

    events: list[OpEvent] = []
    report = audit(bus.transcript, bus.keys, ss[0].ctx.game_id, lam=8,
                   hook=lambda e: events.append(e) if isinstance(e, OpEvent) else None)
    assert report.fair and report.complete, str(report)
    assert [e.name for e in events][:3] == ["keys", "deal", "open"]
    final = events[-2].zones  # before secrets
    assert Counter(lab for z in final.values() for lab in z) == total
    steal_ev = next(e for e in events if e.name == "steal")
    assert steal_ev.extra["stolen"] == stolen


def test_verified_deal_three_parties_and_audit() -> None:
    bus = dealt_bus(3, per_label=2, k=2, lam=8, verified=True)
    assert all(None not in s.my_labels() for s in bus.sessions)
    bus.run(lambda s: s.reveal_secrets())
    report = audit(bus.transcript, bus.keys, bus.sessions[0].ctx.game_id, lam=8)
    assert report.fair, str(report)


def test_one_op_at_a_time_and_buffering() -> None:
    bus = dealt_bus(3, k=1)
    s0, s1, s2 = bus.sessions
    out0 = s0.open(BAG, [0])
    with pytest.raises(ProtocolStateError):
        s0.open(BAG, [1])
    assert s0.waiting_for() == [1, 2]
    # parties 1 and 2 have not started the op yet: party 0's message is buffered
    assert s1.receive(0, out0[0]) == [] and not s1.busy
    out1 = s1.open(BAG, [0])
    assert s1.waiting_for() == [2]
    s0.receive(1, out1[0])
    out2 = s2.open(BAG, [0])
    s2.receive(0, out0[0])
    s2.receive(1, out1[0])
    s0.receive(2, out2[0])
    s1.receive(2, out2[0])
    labels = {tuple(s.last().result["labels"]) for s in bus.sessions}
    assert len(labels) == 1 and not any(s.busy for s in bus.sessions)


def test_audit_mode_six_party_deal_spec() -> None:
    bus = dealt_bus(6, per_label=15, k=3)
    assert len(bus.sessions[0].ledger.bag) == 57
    assert all(len(h) == 3 for h in bus.sessions[3].ledger.hands)


def test_session_progress_counts_the_shuffles_of_a_deal() -> None:
    """``TokenSession.progress()`` (the UI's "shuffling the bag k/N") goes 0..N during a
    deal's shuffle chain and is None for ops without stages and when idle."""
    n = 4
    bus = make_bus(n)
    seen: list[tuple[str, int, int] | None] = []

    def watch(sender: int, body: Any) -> list[Any]:
        seen.append(bus.sessions[0].progress())
        return [body]

    bus.intercept = watch
    bus.run(lambda s: s.deal(spec(), 3, False))
    stages = [p for p in seen if p is not None]
    # party 0 shuffles first, so its first message already reports one shuffle done
    assert stages[0] == ("deal", 1, n) and stages[-1] == ("deal", n, n)
    assert [p[1] for p in stages] == sorted(p[1] for p in stages)
    assert {p[1] for p in stages} == set(range(1, n + 1))
    assert bus.sessions[0].progress() is None
    seen.clear()
    bus.run(lambda s: s.coin_flip("x"))
    assert seen and all(p is None for p in seen)

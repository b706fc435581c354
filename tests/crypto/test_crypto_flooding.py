"""Per-sender early buffer: bodies of ops not yet started are held per sender,
and a sender that sends more than an honest party ever could is named live (``flooding``),
while every other sender's next body is still taken.  The auditor holds nothing ahead, so a
file's order cannot overflow anything in a seat's name."""

from __future__ import annotations

import pytest
from crypto_testkit import make_bus

from crypto.audit import audit
from crypto.errors import CheatDetected
from crypto.session import MAX_BUFFERED_PER_SENDER, TokenSession
from crypto.transcript import CRYPTO_KIND


def _future_body(op_index: int) -> list[object]:
    return [op_index, "open", [-1, [0]], "share", []]


def test_a_flooding_seat_is_named_and_an_honest_seat_is_still_heard() -> None:
    bus = make_bus(3)
    me = bus.sessions[0]
    flood = [bus.signers[2].sign(CRYPTO_KIND, _future_body(7))
             for _ in range(MAX_BUFFERED_PER_SENDER + 1)]
    for wire in flood[:-1]:
        assert me.receive(2, bus.logs[0].add(wire, via=2).body) == []
    # the flooder has filled its own share only: an honest seat's early body is taken
    honest = bus.signers[1].sign(CRYPTO_KIND, _future_body(2))
    assert me.receive(1, bus.logs[0].add(honest, via=1).body) == []
    with pytest.raises(CheatDetected) as e:
        me.receive(2, bus.logs[0].add(flood[-1], via=2).body)
    assert (e.value.culprit, e.value.rule) == (2, "flooding")
    # the auditor holds nothing ahead (it takes each sender's next envelope when the game
    # can use it), so no order of a file can overflow a buffer in a seat's name: bodies
    # for an op that never runs are left over, naming no one, in any order
    for order in ([*bus.transcript, *flood[:-1], honest, flood[-1]],
                  [*flood, honest, *bus.transcript]):
        report = audit(order, bus.keys, me.ctx.game_id, lam=8)
        assert report.violation is None, str(report)


def test_buffered_counts_survive_a_snapshot() -> None:
    bus = make_bus(3)
    s = bus.sessions[0]
    for _ in range(MAX_BUFFERED_PER_SENDER):
        s.receive(2, _future_body(4))
    s.receive(1, _future_body(4))
    back = TokenSession.restore(s.snapshot())
    back.receive(1, _future_body(5))
    with pytest.raises(CheatDetected) as e:
        back.receive(2, _future_body(5))
    assert (e.value.culprit, e.value.rule) == (2, "flooding")


def test_buffered_bodies_are_released_from_their_senders_count() -> None:
    """Bodies taken out of the buffer when their op starts no longer count: a sender that
    is honestly ahead, op after op, never accumulates towards the bound."""
    bus = make_bus(3)
    late = bus.sessions[0]
    for _round in range(MAX_BUFFERED_PER_SENDER + 1):
        queued = [(p, b) for p in (1, 2) for b in bus.sessions[p].coin_flip("p")]
        for p, body in queued:
            late.receive(p, body)
        assert sum(late._nbuf.values()) == 2
        bus._post(0, late.coin_flip("p"))
        for p, body in queued:
            for q in (1, 2):
                if q != p:
                    bus._post(q, bus.sessions[q].receive(p, body))
        bus.pump()
        assert not any(s.busy for s in bus.sessions)
        assert sum(late._nbuf.values()) == 0

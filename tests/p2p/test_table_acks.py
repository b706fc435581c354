"""Cumulative acks (p2p/protocol/ack_chain.py): the schedule, the closure rule, desyncs found by it,
the fast envelope header reader, and protocol versions kept auditable."""

from __future__ import annotations

import os
import random
import threading
from pathlib import Path
from typing import Any, ClassVar

import msgpack
import pytest
from table_kit import finished, play_tables, run

from crypto.transcript import Signer
from engine.actions import Action
from p2p.errors import ProtocolError
from p2p.game import GameParams
from p2p.judge.game_audit import audit_game
from p2p.net.handshake import PROTOCOL_VERSION
from p2p.protocol.ack_chain import ACK_EVERY, chain_next, chain_start, scheduled
from p2p.protocol.envelope_header import peek_header
from p2p.table import LockstepTable, TableStopped


def _acks(wires: list[bytes]) -> dict[int, list[int]]:
    """round -> seats that acknowledged it, from a transcript."""
    out: dict[int, list[int]] = {}
    for w in wires:
        env = msgpack.unpackb(msgpack.unpackb(w)[0])
        if env[5] == "ack":
            out.setdefault(env[6][0], []).append(env[2])
    return out


def test_chain_binds_every_step_and_the_game() -> None:
    h = [bytes([i]) * 32 for i in range(3)]
    a = chain_next(chain_next(chain_start(b"g" * 32, h[0]), h[1]), h[2])
    b = chain_next(chain_next(chain_start(b"g" * 32, h[0]), h[2]), h[2])
    c = chain_next(chain_next(chain_start(b"G" * 32, h[0]), h[1]), h[2])
    assert len({a, b, c}) == 3
    assert scheduled(ACK_EVERY, False) and scheduled(3, True) and not scheduled(3, False)


@pytest.mark.timeout(120)
def test_unscheduled_ack_is_answered_by_every_peer(tmp_path: Path) -> None:
    """One peer acks a round off the schedule (as a peer that drifted would): every other
    peer acks that round too, it is compared, and the game goes on to a fair end."""
    chosen: list[int] = []

    def hook(t: LockstepTable, _a: Action) -> None:
        if t.me == 1 and not chosen and t.step >= 10 and t.step not in t.acks.my_hash \
                and t.step > t.acks.confirmed:
            chosen.append(t.step)
            t.acks.send(t.step)

    _peers, results = run(lambda: play_tables(tmp_path, 3, on_step=hook), timeout=110)
    res = finished(results)
    assert chosen, "no unscheduled round was found"
    assert len({r.state_hash for r in res}) == 1
    for r in res:
        acks = _acks(r.transcript)
        assert sorted(acks[chosen[0]]) == [0, 1, 2], acks
        # the schedule: far fewer acks than steps, none twice
        assert all(sorted(v) == [0, 1, 2] for v in acks.values())
        assert len(acks) < r.steps / 2
    assert audit_game(res[0].export).fair


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("odd", "at"), [(0, 13), (2, 21)])
def test_desync_off_the_schedule_names_the_odd_peer(tmp_path: Path, odd: int, at: int) -> None:
    """The drifted peer is named, on its own signed ack, whether it or another seat acts
    next."""

    def hook(t: LockstepTable, _a: Action) -> None:
        if t.me == odd and t.step == at:
            t.state.money[(odd + 1) % 3] += 1

    _peers, results = run(lambda: play_tables(tmp_path, 3, on_step=hook), timeout=110)
    for r in results:
        assert isinstance(r, TableStopped) and r.culprit == odd, r
        assert r.rule in ("ack-mismatch", "action-state-mismatch"), r
    assert list(tmp_path.rglob("desync-step*")), "no state dump written"


def _envelopes(rng: random.Random, count: int) -> list[bytes]:
    out = []
    for i in range(count):
        s = Signer(os.urandom(32), rng.choice([0, 1, 5, 200]))
        s.seq = rng.choice([0, 1, 127, 128, 255, 256, 65535, 65536, 2**32, 2**40])
        kind = rng.choice(["ack", "action", "crypto", "x" * 40, "é"])
        body: Any = [i, os.urandom(rng.choice([0, 10, 300, 70000]))]
        out.append(s.sign(kind, body))
    return out


def _slow_header(wire: bytes) -> tuple[int, int, str]:
    env = msgpack.unpackb(msgpack.unpackb(wire)[0])
    return env[2], env[3], env[5]


def test_fast_header_reader_matches_msgpack() -> None:
    rng = random.Random(7)
    wires = _envelopes(rng, 60)
    for w in wires:
        assert peek_header(w) == _slow_header(w)
    mutated = 0
    for _ in range(5000):
        w = bytearray(rng.choice(wires))
        if rng.random() < 0.5:
            w = w[: rng.randrange(len(w))]
        else:
            for _ in range(rng.randint(1, 4)):
                w[rng.randrange(min(len(w), 80))] = rng.randrange(256)
        try:
            got = peek_header(bytes(w))
        except ValueError:
            mutated += 1
            continue
        # whatever it accepts has exactly the shape msgpack reads there
        assert isinstance(got[0], int) and isinstance(got[1], int) and isinstance(got[2], str)
    assert mutated > 1000


def test_older_protocol_versions_audit_but_do_not_play() -> None:
    old = GameParams.from_wire([1, 3, "base", b"", "audit"])
    assert old.protocol_version == 1
    with pytest.raises(ProtocolError, match="audited"):
        old.check_playable()
    GameParams.from_wire([PROTOCOL_VERSION, 3, "base", b"", "audit"]).check_playable()
    with pytest.raises(ProtocolError, match="protocol version"):
        GameParams.from_wire([PROTOCOL_VERSION + 1, 3, "base", b"", "audit"])


class LyingAcker(LockstepTable):
    """Seat 0 claims, in each ack from round 12 on, a made-up id for seat 2's latest
    envelope.  Heads are only compared where two acks name the same (sender, seq) — which
    seq each acker last holds from seat 2 depends on arrival order — so the liar keeps
    lying until one of its claims meets an honest one (a lie nobody can compare claims
    nothing checkable)."""

    lied: ClassVar[list[int]] = []

    def emit(self, kind: str, body: Any) -> None:
        if kind == "ack" and self.me == 0 and body[0] >= 12:
            body = [body[0], body[1], [[s, q, bytes(32) if s == 2 else e]
                                       for s, q, e in body[2]]]
            self.lied.append(body[0])
        super().emit(kind, body)


@pytest.mark.timeout(120)
def test_a_lying_ack_frames_no_one(tmp_path: Path) -> None:
    """Ack heads that disagree could frame the sender of the disputed envelope, and a
    majority would name the liar only because the others outnumber it: the liar's word
    against the sender's signature is a dispute.  The table relays what it received (no
    equivocation turns up), the judge names nobody, and says whose words disagree."""
    LyingAcker.lied = []
    _peers, results = run(lambda: play_tables(tmp_path, 3, table_cls=LyingAcker),
                          timeout=110)
    assert LyingAcker.lied
    for me, r in enumerate(results):
        assert isinstance(r, TableStopped), (me, r)
        assert r.rule == "disputed" and r.culprit is None, (me, r)
        assert "seat 0 signed that it held another version of seat 2's" in r.detail, r.detail


@pytest.mark.timeout(120)
def test_a_slow_dispute_verdict_is_not_cut_short_by_a_timeout(tmp_path: Path) -> None:
    """While a seat judges differing acks (an audit of what it holds, which takes seconds
    in a long game on a busy machine), its waits must not time out and name the seat it
    waits for: the others stopped on their own verdicts and will never move again.  Seat
    1's judge goes on only once one of its waits has run past its abandon timeout (cut to
    0.5 s when the judging starts); its verdict is still the dispute's, naming no one."""
    LyingAcker.lied = []
    go_on = threading.Event()
    stalled: list[bool] = []

    def prepare(t: LockstepTable) -> None:
        if t.me != 1:
            return
        judge = t.acks.judge
        on_stall = t.waiter.on_stall
        assert judge is not None and on_stall is not None
        cut = threading.Event()

        def stall() -> None:
            if cut.is_set():
                stalled.append(True)
                go_on.set()
            on_stall()

        def slow_judge(wires: list[bytes], rnd: int, acks: dict[int, Any],
                       odd: list[int]) -> TableStopped:
            t.waiter.abandon_timeout = 0.5
            cut.set()
            go_on.wait(60)
            return judge(wires, rnd, acks, odd)

        t.waiter.on_stall = stall
        t.acks.judge = slow_judge

    try:
        _peers, results = run(lambda: play_tables(tmp_path, 3, table_cls=LyingAcker,
                                                  prepare=prepare), timeout=110)
    finally:
        go_on.set()
    assert LyingAcker.lied and stalled, "seat 1 never waited while it judged"
    r = results[1]
    assert isinstance(r, TableStopped), r
    assert r.rule == "disputed" and r.culprit is None, r

"""A notice shown to one seat only, and a seat busy judging an accusation: nobody honest is
named by timeout.

A seat that acts on another seat's notice (an abort notice it judged, or a stop notice it
honoured) stops without a word of its own: every other seat is expected to reach the same
verdict by itself.  The cheater here signs its notice, shows it to seat 1 alone, and goes
silent, just as seat 1 is to act.  Seat 1 stops on its verdict without acting, and seat 2 —
which waits for seat 1's move — must not name seat 1 for that silence: seat 1 relays the
notice to everyone on arrival, so seat 2 judges the same signed notice itself.  And a seat
whose own judging outlasts its abandon timeout waits for its verdict instead of naming the
seat it was waiting for (p2p/table/aborts.py, p2p/table/waiting.py).
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any, cast

import pytest
from table_kit import play_tables, run

from bench.frugal_bot import FrugalBot
from engine.actions import Action
from engine.rules import actors, is_simultaneous
from engine.view import PlayerView
from p2p.judge.game_audit import UNFAIR, audit_folder
from p2p.protocol.envelope_header import peek_header
from p2p.protocol.wire import ABORT_KIND, ENV_TAG, STOP_KIND, SYNC_TAG
from p2p.table import LockstepTable, TableStopped
from p2p.table.deciders import think_aside
from p2p.table.waiting import Waiter

CHEAT = 0
JUDGE = 1
"""The seat that is to act when the notice comes (the only one it is shown to, in the
relay tests)."""
OTHER = 2
FIRE_FROM = 6
"""The notice comes at the first step from here on where seat :data:`JUDGE` is to act
(past the set-up: the deal is done)."""
ABANDON = 30.0


def _judge_turn(t: LockstepTable) -> bool:
    """Whether ``t`` stands at a step from :data:`FIRE_FROM` on where JUDGE alone acts."""
    return (t.step >= FIRE_FROM and not is_simultaneous(t.state)
            and tuple(actors(t.state)) == (JUDGE,))


class _Signalling(Waiter):
    """The table's waiter that also sets :attr:`stopped` once the table stops."""

    stopped: asyncio.Event

    def stop(self, culprit: int | None, rule: str, detail: str,
             stopped_by: int | None = None) -> TableStopped:
        out = super().stop(culprit, rule, detail, stopped_by)
        self.stopped.set()
        return out


def _signalling(t: LockstepTable) -> _Signalling:
    t.waiter.__class__ = _Signalling
    w = cast(_Signalling, t.waiter)
    w.stopped = asyncio.Event()
    return w


def _slow_to_decide(t: LockstepTable) -> None:
    """JUDGE is a person still thinking about its move at the first step from FIRE_FROM on
    where it acts: its decision would come only after its table stopped (then the stop is
    raised, nothing is sent).  Before that, a frugal bot decides."""
    bot = FrugalBot(10 + t.me)
    stopped = _signalling(t).stopped
    thought: list[int] = []

    async def decide(view: PlayerView, legal: list[Action]) -> Action:
        if not thought and _judge_turn(t):
            thought.append(t.step)
            await stopped.wait()
            assert t.failure is not None
            raise t.failure
        return await think_aside(bot, view, legal)

    t.decider = decide


class _OneNoticeThenSilent:
    """The cheater's mesh: its notice (the first envelope of ``kind``) goes to ``to`` only
    (everyone if None), and nothing at all leaves after it."""

    def __init__(self, inner: Any, kind: str, to: int | None) -> None:
        self.inner = inner
        self.kind = kind
        self.to = to
        self.silent = False

    def broadcast(self, body: bytes) -> None:
        if self.silent:
            return
        if body[:1] == ENV_TAG and peek_header(body[1:])[2] == self.kind:
            self.silent = True
            if self.to is not None:
                self.inner.send(self.to, body)
                return
        self.inner.broadcast(body)

    def send(self, seat: int, body: bytes) -> None:
        if not self.silent:
            self.inner.send(seat, body)

    async def next_event(self) -> Any:
        return await self.inner.next_event()


class _LateAsking:
    """OTHER's mesh once the notice is out: its requests for what it lacks reach JUDGE only
    after JUDGE has left (here: never) — JUDGE's verdict came first, as on a loaded
    machine, so gap sync cannot bring OTHER the notice."""

    def __init__(self, inner: Any, fired: list[int]) -> None:
        self.inner = inner
        self.fired = fired

    def broadcast(self, body: bytes) -> None:
        self.inner.broadcast(body)

    def send(self, seat: int, body: bytes) -> None:
        if self.fired and seat == JUDGE and body[:1] == SYNC_TAG:
            return
        self.inner.send(seat, body)

    async def next_event(self) -> Any:
        return await self.inner.next_event()


def _notice(t: LockstepTable, kind: str) -> None:
    """CHEAT signs its notice: a false accusation of OTHER (its first envelope as the
    evidence), or a stop with a made-up reason; then it stops and says nothing more."""
    if kind == ABORT_KIND:
        first = t.log.by_sender[OTHER][0]
        t.emit(ABORT_KIND, [OTHER, "dleq-invalid", "made up", [OTHER, 0, first.id],
                            [first.wire]])
    else:
        t.emit(STOP_KIND, ["timeout", f"seats [{OTHER}] never answered"])
    t.stop(None, "left", "went quiet after its notice")


async def _play(root: Path, kind: str, to: int | None, slow_judging: bool
                ) -> tuple[list[Any], list[Any], list[int]]:
    """A 3-seat game where CHEAT sends its notice of ``kind`` to ``to`` (None: everyone)
    when JUDGE is to act; with ``slow_judging``, OTHER's judging of an accusation lasts
    until it has waited past its abandon timeout."""
    fired: list[int] = []
    #: OTHER's judging goes on (set once it waited past its abandon timeout, or at the end)
    go_on = threading.Event()

    def on_step(t: LockstepTable, _a: Action) -> None:
        if t.me == CHEAT and not fired and _judge_turn(t):
            fired.append(t.step)
            _notice(t, kind)

    def slow(t: LockstepTable) -> None:
        """OTHER's first audit for an accusation goes on only once OTHER has waited past
        its abandon timeout (cut to 0.5 s when that audit starts): seen when it asks its
        peers for what it lacks, after 1 s of one wait (a wait that timed out never gets
        there)."""
        audit = t.aborts._audit
        on_stall = t.waiter.on_stall
        assert on_stall is not None
        cut = threading.Event()

        def stall() -> None:
            if cut.is_set():
                go_on.set()
            on_stall()

        def late_audit(wires: list[bytes], accuser: int) -> TableStopped | None:
            if not cut.is_set():
                t.waiter.abandon_timeout = 0.5
                cut.set()
                go_on.wait()
            return audit(wires, accuser)

        t.waiter.on_stall = stall
        t.aborts._audit = late_audit

    def prepare(t: LockstepTable) -> None:
        if t.me == CHEAT:
            t.transport = _OneNoticeThenSilent(t.transport, kind, to)
        elif t.me == JUDGE:
            _slow_to_decide(t)
        elif t.me == OTHER:
            t.transport = _LateAsking(t.transport, fired)
            if slow_judging:
                slow(t)

    try:
        peers, results = await play_tables(root, 3, on_step=on_step, prepare=prepare,
                                           abandon=ABANDON)
    finally:
        go_on.set()  # a judging thread still blocked (its table is gone) ends
    return peers, results, fired


def _nobody_honest_named(peers: list[Any], results: list[Any]) -> None:
    """Live and in the audit of its folder, every honest seat names nobody or CHEAT."""
    for me in (JUDGE, OTHER):
        r = results[me]
        assert isinstance(r, TableStopped), (me, r)
        assert r.culprit in (None, CHEAT), (me, r)
        assert all(v.culprit in (None, CHEAT) for _a, v in peers[me].table.abort_verdicts), me
        report = audit_folder(peers[me].folder)
        v = report.violation
        assert v is None or v.party in (None, CHEAT), (me, str(report))


@pytest.mark.timeout(120)
def test_an_abort_notice_shown_to_one_seat_reaches_every_seat(tmp_path: Path) -> None:
    """JUDGE alone gets the false accusation, judges it and stops; OTHER, which waits for
    JUDGE's move, judges the same notice (relayed by JUDGE) and names its signer too."""
    peers, results, fired = run(lambda: _play(tmp_path, ABORT_KIND, JUDGE, False),
                                timeout=110)
    assert fired, "the notice was never sent"
    _nobody_honest_named(peers, results)
    for me in (JUDGE, OTHER):
        r = results[me]
        assert (r.culprit, r.rule) == (CHEAT, "false-abort"), (me, r)
        report = audit_folder(peers[me].folder)
        v = report.violation
        assert report.status == UNFAIR and v is not None, (me, str(report))
        assert (v.party, v.rule) == (CHEAT, "false-abort"), (me, str(report))


@pytest.mark.timeout(120)
def test_a_stop_notice_shown_to_one_seat_reaches_every_seat(tmp_path: Path) -> None:
    """JUDGE alone gets the stop notice and honours it; OTHER, which waits for JUDGE's
    move, honours the same notice (relayed by JUDGE): the table was stopped by CHEAT."""
    peers, results, fired = run(lambda: _play(tmp_path, STOP_KIND, JUDGE, False),
                                timeout=110)
    assert fired, "the notice was never sent"
    _nobody_honest_named(peers, results)
    for me in (JUDGE, OTHER):
        r = results[me]
        assert (r.culprit, r.rule, r.stopped_by) == (None, "peer-stopped", CHEAT), (me, r)


@pytest.mark.timeout(120)
def test_a_seat_judging_an_accusation_does_not_time_out(tmp_path: Path) -> None:
    """Everyone gets the false accusation; JUDGE stops on its verdict without acting, while
    OTHER's own judging lasts past its abandon timeout: OTHER waits for its verdict (which
    names the accuser) instead of naming JUDGE, whose move it was waiting for."""
    peers, results, fired = run(lambda: _play(tmp_path, ABORT_KIND, None, True),
                                timeout=110)
    assert fired, "the notice was never sent"
    _nobody_honest_named(peers, results)
    for me in (JUDGE, OTHER):
        r = results[me]
        assert (r.culprit, r.rule) == (CHEAT, "false-abort"), (me, r)

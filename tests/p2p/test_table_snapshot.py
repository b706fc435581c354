"""Resume state without pickle: TokenSession snapshots round-trip (op in progress included),
refuse foreign classes, and a table the others abandon leaves an auditable folder that
records why it stopped."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import msgpack
import pytest
from table_kit import go_silent, play_tables, run

from crypto.errors import MalformedInput
from crypto.session import TokenSession
from engine.actions import Action
from p2p.judge.game_audit import audit_folder
from p2p.store import GameStore
from p2p.table import LockstepTable, TableStopped


def _sessions(n: int = 3) -> list[TokenSession]:
    return [TokenSession(b"g" * 32, n, p, lam=4) for p in range(n)]


def _pump(sessions: list[TokenSession], outs: dict[int, list[Any]]) -> None:
    """Deliver every pending body to every other session until nothing moves."""
    while any(outs.values()):
        sender = next(p for p, o in outs.items() if o)
        body = outs[sender].pop(0)
        for p, s in enumerate(sessions):
            if p != sender:
                outs[p].extend(s.receive(sender, body))


@pytest.mark.timeout(60)
def test_session_snapshot_round_trips_mid_op_and_finishes_the_same() -> None:
    a = _sessions()
    outs = {p: s.setup_keys() for p, s in enumerate(a)}
    _pump(a, outs)
    outs = {p: s.deal([["silk", 6], ["spice", 6]], 2) for p, s in enumerate(a)}
    # snapshot seat 1 in the middle of the deal (its own shuffle already sent), restore it
    # and let the restored copy finish the op in place of the original
    assert a[1].busy
    data = a[1].snapshot()
    b1 = TokenSession.restore(data)
    assert b1.snapshot() == data  # deterministic, aliasing kept
    a[1] = b1
    _pump(a, outs)
    assert all(not s.busy for s in a)
    labels = [s.history[-1].private["labels"] for s in a]
    assert all(len(x) == 2 for x in labels)
    assert b1.my_labels() == labels[1]
    assert b1.ledger.tokens(-1) == a[0].ledger.tokens(-1)
    # a withdraw after the restore still works for everyone
    outs = {p: s.withdraw(1, [("silk", 1)]) for p, s in enumerate(a)}
    _pump(a, outs)
    assert a[1].history[-1].result == a[0].history[-1].result


def test_snapshot_refuses_foreign_classes_and_garbage() -> None:
    s = _sessions()[0]
    data = s.snapshot()
    magic, version, tree = msgpack.unpackb(data, raw=False)
    evil = msgpack.packb([magic, version, ["O", 0, "os._wrap_close", []]], use_bin_type=True)
    with pytest.raises(MalformedInput, match="not allowed"):
        TokenSession.restore(evil)
    with pytest.raises(MalformedInput):
        TokenSession.restore(msgpack.packb([magic, version + 1, tree], use_bin_type=True))
    with pytest.raises(MalformedInput):
        TokenSession.restore(b"\x93\x00")
    assert TokenSession.restore(data).ctx.x == s.ctx.x


@pytest.mark.timeout(90)
def test_abandoned_table_audits_up_to_there_with_the_reason(tmp_path: Path) -> None:
    """Seat 2 stays away (its table crashes); the others' players abandon after a stall:
    every folder audits clean as far as it goes and records who was awaited and why."""
    away = 2
    tables: dict[int, LockstepTable] = {}

    class Away(Exception):
        pass

    def prepare(t: LockstepTable) -> None:
        tables[t.me] = t

    gone: list[int] = []

    def hook(t: LockstepTable, _a: Action) -> None:
        if t.me == away and t.step == 8:
            gone.append(t.step)
            go_silent(t)  # gone for good: not even a word of goodbye
            raise Away

    async def body() -> tuple[list[Any], list[Any]]:
        async def give_up() -> None:
            while not gone or not all(
                    (w := tables[p].waiting_for()) and away in w[1] for p in (0, 1)):
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.3)  # a player's patience
            for p in (0, 1):
                tables[p].abandon("the player gave up waiting")

        watcher = asyncio.ensure_future(give_up())
        try:
            return await play_tables(tmp_path, 3, on_step=hook, prepare=prepare,
                                     abandon=float("inf"))
        finally:
            watcher.cancel()
            with contextlib.suppress(BaseException):
                await watcher

    peers, results = run(body, timeout=80)
    assert isinstance(results[away], Away)
    for p in (0, 1):
        r = results[p]
        assert isinstance(r, TableStopped) and r.rule == "abandoned" and r.culprit == away, r
        report = audit_folder(peers[p].folder)
        assert not report.fair and report.violation is not None
        # the seats that gave up said so in stop notices: stopped by them, or incomplete
        assert report.violation.rule in ("incomplete", "stopped"), str(report)
        assert report.violation.party is None, str(report)
        assert report.steps >= 8
        assert report.stopped is not None
        assert report.stopped["rule"] == "abandoned" and report.stopped["culprit"] == away
        assert "the player gave up waiting" in report.stopped["detail"]
        assert GameStore(peers[p].folder).load_stopped() == report.stopped

"""Every seat that reached the end of the game exports ``game.silkroad``, whoever did not
close it.

A seat that never signs its closing acknowledgement (a loser who goes silent once the
secrets are out) is named by timeout live by every other seat; their tables stop.  Without
an export the others would hold only their folders; with it, each holds a file whose audit
says which seats acknowledged the end and names no one (an absence is no signed evidence:
docs/security.md).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from table_kit import go_silent, play_tables, run

from p2p.judge.game_audit import EXIT_NOT_CERTIFIED, NOT_CERTIFIED, STOPPED, audit_game
from p2p.protocol.wire import CLOSE_KIND, STOP_KIND
from p2p.store import GameStore
from p2p.table import LockstepTable, TableStopped

SILENT = 2


class _Late:
    """A transport whose messages leave ``delay`` seconds late (a slow network)."""

    def __init__(self, inner: Any, delay: float) -> None:
        self.inner = inner
        self.delay = delay

    def broadcast(self, body: bytes) -> None:
        asyncio.get_running_loop().call_later(self.delay, self.inner.broadcast, body)

    def send(self, seat: int, body: bytes) -> None:
        asyncio.get_running_loop().call_later(self.delay, self.inner.send, seat, body)

    async def next_event(self) -> Any:
        return await self.inner.next_event()


class NoCloser(LockstepTable):
    """Seat 2 plays to the end and reveals its secrets, but never signs its close.

    The other seats wait for it for the same time, so the first to time out could tell the
    second before the second's own timeout (a stop notice: then it stops on that notice,
    naming no one).  Their stop notices leave a little late, so that each names the silent
    seat itself."""

    def emit(self, kind: str, body: Any) -> None:
        if self.me == SILENT and kind == CLOSE_KIND:
            return
        if self.me != SILENT and kind == STOP_KIND:
            self.transport = _Late(self.transport, 1.5)
        super().emit(kind, body)


def _patient_silent_seat(t: LockstepTable) -> None:
    """The silent seat waits far longer than the others, so that the others' timeout (not
    a stop notice of the silent seat's own) is what stops their tables."""
    t.waiter.stall_timeout = 1.0
    if t.me == SILENT:
        t.waiter.abandon_timeout = 60.0


@pytest.mark.timeout(120)
def test_a_seat_that_never_closes_leaves_every_other_seat_an_export(tmp_path: Path) -> None:
    """Seats 0 and 1 name seat 2 by timeout and each still exports the game: not
    certified, nobody named, closed by seats 0 and 1 (stopped.json says where it is)."""
    peers, results = run(lambda: play_tables(tmp_path, 3, table_cls=NoCloser, abandon=4.0,
                                             prepare=_patient_silent_seat), timeout=110)
    others = [p for p in range(3) if p != SILENT]
    for me in others:
        r = results[me]
        assert isinstance(r, TableStopped), (me, r)
        assert (r.culprit, r.rule) == (SILENT, "timeout"), (me, r)
        store = GameStore(peers[me].folder)
        assert r.export == store.export_path and store.export_path.is_file(), (me, r)
        stopped = store.load_stopped()
        assert stopped is not None and stopped["export"] == str(store.export_path), stopped
        report = audit_game(r.export)
        assert report.exit_code == EXIT_NOT_CERTIFIED, str(report)
        # the file holds this seat's own stop notice (its timeout): stopped by it, the
        # claim shown as its words; either way not certified, and who closed is said
        assert report.status in (NOT_CERTIFIED, STOPPED), str(report)
        assert report.violation is None or report.violation.party is None, str(report)
        assert report.closed_by == others, str(report)
        assert any(n.startswith(f"seat {SILENT} never acknowledged the end")
                   for n in report.notes), report.notes
        assert report.scores is not None and report.engine_replayed, str(report)
    # the silent seat's own table stopped too; it never closed, so nobody is certified
    assert isinstance(results[SILENT], TableStopped), results[SILENT]


@pytest.mark.timeout(120)
def test_a_table_stopped_before_the_end_writes_no_export(tmp_path: Path) -> None:
    """Before the end there is no game to export: the folder (``silkroad audit FOLDER``)
    covers the part played, and the stop says so by carrying no export."""
    def silence_seat_2(t: LockstepTable) -> None:
        if t.me == SILENT:
            t.on_step = lambda table, _a: go_silent(table) if table.step == 4 else None

    peers, results = run(lambda: play_tables(tmp_path, 3, abandon=3.0,
                                             prepare=silence_seat_2), timeout=110)
    for me in range(3):
        r = results[me]
        assert isinstance(r, TableStopped), (me, r)
        assert r.export is None, (me, r)
        store = GameStore(peers[me].folder)
        assert not store.export_path.exists(), me
        stopped = json.loads(store.stopped_path.read_text())
        assert "export" not in stopped, stopped

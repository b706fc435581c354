"""Unreliable links under a whole game: connections cut mid-game and messages delayed.
The mesh reconnects and re-sends what was not acknowledged, the table never notices more
than a pause, and every peer ends on the same state with a transcript that audits fair."""

from __future__ import annotations

import asyncio
import collections
import random
from pathlib import Path
from typing import Any

import pytest
from table_kit import finished, play_tables, run

from engine.actions import Action
from p2p.judge.game_audit import audit_game
from p2p.table import LockstepTable


class DelayedTransport:
    """The peer's mesh, but everything it sends leaves ``delay`` seconds (± jitter) later,
    in order (one FIFO drained by one task, so jitter never reorders)."""

    def __init__(self, mesh: Any, delay: float, jitter: float, seed: int) -> None:
        self.mesh = mesh
        self.delay, self.jitter = delay, jitter
        self.rng = random.Random(seed)
        self.queue: collections.deque[tuple[float, int | None, bytes]] = collections.deque()
        self.wake = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self.sent = 0

    def _push(self, seat: int | None, body: bytes) -> None:
        loop = asyncio.get_running_loop()
        due = loop.time() + self.delay + self.rng.uniform(0, self.jitter)
        if self.queue:
            due = max(due, self.queue[-1][0])
        self.queue.append((due, seat, body))
        if self.task is None:
            self.task = loop.create_task(self._drain())
        self.wake.set()

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            while not self.queue:
                self.wake.clear()
                await self.wake.wait()
            due, seat, body = self.queue[0]
            if due > loop.time():
                await asyncio.sleep(due - loop.time())
            self.queue.popleft()
            self.sent += 1
            if seat is None:
                self.mesh.broadcast(body)
            else:
                self.mesh.send(seat, body)

    def broadcast(self, body: bytes) -> None:
        self._push(None, body)

    def send(self, seat: int, body: bytes) -> None:
        self._push(seat, body)

    async def next_event(self) -> Any:
        return await self.mesh.next_event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.mesh, name)


def _cut_link(t: LockstepTable, other: int) -> bool:
    mesh: Any = t.transport
    link = mesh._links.get(other)
    if link is None or link.conn is None:
        return False
    link.conn._writer.transport.abort()
    return True


@pytest.mark.timeout(150)
def test_links_cut_during_a_game_lose_nothing(tmp_path: Path) -> None:
    cuts: list[tuple[int, int]] = []

    def hook(t: LockstepTable, _a: Action) -> None:
        # every 9th step one peer cuts one of its links (a different pair each time)
        if t.step % 9 == 4 and t.me == (t.step // 9) % 3:
            other = (t.me + 1 + (t.step // 27) % 2) % 3
            if _cut_link(t, other):
                cuts.append((t.me, other))

    _peers, results = run(lambda: play_tables(tmp_path, 3, on_step=hook), timeout=140)
    res = finished(results)
    assert len(cuts) >= 5, cuts
    assert len({r.state_hash for r in res}) == 1
    assert audit_game(res[0].export).fair
    # the mesh really reconnected (more than the first connect on a cut link)
    reconnects = [s["connects"] for p in _peers for s in p.mesh.stats().values()]
    assert max(reconnects) >= 2, reconnects


@pytest.mark.timeout(150)
def test_delayed_links_slow_the_game_but_change_nothing(tmp_path: Path) -> None:
    transports: list[DelayedTransport] = []

    def prepare(t: LockstepTable) -> None:
        if t.me in (0, 2):  # two of three peers answer 5-25 ms late, in order
            d = DelayedTransport(t.transport, 0.005, 0.02, seed=t.me)
            transports.append(d)
            t.transport = d

    _peers, results = run(lambda: play_tables(tmp_path, 3, prepare=prepare), timeout=140)
    res = finished(results)
    assert all(d.sent > 50 for d in transports), [d.sent for d in transports]
    assert len({r.state_hash for r in res}) == 1
    assert audit_game(res[0].export).fair

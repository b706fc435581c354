"""A bot that thinks for seconds does not stop its table: it thinks in a worker thread,
while the table's event loop keeps taking envelopes, acknowledging and answering the
other peers (who ask for acks and gap sync after a second of waiting)."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

from table_kit import play_tables, run

from bench.frugal_bot import FrugalBot
from crypto.transcript import Envelope
from engine.actions import Action
from engine.view import PlayerView
from p2p.protocol.wire import ACK_KIND
from p2p.table import LockstepTable, TableResult

THINK = 3.0
"""Seconds the slow bot thinks, twice: longer than the others' first sync request (1 s)
and the mesh's heartbeat timeout, shorter than their stall warning (5 s)."""


class SlowBot:
    """The frugal bot, thinking :data:`THINK` s on its first two moves after the deal.
    It notes, for each long think, how many acks its own table signed meanwhile: a table
    whose loop is blocked by the bot signs none."""

    def __init__(self, seed: int) -> None:
        self.inner = FrugalBot(seed)
        self.table: LockstepTable | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.acks_while_thinking: list[int] = []
        self.loop_ran: list[bool] = []

    def _my_acks(self) -> int:
        t = self.table
        assert t is not None
        mine: list[Envelope] = t.log.by_sender.get(t.me, [])
        return sum(1 for e in mine if e.kind == ACK_KIND)

    def choose(self, view: PlayerView, legal: list[Action]) -> Action:
        if len(self.loop_ran) < 2 and self.table is not None \
                and self.table.step > 0:
            assert self.loop is not None
            before = self._my_acks()
            ran = threading.Event()
            self.loop.call_soon_threadsafe(ran.set)
            time.sleep(THINK)
            self.loop_ran.append(ran.is_set())
            self.acks_while_thinking.append(self._my_acks() - before)
        return self.inner.choose(view, legal)


def test_a_bot_thinking_seconds_stalls_no_one(tmp_path: Path) -> None:
    slow = SlowBot(11)

    def prepare(t: LockstepTable) -> None:
        if t.me == 1:
            slow.table = t
            slow.loop = asyncio.get_running_loop()

    async def body() -> tuple[list[Any], list[Any]]:
        return await play_tables(tmp_path, 4, agents={1: slow}, prepare=prepare)

    _peers, results = run(body, timeout=240.0)
    assert all(isinstance(r, TableResult) for r in results), results
    assert len({r.state_hash for r in results}) == 1
    assert slow.loop_ran == [True, True]  # the loop ran while the bot thought
    # the others ask for an ack of the round after a second of waiting (unless they had
    # it already): the thinking seat answered, which a blocked loop never does
    assert any(n >= 1 for n in slow.acks_while_thinking), slow.acks_while_thinking
    # the others' sync requests brought duplicates, refused as such, and nothing else
    reasons = [f.reason for r in results for f in r.refusals]
    assert all(why.startswith("replayed envelope") for why in reasons), reasons

"""Waiting for the network: one sleeper woken by arrivals, timed out by the clock.

The table's main loop waits for one thing at a time (an action, acks, a crypto op).  A
stalled wait names the seats it awaits (for the UI) and, after the abandon timeout, stops
the table naming the first of them — unless an accusation or a dispute is being judged
(:attr:`Waiter.holding`): its verdict, bounded in time, ends the table, and the seat we
await may be busy judging the same notice.  Whoever finds a reason to stop the table
records it here (:meth:`Waiter.stop`), so that the sleeper wakes and raises it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from .outcome import TableStopped

log = logging.getLogger("p2p.table")

SYNC_AFTER = 1.0
"""Seconds of waiting before we ask the other peers for what we may lack."""
SYNC_EVERY = 3.0
"""Seconds between further such requests while the wait lasts."""


def _release(fut: asyncio.Future[None]) -> None:
    """Timer callback of :meth:`Waiter.wait`: wake the sleeper unless it was woken already."""
    if not fut.done():
        fut.set_result(None)


class Waiter:
    """The table's one sleeper, its stop reason and what it is waiting for."""

    def __init__(self, me: int, stall_timeout: float, abandon_timeout: float,
                 on_stall: Callable[[], None] | None = None) -> None:
        """``on_stall`` runs after :data:`SYNC_AFTER` seconds of waiting and again every
        :data:`SYNC_EVERY` seconds: the table asks its peers for whatever it lacks then (a
        message shown to some peers only reaches us from them), so a silent seat is named
        only after everything the others hold was fetched."""
        self.me = me
        self.on_stall = on_stall
        self.stall_timeout = stall_timeout
        self.abandon_timeout = abandon_timeout
        self.failure: TableStopped | None = None
        #: whether a verdict that will stop the table is under way: no abandon meanwhile
        self.holding: Callable[[], bool] = lambda: False
        self.waiting_on: tuple[str, Callable[[], list[int]]] | None = None
        self._wake = asyncio.Event()
        self._fut: asyncio.Future[None] | None = None

    def notify(self) -> None:
        """Wake the main loop if it waits (cheap: no task per wake, see :meth:`wait`)."""
        self._wake.set()
        w = self._fut
        if w is not None and not w.done():
            w.set_result(None)

    def stop(self, culprit: int | None, rule: str, detail: str,
             stopped_by: int | None = None) -> TableStopped:
        """Stop the table (the first reason wins) and return that reason, to raise."""
        if self.failure is None:
            self.failure = TableStopped(culprit, rule, detail, stopped_by)
            log.error("seat %d stops the table: %s", self.me, self.failure)
        self.notify()
        return self.failure

    async def wait(self, ready: Callable[[], bool], what: str,
                   who: Callable[[], list[int]]) -> None:
        """Wait until ``ready()``; name the awaited seats when stalled; abandon when told.

        One plain future per sleep (woken by :meth:`notify`, bounded by a timer handle)
        instead of ``wait_for(event.wait())``, which creates a task per wake-up: on a
        plain move that overhead was a measurable share of the latency."""
        loop = asyncio.get_running_loop()
        start = time.monotonic()
        warned = False
        next_sync = start + SYNC_AFTER if self.on_stall is not None else float("inf")
        self.waiting_on = (what, who)
        while not ready():
            now = time.monotonic()
            if self.on_stall is not None and now >= next_sync:
                next_sync = now + SYNC_EVERY
                self.on_stall()
            if self.failure is not None:
                raise self.failure
            self._wake.clear()
            waited = time.monotonic() - start
            if waited < self.abandon_timeout:
                limit = self.stall_timeout if not warned else self.abandon_timeout
            elif self.holding():
                limit = waited + 1.0  # the verdict stops the table and wakes us
            else:
                missing = who()
                raise TableStopped(missing[0] if missing else None, "timeout",
                                   f"waited {waited:.1f} s for {what}; seats {missing} "
                                   "never answered")
            fut: asyncio.Future[None] = loop.create_future()
            self._fut = fut
            nap = min(limit - waited, 1.0, max(next_sync - time.monotonic(), 0.0))
            timer = loop.call_later(max(0.01, nap), _release, fut)
            try:
                await fut
            finally:
                timer.cancel()
                self._fut = None
            if not warned and time.monotonic() - start >= self.stall_timeout and not ready():
                warned = True
                log.warning("seat %d waiting for %s: seats %s have not answered",
                            self.me, what, who())
        self.waiting_on = None
        if self.failure is not None:
            raise self.failure

    def waiting_for(self) -> tuple[str, list[int]] | None:
        """What the table is waiting for now and which seats it awaits (for the UI)."""
        if self.waiting_on is None:
            return None
        what, who = self.waiting_on
        return what, who()

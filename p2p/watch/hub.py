"""The host's watch hub: every envelope its table takes in or sends, fanned out to watchers.

Two taps, both tiny: :attr:`p2p.table.context.TableContext.on_accepted` hears each other
seat's envelope once the table verified it into its log, and a wrapper around the table's
transport hears each of our own envelopes when it is broadcast — after it is on disk, so
a watcher never holds an envelope a crashed host might sign differently on its restart
(which would read as the host equivocating).

Why nothing a watcher does can cost the table anything:

* the taps only append a reference to each watcher's queue (no copy, no await);
* each watcher has its own writer task; a watcher that does not read stalls only that
  task, and once its queued live envelopes pass :data:`p2p.watch.stream.QUEUE_BYTES` it
  is dropped, with the reason, instead of being waited for;
* the catch-up (everything the table held when the watcher came) is read from the table's
  log as the writer goes, so a late watcher costs no copy of the transcript;
* at most :data:`p2p.watch.stream.MAX_WATCHERS` are admitted; a watcher that sends
  anything but a line of talk, or garbage, loses its own connection and nothing else;
* a watcher's lines of talk are relayed by the table (signed by the host, marked as the
  watcher's) at most :data:`WATCHER_BURST` per :data:`p2p.table.talk.SEND_WINDOW`
  seconds each and :data:`RELAY_BURST` for all watchers together (keys are free: a
  watcher that comes back is a new one), so the host's own lines are never folded away
  on the seats' screens behind its watchers'; a line beyond is answered ``unsaid``; a
  watcher that sends more than :data:`TALK_HARD_CAP` messages in that window is dropped
  (each costs the table's event loop a decryption and a reply).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from crypto.transcript import Envelope

from ..errors import P2PError
from ..identity import fingerprint
from ..net.connection import Connection, Listener
from ..net.handshake import AcceptPolicy, JoinCodeGuard, join_key
from ..protocol.wire import ENV_TAG
from ..sanitize import clean
from ..table import LockstepTable
from ..table.talk import SEND_BURST, SEND_WINDOW, within_pace
from .stream import (
    BATCH_BYTES,
    MAX_WATCHERS,
    PURPOSE,
    QUEUE_BYTES,
    GameInfo,
    talk_of,
    watcher_name,
)

log = logging.getLogger("p2p.watch")

SEND_BUFFER = 256 * 1024
"""The kernel's send buffer of a watcher's socket, capped: what a stalled watcher leaves
unread piles up in its queue, where the bound sees it, not in the kernel."""
LINGER = 0.25
"""Seconds a woken writer waits for more envelopes before it sends: at a bots' pace a
step comes every few milliseconds, and one frame per envelope per watcher is a send,
an encryption, a task switch on the table's own event loop and the kernel's loopback
work.  A watcher's screen shows what its judge checked, which it redraws at most once a
second (:data:`p2p.watch.client.EVERY`), so a quarter second costs a viewer nothing; the
table sends each watcher at most 4 frames a second (``silkroad bench watch``: p99 of
plain moves with 4 watchers at 6 seats, median of runs: +15 to +26 % at 50 ms, −4 to
+10 % at 250 ms)."""
END_GRACE = 10.0
"""Seconds the hub gives its watchers to take the last envelopes after the game ended."""
WATCHER_BURST = 2
"""Lines one watcher may have relayed within :data:`p2p.table.talk.SEND_WINDOW` seconds."""
RELAY_BURST = 3
"""Watchers' lines the host relays within :data:`p2p.table.talk.SEND_WINDOW` seconds, all
watchers together: with its player's own :data:`p2p.table.talk.SEND_BURST` that stays
within what a screen shows of one seat (:data:`p2p.table.talk.SHOW_BURST`)."""
TALK_HARD_CAP = 2 * SEND_BURST
"""Talk messages one watcher may send in a window before it is dropped: past its pace an
honest watcher's screen stops it, so more is a flood."""


@dataclass
class _Watcher:
    conn: Connection
    label: str
    #: catch-up: the table's log entries (references) still to send, and how far we are
    catchup: list[bytes] = field(default_factory=list)
    queue: deque[bytes] = field(default_factory=deque)
    queued: int = 0
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    reason: str | None = None
    task: asyncio.Task[None] | None = None
    sent: int = 0
    #: when its recent lines of talk came (its pace), and its recent messages of talk
    talked: deque[float] = field(default_factory=deque)
    asked: deque[float] = field(default_factory=deque)


class _Tapped:
    """The table's transport, telling the hub each envelope we broadcast (the moment it
    leaves, i.e. once it is on disk: :class:`p2p.table.outbox.Outbox`)."""

    def __init__(self, inner: Any, tap: Callable[[bytes], None]) -> None:
        self._inner = inner
        self._tap = tap

    def broadcast(self, body: bytes) -> None:
        self._inner.broadcast(body)
        if body[:1] == ENV_TAG:
            self._tap(body[1:])

    def send(self, seat: int, body: bytes) -> None:
        self._inner.send(seat, body)

    async def next_event(self) -> Any:
        return await self._inner.next_event()

    def __getattr__(self, name: str) -> Any:  # next_events, stats, close… of the mesh
        return getattr(self._inner, name)


class WatchHub:
    """Serves :data:`p2p.watch.stream.PURPOSE` on a host's listener.

    ``open()`` (watchers may come while the lobby fills: they wait for the start), then
    ``start(info)`` once the game is agreed, ``attach(table)`` before it runs, and
    ``finish(reason)`` when it ended; ``close()`` always.  ``on_change(count)`` hears the
    number of watchers whenever it changes (the seats' screens, the advertisement)."""

    def __init__(self, listener: Listener, *, join_code: str | None = None,
                 guard: JoinCodeGuard | None = None, max_watchers: int = MAX_WATCHERS,
                 queue_bytes: int = QUEUE_BYTES, batch_bytes: int = BATCH_BYTES,
                 send_buffer: int = SEND_BUFFER,
                 on_change: Callable[[int], None] | None = None) -> None:
        self.listener = listener
        self.join_code = join_code
        self.guard = guard
        self.max_watchers = max_watchers
        self.queue_bytes = queue_bytes
        self.batch_bytes = batch_bytes
        self.send_buffer = send_buffer
        self.on_change = on_change
        self._watchers: list[_Watcher] = []
        self._info: GameInfo | None = None
        self._table: LockstepTable | None = None
        self._own_sent = 0
        self._ended: str | None = None
        self._closed = False
        self._changed = asyncio.Event()
        self._relayed: deque[float] = deque()  # when the recent relayed lines went out
        #: every watcher that left, with why (``fp8``, reason): for tests and the log
        self.departed: list[tuple[str, str]] = []

    # ---------------------------------------------------------------- lifecycle
    async def open(self) -> WatchHub:
        key = None
        if self.join_code is not None:
            loop = asyncio.get_running_loop()
            key = await loop.run_in_executor(None, join_key, self.join_code,
                                             self.listener.identity.public)
        self.listener.register(PURPOSE, AcceptPolicy(self._authorize, key, guard=self.guard),
                               self._on_watcher)
        return self

    @property
    def count(self) -> int:
        """Watchers connected now."""
        return len(self._watchers)

    def start(self, info: GameInfo) -> None:
        """The game is agreed: tell every waiting watcher what it is."""
        self._info = info
        for w in self._watchers:
            self._send_info(w)

    def attach(self, table: LockstepTable) -> None:
        """Tap ``table`` (before it runs): its verified intake and our own broadcasts."""
        self._table = table
        table.ctx.on_accepted = self._accepted
        table.transport = _Tapped(table.transport, self._own)
        for w in self._watchers:  # they waited in the lobby: nothing to catch up yet
            w.wake.set()

    async def finish(self, reason: str, grace: float = END_GRACE) -> None:
        """The table ended: each watcher gets what is queued, then ``end``; one that has
        not taken it all within ``grace`` seconds is dropped saying so."""
        if self._ended is None:
            self._ended = reason
        for w in list(self._watchers):
            w.wake.set()
        tasks = [w.task for w in self._watchers if w.task is not None]
        if tasks:
            _done, pending = await asyncio.wait(tasks, timeout=grace)
            for w in list(self._watchers):
                if w.task in pending:
                    self._drop(w, f"the game ended and it had not taken the last "
                                  f"envelopes within {grace:g} s")

    async def close(self) -> None:
        """Stop serving watchers and close every connection (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self.listener.unregister(PURPOSE)
        for w in list(self._watchers):
            self._drop(w, "the table closed")

    async def wait_for(self, holds: Callable[[WatchHub], bool], timeout: float) -> None:
        """Wait until ``holds(self)`` (TimeoutError after ``timeout`` s): tests wait on it."""
        async with asyncio.timeout(timeout):
            while not holds(self):
                self._changed.clear()
                await self._changed.wait()

    # ---------------------------------------------------------------- admission
    def _authorize(self, key: bytes) -> str | None:
        if self._closed:
            return "the table is closed"
        if self._ended is not None:
            return "the game is over"
        if len(self._watchers) >= self.max_watchers:
            return f"the table already has {self.max_watchers} watchers (the most it admits)"
        if any(w.conn.remote_key == key for w in self._watchers):
            return "this key is already watching"
        return None

    async def _on_watcher(self, conn: Connection) -> None:
        refusal = self._authorize(conn.remote_key)  # others may have come meanwhile
        if refusal is not None:
            with contextlib.suppress(P2PError, OSError):
                conn.send(["refuse", refusal])
            await conn.aclose()
            return
        w = _Watcher(conn, f"watcher {fingerprint(conn.remote_key)[:8]} at {conn.peer_host}")
        conn.cap_send_buffer(self.send_buffer)
        self._watchers.append(w)
        if self._info is not None:
            self._send_info(w)
        if self._table is not None:  # catch up from the log, as references
            w.catchup = self._held()
        log.info("%s came (%d watching)", w.label, len(self._watchers))
        self._changed_count()
        w.task = asyncio.get_running_loop().create_task(self._write(w))
        try:
            while True:
                msg = await conn.recv()
                line = talk_of(msg)
                if line is None:
                    why = (f"it sent a message ({type(msg).__name__}) that is not a line of "
                           "talk; watchers only listen and talk")
                    break
                if not within_pace(w.asked, TALK_HARD_CAP, time.monotonic()):
                    why = (f"it sent more than {TALK_HARD_CAP} lines of talk in "
                           f"{SEND_WINDOW:.0f} s")
                    break
                self._talk(w, *line)
        except (P2PError, OSError) as exc:
            why = getattr(exc, "reason", None) or str(exc) or type(exc).__name__
        except asyncio.CancelledError:
            why = "the table closed"
        if w in self._watchers:
            self._drop(w, f"left: {why}" if w.reason is None else w.reason)

    def _talk(self, w: _Watcher, text: str, name: str) -> None:
        """Relay a watcher's line through our table, or tell it why not."""
        why = self._may_talk(w, text)
        if why is None:
            assert self._table is not None
            tag = watcher_name(name) or f"watcher {fingerprint(w.conn.remote_key)[:6]}"
            try:
                why = self._table.relay_talk(tag, text)
            except Exception as exc:  # our own table could not sign or store it
                log.warning("could not relay %s's line: %s", w.label, exc)
                why = "the table could not relay it"
        if why is not None:
            with contextlib.suppress(P2PError, OSError):
                w.conn.send(["unsaid", why])

    def _may_talk(self, w: _Watcher, text: str) -> str | None:
        if self._table is None:
            return "the game has not begun: nobody to talk to yet"
        if self._ended is not None:
            return "the game is over: talk is closed"
        if not clean(text):
            return "nothing to say"
        if not within_pace(w.talked, WATCHER_BURST, time.monotonic()):
            return (f"not so fast: at most {WATCHER_BURST} lines in {SEND_WINDOW:.0f} s; "
                    "wait a moment")
        if not within_pace(self._relayed, RELAY_BURST, time.monotonic()):
            w.talked.pop()  # the table's pace, not this watcher's: it may try again soon
            return (f"the watchers are talking a lot: at most {RELAY_BURST} of their lines "
                    f"in {SEND_WINDOW:.0f} s; wait a moment")
        return None

    def _send_info(self, w: _Watcher) -> None:
        assert self._info is not None
        try:
            w.conn.send(self._info.to_wire())
        except (P2PError, OSError) as exc:
            self._drop(w, f"could not send the game: {exc}")

    def _held(self) -> list[bytes]:
        """What the table holds now: every verified envelope of the others, and of ours
        those already broadcast (so on disk)."""
        assert self._table is not None
        me = self._table.me
        return [e.wire for e in self._table.log.entries
                if e.sender != me or e.seq < self._own_sent]

    # ---------------------------------------------------------------- the taps
    def _accepted(self, env: Envelope) -> None:
        self._fan(env.wire)

    def _own(self, wire: bytes) -> None:
        self._own_sent += 1
        self._fan(wire)

    def _fan(self, wire: bytes) -> None:
        for w in list(self._watchers):
            w.queue.append(wire)
            w.queued += len(wire)
            if w.queued > self.queue_bytes:
                self._drop(w, f"fell behind: more than {self.queue_bytes // 1024} KiB of "
                              "envelopes waiting for it")
            else:
                w.wake.set()

    # ---------------------------------------------------------------- sending
    def _batch(self, w: _Watcher) -> list[bytes]:
        out: list[bytes] = []
        size = 0
        while w.sent < len(w.catchup):
            wire = w.catchup[w.sent]
            if out and size + len(wire) > self.batch_bytes:
                return out
            out.append(wire)
            size += len(wire)
            w.sent += 1
        if out:
            return out
        w.catchup = []
        while w.queue:
            wire = w.queue[0]
            if out and size + len(wire) > self.batch_bytes:
                break
            out.append(w.queue.popleft())
            w.queued -= len(wire)
            size += len(wire)
        return out

    async def _write(self, w: _Watcher) -> None:
        """One watcher's writer: catch-up, then live envelopes, then ``end``.  Its
        awaits are the only place a slow watcher is waited for."""
        try:
            while True:
                batch = self._batch(w)
                if batch:
                    w.conn.send(["env", batch])
                    await w.conn.drain()
                    continue
                if self._ended is not None:
                    w.conn.send(["end", self._ended])
                    await w.conn.drain()
                    w.reason = f"saw the game to its end ({self._ended})"
                    self._remove(w)
                    return
                w.wake.clear()
                await w.wake.wait()
                if self._ended is None:
                    await asyncio.sleep(LINGER)
        except (P2PError, OSError) as exc:
            self._drop(w, f"connection failed: {getattr(exc, 'reason', None) or exc}")

    # ---------------------------------------------------------------- leaving
    def _drop(self, w: _Watcher, reason: str) -> None:
        if w.reason is None:
            w.reason = reason
        with contextlib.suppress(P2PError, OSError):
            if not w.conn.closed:
                w.conn.send(["drop", reason])
        if w.task is not None and w.task is not asyncio.current_task():
            w.task.cancel()
        self._remove(w)

    def _remove(self, w: _Watcher) -> None:
        w.queue.clear()
        w.catchup = []
        w.conn.close()
        if w in self._watchers:
            self._watchers.remove(w)
            self.departed.append((fingerprint(w.conn.remote_key)[:8], w.reason or "left"))
            log.info("%s left: %s (%d watching)", w.label, w.reason, len(self._watchers))
            self._changed_count()

    def _changed_count(self) -> None:
        self._changed.set()
        if self.on_change is not None:
            try:
                self.on_change(len(self._watchers))
            except Exception:  # a screen's hook must not break the hub
                log.exception("watch count listener failed")


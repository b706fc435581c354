"""Our own envelopes: sign, append to the log, write ahead to disk, then send.

Nothing leaves before it is on disk (with every received envelope before it: group
commit), so a restarted peer can never sign a different envelope with the same sequence
number.  Moves and acks — the envelopes somebody waits for right now — are fsynced inline
and sent at once (an fsync costs ~0.3 ms, while the flusher's two hops through a worker
thread cost several ms on a move's critical path and, for acks, more CPU than the fsync
itself: ~10 % less CPU per move measured with six peers).  Everything else goes through
the background :meth:`Outbox.flusher`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from crypto.transcript import Envelope, Signer

from ..protocol.wire import ACK_KIND, ACTION_KIND, CRYPTO_KIND, ENV_TAG, crypto_heads
from .context import TableContext

URGENT = (ACTION_KIND, ACK_KIND)
"""Kinds fsynced and sent inline (see the module docstring)."""


class Outbox:
    """Signs, stores and sends this peer's envelopes in chain order."""

    def __init__(self, ctx: TableContext, signer: Signer,
                 dispatch: Callable[[Envelope], object]) -> None:
        self.ctx = ctx
        self.signer = signer
        self._dispatch = dispatch
        self._queue: list[tuple[int, bytes]] = []
        self._wake = asyncio.Event()

    def sign(self, kind: str, body: Any) -> Envelope:
        """Sign and append our next envelope to the log (not sent: see :meth:`emit`)."""
        return self.ctx.log.append_own(self.signer.sign(kind, self.signed_body(kind, body)),
                                       self.ctx.me)

    def signed_body(self, kind: str, body: Any) -> Any:
        """What we sign for ``body``: a crypto body gets our heads as its sixth element
        (protocol version 6), the last envelope of every other seat our log holds, each
        taken in before this body was made; so whoever judges a failure of it reads it
        against the history we acknowledged (:func:`p2p.judge.evidence.crypto_rests_on`).
        The crypto session makes and reads only the five elements before them
        (:func:`p2p.protocol.wire.crypto_core`)."""
        if kind != CRYPTO_KIND:
            return body
        return [*body, crypto_heads(self.ctx.log.heads(), self.ctx.me)]

    def emit(self, kind: str, body: Any) -> Envelope:
        """Sign, store, process locally and send one non-crypto envelope."""
        env = self.sign(kind, body)
        self._dispatch(env)
        self.send_own([env.wire], urgent=kind in URGENT)
        return env

    def emit_crypto(self, bodies: list[Any], snapshot: Callable[[list[bytes]], None]) -> None:
        """Sign our crypto output; ``snapshot`` (the resume write-ahead) runs *before*
        anything leaves, once everything it counts as processed is on disk."""
        if not bodies:
            return
        envs = [self.sign(CRYPTO_KIND, b) for b in bodies]
        wires = [e.wire for e in envs]
        if self.ctx.store is not None:
            self.ctx.store.sync()
            snapshot(wires)
        self.send_own(wires)

    def send_own(self, wires: list[bytes], urgent: bool = False) -> None:
        """Queue our envelopes for the flusher; ``urgent`` ones fsync and go at once."""
        store = self.ctx.store
        broadcast = self.ctx.transport.broadcast
        if store is None:
            for w in wires:
                broadcast(ENV_TAG + w)
            return
        for w in wires:
            self._queue.append((store.append(w, durable=False), w))
        if urgent:
            store.sync()
            while self._queue and self._queue[0][0] <= store.synced:
                broadcast(ENV_TAG + self._queue.pop(0)[1])
            if not self._queue:
                return
        self._wake.set()

    async def flusher(self) -> None:
        """Send our envelopes in order, each only once it is on disk (runs all game)."""
        store = self.ctx.store
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._queue:
                if store is not None and self._queue[-1][0] > store.synced:
                    await asyncio.to_thread(store.sync)
                while self._queue and (store is None or self._queue[0][0] <= store.synced):
                    self.ctx.transport.broadcast(ENV_TAG + self._queue.pop(0)[1])

    async def drain(self) -> None:
        """Wait until everything queued has left (the flusher must be running)."""
        while self._queue:
            self._wake.set()
            await asyncio.sleep(0.005)

"""In-process broadcast bus: runs N crypto sessions together (the crypto benchmark, tests).

A test and benchmark rig, not product code: it lives in bench/ because the crypto benchmark
needs it, and tests/crypto imports it from here. Every body a session emits is wrapped in a
signed envelope (kind ``"crypto"``), appended to the global transcript, checked into every
other peer's :class:`TranscriptLog` and fed to its session — the same path p2p/ takes over
the network. The bus also accounts per-party CPU time (``time.process_time``) and bytes sent,
for the benchmark.

``intercept(sender, body) -> list[body]`` lets a test drop or alter a party's outgoing
messages (to model a withholding party); cheaters proper are built by subclassing ops.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

from crypto.errors import CheatDetected
from crypto.protocols.base import Body
from crypto.session import TokenSession
from crypto.transcript import CRYPTO_KIND, Signer, TranscriptLog

_T = TypeVar("_T")


class Stalled(Exception):
    """Delivery stopped with ops unfinished; ``waiting`` names whom each party awaits."""

    def __init__(self, waiting: dict[int, list[int]]) -> None:
        self.waiting = waiting
        super().__init__(f"stalled; waiting for {waiting}")


class LocalBus:
    """Broadcast among ``sessions`` (seat i = sessions[i]) with signed envelopes."""

    def __init__(self, sessions: list[TokenSession], sign: bool = True) -> None:
        self.sessions = sessions
        n = len(sessions)
        gid = sessions[0].ctx.game_id
        self.signers = [Signer(gid, i) for i in range(n)]
        keys = [s.public_key for s in self.signers]
        self.logs = [TranscriptLog(gid, keys) for _ in range(n)]
        self.keys = keys
        self.sign = sign
        self.transcript: list[bytes] = []
        self.queue: deque[tuple[int, Body]] = deque()
        self.cpu = [0.0] * n
        self.sent_bytes = [0] * n
        self.intercept: Callable[[int, Body], list[Body]] | None = None

    def _timed(self, party: int, fn: Callable[[], _T]) -> _T:
        t0 = time.process_time()
        try:
            return fn()
        finally:
            self.cpu[party] += time.process_time() - t0

    def _post(self, sender: int, bodies: list[Body]) -> None:
        for b in bodies:
            for body in (self.intercept(sender, b) if self.intercept else [b]):
                self.queue.append((sender, body))

    def emit(self, kind: str, sender: int, body: Any) -> None:
        """Sign and deliver a non-crypto envelope (e.g. a game action) to every log."""
        wire = self.signers[sender].sign(kind, body)
        self.transcript.append(wire)
        for i, log in enumerate(self.logs):
            if i != sender:
                log.add(wire, via=sender)

    def run(self, start: Callable[[TokenSession], list[Body]]) -> list[Any]:
        """Start the same op on every session, deliver until quiet; return the ops."""
        for i, s in enumerate(self.sessions):
            self._post(i, self._timed(i, partial(start, s)))
        self.pump()
        waiting = {i: s.waiting_for() for i, s in enumerate(self.sessions) if s.busy}
        if waiting:
            raise Stalled(waiting)
        return [s.last() for s in self.sessions]

    def pump(self) -> None:
        """Deliver queued messages until none is left (CheatDetected propagates)."""
        while self.queue:
            sender, body = self.queue.popleft()
            if self.sign:
                wire = self._timed(sender, partial(self.signers[sender].sign, CRYPTO_KIND, body))
                self.transcript.append(wire)
                self.sent_bytes[sender] += len(wire)
            for i, s in enumerate(self.sessions):
                if i == sender:
                    continue
                if self.sign:
                    env = self._timed(i, partial(self.logs[i].add, wire, via=sender))
                    body = env.body
                try:
                    self._post(i, self._timed(i, partial(s.receive, sender, body)))
                except CheatDetected:
                    raise

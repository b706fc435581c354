"""What the parts of one table share: who we are, the log, the disk, the wire, the stop.

Each part of the table (:mod:`.outbox`, :mod:`.inbox`, :mod:`.acks`, :mod:`.aborts`,
:mod:`.resume`) is handed this one object instead of the whole table, so a part can only
reach what every part may touch; anything else it needs is passed to it explicitly.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from crypto.transcript import Envelope, TranscriptLog

from ..store import GameStore
from .outcome import Refusal, TableStopped
from .setup import TableSetup, Transport
from .waiting import Waiter

log = logging.getLogger("p2p.table")


@dataclass
class TableContext:
    setup: TableSetup
    keys: list[Ed25519PublicKey]
    transport: Transport
    store: GameStore | None
    waiter: Waiter
    log: TranscriptLog
    refusals: list[Refusal] = field(default_factory=list)
    #: True while a resumed peer re-reads its own stored past (nothing is sent, nobody is
    #: accused for what it already handled before the crash)
    replaying: bool = False
    #: told every envelope of another seat once it is verified into the log (the watch
    #: hub's tap, :mod:`p2p.watch.hub`: watchers get what this table holds, nothing less)
    on_accepted: Callable[[Envelope], None] | None = None

    @property
    def me(self) -> int:
        return self.setup.my_seat

    @property
    def n(self) -> int:
        return self.setup.players

    def refuse(self, sender: int | None, reason: str) -> None:
        """Record a refused message (never fatal) and say so in the log."""
        self.refusals.append(Refusal(sender, reason))
        log.warning("seat %d refused a message from seat %s: %s", self.me, sender, reason)

    def stop(self, culprit: int | None, rule: str, detail: str,
             stopped_by: int | None = None) -> TableStopped:
        """Stop the table (the first reason wins); returns the reason, to raise."""
        return self.waiter.stop(culprit, rule, detail, stopped_by)

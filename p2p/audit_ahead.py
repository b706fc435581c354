"""The audit of a game, done ahead while it is played, so its verdict comes when it ends.

Why: the end screen audits the seat's transcript as ``silkroad audit`` would (the one judge,
offline rules); in a cold process that is most of a minute's CPU on a 6-seat game, almost
all of it proof checks the live table never needed (an observer's checks of blindings and
shares it is not party to). While the game goes on, this seat audits its own folder as far
as it goes (:func:`p2p.judge.game_audit.audit_folder`, on a worker thread) every
:data:`EVERY` steps; each pass leaves every check that passed remembered
(:mod:`crypto.remembered`), so the next pass, and the audit at the end, check only what
is new.  The verdict is the ordinary audit's, of the exported file: nothing is taken on
trust from a pass but the outcome of a check of the very same bytes.

Passes never overlap (one thread), skip while the previous one runs, and their results
are discarded: a pass over an unfinished folder can only say "incomplete".
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Any

from crypto import remembered

from .judge.game_audit import GameAuditReport, audit_folder, audit_game

#: Steps between two passes (a 6-seat game has a few hundred).
EVERY = 24


class AuditAhead:
    """Audits ``folder`` aside every :data:`EVERY` steps; :meth:`audit` gives the verdict
    of a transcript at the end.  Call :meth:`on_step` from the event loop on every step
    (it fits :meth:`p2p.handle.TableHandle.subscribe`)."""

    def __init__(self, folder: str | os.PathLike[str] | None, every: int = EVERY) -> None:
        self.folder = None if folder is None else Path(folder)
        self.every = every
        self.steps = 0
        self.passes = 0
        self._last = 0
        self._pass: asyncio.Task[Any] | None = None

    def on_step(self, *_: object) -> None:
        """One more step: start a pass if enough have come since the last one and none
        runs."""
        self.steps += 1
        if self.folder is None or self.steps - self._last < self.every:
            return
        if self._pass is not None and not self._pass.done():
            return
        self._last = self.steps
        self.passes += 1
        self._pass = asyncio.get_running_loop().create_task(
            asyncio.to_thread(audit_folder, self.folder))

    async def settle(self) -> None:
        """Wait for a running pass (its checks are what the end audit takes from memory)."""
        if self._pass is not None:
            with contextlib.suppress(Exception):  # a pass's outcome is discarded anyway
                await self._pass

    async def audit(self, path: str | os.PathLike[str]) -> GameAuditReport:
        """The audit of the finished game's transcript at ``path`` (a worker thread)."""
        await self.settle()
        return await asyncio.to_thread(audit_game, path)

    @staticmethod
    def remembered() -> dict[str, int]:
        """How the memory of passed checks stands (for benchmarks)."""
        return remembered.stats()

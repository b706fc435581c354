"""The audit of a game, done ahead while it is played, so its verdict comes when it ends.

Why: the end screen audits the seat's transcript as ``silkroad audit`` would (the one judge,
offline rules); in a cold process that is most of a minute's CPU on a 6-seat game, almost
all of it proof checks the live table never needed (an observer's checks of blindings and
shares it is not party to). While the game goes on, this seat audits its own folder as far
as it goes (:func:`p2p.judge.game_audit.audit_folder`, on a worker thread) whenever a
step came and it has rested twice as long as its last pass took (so at most a third of
a core goes to it), and at the latest every :data:`EVERY` steps; each pass leaves every
check that passed remembered (:mod:`crypto.remembered`), so the next pass, and the audit
at the end, check only what is new.  The verdict is the ordinary audit's, of the exported
file: nothing is taken on trust from a pass but the outcome of a check of the very same
bytes.

Passes never overlap (one thread), skip while the previous one runs, and their results
are discarded: a pass over an unfinished folder can only say "incomplete".  The game's
last step starts a pass whatever the pacing says (right after the running one, if any):
the secrets and the closes take the network a moment, which that pass spends on the last
steps' checks instead of leaving them to the final audit.  The audit of the transcript
starts the moment the table wrote it, right after the last close.

The final audit runs with the process's long-lived objects frozen (:func:`gc.freeze`,
held through :func:`p2p.heap.held`): by a game's end a seat holds about a million of them (its
log, the states, the remembered checks), and the audit's own allocations (the whole file
parsed) would trigger a full collection that walks them all: 0.65 s of a 1.1 s verdict,
measured on a 6-seat game.  They are unfrozen when the audit ends, so nothing is kept
from collection for longer than the verdict takes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from pathlib import Path

from crypto import remembered
from engine.state import Phase

from . import heap
from .handle import TableHandle
from .judge.game_audit import GameAuditReport, audit_folder, audit_game

#: Most steps between two passes (a 6-seat game has a few hundred).
EVERY = 24
#: A pass starts no sooner than this many times its predecessor's duration after it
#: ended (a pass is a whole replay of the folder: it grows with the game).
REST = 2.0


class AuditAhead:
    """Audits ``folder`` aside as the steps come (see the module); :meth:`audit` gives the
    verdict of a transcript at the end.

    :meth:`follow` wires it to a seat's :class:`p2p.handle.TableHandle`: the folder, every
    step, and the transcript the moment the table wrote it, so the final audit starts at
    the last close, not when the caller's clean-up (bot processes exiting, a listener's
    grace) is over.  Without a handle, call :meth:`on_step` from the event loop on every
    step and :meth:`exported` with the transcript."""

    def __init__(self, folder: str | os.PathLike[str] | None, every: int = EVERY) -> None:
        self.folder = None if folder is None else Path(folder)
        self.every = every
        self.steps = 0
        self.passes = 0
        self._last = 0
        #: how the final audit's time went (a benchmark prints it): waiting for the pass
        #: that ran when the game ended, the audit of the file, and both (``verdict_s``:
        #: from the transcript written to the verdict)
        self.timing: dict[str, float] = {}
        self._rested_at = 0.0  # when the next pass may start before ``every`` steps came
        self._stop = threading.Event()  # set: the running pass gives up at its next check
        self._pass: asyncio.Task[None] | None = None
        self._final: tuple[Path, asyncio.Task[GameAuditReport]] | None = None
        self._again = False  # the last step came while a pass ran: one more after it

    def follow(self, handle: TableHandle) -> AuditAhead:
        """Audit ``handle``'s table ahead: its folder once known, a pass every
        :data:`EVERY` steps, the final audit once it exported."""

        def on_step(*_: object) -> None:
            if self.folder is None and handle.folder is not None:
                self.folder = Path(handle.folder)
            self.on_step(last=handle.phase() == Phase.OVER)

        handle.subscribe(on_step)
        handle.on_exported(self.exported)
        return self

    def on_step(self, *_: object, last: bool = False) -> None:
        """One more step: start a pass if none runs and either the last one has rested
        :data:`REST` times its duration or :attr:`every` steps came since it, or this was
        the game's ``last`` step (then right after a running pass).  What is left
        unchecked when the game ends is then the secrets and the closes (the final audit
        takes the rest from memory)."""
        self.steps += 1
        if self.folder is None or self._final is not None:
            return
        if self._pass is not None and not self._pass.done():
            self._again = self._again or last
            return
        if not last and self.steps - self._last < self.every \
                and time.monotonic() < self._rested_at:
            return
        self._start_pass(self.folder)

    def _start_pass(self, folder: Path) -> None:
        self._last = self.steps
        self.passes += 1
        # its stop exists before the task runs: the final audit may set it before then
        self._stop = stop = threading.Event()
        self._pass = asyncio.get_running_loop().create_task(self._one_pass(folder, stop))

    async def _one_pass(self, folder: Path, stop: threading.Event) -> None:
        began = time.monotonic()
        with contextlib.suppress(Exception):  # a pass's outcome is discarded anyway
            await asyncio.to_thread(_pass, folder, stop)
        ended = time.monotonic()
        self._rested_at = ended + REST * (ended - began)
        if self._again and self._final is None and not stop.is_set():
            self._again = False
            self._start_pass(folder)

    async def settle(self) -> None:
        """Wait for a running pass (its checks are what the end audit takes from memory;
        the final audit gives it up first, see :meth:`_audit`)."""
        if self._pass is not None:
            with contextlib.suppress(Exception):
                await self._pass

    def exported(self, path: str | os.PathLike[str]) -> None:
        """Our finished game's transcript is at ``path``: start its audit now."""
        p = Path(path)
        if self._final is None or self._final[0] != p:
            self._final = (p, asyncio.get_running_loop().create_task(self._audit(p)))

    async def _audit(self, path: Path) -> GameAuditReport:
        began = time.monotonic()
        # a pass still running checks an unfinished folder: everything it would check,
        # this audit checks too, and what it checked so far is remembered already
        self._stop.set()
        await self.settle()
        settled = time.monotonic()
        try:
            with heap.held():
                return await asyncio.to_thread(audit_game, path)
        finally:
            now = time.monotonic()
            self.timing = {"wait_for_pass_s": round(settled - began, 3),
                           "final_audit_s": round(now - settled, 3),
                           "verdict_s": round(now - began, 3)}

    async def audit(self, path: str | os.PathLike[str]) -> GameAuditReport:
        """The audit of the finished game's transcript at ``path`` (a worker thread; the
        one :meth:`exported` started, if it was this file)."""
        self.exported(path)
        assert self._final is not None
        return await self._final[1]

    @property
    def auditing(self) -> Path | None:
        """The transcript whose final audit has started, if any."""
        return self._final[0] if self._final is not None else None

    def close(self) -> None:
        """Stop waiting for passes and the final audit (their threads finish on their
        own; nothing is kept from them but the checks they remember)."""
        self._stop.set()
        for task in (self._pass, self._final[1] if self._final is not None else None):
            if task is not None and not task.done():
                task.cancel()

    @staticmethod
    def remembered() -> dict[str, int]:
        """How the memory of passed checks stands (for benchmarks)."""
        return remembered.stats()


def _pass(folder: Path, stop: threading.Event) -> None:
    """One pass over ``folder`` on a worker thread, given up once ``stop`` is set."""
    with contextlib.suppress(remembered.Abandoned), remembered.abandonable(stop):
        audit_folder(folder)

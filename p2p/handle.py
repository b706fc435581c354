"""TableHandle: what a user interface may see and do at one seat's running table.

The CLI used to poll the table's crypto session and its transport by duck typing and to
overwrite ``LockstepTable.on_step``.  The handle is the one typed surface between them: the
player's view (state and own hand), progress of a long crypto op, which links are up,
whom the table waits for, a list of step subscribers, abandon, and the result.  Every
entry point of :mod:`p2p.front_door` takes a handle and attaches it once the table exists
(before its first step), so a UI can build its screen before the network is ready.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine.actions import Action
from engine.game import new_game
from engine.state import GameState, Phase
from engine.view import PlayerView

from .net.mesh import Mesh
from .table import LockstepTable, TableResult, TableStopped
from .table.talk import TalkLine

StepListener = Callable[[Action], None]
"""Called after every applied step with its action (read the new state from the handle)."""
ExportListener = Callable[[Path], None]
"""Called with the path of our finished game's ``game.silkroad`` once it is written."""
TalkListener = Callable[[TalkLine], None]
"""Called with every line of table talk a screen may show (:mod:`p2p.table.talk`)."""


@dataclass(frozen=True)
class OpProgress:
    """The crypto op the table is running: its name and, for staged ops (the shuffle chain
    of a deal), how many stages of how many are done."""

    op: str
    done: int | None = None
    total: int | None = None


class TableHandle:
    """One seat's table as the UI sees it; empty (``ready`` False) until attached."""

    def __init__(self) -> None:
        self._table: LockstepTable | None = None
        self._listeners: list[StepListener] = []
        self._talk: TalkListener | None = None
        self._on_ready: list[Callable[[], None]] = []
        self._exported: list[ExportListener] = []
        self._early_stop: tuple[int | None, str, str] | None = None
        #: this seat's game folder (its transcript, secrets, lock), once known
        self.folder: Path | None = None
        #: our table's result, once it finished
        self.result: TableResult | None = None

    # --- wiring (the front door calls this) --------------------------------------------
    def attach(self, table: LockstepTable, folder: Path | None = None) -> None:
        """Follow ``table`` from now on.  A step hook set before is kept and runs first."""
        self._table = table
        if folder is not None:
            self.folder = folder
        previous = table.on_step

        def on_step(t: LockstepTable, action: Action) -> None:
            if previous is not None:
                previous(t, action)
            for listener in list(self._listeners):
                listener(action)

        table.on_step = on_step
        table.on_export = self._export
        table.talk.on_line = self._heard
        for line in table.talk.lines:  # a resumed table retold what was said before
            self._heard(line)
        for ready in list(self._on_ready):
            ready()
        if self._early_stop is not None:
            self.stop(*self._early_stop)

    # --- what the UI reads ----------------------------------------------------------------
    @property
    def ready(self) -> bool:
        """Whether the table exists yet (the lobby and the mesh come first)."""
        return self._table is not None

    @property
    def seat(self) -> int | None:
        return self._table.me if self._table is not None else None

    @property
    def players(self) -> int | None:
        return self._table.n if self._table is not None else None

    @property
    def step(self) -> int:
        return self._table.step if self._table is not None else 0

    @property
    def recorded_steps(self) -> int:
        """After a resume, how many steps the stored record already held (the table
        re-runs those from the snapshot on before anything new happens); 0 otherwise."""
        return self._table.recorded_steps if self._table is not None else 0

    def state(self) -> GameState | None:
        """A copy of the table's state (the live one changes under running crypto ops)."""
        return self._table.state.copy() if self._table is not None else None

    def record(self) -> tuple[GameState, list[Action]] | None:
        """The game so far: its first state and every action applied since (a resumed
        screen retells the moves before it rejoined)."""
        if self._table is None:
            return None
        return new_game(self._table.config), self._table.applied_actions()

    def view(self) -> PlayerView | None:
        """The player's view: the public state and the colours of our own goods only."""
        if self._table is None:
            return None
        return PlayerView(self._table.state.copy(), self._table.me, self._table.hand())

    def phase(self) -> Phase | None:
        """The live state's phase (cheap: no copy)."""
        return self._table.state.phase if self._table is not None else None

    def hand(self) -> dict[int, int]:
        """The colours of our own hidden goods (handle → colour); nobody else's."""
        return self._table.hand() if self._table is not None else {}

    def progress(self) -> OpProgress | None:
        """The crypto op in progress, None when the table runs none."""
        if self._table is None:
            return None
        session = self._table.session
        op = session.current
        if op is None:
            return None
        staged = session.progress()
        if staged is not None:
            return OpProgress(staged[0], staged[1], staged[2])
        return OpProgress(op.name)

    def links(self) -> dict[int, bool]:
        """Per other seat, whether our link to it is up (empty before the mesh exists)."""
        mesh = self._table.transport if self._table is not None else None
        if not isinstance(mesh, Mesh):
            return {}
        now = {int(s): True for s in mesh.up_seats()}
        now.update({int(s): False for s in mesh.down_seats()})
        return now

    def left(self) -> tuple[int, ...]:
        """Other seats whose link is down because their peer said goodbye (its player
        quit and may resume), not because the link was lost."""
        mesh = self._table.transport if self._table is not None else None
        return tuple(mesh.left_seats()) if isinstance(mesh, Mesh) else ()

    def waiting_for(self) -> tuple[str, tuple[int, ...]] | None:
        """What the table awaits and from which seats (None when it awaits nothing)."""
        if self._table is None:
            return None
        got = self._table.waiting_for()
        return None if got is None else (got[0], tuple(got[1]))

    @property
    def failure(self) -> TableStopped | None:
        return self._table.failure if self._table is not None else None

    @property
    def done(self) -> bool:
        return self._table is not None and self._table.done

    # --- what the UI does ---------------------------------------------------------------
    def subscribe(self, listener: StepListener) -> Callable[[], None]:
        """Call ``listener(action)`` after every step; returns the unsubscribe function."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def on_exported(self, listener: ExportListener) -> None:
        """Call ``listener(path)`` when our finished game's transcript is written (before
        the front door's clean-up, e.g. waiting for bot processes, is over)."""
        self._exported.append(listener)

    def _export(self, path: Path) -> None:
        for listener in list(self._exported):
            listener(path)

    def on_talk(self, listener: TalkListener) -> None:
        """Call ``listener(line)`` for every line of table talk to show (one listener)."""
        self._talk = listener

    def _heard(self, line: TalkLine) -> None:
        if self._talk is not None:
            self._talk(line)

    def say(self, text: str) -> str | None:
        """Send a line of table talk; returns why it was not sent, or None."""
        if self._table is None:
            return "the table is not ready yet"
        return self._table.say(text)

    def when_ready(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` once the table is attached (before its first step), e.g. to
        take the first view; at once if it is attached already."""
        if self._table is not None:
            callback()
        else:
            self._on_ready.append(callback)

    def abandon(self, reason: str) -> bool:
        """Give up on a stalled table: it stops naming the seats it waited for.  False if
        there is no table (yet) or it already finished."""
        if self._table is None or self._table.done:
            return False
        self._table.abandon(reason)
        return True

    def stop(self, culprit: int | None, rule: str, detail: str) -> None:
        """Stop the table from outside (a bot child of ours died); kept until attached."""
        if self._table is None:
            self._early_stop = (culprit, rule, detail)
            return
        self._table.stop(culprit, rule, detail)

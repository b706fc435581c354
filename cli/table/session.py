"""The boundary between the table UI and whatever runs the game.

The UI never touches the engine's driver, the dealer or the network: it reads a
:class:`TableSession` (what I may see, what I may do now) and submits actions to it,
and it listens to the session's event stream. ``cli.table.local_session.LocalSession`` runs
the engine in-process with bots; the networked session in ``p2p/`` will implement the
same protocol, so swapping one for the other is local to the command that builds it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from engine.actions import Action
from engine.view import PlayerView


# --- events: what the session tells the UI -------------------------------------------
@dataclass(frozen=True)
class StateChanged:
    """The shared state moved on; ``lines`` say what happened, in plain words."""

    lines: tuple[str, ...] = ()


@dataclass(frozen=True)
class Status:
    """A progress or status line (e.g. "shuffling the bag 3/6"); ``text=None`` clears it."""

    text: str | None
    done: int | None = None
    total: int | None = None


@dataclass(frozen=True)
class PeerLink:
    """A peer's connection dropped (``connected=False``) or came back.  ``left``: it went
    because the peer said goodbye (its player quit; it can resume), not a lost link."""

    seat: int
    name: str
    connected: bool
    left: bool = False


@dataclass(frozen=True)
class GameOver:
    """The final reveal happened; the view's state holds ``final`` for the score table."""

    reason: str = "the caravan reached the end of the road"


@dataclass(frozen=True)
class SessionError:
    """Something went wrong that the player must know about (not an illegal action)."""

    text: str
    fatal: bool = False


@dataclass(frozen=True)
class Talk:
    """A line of table talk, signed by ``seat`` (already cleaned for the screen);
    ``hidden``: that seat's lines not shown just before it (it talked too fast);
    ``watcher``: the watcher who said it, when the seat relayed a watcher's line."""

    seat: int
    name: str
    text: str
    hidden: int = 0
    watcher: str | None = None


@dataclass(frozen=True)
class Verdict:
    """The audit of the finished game's transcript: ``done`` False while it runs; then
    ``fair`` says whether the game is certified, ``text`` the audit's words."""

    text: str
    done: bool = True
    fair: bool = False


Event = StateChanged | Status | PeerLink | GameOver | SessionError | Talk | Verdict


@dataclass
class SeatInfo:
    """Who sits where: the UI labels panels and the log with this."""

    name: str
    kind: str  # "human", "heuristic", "random", "peer"
    connected: bool = True
    extra: dict[str, str] = field(default_factory=dict)


# --- the protocol ----------------------------------------------------------------------
@runtime_checkable
class TableSession(Protocol):
    """What the table UI needs from a game in progress.

    ``seat`` is the local player's seat, or ``None`` for a spectator (headless runs).
    ``submit`` raises :class:`engine.errors.IllegalAction` with a readable message
    when the action is not allowed; the state is then unchanged.
    """

    seat: int | None

    @property
    def seats(self) -> Sequence[SeatInfo]:
        """Who sits where (the UI may mark a seat disconnected on its ``SeatInfo``)."""
        ...

    @property
    def names(self) -> list[str]: ...

    @property
    def auth_words(self) -> tuple[str, ...] | None:
        """Words every player compares aloud to detect a man in the middle (None: local)."""
        ...

    def view(self) -> PlayerView:
        """The public state plus my own goods' colours (the seat 0 view for a spectator)."""
        ...

    def legal(self) -> list[Action]:
        """My legal actions now; empty when it is not my turn."""
        ...

    def waiting_for(self) -> tuple[int, ...]:
        """Seats the table is waiting for (for the status line)."""
        ...

    async def start(self) -> None:
        """Begin play (start bots, connect peers); returns once play runs in the background."""
        ...

    async def submit(self, action: Action) -> None: ...

    def events(self) -> AsyncIterator[Event]:
        """The stream of events, in order; ends after the session closes."""
        ...

    async def close(self) -> None: ...


@runtime_checkable
class NetworkTable(Protocol):
    """What a session over a real network table adds: it can stall on a silent peer, and
    the player can give up on it ("abandon").  An in-process table never stalls, so the
    UI offers these only when the session has them (``isinstance(s, NetworkTable)``)."""

    def stalled_on(self) -> tuple[str, tuple[int, ...]] | None:
        """What the table waits for and from whom, once it has waited long enough."""
        ...

    def abandon(self) -> bool:
        """Stop waiting: the table stops naming the silent seats (False: no table)."""
        ...


@runtime_checkable
class AuditedTable(Protocol):
    """A session whose game leaves a signed transcript: at the end the screen asks for
    its audit (run aside; the :class:`Verdict` events say how it stands)."""

    def start_verdict(self) -> bool:
        """Start auditing the finished game's transcript (False: there is none)."""
        ...


@runtime_checkable
class TalkingTable(Protocol):
    """A session whose players can talk across the table (every networked table: lines
    are signed and kept in the transcript).  A local table of bots has nobody to hear."""

    def say(self, text: str) -> str | None:
        """Send a line; returns why it was not sent, or None."""
        ...


class EventStream:
    """The queue behind a session's ``events()``: sessions ``put`` events and ``end`` the
    stream once; the UI iterates until the end."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()

    def put(self, ev: Event) -> None:
        self._queue.put_nowait(ev)

    def end(self) -> None:
        self._queue.put_nowait(None)

    async def __aiter__(self) -> AsyncIterator[Event]:
        while True:
            ev = await self._queue.get()
            if ev is None:
                return
            yield ev

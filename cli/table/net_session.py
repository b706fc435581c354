"""NetSession: the table UI's :class:`cli.table.session.TableSession` over a real p2p table.

The human's seat is one real peer with its own keys; the other seats are other peers — bot
peers in their own processes for ``silkroad play``, people on the LAN for
``host``/``join``.  The session never sees anybody else's goods: the view is the peer's
own engine state plus the colours its own ledger decrypted.

How it hooks in without touching the lockstep loop:

* a *runner* coroutine plays the game through :mod:`p2p.front_door` (``play_local`` for
  ``play``, a hosted or joined table, or ``resume_seat``) and attaches the session's
  :class:`p2p.handle.TableHandle` once the table is built; the session subscribes to the
  handle's steps to narrate;
* the table asks its ``human`` decider for our moves: :meth:`_decide` parks a future that
  :meth:`submit` resolves, after checking the move is legal;
* a small poller reads the handle (the crypto op in progress, the links, whom the table
  waits for) to show "shuffling the bag 3/6", disconnect banners and who a stalled table
  waits for.  Polling keeps the network layer free of UI callbacks and costs nothing
  measurable at 8 Hz.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cli.table.narrate import Narrator
from cli.table.session import (
    Event,
    EventStream,
    GameOver,
    PeerLink,
    SeatInfo,
    SessionError,
    StateChanged,
    Status,
    Talk,
    Verdict,
)
from cli.verdict import summarise
from engine.actions import RESOLVER, Action
from engine.errors import IllegalAction
from engine.game import new_game
from engine.rules import actors, apply, is_simultaneous
from engine.state import GameState, Phase, make_config
from engine.view import PlayerView
from p2p.front_door import (
    DEFAULT_LAMBDA,
    AuditAhead,
    HumanDecider,
    StoreError,
    TableHandle,
    TableStopped,
    clean,
    play_local,
    read_series,
)

POLL = 0.12
"""Seconds between looks at the table's crypto progress and links."""
STALL_NOTICE = 10.0
"""After this long waiting on the same seats, say who; when they are not a player choosing
a move (a crypto op, an ack: no person is involved) or are disconnected, offer "abandon"."""
THINK_LIMIT = 300.0
"""A player choosing a move is normal, however long: "abandon" is offered only after this
long (a person rarely thinks five minutes; a seat that vanished without its link dropping
might)."""

DEALT = "The bag is shuffled and dealt by every peer"
"""The progress line once the deal is done (kept until our first decision)."""

Runner = Callable[[HumanDecider | None, TableHandle], Awaitable["RunOutcome"]]
"""Plays the game: given our decider (None: a bot plays our seat) and the handle to
attach to the table once it exists."""


@dataclass
class RunOutcome:
    """What a runner hands back: our table's export (the self-contained transcript)."""

    transcript: Path | None
    wall_time: float = 0.0


RULE_TEXT = {
    "ack-mismatch": "it acknowledged a game state the signed moves contradict (desync)",
    "disputed": "seats' signed words disagree and the transcript cannot show who lied "
                "(nobody is named)",
    "action-state-mismatch": "its move names another game state than the one it "
                             "acknowledged (desync)",
    "unchecked-abort": "a seat accused another, and what it pointed at never reached us "
                       "(nobody is named)",
    "crypto-disputed": "a seat's crypto message failed here, but it was made on messages "
                       "we never saw in that version (nobody is named)",
    "malformed-crypto": "it signed a crypto message without the heads it must carry "
                        "(cheating)",
    "timeout": "it stopped answering (timeout)",
    "abandoned": "the table was abandoned while waiting for it",
    "false-claim": "it claimed goods it does not hold (cheating)",
    "equivocation": "it sent two different messages for the same slot (cheating)",
    "peer-exited": "its bot process ended unexpectedly (its log: peers/seatN/…/peer.log)",
}


def quiet_network_logs(verbose: bool = False) -> None:
    """Keep the p2p and crypto loggers off the terminal: a full-screen UI or a JSON line on
    stdout must not be interleaved with "seat 2 down" warnings.  ``verbose`` restores them.

    asyncio's own logger goes too: what it reports (a connection dropped mid-write by a peer
    that crashed) is noise to a player, not an error of the game (``--verbose`` shows
    it)."""
    for name in ("p2p", "crypto", "asyncio"):
        lg = logging.getLogger(name)
        lg.propagate = verbose
        if not verbose and not any(isinstance(h, logging.NullHandler) for h in lg.handlers):
            lg.addHandler(logging.NullHandler())


class NetSession:
    """One seat of a networked table. ``seat`` is ours (None: we only watch seat 0's peer)."""

    def __init__(
        self,
        seats: Sequence[SeatInfo],
        seat: int | None,
        runner: Runner,
        *,
        words: Sequence[str] | None = None,
        hidden_money: bool = False,
    ) -> None:
        self.seats = list(seats)
        #: the table agreed to keep others' money behind their screens (``--money
        #: hidden``, in the game's params): the table screen shows it as "$?"
        self.hidden_money = hidden_money
        self.seat = seat
        self.runner = runner
        self._words = tuple(words) if words else None
        #: our table as the p2p layer shows it (attached by the runner)
        self.handle = TableHandle()
        self.handle.when_ready(self._ready)
        self.handle.subscribe(self._on_step)
        self.handle.on_talk(lambda line: self._emit(
            Talk(line.seat, self.names[line.seat], line.text, line.hidden, line.watcher)))
        state = new_game(make_config(len(self.seats)))
        self._state: GameState = state
        #: steps narrated so far (a jump means we resumed mid-game: see _retell)
        self._told = 0
        #: after a resume, the step after which "you rejoined here" is told
        self._rejoin_at: int | None = None
        self._hand: dict[int, int] = {}
        self.narrator = Narrator(self.names, viewer=seat, hidden_money=hidden_money)
        self.history: list[str] = []
        self._stream = EventStream()
        self._pending: tuple[list[Action], asyncio.Future[Action]] | None = None
        self._chose_vizier = False
        self._task: asyncio.Task[None] | None = None
        self._poller: asyncio.Task[None] | None = None
        self._status: str | None = None
        self._links: dict[int, bool] = {}
        # the deal's progress line stays up until our first decision, so a player (and the
        # smoke test) sees that the bag was shuffled by every peer even when it is quick
        self._hold_progress = seat is not None
        self._stall: tuple[tuple[str, tuple[int, ...]], float] | None = None
        self._stall_shown = False
        self._closed = False
        self.outcome: RunOutcome | None = None
        #: the audit of our transcript once the screen asked for it (summary, with the
        #: ``verdict`` and ``exit_code`` of ``silkroad audit``): finish_report reuses it
        self.verdict: dict[str, object] | None = None
        self._verdict_task: asyncio.Task[None] | None = None
        #: our folder audited aside as the game goes, and our transcript the moment the
        #: table wrote it, so the verdict is ready about when the last close came
        self._ahead = AuditAhead(None).follow(self.handle)
        self.stopped: TableStopped | None = None
        self.error: str | None = None
        self.finished = asyncio.Event()
        #: watchers at the table (a host's seat hears them: :meth:`set_watching`)
        self.watching = 0

    # --- TableSession --------------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        return [s.name for s in self.seats]

    @property
    def auth_words(self) -> tuple[str, ...] | None:
        return self._words

    @property
    def state(self) -> GameState:
        """The last state we narrated (a copy: the live one changes under crypto ops)."""
        return self._state

    def view(self) -> PlayerView:
        return PlayerView(self._state, self.seat if self.seat is not None else 0,
                          dict(self._hand) if self.seat is not None else {})

    def legal(self) -> list[Action]:
        if self._pending is None or self._pending[1].done():
            return []
        return list(self._pending[0])

    def waiting_for(self) -> tuple[int, ...]:
        acts = tuple(p for p in actors(self._state) if p != RESOLVER)
        if self._chose_vizier or (self._pending is None and is_simultaneous(self._state)):
            acts = tuple(p for p in acts if p != self.seat)
        return acts

    async def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def play_to_end(self) -> None:
        """Run in the caller's task (headless) until the game ends or stops."""
        await self.start()
        assert self._task is not None
        await asyncio.shield(self._task)

    async def submit(self, action: Action) -> None:
        if self.seat is None:
            raise IllegalAction("turn.spectator", "you are watching, not playing")
        if self._state.phase == Phase.OVER:
            raise IllegalAction("game.over", "the game is over")
        if self.stopped is not None or self.error is not None:
            raise IllegalAction("table.stopped", "the table has stopped; press q to leave")
        pending = self._pending
        if pending is None or pending[1].done():
            who = ", ".join(self.names[p] for p in self.waiting_for()) or "the table"
            if self._chose_vizier:
                raise IllegalAction("vizier.reveal", "you already chose what to show")
            raise IllegalAction("turn.wait", f"it is not your turn (waiting for {who})")
        legal, fut = pending
        if action not in legal:
            trial = self._state.copy()
            try:
                apply(trial, action)
            except IllegalAction:
                raise
            raise IllegalAction("claim", "you do not hold those goods; choose from the menu")
        if is_simultaneous(self._state):
            self._chose_vizier = True
            self._emit(Status("You chose. Waiting for the others to reveal…"))
        fut.set_result(action)

    async def events(self) -> AsyncIterator[Event]:
        async for ev in self._stream:
            yield ev

    async def close(self) -> None:
        """Leave the table: stop our peer (the others see us go) and end the event stream."""
        if self._closed:
            return
        self._closed = True
        if self._pending is not None and not self._pending[1].done():
            self._pending[1].cancel()
        for task in (self._task, self._poller, self._verdict_task):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        self._ahead.close()
        self._stream.end()

    def start_verdict(self) -> bool:
        """Audit our finished game's transcript aside (a worker thread), as ``silkroad
        audit`` would, while the player reads the scores; :class:`Verdict` events say how
        it stands, and :attr:`verdict` keeps the result for the report after the screen."""
        path = self.outcome.transcript if self.outcome is not None else None
        if path is None or self._verdict_task is not None:
            return False
        self._emit(Verdict("Auditing the transcript: every signature, proof and rule…",
                           done=False))
        self._verdict_task = asyncio.get_running_loop().create_task(self._audit(path))
        return True

    async def _audit(self, path: Path) -> None:
        t0 = time.perf_counter()
        try:
            out = summarise(await self._ahead.audit(path))
        except Exception as exc:  # an unreadable file: say so, the report audits again
            self._emit(Verdict(f"The audit failed: {clean(str(exc))}", fair=False))
            return
        self.verdict = out
        took = time.perf_counter() - t0
        fair = out.get("exit_code") == 0
        words = clean(str(out.get("text") or out.get("status") or ""), 160)
        self._emit(Verdict(f"Audit ({took:.1f} s): {words}", fair=fair))

    def say(self, text: str) -> str | None:
        """Table talk (:class:`cli.table.session.TalkingTable`): a signed line to every seat."""
        if self.seat is None:
            return "only a player at the table can talk"
        if self.finished.is_set():
            return "the game is over: talk is closed"
        return self.handle.say(text)

    def abandon(self) -> bool:
        """Give up on a stalled table (the UI's "abandon"): our table stops, naming the seats
        it waited for, and the game ends with a fatal error.  False if there is no table."""
        if self.finished.is_set():
            return False
        me = self.names[self.seat] if self.seat is not None else "the spectator"
        return self.handle.abandon(f"abandoned by {me}")

    @property
    def folder(self) -> Path | None:
        """Our seat's game folder (its record so far; resume from it)."""
        return self.handle.folder

    def series_line(self) -> str | None:
        """The series at this table so far, as the end screen shows it ("Series after 2
        games: Ann 2 wins, Bob 1"), from ``series.json`` in our game folder (written when
        the game ended, before :class:`GameOver`); None when there is none or it cannot be
        read (the report after the screen says why)."""
        folder = self.folder
        if folder is None:
            return None
        try:
            record = read_series(folder)
        except StoreError:
            return None
        return clean(record.line(), 200) if record is not None and record.games else None

    def stalled_on(self) -> tuple[str, tuple[int, ...]] | None:
        """What the table waits for and from whom (other seats) when it is really stuck
        — offer "abandon" — else None: waited :data:`STALL_NOTICE` s on something no person
        decides, or on a seat whose link is down, or :data:`THINK_LIMIT` s on a player's
        move (a person thinking is normal)."""
        if self._stall is None:
            return None
        key, since = self._stall
        waited = asyncio.get_running_loop().time() - since
        return key if waited >= self._abandon_after(key) else None

    def _abandon_after(self, key: tuple[str, tuple[int, ...]]) -> float:
        what, seats = key
        if any(self._links.get(s) is False for s in seats):
            return STALL_NOTICE
        return THINK_LIMIT if _a_move(what) else STALL_NOTICE

    def set_watching(self, count: int) -> None:
        """The number of watchers changed (the host's table tells its seat): the header
        shows "2 watching", so the players know who else sees the table."""
        if count != self.watching:
            self.watching = count
            self._emit(StateChanged(()))

    # --- wiring to the table ---------------------------------------------------------------
    def _emit(self, ev: Event) -> None:
        self._stream.put(ev)

    def _ready(self) -> None:
        """Our table exists (before it plays a step): take its first view, start polling."""
        state = self.handle.state()
        if state is not None:
            self._state = state
        self._hand = self.handle.hand() if self.seat is not None else {}
        if self._poller is None:
            self._poller = asyncio.get_running_loop().create_task(self._poll())

    def _retell(self) -> list[str]:
        """After a resume the table starts mid-game: tell the moves before it from the
        game's record, so the log reads as if we had never left (our past hands are not
        in the record, so they are told as a watcher sees them)."""
        record = self.handle.record()
        if record is None:
            return []
        state, actions = record
        lines: list[str] = []
        for a in actions[:-1]:
            after = state.copy()
            try:
                apply(after, a)
                lines.extend(self.narrator.tell(state, a, after))
            except Exception:  # narration must never stop the game
                break
            state = after
        self._state = state
        # the table re-runs the recorded steps after its snapshot before anything new
        # happens: they are told as they come, and the marker follows the last of them
        self._rejoin_at = max(self.handle.recorded_steps, self.handle.step)
        return lines

    def _on_step(self, a: Action) -> None:
        past: list[str] = []
        if self.handle.step != self._told + 1 and self.handle.step > 1:
            past = self._retell()
        self._told = self.handle.step
        before, hb = self._state, self._hand
        after = self.handle.state() or before
        ha = self.handle.hand() if self.seat is not None else {}
        try:
            lines = self.narrator.tell(before, a, after, hb if self.seat is not None else None,
                                       ha if self.seat is not None else None)
        except Exception:  # narration must never stop the game
            lines = []
        self._state, self._hand = after, ha
        self._chose_vizier = False
        setting_up = (Phase.SEED, Phase.DEAL)
        if self._hold_progress and before.phase in setting_up and after.phase not in setting_up:
            # however quick the deal was, say it happened (until our first decision)
            n = self.handle.players or len(self.seats)
            self._set_status(DEALT, n, n)
        elif self._status is not None and after.phase not in setting_up and \
                not (self._hold_progress and self._status.startswith(DEALT)):
            self._set_status(None)
        elif self._status and self._status.startswith("You chose"):
            self._set_status(None)
        lines = past + lines
        if self._rejoin_at is not None and self.handle.step >= self._rejoin_at:
            self._rejoin_at = None
            city = after.board.cities[after.city]
            lines.append(f"— You rejoined the game here, in {city} (stop {after.visit}). —")
        self.history.extend(lines)
        self._emit(StateChanged(tuple(lines)))

    async def _decide(self, view: PlayerView, legal: list[Action]) -> Action:
        """The table's ``human`` decider: wait for :meth:`submit` (any time may pass)."""
        fut: asyncio.Future[Action] = asyncio.get_running_loop().create_future()
        self._state = view.state.copy()
        self._hand = dict(view.hand)
        self._pending = (list(legal), fut)
        if self._hold_progress:
            self._hold_progress = False
            self._set_status(None)
        self._emit(StateChanged(()))  # the menu changes: let the UI redraw
        try:
            return await fut
        finally:
            self._pending = None

    def _set_status(self, text: str | None, done: int | None = None,
                    total: int | None = None) -> None:
        key = f"{text}|{done}|{total}" if text else None
        if key == self._status:
            return
        self._status = key
        self._emit(Status(text, done, total))

    async def _poll(self) -> None:
        """Progress of the long crypto ops and the links to the other peers."""
        while True:
            if self.handle.ready:
                self._progress()
                self._watch_links()
                self._watch_stall()
            await asyncio.sleep(POLL)

    def _progress(self) -> None:
        op = self.handle.progress()
        if op is None:
            return
        if op.done is not None and op.total is not None:
            if op.done < op.total:
                self._set_status("Shuffling the bag", op.done, op.total)
            else:
                self._set_status("Dealing the goods…")
        elif op.op == "coinflip" and self.handle.phase() == Phase.SEED:
            self._set_status("Flipping a shared coin to lay out the tiles…")
        elif op.op == "keys":
            self._set_status("Exchanging keys with every peer…")

    def _watch_links(self) -> None:
        now = self.handle.links()
        left = self.handle.left()  # said goodbye (quit on purpose) rather than dropped
        for s, up in sorted(now.items()):
            was = self._links.get(s)
            if was is None:
                if up:
                    self._links[s] = True  # first seen up: no banner for the initial connect
                continue
            if up != was:
                self._links[s] = up
                self._emit(PeerLink(s, self.names[s], up, left=not up and s in left))
                if up and self._stall is not None and s in self._stall[0][1]:
                    # back: the wait on it starts again from now, not from the drop
                    self._stall = None
                    self._stall_shown = False
                    self._status = None  # the screen cleared its line on the PeerLink

    def _watch_stall(self) -> None:
        """Note how long the table has waited on the same seats; after
        :data:`STALL_NOTICE` s name them and offer "abandon" on the status line."""
        w = self.handle.waiting_for()
        others = tuple(s for s in (w[1] if w else ()) if s != self.seat)
        if w is None or not others or (self._pending is not None
                                       and not self._pending[1].done()):
            self._stall = None
            if self._stall_shown:
                self._stall_shown = False
                self._set_status(None)
            return
        key = (w[0], others)
        now = asyncio.get_running_loop().time()
        if self._stall is None or self._stall[0] != key:
            self._stall = (key, now)
        if now - self._stall[1] >= STALL_NOTICE:
            who = ", ".join(f"{self.names[s]} (seat {s})" for s in others
                            if 0 <= s < len(self.names))
            secs = int(now - self._stall[1])
            self._stall_shown = True
            if self.stalled_on() is not None:
                self._set_status(f"Waiting {secs} s for {who} — a: abandon the table")
            else:  # a player thinking: say who is to play, and nothing more
                self._set_status(f"Waiting for {who} to play ({secs // 10 * 10} s)")

    async def _run(self) -> None:
        human = self._decide if self.seat is not None else None
        try:
            self.outcome = await self.runner(human, self.handle)
        except asyncio.CancelledError:
            raise
        except TableStopped as exc:
            # the rule and detail may be another seat's words (its abort notice): shown
            # and reported only cleaned (p2p.sanitize)
            self.stopped = TableStopped(exc.culprit, clean(exc.rule, 64), clean(exc.detail),
                                        exc.stopped_by)
            self.stopped.export = exc.export  # written when the game had reached its end
            self._set_status(None)
            exc = self.stopped
            self._emit(SessionError(self.describe_stop(exc), fatal=True))
        except Exception as exc:  # the network or a peer failed: say so, never a traceback
            self.error = f"the game stopped: {clean(str(exc))}" if str(exc) else \
                f"the game stopped: {type(exc).__name__}"
            self._set_status(None)
            self._emit(SessionError(self.error, fatal=True))
        else:
            state = self.handle.state()
            if state is not None:
                self._state = state
            self._set_status(None)
            if self._state.final is not None:
                self._emit(GameOver())
            else:
                self.error = "the game ended before the final reveal"
                self._emit(SessionError(self.error, fatal=True))
        finally:
            if self._poller is not None:
                self._poller.cancel()
            self.finished.set()

    def describe_stop(self, exc: TableStopped) -> str:
        """One line naming the culprit, e.g. "The table stopped: Omar (seat 3) — it stopped
        answering (timeout)"."""
        by = exc.stopped_by
        if by is not None and 0 <= by < len(self.seats):
            # a seat's signed stop notice: it is named as the one that stopped, its reason
            # shown as its own claim (the detail says "unverified")
            return (f"The table stopped: {self.names[by]} (seat {by}) stopped it — "
                    f"{exc.detail.split('; ', 1)[-1]}"[:200])
        why = RULE_TEXT.get(exc.rule, f"{exc.rule}: {exc.detail}"[:120])
        if exc.culprit is not None and 0 <= exc.culprit < len(self.seats):
            return f"The table stopped: {self.names[exc.culprit]} (seat {exc.culprit}) — {why}"
        return f"The table stopped, naming no one — {why}"


def _a_move(what: str) -> bool:
    """Whether the table's wait (:meth:`p2p.table.LockstepTable.waiting_for`) is for a player's
    move, which a person decides (as opposed to a crypto op or an acknowledgement)."""
    return what.startswith(("the action of seat", "crypto op sealed"))


def local_runner(names: Sequence[str], bot_kind: str, seed: int, shuffle_mode: str,
                 root: str | Path, lam: int = DEFAULT_LAMBDA, delay: float = 0.0,
                 variant: str | None = None, board: str | None = None,
                 one_process: bool = False, money: str = "open") -> Runner:
    """``silkroad play``: every seat a real peer on 127.0.0.1 (:func:`p2p.front_door.play_local`).

    Seat 0 is the human when the session has a seat (its table asks the session), the other
    seats are bot peers, each in its own process (the crypto of six peers would otherwise
    queue on one core) or, with ``one_process``, in this one; each peer has its own
    identity, listener, keys and game folder under ``root`` and they only talk over TCP,
    exactly as on a LAN.  With a human at the table the bots pause ``delay`` s before each
    move so the human can follow the log.  ``variant`` ("reverse") and ``board`` (a board
    file) are agreed by every peer, and so is ``money`` ("open"/"hidden").
    """
    async def run(human: HumanDecider | None, handle: TableHandle) -> RunOutcome:
        res = await play_local(names, bot_kind, seed, shuffle_mode, root, handle, human,
                               lam=lam, variant=variant, board=board,
                               pace=delay if human is not None else 0.0,
                               bot_processes=not one_process, money=money)
        return RunOutcome(res.transcript, res.wall_time)

    return run

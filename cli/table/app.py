"""The table: a full-screen prompt_toolkit application over a :class:`TableSession`.

What it draws is :mod:`cli.table.view`, its keys :mod:`cli.table.keys`; this module keeps
the screen's state, takes the session's events and acts on the player's choices.  The UI
reads the session and submits to it; it never runs the game itself, so the same screen
serves the in-process table and the networked one.
"""

from __future__ import annotations

import asyncio
import math

from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.input import Input
from prompt_toolkit.layout import Layout
from prompt_toolkit.output import Output
from prompt_toolkit.widgets import TextArea

from cli.table.choices import Choice
from cli.table.keys import table_bindings
from cli.table.layout import table_layout
from cli.table.mapview import board_rows
from cli.table.parse import CommandCompleter, CommandError, CommandParser
from cli.table.session import (
    AuditedTable,
    Event,
    GameOver,
    NetworkTable,
    PeerLink,
    SessionError,
    StateChanged,
    Status,
    TableSession,
    Talk,
    TalkingTable,
    Verdict,
)
from cli.table.talk import log_line as talk_line
from cli.table.talk import spoken
from cli.table.view import (
    KEYS,
    MIN_SIZE,
    PANEL_MIN,
    MenuEntry,
    TableView,
    touches_me,
)
from cli.theme import STYLE, color_depth
from engine.actions import Action, Decline, ExchangeDone, ExchangePair
from engine.colours import COLOURS
from engine.errors import IllegalAction
from engine.state import GameState, Phase
from engine.tiles import BARTERER, CROOK

UNDO_SECONDS = 2.5
"""How long a declined tile (picked from the menu) waits for Esc before it is declined."""
AUTO_SECONDS = 1.0
"""How long a prompt with only one possible choice shows before it plays itself."""
TICK_SECONDS = 0.25
"""How often the decline's countdown is redrawn."""
DRAW_WAIT = 1.0
"""The longest a move waits for the screen to show it as sent before it goes anyway."""
ON_ITS_WAY = "your move"
"""How the error for a key pressed while our move is on its way begins."""

__all__ = ["KEYS", "MIN_SIZE", "PANEL_MIN", "TableApp", "passed_cities", "run_table",
           "stale_status"]


class TableApp(TableView):
    """The table screen for one seat. ``result`` is "over" or "quit" after it exits, or
    "again" when the player chose to play the table's next game (``again``: offered on the
    end screen, for a host's or joiner's series)."""

    def __init__(
        self,
        session: TableSession,
        input: Input | None = None,
        output: Output | None = None,
        hidden_money: bool | None = None,
        again: bool = False,
    ) -> None:
        self.session = session
        #: the end screen offers "play again" (the table's next game; the caller plays it)
        self.again = again
        #: the series so far at this table ("Series after 2 games: …"), on the end screen
        self.series_line: str | None = None
        self._hidden_money = hidden_money
        self.log: list[str] = []
        self.seen = 0  # log lines before my last action (newer ones are highlighted)
        self.error = ""
        self.status: Status | None = None
        self.away: dict[int, str] = {}
        self.back: str | None = None
        self.fatal: str | None = None
        self.over = False
        self.route: list[int] = []
        self.stack: list[str] = []  # open submenu (group title)
        self.sel = 0
        self.overlay: str | None = None  # "help", "quit", "abandon", "city" or "confirm"
        self.help_page = 0
        self.help_scroll = 0
        self.inspect = 0  # the city the inspector shows
        self.confirm: Choice | None = None  # a menu pick waiting for y (overlay "confirm")
        self.undo: tuple[Choice, asyncio.TimerHandle] | None = None  # a decline Esc can stop
        self.undo_until = 0.0  # the loop time the waiting decline is played at
        self.sending: Choice | None = None  # a move handed to the session, not yet played
        self._sent_from: list[Action] = []  # what was legal when it was sent
        self.gone: set[int] = set()  # seats away because they left (not a dropped link)
        self.log_scroll = 0  # log lines scrolled back from the newest (PgUp/PgDn)
        self.end_note: tuple[str, ...] = ()  # how the game ended, shown over the scores
        self.verdict: Verdict | None = None  # the transcript's audit, under the scores
        self._auto: asyncio.TimerHandle | None = None
        self.version = 0
        self._parser: tuple[int, list[Action], CommandParser] | None = None
        self.pending: asyncio.Task[None] | None = None
        self.input = TextArea(
            height=1,
            prompt=[("class:prompt", "> ")],
            multiline=False,
            completer=CommandCompleter(self.parser),
            complete_while_typing=True,
            accept_handler=self._on_enter,
        )
        self.app: Application[str] = Application(
            layout=Layout(table_layout(self), focused_element=self.input),
            key_bindings=table_bindings(self),
            style=STYLE,
            full_screen=True,
            input=input,
            output=output,
            color_depth=color_depth(),
            mouse_support=False,
        )

    # --- state derived from the session ---------------------------------------------------
    def parser(self) -> CommandParser | None:
        """The parser for what is legal right now (rebuilt whenever that changes)."""
        legal = self.session.legal() if not self.over else []
        if self._parser is None or self._parser[0] != self.version or self._parser[1] != legal:
            p = CommandParser(self.session.view(), legal, self.session.names)
            self._parser = (self.version, legal, p)
        return self._parser[2]

    def entries(self) -> list[MenuEntry]:
        """The menu now: top level (actions and submenus) or the open submenu."""
        p = self.parser()
        if p is None:
            return []
        shown = [c for c in p.choices if not _no_op(c)]
        if self.stack:
            return [MenuEntry(c.label, c) for c in shown if c.group == self.stack[-1]]
        out: list[MenuEntry] = []
        groups: list[str] = []
        for c in shown:
            if c.group is None:
                out.append(MenuEntry(c.label, c))
            elif c.group not in groups:
                groups.append(c.group)
                out.append(MenuEntry(c.group, group=c.group))
        return out

    def my_turn(self) -> bool:
        if self.fatal:
            return False
        p = self.parser()
        return p is not None and bool(p.legal)

    # --- events from the session ------------------------------------------------------------
    def handle(self, ev: Event) -> None:
        """Apply one session event to the screen state (also called directly by tests)."""
        if self.sending is not None and not self.pending_busy() and (
                isinstance(ev, StateChanged | SessionError | GameOver)
                or (isinstance(ev, Status) and (ev.text or "").startswith("You chose"))):
            # the table has our move (played, or the Vizier's choice noted) or stopped
            self.sending = None
            if self.error.startswith(ON_ITS_WAY):
                self.error = ""  # no longer true
        if isinstance(ev, StateChanged):
            if ev.lines and self.log_scroll:
                if any(touches_me(line) for line in ev.lines):
                    self.log_scroll = 0  # news for the player: back to the newest
                else:  # scrolled back: keep the same rows shown
                    self.log_scroll += sum(len(self._wrap(line)) for line in ev.lines)
            self.log.extend(ev.lines)
            self.back = None
            state = self.session.view().state
            city = state.city
            if not self.route and state.visit > 0:
                # joined mid-game (a resume): the cities already passed are those the
                # markets emptied; say where we are, as the log before is not ours
                self.route = passed_cities(state)
                if not self.log:
                    self.log.append(
                        f"You rejoined the game in {state.board.cities[city]} (stop "
                        f"{state.visit}); the moves before are in the game's record "
                        "(silkroad replay).")
            if not self.route or self.route[-1] != city:
                self.route.append(city)
            if state.phase == Phase.OVER and ev.lines:
                self.end_note = ev.lines
            if self.status is not None and stale_status(self.status, state, bool(ev.lines)):
                self.status = None
        elif isinstance(ev, Status):
            self.status = ev if ev.text else None
        elif isinstance(ev, PeerLink):
            if self.ended():
                # peers leave once the game is over (or stopped): that is normal, not news
                self.away.pop(ev.seat, None)
                self.gone.discard(ev.seat)
            elif ev.connected:
                self.away.pop(ev.seat, None)
                if self.status is not None and (self.status.text or "").startswith("Waiting"):
                    self.status = None  # whoever we waited for may be back: not stale news
                self.back = f"{ev.name} is back at the table."
                again = "came back" if ev.seat in self.gone else "reconnected"
                self.log.append(f"{ev.name} {again}.")
                self.gone.discard(ev.seat)
            elif ev.left:
                self.away[ev.seat] = ev.name
                self.gone.add(ev.seat)
                self.log.append(f"{ev.name} left the table (they can come back to it with "
                                "silkroad join --resume and their game folder).")
            else:
                self.away[ev.seat] = ev.name
                self.gone.discard(ev.seat)
                self.log.append(f"{ev.name} lost the connection.")
            for i, info in enumerate(self.session.seats):
                if i == ev.seat:
                    info.connected = ev.connected
        elif isinstance(ev, GameOver):
            self.over = True
            self.stack = []
            self.away.clear()
            self.gone.clear()
            if isinstance(self.session, AuditedTable):
                self.session.start_verdict()  # the verdict comes while the scores show
            line = getattr(self.session, "series_line", None)
            self.series_line = line() if callable(line) else None
        elif isinstance(ev, Verdict):
            self.verdict = ev
        elif isinstance(ev, Talk):
            self.log.append(talk_line(ev, self.session.seat))
        elif isinstance(ev, SessionError):
            self.log.append(f"! {ev.text}")
            if ev.fatal:
                self.fatal = ev.text
        self.version += 1
        if not self.input.text:
            # a new prompt: a popup left from the previous one would cover the new menu
            self.input.buffer.cancel_completion()
        if not self.stack or not any(e.choice for e in self.entries()):
            self.stack = []
        self.sel = min(self.sel, max(0, len(self.entries()) - 1))
        if self.confirm is not None and self.confirm.action not in self.session.legal():
            self.confirm = None  # the question no longer applies
            if self.overlay == "confirm":
                self.overlay = None
        self._plan_auto()

    def ended(self) -> bool:
        """Whether the game is over or the table stopped (nothing more will be played)."""
        return self.over or self.fatal is not None or \
            self.session.view().state.phase == Phase.OVER

    def forced(self) -> Choice | None:
        """The menu's only choice, when it offers just one (at the top level): nothing to
        decide, so it plays itself (:meth:`_plan_auto`) and a key plays it at once, with
        no question and no grace period (there is nothing else to go back to)."""
        if self.stack or self.ended():
            return None
        entries = self.entries()
        if len(entries) == 1 and entries[0].choice is not None:
            return entries[0].choice
        return None

    def _plan_auto(self) -> None:
        """A prompt with exactly one possible choice (e.g. "stop trading") plays it after
        :data:`AUTO_SECONDS` unless the player acts first: nothing to decide, no key to
        wait for."""
        if self._auto is not None:
            self._auto.cancel()
            self._auto = None
        only = self.forced()
        if only is None or self.undo is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        version = self.version

        def fire() -> None:
            self._auto = None
            now = self.forced()
            if self.version != version or now is None or now.action != only.action or \
                    self.overlay is not None or self.input.text or self.busy():
                return
            self.act(now)
            self.app.invalidate()

        self._auto = loop.call_later(AUTO_SECONDS, fire)

    def pending_busy(self) -> bool:
        return self.pending is not None and not self.pending.done()

    def busy(self) -> bool:
        """Whether a move of ours is on its way (handed over, not yet played)."""
        if self.pending_busy():
            return True
        if self.sending is None:
            return False
        legal = self.session.legal()
        if legal and legal != self._sent_from:
            # the table asks us again, so it has our move (its news is still queued)
            self.sending = None
            return False
        return True

    async def _pump(self) -> None:
        async for ev in self.session.events():
            self.handle(ev)
            self.app.invalidate()

    # --- acting ---------------------------------------------------------------------------------
    def act(self, choice: Choice) -> None:
        """Submit a chosen action; an IllegalAction becomes the one-line error.  The screen
        shows the move as on its way at once (:attr:`sending`), and any key that would
        send another before the table has this one says so instead."""
        if self.busy():
            self.error = self._on_its_way()
            return
        self.error = ""
        self.seen = len(self.log)
        self.sending = choice
        self._sent_from = self.session.legal()
        self.pending = asyncio.get_running_loop().create_task(self._submit(choice))

    def _on_its_way(self) -> str:
        what = self.sending.label if self.sending is not None else "a move"
        return f"{ON_ITS_WAY} ({what}) is on its way — wait for the table"

    async def _submit(self, choice: Choice) -> None:
        await self._drawn()
        try:
            await self.session.submit(choice.action)
        except IllegalAction as exc:
            self.error = exc.message
            self.sending = None
        except BaseException:
            self.sending = None
            raise
        self.stack = []
        self.sel = 0
        self.version += 1
        self.app.invalidate()

    async def _drawn(self) -> None:
        """Wait until the screen has been drawn since now: the move shows as on its way
        before the session gets it, since signing it and the crypto that follows may keep
        this process busy for a while on a loaded machine (a player who sees nothing
        presses again)."""
        app = self.app
        if not app.is_running:
            return
        counter = app.render_counter
        drawn = asyncio.Event()

        def after(_: object) -> None:
            drawn.set()

        app.after_render += after
        try:
            app.invalidate()
            async with asyncio.timeout(DRAW_WAIT):
                while app.render_counter == counter and app.is_running:
                    drawn.clear()
                    await drawn.wait()
        except TimeoutError:
            pass  # an output that never draws: send all the same
        finally:
            app.after_render -= after

    def pick(self, index: int) -> None:
        """A menu pick (digit or Enter): a slip must be recoverable, so a pick that throws
        a tile away waits :data:`UNDO_SECONDS` for Esc, and one that runs an exchange asks
        first (it cannot be undone and may give back just what it takes)."""
        if self.busy():
            self.error = self._on_its_way()
            return
        entries = self.entries()
        if not entries:
            self.error = "nothing to choose now: " + self.title_text()
            return
        if not 0 <= index < len(entries):
            self.error = f"there is no entry {index + 1}; choose 1..{min(len(entries), 10)}"
            return
        e = entries[index]
        if e.group is not None:
            self.stack.append(e.group)
            self.sel = 0
            self.error = ""
        elif e.choice is not None:
            forced = self.forced()
            if forced is not None and forced.action == e.choice.action:
                self.act(e.choice)  # the only choice: it plays itself, so no question
            elif self.confirm_text(e.choice):
                self.confirm = e.choice
                self.overlay = "confirm"
                self.error = ""
            elif self.declines_tile(e.choice):
                self.start_undo(e.choice)
            else:
                self.act(e.choice)

    def declines_tile(self, choice: Choice) -> bool:
        """Whether ``choice`` throws away a tile just taken, for nothing in return."""
        s = self.session.view().state
        return (isinstance(choice.action, Decline) and s.phase == Phase.PERFORM
                and not s.printed and not s.trades_done and s.tile is not None
                and s.tile.kind not in (CROOK, BARTERER))

    def confirm_text(self, choice: Choice) -> str:
        """The question to ask before ``choice``, or "" (no question)."""
        s = self.session.view().state
        a = choice.action
        pairs = [(g, r) for _, g, r in s.pairs]
        if isinstance(a, ExchangePair) and s.tile is not None and len(pairs) + 1 >= s.tile.n:
            pairs.append((a.give, a.receive))
        elif not isinstance(a, ExchangeDone):
            return ""
        words = ", ".join(f"{COLOURS[g]} → {COLOURS[r]}" for g, r in pairs)
        gives = sorted(g for g, _ in pairs)
        gets = sorted(r for _, r in pairs)
        note = "\n You would get back exactly what you give." if gives == gets else ""
        return f" Exchange {words}?{note}\n It cannot be undone."

    def start_undo(self, choice: Choice) -> None:
        """Wait :data:`UNDO_SECONDS` before ``choice`` is played, counting down on the line
        above the menu (where the player looks); Esc keeps the tile, Enter plays it now.
        The count starts once the screen shows it: a loaded machine that draws late does
        not eat the grace."""
        self.cancel_undo()
        loop = asyncio.get_running_loop()
        drawn_at = self.app.render_counter

        def fire() -> None:
            nonlocal drawn_at
            if self.undo is None or self.undo[0] is not choice:
                return
            if self.app.is_running and self.app.render_counter == drawn_at:
                # never drawn since it began (a loaded machine): the grace starts again
                drawn_at = self.app.render_counter
                self.undo = (choice, loop.call_later(UNDO_SECONDS, fire))
                self.undo_until = loop.time() + UNDO_SECONDS
                return
            self.undo = None
            if choice.action in self.session.legal():
                self.act(choice)
            self.app.invalidate()

        def tick() -> None:
            if self.undo is not None and self.undo[0] is choice:
                self.app.invalidate()
                loop.call_later(TICK_SECONDS, tick)

        self.undo = (choice, loop.call_later(UNDO_SECONDS, fire))
        self.undo_until = loop.time() + UNDO_SECONDS
        loop.call_later(TICK_SECONDS, tick)
        self.error = ""

    def undo_left(self) -> int:
        """Whole seconds left before the waiting decline is played (at least 1)."""
        try:
            now = asyncio.get_running_loop().time()
        except RuntimeError:
            return max(1, math.ceil(UNDO_SECONDS))
        return max(1, math.ceil(self.undo_until - now))

    def cancel_undo(self) -> bool:
        if self.undo is None:
            return False
        self.undo[1].cancel()
        self.undo = None
        return True

    def undo_now(self) -> None:
        """Enter while a decline waits: do it now."""
        if self.undo is not None:
            choice = self.undo[0]
            self.cancel_undo()
            if choice.action in self.session.legal():
                self.act(choice)

    def say(self, text: str) -> None:
        """Table talk: a signed line to every seat (``say gg``, ``'gg``, F2…F4)."""
        s = self.session
        if not isinstance(s, TalkingTable):
            self.error = "nobody to talk to: the bots of a local table do not read"
            return
        self.error = s.say(text) or ""

    def run_command(self, text: str) -> None:
        line = spoken(text)
        if line is not None:
            self.say(line)
            return
        word = text.strip().lower()
        if word in ("help", "?"):
            self.overlay = "help"
            return
        if word in ("quit", "exit", "q"):
            self.ask_quit()
            return
        if word in ("again", "play again", "n") and self.over:
            self.play_again()
            return
        if word == "abandon":
            self.ask_abandon()
            return
        first = word.split()[0] if word.split() else ""
        if first in ("city", "inspect", "look"):
            self.open_inspector(word[len(first):].strip())
            return
        if self.over:
            self.error = "the game is over; press q to leave"
            return
        p = self.parser()
        assert p is not None
        try:
            action = p.parse(text)
        except CommandError as exc:
            self.error = str(exc)
            return
        choice = next(c for c in p.choices if c.action == action)
        self.act(choice)

    def _on_enter(self, buf: Buffer) -> bool:
        text = buf.text
        buf.cancel_completion()  # the next prompt starts without the last one's popup
        if text.strip():
            self.run_command(text)
        elif self.undo is not None:
            self.undo_now()
        else:
            self.pick(self.sel)
        return False  # clear the line

    def open_inspector(self, name: str = "") -> None:
        """The city inspector: a city (the caravan's, or one named) in full words."""
        s = self.session.view().state
        board = s.board
        city = s.city
        if name:
            from cli.table.choices import slug

            key = slug(name)
            hits = [i for i, c in enumerate(board.cities) if slug(c).startswith(key)]
            if len(hits) != 1:
                names = ", ".join(board.cities[i] for i in hits) or "no such city"
                self.error = f"which city? {names}" if hits else f"'{name}': no such city"
                return
            city = hits[0]
        self.inspect = city
        self.overlay = "city"
        self.error = ""

    def inspect_step(self, delta: int) -> None:
        """The next city in map order (row by row), wrapping around."""
        order = [c for row in board_rows(self.session.view().state.board) for c in row]
        i = order.index(self.inspect) if self.inspect in order else 0
        self.inspect = order[(i + delta) % len(order)]

    def stalled(self) -> bool:
        """Whether the session says a peer has kept the table waiting (offer "abandon")."""
        s = self.session
        return bool(isinstance(s, NetworkTable) and not self.over and not self.fatal
                    and s.stalled_on())

    def abandon_target(self) -> str:
        """Who we would stop waiting for, in words (the table's own ``waiting_for()``)."""
        sess = self.session
        got = sess.stalled_on() if isinstance(sess, NetworkTable) else None
        seats = got[1] if got else tuple(s for s in sess.waiting_for() if s != sess.seat)
        names = self.session.names
        return ", ".join(f"{names[s]} (seat {s})" for s in seats if 0 <= s < len(names)) \
            or "nobody"

    def ask_abandon(self) -> None:
        """The "abandon" command: confirm, then stop a table that waits on a silent peer."""
        if not isinstance(self.session, NetworkTable):
            self.error = "nothing to abandon: every seat plays in this process"
        elif self.over or self.fatal:
            self.error = "the game has ended; press q to leave"
        else:
            self.error = ""
            self.overlay = "abandon"

    def abandon(self) -> None:
        self.overlay = None
        s = self.session
        if not isinstance(s, NetworkTable) or not s.abandon():
            self.error = "the table has already stopped"

    def can_play_again(self) -> bool:
        """Whether "play again" is offered now: a game played to its end, at a table that
        has a next game (a stopped table has none: its seats are not all coming back)."""
        return self.again and self.over and self.fatal is None

    def play_again(self) -> None:
        """Leave the end screen for the table's next game (the caller seats it)."""
        if self.can_play_again():
            self.app.exit(result="again")
        else:
            self.error = "no next game here; press q to leave"

    def ask_quit(self) -> None:
        if self.over or self.fatal:
            self.app.exit(result="over" if self.over else "quit")
        else:
            self.overlay = "quit"

    # --- running ------------------------------------------------------------------------------
    async def run(self) -> str:
        """Start the session and the screen; returns "over", "quit" or "again"."""
        await self.session.start()

        def pre_run() -> None:
            self.app.create_background_task(self._pump())

        result = await self.app.run_async(pre_run=pre_run)
        return result or "quit"


def passed_cities(s: GameState) -> list[int]:
    """The caravan's route so far worked out from the state alone: the start, then every
    tile city the markets emptied (a city's tiles only ever leave while the caravan is
    there), in map order."""
    board = s.board
    order = [c for row in board_rows(board) for c in row]
    out = [board.start]
    out.extend(c for c in order if board.colour[c] >= 0 and not s.layout[c] and c != s.city)
    return out


def _no_op(c: Choice) -> bool:
    """A pair that gives a good for one of its own colour: legal, never wanted, left out of
    the menu (typing it still works)."""
    a = c.action
    return isinstance(a, ExchangePair) and a.give == a.receive


def stale_status(status: Status, state: GameState, moved: bool) -> bool:
    """Whether a status line no longer holds once the state moved on: "You chose…" outside
    a Grand Vizier, and "Waiting N s for …" or "Waiting for … to play" once a step was
    played (a session that still waits says so again with the new count)."""
    text = status.text or ""
    if text.startswith("You chose") and state.phase != Phase.VIZIER:
        return True
    return moved and text.startswith("Waiting") and (" s for " in text or " to play" in text)


async def run_table(session: TableSession, hidden_money: bool | None = None,
                    again: bool = False) -> str:
    return await TableApp(session, hidden_money=hidden_money, again=again).run()

"""The table: a full-screen prompt_toolkit application over a :class:`TableSession`.

What it draws is :mod:`cli.table_view`, its keys :mod:`cli.table_keys`; this module keeps
the screen's state, takes the session's events and acts on the player's choices.  The UI
reads the session and submits to it; it never runs the game itself, so the same screen
serves the in-process table and the networked one.
"""

from __future__ import annotations

import asyncio

from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.input import Input
from prompt_toolkit.layout import Layout
from prompt_toolkit.output import Output
from prompt_toolkit.widgets import TextArea

from cli.choices import Choice
from cli.commands_parse import CommandCompleter, CommandError, CommandParser
from cli.mapview import board_rows
from cli.session import (
    Event,
    GameOver,
    NetworkTable,
    PeerLink,
    SessionError,
    StateChanged,
    Status,
    TableSession,
)
from cli.table_keys import table_bindings
from cli.table_view import (
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

__all__ = ["KEYS", "MIN_SIZE", "PANEL_MIN", "TableApp", "passed_cities", "run_table",
           "stale_status"]


class TableApp(TableView):
    """The table screen for one seat. ``result`` is "over" or "quit" after it exits."""

    def __init__(
        self,
        session: TableSession,
        input: Input | None = None,
        output: Output | None = None,
        hidden_money: bool | None = None,
    ) -> None:
        self.session = session
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
        self.log_scroll = 0  # log lines scrolled back from the newest (PgUp/PgDn)
        self.end_note: tuple[str, ...] = ()  # how the game ended, shown over the scores
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
            layout=Layout(self._layout(), focused_element=self.input),
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
            elif ev.connected:
                self.away.pop(ev.seat, None)
                if self.status is not None and (self.status.text or "").startswith("Waiting"):
                    self.status = None  # whoever we waited for may be back: not stale news
                self.back = f"{ev.name} is back at the table."
                self.log.append(f"{ev.name} reconnected.")
            else:
                self.away[ev.seat] = ev.name
                self.log.append(f"{ev.name} lost the connection.")
            for i, info in enumerate(self.session.seats):
                if i == ev.seat:
                    info.connected = ev.connected
        elif isinstance(ev, GameOver):
            self.over = True
            self.stack = []
            self.away.clear()
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

    def _plan_auto(self) -> None:
        """A prompt with exactly one possible choice (e.g. "stop trading") plays it after
        :data:`AUTO_SECONDS` unless the player acts first: nothing to decide, no key to
        wait for."""
        if self._auto is not None:
            self._auto.cancel()
            self._auto = None
        legal = self.session.legal() if not self.ended() else []
        if len(legal) != 1 or self.undo is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        version = self.version
        only = legal[0]

        def fire() -> None:
            self._auto = None
            if self.version != version or self.session.legal() != [only] or \
                    self.overlay is not None or self.input.text or self.pending_busy():
                return
            p = self.parser()
            choice = next((c for c in p.choices if c.action == only), None) if p else None
            if choice is not None:
                self.act(choice)
                self.app.invalidate()

        self._auto = loop.call_later(AUTO_SECONDS, fire)

    def pending_busy(self) -> bool:
        return self.pending is not None and not self.pending.done()

    async def _pump(self) -> None:
        async for ev in self.session.events():
            self.handle(ev)
            self.app.invalidate()

    # --- acting ---------------------------------------------------------------------------------
    def act(self, choice: Choice) -> None:
        """Submit a chosen action; an IllegalAction becomes the one-line error."""
        self.error = ""
        self.seen = len(self.log)
        self.pending = asyncio.get_running_loop().create_task(self._submit(choice))

    async def _submit(self, choice: Choice) -> None:
        try:
            await self.session.submit(choice.action)
        except IllegalAction as exc:
            self.error = exc.message
        self.stack = []
        self.sel = 0
        self.version += 1
        self.app.invalidate()

    def pick(self, index: int) -> None:
        """A menu pick (digit or Enter): a slip must be recoverable, so a pick that throws
        a tile away waits :data:`UNDO_SECONDS` for Esc, and one that runs an exchange asks
        first (it cannot be undone and may give back just what it takes)."""
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
            if self.confirm_text(e.choice):
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
        self.cancel_undo()
        loop = asyncio.get_running_loop()

        def fire() -> None:
            if self.undo is not None and self.undo[0] is choice:
                self.undo = None
                if choice.action in self.session.legal():
                    self.act(choice)
                self.app.invalidate()

        self.undo = (choice, loop.call_later(UNDO_SECONDS, fire))
        self.error = ""

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

    def run_command(self, text: str) -> None:
        word = text.strip().lower()
        if word in ("help", "?"):
            self.overlay = "help"
            return
        if word in ("quit", "exit", "q"):
            self._ask_quit()
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
            from cli.choices import slug

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

    def _inspect_step(self, delta: int) -> None:
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

    def _abandon(self) -> None:
        self.overlay = None
        s = self.session
        if not isinstance(s, NetworkTable) or not s.abandon():
            self.error = "the table has already stopped"

    def _ask_quit(self) -> None:
        if self.over or self.fatal:
            self.app.exit(result="over" if self.over else "quit")
        else:
            self.overlay = "quit"

    # --- running ------------------------------------------------------------------------------
    async def run(self) -> str:
        """Start the session and the screen; returns "over" or "quit"."""
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


async def run_table(session: TableSession, hidden_money: bool | None = None) -> str:
    return await TableApp(session, hidden_money=hidden_money).run()

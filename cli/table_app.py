"""The table: a full-screen prompt_toolkit application over a :class:`TableSession`.

Screen (80x24 and up): a header, an optional banner (disconnects, progress, the
authentication words), the route map beside the players' panels, a legend, the log,
what is being decided, a menu of exactly the legal actions and a command line.
The UI reads the session and submits to it; it never runs the game itself, so the
same screen serves the in-process table today and the networked one later.
"""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.data_structures import Point
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import (
    ConditionalContainer,
    Dimension,
    Float,
    FloatContainer,
    HSplit,
    Layout,
    VSplit,
    Window,
)
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.layout.menus import CompletionsMenu
from prompt_toolkit.output import Output
from prompt_toolkit.widgets import Frame, TextArea

from cli.choices import Choice
from cli.commands_parse import CommandCompleter, CommandError, CommandParser
from cli.help_text import PAGES
from cli.mapview import board_rows, map_lines, render_map
from cli.panels import (
    decision_title,
    goods_counts,
    goods_frags,
    pawn_seat,
    render_players,
    render_scores,
)
from cli.rules_text import city_details
from cli.screen import screen_size
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
from cli.theme import STYLE, color_depth, legend_lines
from engine.actions import Action, Decline, ExchangeDone, ExchangePair
from engine.colours import COLOURS
from engine.errors import IllegalAction
from engine.state import GameState, Phase
from engine.tiles import BARTERER, CROOK

MENU_ROWS = 3
KEYS = "1234567890"
FIXED_ROWS = 1 + 1 + 2 + 1 + MENU_ROWS + 1
"""Screen lines that are not the map: header, banner, log (at least 2), title, menu and
the command line.  The map gets what is left (a tall board scrolls, see ``render_map``)."""
LOG_ROOM = 4
"""Lines beyond the minimum the log keeps when the map draws its roads between rows."""
PANEL_MIN = 24
"""Columns the players' panels keep beside the map (names stay readable)."""
MIN_SIZE = (80, 24)
"""The smallest terminal the full table fits; below it a compact table says so."""
UNDO_SECONDS = 2.5
"""How long a declined tile (picked from the menu) waits for Esc before it is declined."""
AUTO_SECONDS = 1.0
"""How long a prompt with only one possible choice shows before it plays itself."""


@dataclass(frozen=True)
class MenuEntry:
    label: str
    choice: Choice | None = None  # an action
    group: str | None = None  # or a submenu


class TableApp:
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
            key_bindings=self._bindings(),
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
        if self.stack:
            return [MenuEntry(c.label, c) for c in p.choices if c.group == self.stack[-1]]
        out: list[MenuEntry] = []
        groups: list[str] = []
        for c in p.choices:
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
            if ev.lines and self.log_scroll:  # scrolled back: keep the same rows shown
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

    # --- key bindings ----------------------------------------------------------------------------
    def _bindings(self) -> KeyBindings:
        kb = KeyBindings()
        empty = Condition(lambda: self.input.text == "" and self.overlay is None)
        quitting = Condition(lambda: self.overlay == "quit")
        helping = Condition(lambda: self.overlay == "help")
        abandoning = Condition(lambda: self.overlay == "abandon")
        inspecting = Condition(lambda: self.overlay == "city")
        confirming = Condition(lambda: self.overlay == "confirm")
        stalled = Condition(self.stalled)

        for i, key in enumerate(KEYS):
            def _pick(event: KeyPressEvent, i: int = i) -> None:
                start, _size = self._page()
                self.cancel_undo()
                self.pick(start + i)
            kb.add(key, filter=empty)(_pick)

        def mover(delta: Callable[[], int]) -> Callable[[KeyPressEvent], None]:
            def _move(event: KeyPressEvent) -> None:
                n = len(self.entries())
                if n:
                    self.sel = max(0, min(n - 1, self.sel + delta()))
            return _move

        kb.add("left", filter=empty)(mover(lambda: -1))
        kb.add("right", filter=empty)(mover(lambda: 1))
        kb.add("up", filter=empty)(mover(lambda: -self._cols()))
        kb.add("down", filter=empty)(mover(lambda: self._cols()))

        @kb.add("+", filter=empty)
        def _next_page(event: KeyPressEvent) -> None:
            """More menu entries than keys (bids above 9): the next page, round again."""
            n = len(self.entries())
            start, size = self._page()
            self.sel = start + size if start + size < n else 0

        @kb.add("-", filter=empty)
        def _prev_page(event: KeyPressEvent) -> None:
            n = len(self.entries())
            start, size = self._page()
            self.sel = start - size if start else max(0, (n - 1) // size * size)

        @kb.add("pageup")
        def _log_back(event: KeyPressEvent) -> None:
            self.log_scroll = min(self.log_scroll + max(1, self._log_rows() - 1),
                                  max(0, len(self._log_lines()) - self._log_rows()))

        @kb.add("pagedown")
        def _log_forward(event: KeyPressEvent) -> None:
            self.log_scroll = max(0, self.log_scroll - max(1, self._log_rows() - 1))

        @kb.add("i", filter=empty)
        def _inspect(event: KeyPressEvent) -> None:
            self.open_inspector()

        @kb.add("?", filter=empty)
        @kb.add("f1")
        def _help(event: KeyPressEvent) -> None:
            self.overlay = None if self.overlay == "help" else "help"
            self.help_page = 0
            self.help_scroll = 0

        @kb.add("q", filter=empty)
        @kb.add("c-q")
        @kb.add("c-c")
        def _quit(event: KeyPressEvent) -> None:
            if self.overlay == "quit":
                self.overlay = None
            else:
                self._ask_quit()

        @kb.add("y", filter=quitting)
        @kb.add("Y", filter=quitting)
        def _yes(event: KeyPressEvent) -> None:
            event.app.exit(result="quit")

        @kb.add("<any>", filter=quitting)
        def _no(event: KeyPressEvent) -> None:
            self.overlay = None

        @kb.add("a", filter=empty & stalled)
        def _ask_abandon(event: KeyPressEvent) -> None:
            self.ask_abandon()

        @kb.add("y", filter=abandoning)
        @kb.add("Y", filter=abandoning)
        def _yes_abandon(event: KeyPressEvent) -> None:
            self._abandon()

        @kb.add("<any>", filter=abandoning)
        def _keep_waiting(event: KeyPressEvent) -> None:
            self.overlay = None

        @kb.add("y", filter=confirming)
        @kb.add("Y", filter=confirming)
        @kb.add("enter", filter=confirming)
        def _yes_confirm(event: KeyPressEvent) -> None:
            choice, self.confirm, self.overlay = self.confirm, None, None
            if choice is not None and choice.action in self.session.legal():
                self.act(choice)

        @kb.add("<any>", filter=confirming)
        def _no_confirm(event: KeyPressEvent) -> None:
            self.confirm, self.overlay = None, None

        def helper(delta: int, scroll: int = 0) -> Callable[[KeyPressEvent], None]:
            def _turn(event: KeyPressEvent) -> None:
                if scroll:
                    self.help_scroll = max(0, self.help_scroll + scroll)
                else:
                    self.help_page = (self.help_page + delta) % len(PAGES)
                    self.help_scroll = 0
            return _turn

        for key in ("right", "pagedown", " ", "n"):
            kb.add(key, filter=helping)(helper(1))
        for key in ("left", "pageup", "p"):
            kb.add(key, filter=helping)(helper(-1))
        kb.add("down", filter=helping)(helper(0, 1))
        kb.add("up", filter=helping)(helper(0, -1))

        @kb.add("<any>", filter=helping)
        def _close_help(event: KeyPressEvent) -> None:
            self.overlay = None

        for key in ("right", "down", " ", "n"):
            kb.add(key, filter=inspecting)(lambda e: self._inspect_step(1))
        for key in ("left", "up", "p"):
            kb.add(key, filter=inspecting)(lambda e: self._inspect_step(-1))

        @kb.add("<any>", filter=inspecting)
        def _close_city(event: KeyPressEvent) -> None:
            self.overlay = None

        @kb.add("escape", eager=True)
        def _esc(event: KeyPressEvent) -> None:
            buf = self.input.buffer
            if self.cancel_undo():
                pass  # a decline waiting for its countdown: the tile is kept
            elif buf.complete_state is not None:
                buf.cancel_completion()  # Esc first closes an open popup
            elif self.overlay is not None:
                self.overlay = None
                self.confirm = None
            elif self.input.text:
                self.input.text = ""
            elif self.stack:
                self.stack.pop()
                self.sel = 0
            self.error = ""

        return kb

    # --- rendering -----------------------------------------------------------------------------
    def _width(self) -> int:
        return screen_size()[0]

    def _height(self) -> int:
        return screen_size()[1]

    def small(self) -> bool:
        """A terminal under :data:`MIN_SIZE`: the compact table (log, menu, command line)
        with a line saying what size the full table needs."""
        w, h = screen_size()
        return w < MIN_SIZE[0] or h < MIN_SIZE[1]

    def hidden_money(self) -> bool:
        """The table agreed to hide other players' money (``--money hidden``): said by
        whoever opened the screen, else by the session (``hidden_money``)."""
        if self._hidden_money is not None:
            return self._hidden_money
        return bool(getattr(self.session, "hidden_money", False))

    def _body_height(self) -> int:
        """Lines for the map and the panels: the board's rows, or what the screen leaves
        once everything else has its lines (then the map scrolls with the caravan)."""
        s = self.session.view().state
        room = self._height() - FIXED_ROWS
        if s.phase == Phase.OVER:
            # the score table (6 players: 14 lines) takes the map's place; the log keeps
            # the rest of a tall terminal (the game's last moves)
            need = sum(t.count("\n") for _, t, *_ in self.map_text()) + 1
            return max(3, min(room, need))
        if self.legend_visible():
            room -= len(legend_lines(self._width() - 2))
        if self.road_lines():
            return map_lines(s.board)
        return max(3, min(len(board_rows(s.board)), room))

    def road_lines(self) -> bool:
        """Whether the map draws its roads between the rows too: a terminal tall enough
        for twice the rows that still leaves the log :data:`LOG_ROOM` lines."""
        s = self.session.view().state
        if s.phase == Phase.OVER or self.small():
            return False
        room = self._height() - FIXED_ROWS
        if not self._legend_in_panel():
            room -= len(legend_lines(self._width() - 2))
        return room - map_lines(s.board) >= LOG_ROOM

    def _colw(self) -> int:
        labels = [e.label for e in self.entries()]
        longest = max((len(x) for x in labels), default=10)
        return min(max(longest + 5, 16), self._width())

    def _cols(self) -> int:
        return max(1, self._width() // self._colw())

    def _page(self) -> tuple[int, int]:
        """The menu page holding the selection: (first entry, entries per page).  A page
        has at most one entry per key (1-9, 0); ``+``/``-`` turn pages, so every entry —
        a bid of 14 too — is a key or two away."""
        size = max(1, min(self._cols() * MENU_ROWS, len(KEYS)))
        start = (self.sel // size) * size
        return start, size

    def title_text(self) -> str:
        if self.fatal:
            return "The table has stopped. Press q to leave."
        view = self.session.view()
        waiting = self.session.waiting_for()
        return decision_title(view, self.session.names, self.my_turn(), waiting)

    def header(self) -> StyleAndTextTuples:
        s = self.session.view().state
        board = s.board
        stops = len(board_rows(board)) - 2
        city = board.cities[s.city]
        phase = {
            Phase.BID: "auction", Phase.CHOOSE: "auction", Phase.MOVE: "moving",
            Phase.TAKE: "market", Phase.PERFORM: "market", Phase.PASS: "market",
            Phase.VIZIER: "Grand Vizier", Phase.WITHDRAW: "market", Phase.STEAL: "market",
            Phase.OVER: "game over", Phase.REVEAL: "final reveal",
        }.get(s.phase, "setting up")
        if phase == "market" and board.only_end_next(s.city):
            phase = "LAST market"
        left = f" SILK ROAD │ {city} · stop {min(s.visit, stops)}/{stops} │ {phase}"
        turn = "  ▶ YOUR TURN" if self.my_turn() else ""
        right = "? help  q quit "
        width = self._width()
        if len(left) + len(turn) + len(right) > width:
            right = ""
            left = left.replace("SILK ROAD │ ", "")[: max(0, width - len(turn))]
        pad = max(1, width - len(left) - len(turn) - len(right))
        return [("class:status", left), ("class:status.turn", turn),
                ("class:status", " " * pad + right)]

    def banner(self) -> StyleAndTextTuples:
        if self.fatal:
            return [("class:banner.bad", f" {self.fatal} — press q to leave ")]
        if self.small():
            w, h = screen_size()
            return [("class:banner.bad", f" Window {w}×{h}: the full table needs "
                                         f"{MIN_SIZE[0]}×{MIN_SIZE[1]}; please enlarge it ")]
        if self.undo is not None:
            what = self.undo[0].label
            return [("class:banner.bad", f" {what.capitalize()} in a moment — Esc keeps the "
                                         "tile, Enter: now ")]
        if self.away:
            names = ", ".join(self.away.values())
            return [("class:banner.bad", f" {names} disconnected — waiting for them to "
                                         "come back (the table pauses) ")]
        if self.status is not None and self.status.text:
            text = f" {self.status.text}"
            if self.status.done is not None and self.status.total:
                n = 20
                fill = n * self.status.done // self.status.total
                text += f"  [{'█' * fill}{'░' * (n - fill)}] {self.status.done}/{self.status.total}"
            return [("class:banner.info", text + " ")]
        if self.back:
            return [("class:banner.good", f" {self.back} ")]
        words = self.session.auth_words
        if words:
            return [("class:banner.info", " Compare aloud: " + " ".join(words) + " ")]
        return []

    def map_text(self) -> StyleAndTextTuples:
        s = self.session.view().state
        if s.phase == Phase.OVER and s.final is not None:
            out: StyleAndTextTuples = []
            for line in self.end_note[:-1]:  # how it ended (the last line names the winner)
                out.append(("class:log.me", "  " + line + "\n"))
            out.extend(render_scores(s, self.session.names, self.session.seat))
            return out
        return render_map(s, self.route, height=self._body_height(), roads=self.roads(),
                          lines=self.road_lines())

    def roads(self) -> bool:
        """Whether the map draws its road arrows: when the players' panels keep room for
        names (at least :data:`PANEL_MIN` columns); else the inspector names the roads."""
        s = self.session.view().state
        return self._width() - _text_width(render_map(s, self.route)) - 1 >= PANEL_MIN

    def players_text(self) -> StyleAndTextTuples:
        view = self.session.view()
        out = render_players(view, self.session.seats, self.session.seat,
                             self.session.waiting_for(), width=self._panel_width(),
                             hide_money=self.hidden_money())
        if self._legend_in_panel():
            lines = legend_lines(self._panel_width() - 1)
            s = view.state
            if self._body_height() - 2 * s.players > len(lines):
                out.append(("", "\n"))
            for line in lines:
                out.append(("", "\n "))
                out.extend(line)
        return out

    def compact_players(self) -> StyleAndTextTuples:
        """The players in one line each, for a terminal too small for the panels: who is
        to act, name, money, goods, the pawn and the player's own goods by colour."""
        view = self.session.view()
        s = view.state
        me = self.session.seat
        waiting = self.session.waiting_for()
        out: StyleAndTextTuples = []
        for p in range(s.players):
            if p:
                out.append(("", "\n"))
            money = "?" if self.hidden_money() and p != me else str(s.money[p])
            turn = "▶" if p in waiting else " "
            pawn = "♛" if p == pawn_seat(s) and s.phase not in (Phase.SEED, Phase.DEAL) \
                else " "
            line = f"{turn}{self.session.names[p][:9]:<9} ${money:<3} {len(s.goods[p]):>2}g " \
                   f"{pawn}"
            out.append(("class:player.me" if p == me else "", line))
            if p == me:
                mine = goods_counts([view.hand[h] for h in s.goods[p] if h in view.hand])
                out.append(("", " "))
                out.extend(goods_frags(mine, compact=True))
        return out

    def _panel_width(self) -> int:
        return self._width() - self._map_width() - 1

    def _legend_in_panel(self) -> bool:
        s = self.session.view().state
        if s.phase == Phase.OVER:
            return False
        room = self._height() - FIXED_ROWS
        body = min(len(board_rows(s.board)), room)
        if room - map_lines(s.board) >= LOG_ROOM and not self.small():
            body = map_lines(s.board)  # the roads between the rows make the panel taller
        return len(legend_lines(self._panel_width() - 1)) <= body - 2 * s.players

    def _map_width(self) -> int:
        s = self.session.view().state
        if s.phase == Phase.OVER:
            return self._width()  # the score table replaces map and panels
        # the whole map's width (every row), so the panels do not shift as the map scrolls
        return _text_width(render_map(s, self.route, roads=self.roads())) + 1

    def legend(self) -> StyleAndTextTuples:
        out: StyleAndTextTuples = []
        for i, line in enumerate(legend_lines(self._width() - 2)):
            out.append(("", "\n " if i else " "))
            out.extend(line)
        return out

    def legend_visible(self) -> bool:
        s = self.session.view().state
        return s.phase != Phase.OVER and not self._legend_in_panel() and not self.small()

    def _log_rows(self) -> int:
        """The log window's height as last drawn (a guess before the first draw)."""
        info = self.log_window.render_info
        if info is not None:
            return max(1, info.window_height)
        return 6

    def _log_lines(self) -> list[tuple[str, str]]:
        """The log as screen rows: (style, text), wrapped at word boundaries to the width,
        continuation rows indented; lines that touch the player highlighted."""
        rows: list[tuple[str, str]] = []
        for i, line in enumerate(self.log[-400:], start=max(0, len(self.log) - 400)):
            style = "class:log.new" if i >= self.seen else "class:log"
            if touches_me(line):
                style = "class:log.me"
            if line.startswith("!"):
                style = "class:error"
            rows.extend((style, " " + part) for part in self._wrap(line))
        return rows

    def _wrap(self, line: str) -> list[str]:
        """A log line as screen rows: cut at words, continuation rows indented."""
        width = max(20, self._width() - 2)
        return textwrap.wrap(line, width, subsequent_indent="   ",
                             break_on_hyphens=False) or [""]

    def log_text(self) -> StyleAndTextTuples:
        rows = self._log_lines()
        height = self._log_rows()
        scroll = min(self.log_scroll, max(0, len(rows) - height))
        end = len(rows) - scroll
        # everything up to ``end``: the window scrolls to its last row (the cursor), so the
        # newest lines show whatever height the window has right now
        shown = rows[max(0, end - 200): end]
        if scroll and shown:
            shown[-1] = ("class:muted", f" ── {scroll} newer line{'s' * (scroll > 1)} below: "
                                        "PgDn ──")
        out: StyleAndTextTuples = []
        for i, (style, text) in enumerate(shown):
            if i:
                out.append(("", "\n"))
            out.append((style, text))
        return out

    def title(self) -> StyleAndTextTuples:
        if self.error:
            style, text = "class:error", " ✗ " + self.error
        else:
            text = self.title_text()
            if self.stack:
                text = f"{self.stack[-1]}  (Esc: back)"
            style, text = "class:menu.title", " " + text
        if len(text) > self._width():  # a narrow terminal: two rows, cut at a word
            rows = textwrap.wrap(text, max(10, self._width() - 1))
            text = " " + rows[0].lstrip() + "\n " + " ".join(rows[1:])
        return [(style, text)]

    def _title_rows(self) -> int:
        """One row for what is being decided, two when a narrow terminal would cut it."""
        text = "".join(t for _, t, *_ in self.title())
        return 1 + text.count("\n")

    def _menu_note(self) -> str:
        """The muted note after the entries: a page position, or that the only choice
        plays itself."""
        entries = self.entries()
        start, size = self._page()
        if len(entries) == 1 and entries[0].choice is not None and not self.stack:
            return "(the only choice: it plays itself)"
        if len(entries) > start + size or start:
            shown = min(size, len(entries) - start)
            return f"({start + 1}-{start + shown} of {len(entries)}; + more, - back)"
        return ""

    def _menu_layout(self) -> tuple[int, bool]:
        """(rows of entries, whether the note needs a row of its own)."""
        entries = self.entries()
        start, size = self._page()
        shown = min(size, max(0, len(entries) - start))
        cols = self._cols()
        rows = max(1, -(-shown // cols))
        last = shown - (rows - 1) * cols
        note = self._menu_note()
        own_row = bool(note) and last * self._colw() + 3 + len(note) > self._width()
        return min(rows, MENU_ROWS), own_row and rows < MENU_ROWS

    def _menu_rows(self) -> int:
        """Rows the menu needs now (at most :data:`MENU_ROWS`): the log gets the rest, so
        while others play (a one-line note) it shows two more lines."""
        if not self.entries():
            return 1
        rows, own_row = self._menu_layout()
        return rows + own_row

    def menu_text(self) -> StyleAndTextTuples:
        entries = self.entries()
        if not entries:
            if self.over or self.fatal:
                return [("class:muted", " q: leave the table   ?: help   PgUp: the log")]
            return [("class:muted", " (nothing to do until it is your turn — ? shows the help)")]
        start, size = self._page()
        cols, colw = self._cols(), self._colw()
        out: StyleAndTextTuples = []
        page = entries[start : start + size]
        rows, own_row = self._menu_layout()
        for r in range(rows):
            if r:
                out.append(("", "\n"))
            for c in range(cols):
                i = r * cols + c
                if i >= len(page):
                    break
                e = page[i]
                key = KEYS[i] if i < len(KEYS) else "·"
                label = e.label + ("  ›" if e.group else "")
                label = label[: colw - 4]
                sel = start + i == self.sel
                out.append(("class:menu.key", f" {key} "))
                out.append(("class:menu.sel" if sel else "", label))
                out.append(("", " " * (colw - 3 - len(label))))
        note = self._menu_note()
        if note:
            out.append(("", "\n " if own_row else "  "))
            out.append(("class:muted", note))
        return out

    def help_text(self) -> StyleAndTextTuples:
        """The help page, wrapped to the overlay and scrolled (↑↓) if it does not fit."""
        text = PAGES[self.help_page][1]
        width = max(20, self._width() - 4)
        lines: list[str] = []
        for raw in text.split("\n"):
            lines.extend(textwrap.wrap(raw, width, subsequent_indent="  ",
                                       drop_whitespace=False) or [""])
        room = max(1, self._height() - 3)
        self.help_scroll = min(self.help_scroll, max(0, len(lines) - room))
        shown = lines[self.help_scroll: self.help_scroll + room]
        if len(lines) > room:
            shown[-1] = f"  (↑↓ scroll: lines {self.help_scroll + 1}-" \
                        f"{self.help_scroll + room - 1} of {len(lines)})"
        return [("class:overlay", " " + "\n ".join(shown))]

    def help_title(self) -> str:
        title = PAGES[self.help_page][0]
        return (f"Help {self.help_page + 1}/{len(PAGES)}: {title} — → next page, "
                "any other key closes")

    def city_text(self) -> StyleAndTextTuples:
        s = self.session.view().state
        width = max(20, self._width() - 6)
        lines: list[str] = []
        for raw in city_details(s, self.inspect, self.route):
            lines.extend(textwrap.wrap(raw, width, subsequent_indent="     ") or [""])
        lines.append("")
        lines.append("←→ another city   any other key closes")
        room = max(2, self._height() - 4)
        if len(lines) > room:
            lines = [*lines[: room - 2], "…", lines[-1]]
        return [("class:overlay", " " + "\n ".join(lines))]

    def _layout(self) -> FloatContainer:
        playing = Condition(lambda: self.session.view().state.phase != Phase.OVER)
        big = Condition(lambda: not self.small())
        body = VSplit([
            Window(FormattedTextControl(self.map_text), width=lambda: self._map_width()),
            ConditionalContainer(VSplit([
                Window(width=1, char="│", style="class:frame.border"),
                Window(FormattedTextControl(self.players_text)),
            ]), filter=playing),
        ], height=lambda: Dimension.exact(self._body_height()))
        log_control = FormattedTextControl(
            self.log_text,
            get_cursor_position=lambda: _last_line(self.log_text()),
            show_cursor=False,
        )
        self.log_window = Window(log_control, height=Dimension(min=1, weight=1))
        main = HSplit([
            Window(FormattedTextControl(self.header), height=1, style="class:status"),
            ConditionalContainer(
                Window(FormattedTextControl(self.banner), height=1),
                filter=Condition(lambda: bool(self.banner())),
            ),
            ConditionalContainer(body, filter=big),
            ConditionalContainer(
                Window(FormattedTextControl(self.compact_players),
                       height=lambda: self.session.view().state.players),
                filter=~big & playing,
            ),
            ConditionalContainer(
                Window(FormattedTextControl(self.legend),
                       height=lambda: len(legend_lines(self._width() - 2))),
                filter=Condition(self.legend_visible),
            ),
            self.log_window,
            Window(FormattedTextControl(self.title), height=self._title_rows),
            Window(FormattedTextControl(self.menu_text), height=self._menu_rows),
            self.input,
        ])
        help_box = Frame(
            Window(FormattedTextControl(self.help_text), style="class:overlay"),
            title=self.help_title,
            style="class:overlay",
        )
        city_box = Frame(
            Window(FormattedTextControl(self.city_text), style="class:overlay",
                   height=lambda: 1 + sum(t.count("\n") for _, t, *_ in self.city_text())),
            title="City",
            style="class:overlay",
        )
        abandoning_now = Condition(lambda: self.overlay == "abandon")
        quit_box = Frame(
            Window(FormattedTextControl(
                " Leave the table? The game record is kept.\n\n  y: leave    any other key: stay "
            ), height=3, width=46, style="class:overlay"),
            title="Quit",
            style="class:overlay",
        )
        abandon_box = Frame(
            Window(FormattedTextControl(lambda: (
                f" Stop waiting for {self.abandon_target()}?\n The game ends here; "
                "the record so far is kept.\n\n  y: abandon    any other key: keep waiting ")),
                height=4, width=60, style="class:overlay"),
            title="Abandon the table",
            style="class:overlay",
        )
        confirm_box = Frame(
            Window(FormattedTextControl(lambda: (
                (self.confirm_text(self.confirm) if self.confirm else "")
                + "\n\n  y or Enter: do it    any other key: back ")),
                height=5, width=min(60, max(20, self._width() - 2)), style="class:overlay"),
            title="Are you sure?",
            style="class:overlay",
        )
        return FloatContainer(
            content=main,
            floats=[
                Float(xcursor=True, ycursor=True,
                      content=ConditionalContainer(
                          CompletionsMenu(max_height=6, scroll_offset=1),
                          filter=Condition(lambda: bool(self.input.text)
                                           and self.overlay is None))),
                Float(ConditionalContainer(help_box, filter=Condition(
                    lambda: self.overlay == "help")), top=0, bottom=0, left=0, right=0),
                Float(ConditionalContainer(city_box, filter=Condition(
                    lambda: self.overlay == "city")), top=1, left=1, right=1),
                Float(ConditionalContainer(quit_box, filter=Condition(
                    lambda: self.overlay == "quit"))),
                Float(ConditionalContainer(abandon_box, filter=abandoning_now)),
                Float(ConditionalContainer(confirm_box, filter=Condition(
                    lambda: self.overlay == "confirm"))),
            ],
        )

    # --- running ------------------------------------------------------------------------------
    async def run(self) -> str:
        """Start the session and the screen; returns "over" or "quit"."""
        await self.session.start()

        def pre_run() -> None:
            self.app.create_background_task(self._pump())

        result = await self.app.run_async(pre_run=pre_run)
        return result or "quit"


def _last_line(frags: StyleAndTextTuples) -> Point:
    """Where the log's cursor sits: its last row, so the window scrolls to the newest."""
    return Point(x=0, y=sum(t.count("\n") for _, t, *_ in frags))


def passed_cities(s: GameState) -> list[int]:
    """The caravan's route so far worked out from the state alone: the start, then every
    tile city the markets emptied (a city's tiles only ever leave while the caravan is
    there), in map order."""
    board = s.board
    order = [c for row in board_rows(board) for c in row]
    out = [board.start]
    out.extend(c for c in order if board.colour[c] >= 0 and not s.layout[c] and c != s.city)
    return out


def stale_status(status: Status, state: GameState, moved: bool) -> bool:
    """Whether a status line no longer holds once the state moved on: "You chose…" outside
    a Grand Vizier, and "Waiting N s for …" once a step was played (a session that still
    waits says so again with the new count)."""
    text = status.text or ""
    if text.startswith("You chose") and state.phase != Phase.VIZIER:
        return True
    return moved and text.startswith("Waiting") and " s for " in text


def _text_width(frags: StyleAndTextTuples) -> int:
    text = "".join(t for _, t, *_ in frags)
    return max(len(x.rstrip()) for x in text.split("\n"))


def touches_me(line: str) -> bool:
    """Whether a log line is about the player (the narrator says "You"/"you"/"your"), is
    a Grand Vizier's payout, or tells how the game ends: those are highlighted."""
    words = set(line.replace(",", " ").replace(".", " ").replace("—", " ").split())
    return bool(words & {"You", "you", "your", "Your"}) or line.startswith(
        ("Grand Vizier on", "This is the last market")) or "reveals their goods" in line \
        or " win" in line


async def run_table(session: TableSession, hidden_money: bool | None = None) -> str:
    return await TableApp(session, hidden_money=hidden_money).run()

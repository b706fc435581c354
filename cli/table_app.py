"""The table: a full-screen prompt_toolkit application over a :class:`TableSession`.

Screen (80x24 and up): a header, an optional banner (disconnects, progress, the
authentication words), the route map beside the players' panels, a legend, the log,
what is being decided, a menu of exactly the legal actions and a command line.
The UI reads the session and submits to it; it never runs the game itself, so the
same screen serves the in-process table today and the networked one later.
"""

from __future__ import annotations

import asyncio
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
from cli.help_text import HELP
from cli.mapview import board_rows, render_map
from cli.panels import decision_title, render_players, render_scores
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
from engine.actions import Action
from engine.errors import IllegalAction
from engine.state import Phase

MENU_ROWS = 3
KEYS = "1234567890"
FIXED_ROWS = 1 + 1 + 2 + 1 + MENU_ROWS + 1
"""Screen lines that are not the map: header, banner, log (at least 2), title, menu and
the command line.  The map gets what is left (a tall board scrolls, see ``render_map``)."""


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
    ) -> None:
        self.session = session
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
        self.overlay: str | None = None  # "help", "quit" or "abandon"
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
        p = self.parser()
        return p is not None and bool(p.legal)

    # --- events from the session ------------------------------------------------------------
    def handle(self, ev: Event) -> None:
        """Apply one session event to the screen state (also called directly by tests)."""
        if isinstance(ev, StateChanged):
            self.log.extend(ev.lines)
            self.back = None
            city = self.session.view().state.city
            if not self.route or self.route[-1] != city:
                self.route.append(city)
        elif isinstance(ev, Status):
            self.status = ev if ev.text else None
        elif isinstance(ev, PeerLink):
            if ev.connected:
                self.away.pop(ev.seat, None)
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
        elif isinstance(ev, SessionError):
            self.log.append(f"! {ev.text}")
            if ev.fatal:
                self.fatal = ev.text
        self.version += 1
        if not self.stack or not any(e.choice for e in self.entries()):
            self.stack = []
        self.sel = min(self.sel, max(0, len(self.entries()) - 1))

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
            self.act(e.choice)

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
        if text.strip():
            self.run_command(text)
        else:
            self.pick(self.sel)
        return False  # clear the line

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
        stalled = Condition(self.stalled)

        for i, key in enumerate(KEYS):
            def _pick(event: KeyPressEvent, i: int = i) -> None:
                page = self._page()
                self.pick(page[0] + i)
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

        @kb.add("?", filter=empty)
        @kb.add("f1")
        def _help(event: KeyPressEvent) -> None:
            self.overlay = None if self.overlay == "help" else "help"

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

        @kb.add("<any>", filter=helping)
        def _close_help(event: KeyPressEvent) -> None:
            self.overlay = None

        @kb.add("escape", eager=True)
        def _esc(event: KeyPressEvent) -> None:
            if self.overlay is not None:
                self.overlay = None
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

    def _body_height(self) -> int:
        """Lines for the map and the panels: the board's rows, or what the screen leaves
        once everything else has its lines (then the map scrolls with the caravan)."""
        s = self.session.view().state
        room = self._height() - FIXED_ROWS
        if s.phase == Phase.OVER:
            return max(3, room)  # the score table (6 players: 14 lines) takes the map's place
        if self.legend_visible():
            room -= len(legend_lines(self._width() - 2))
        return max(3, min(len(board_rows(s.board)), room))

    def _colw(self) -> int:
        labels = [e.label for e in self.entries()]
        longest = max((len(x) for x in labels), default=10)
        return min(max(longest + 5, 16), self._width())

    def _cols(self) -> int:
        return max(1, self._width() // self._colw())

    def _page(self) -> tuple[int, int]:
        size = self._cols() * MENU_ROWS
        start = (self.sel // size) * size
        return start, size

    def title_text(self) -> str:
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
        left = f" SILK ROAD │ {city} · stop {min(s.visit, stops)}/{stops} │ {phase}"
        turn = "  ▶ YOUR TURN" if self.my_turn() else ""
        right = "? help  q quit "
        pad = max(1, self._width() - len(left) - len(turn) - len(right))
        return [("class:status", left), ("class:status.turn", turn),
                ("class:status", " " * pad + right)]

    def banner(self) -> StyleAndTextTuples:
        if self.fatal:
            return [("class:banner.bad", f" {self.fatal} — press q to leave ")]
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
            return render_scores(s, self.session.names, self.session.seat)
        return render_map(s, self.route, height=self._body_height())

    def players_text(self) -> StyleAndTextTuples:
        view = self.session.view()
        out = render_players(view, self.session.seats, self.session.seat,
                             self.session.waiting_for(), width=self._panel_width())
        if self._legend_in_panel():
            lines = legend_lines(self._panel_width() - 1)
            s = view.state
            if self._body_height() - 2 * s.players > len(lines):
                out.append(("", "\n"))
            for line in lines:
                out.append(("", "\n "))
                out.extend(line)
        return out

    def _panel_width(self) -> int:
        return self._width() - self._map_width() - 1

    def _legend_in_panel(self) -> bool:
        s = self.session.view().state
        if s.phase == Phase.OVER:
            return False
        body = min(len(board_rows(s.board)), self._height() - FIXED_ROWS)
        return len(legend_lines(self._panel_width() - 1)) <= body - 2 * s.players

    def _map_width(self) -> int:
        s = self.session.view().state
        if s.phase == Phase.OVER:
            return self._width()  # the score table replaces map and panels
        # the whole map's width (every row), so the panels do not shift as the map scrolls
        text = "".join(t for _, t, *_ in render_map(s, self.route))
        return max(len(x.rstrip()) for x in text.split("\n")) + 1

    def legend(self) -> StyleAndTextTuples:
        out: StyleAndTextTuples = []
        for i, line in enumerate(legend_lines(self._width() - 2)):
            out.append(("", "\n " if i else " "))
            out.extend(line)
        return out

    def legend_visible(self) -> bool:
        s = self.session.view().state
        return s.phase != Phase.OVER and not self._legend_in_panel()

    def log_text(self) -> StyleAndTextTuples:
        out: StyleAndTextTuples = []
        tail = self.log[-60:]
        first = len(self.log) - len(tail)
        for i, line in enumerate(tail):
            if i:
                out.append(("", "\n"))
            style = "class:log.new" if first + i >= self.seen else "class:log"
            if line.startswith("!"):
                style = "class:error"
            out.append((style, " " + line))
        return out

    def title(self) -> StyleAndTextTuples:
        if self.error:
            return [("class:error", " ✗ " + self.error)]
        text = self.title_text()
        if self.stack:
            text = f"{self.stack[-1]}  (Esc: back)"
        return [("class:menu.title", " " + text)]

    def menu_text(self) -> StyleAndTextTuples:
        entries = self.entries()
        if not entries:
            if self.over:
                return [("class:muted", " q: leave the table   ?: help")]
            return [("class:muted", " (nothing to do until it is your turn — ? shows the help)")]
        start, size = self._page()
        cols, colw = self._cols(), self._colw()
        out: StyleAndTextTuples = []
        page = entries[start : start + size]
        for r in range(MENU_ROWS):
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
        more = len(entries) - (start + size)
        if more > 0 or start:
            out.append(("class:muted", f"   ({start + 1}-{start + len(page)} of "
                                       f"{len(entries)}; arrows for more)"))
        return out

    def _layout(self) -> FloatContainer:
        playing = Condition(lambda: self.session.view().state.phase != Phase.OVER)
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
        main = HSplit([
            Window(FormattedTextControl(self.header), height=1, style="class:status"),
            ConditionalContainer(
                Window(FormattedTextControl(self.banner), height=1),
                filter=Condition(lambda: bool(self.banner())),
            ),
            body,
            ConditionalContainer(
                Window(FormattedTextControl(self.legend),
                       height=lambda: len(legend_lines(self._width() - 2))),
                filter=Condition(self.legend_visible),
            ),
            Window(log_control, height=Dimension(min=2, weight=1), wrap_lines=True),
            Window(FormattedTextControl(self.title), height=1),
            Window(FormattedTextControl(self.menu_text), height=MENU_ROWS),
            self.input,
        ])
        help_box = Frame(
            Window(FormattedTextControl(HELP), style="class:overlay"),
            title="Help — any key closes",
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
        return FloatContainer(
            content=main,
            floats=[
                Float(xcursor=True, ycursor=True,
                      content=CompletionsMenu(max_height=6, scroll_offset=1)),
                Float(ConditionalContainer(help_box, filter=Condition(
                    lambda: self.overlay == "help")), top=0, bottom=0, left=0, right=0),
                Float(ConditionalContainer(quit_box, filter=Condition(
                    lambda: self.overlay == "quit"))),
                Float(ConditionalContainer(abandon_box, filter=abandoning_now)),
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
    """Where the log's cursor sits: its last line, so the window scrolls to the newest."""
    lines = sum(t.count("\n") for _, t, *_ in frags)
    return Point(x=0, y=lines)


async def run_table(session: TableSession) -> str:
    return await TableApp(session).run()

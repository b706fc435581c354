"""What the table screen draws: the layout and every part of it, as a base class of
:class:`cli.table.app.TableApp`.

The screen (80x24 and up): a header, an optional banner (disconnects, progress, the
authentication words), the route map beside the players' panels, a legend, the log,
what is being decided, a menu of exactly the legal actions and a command line.  This
module only reads; acting on keys and session events is :mod:`cli.table.app`'s.
"""

from __future__ import annotations

import asyncio
import re
import textwrap
from abc import ABC, abstractmethod
from dataclasses import dataclass

from prompt_toolkit.application import Application
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.layout import Window
from prompt_toolkit.widgets import TextArea

from cli.screen import screen_size
from cli.table.choices import Choice
from cli.table.help_text import PAGES
from cli.table.mapview import board_rows, map_lines, map_plan, render_map
from cli.table.panels import (
    YOU,
    decision_title,
    fit_name,
    goods_counts,
    goods_frags,
    money_label,
    pawn_seat,
    render_players,
    render_scores,
)
from cli.table.rules_text import city_details
from cli.table.session import (
    Status,
    TableSession,
    Verdict,
)
from cli.table.talk import TALK_MARK
from cli.theme import legend_lines
from engine.state import Phase

MENU_ROWS = 3
KEYS = "1234567890"
SENDING = "⧗"
"""Marks a move on its way: picked and handed to the table, not played yet."""
AGAIN_KEY = "n"
"""The end screen's "play again" key (the table's next game: same seats, a new game)."""
FIXED_ROWS = 1 + 1 + 2 + 1 + MENU_ROWS + 1
"""Screen lines that are not the map: header, banner, log (at least 2), title, menu and
the command line.  The map gets what is left (a tall board scrolls, see ``render_map``)."""
LOG_ROOM = 4
"""Lines beyond the minimum the log keeps when the map draws its roads between rows."""
PANEL_MIN = 24
"""Columns the players' panels keep beside the map (names stay readable)."""
PANEL_WANT = 36
"""Columns the panels take on a wide terminal before the map spreads its lanes into the
rest (the legend then fits the panel in a few lines)."""
MIN_SIZE = (80, 24)
"""The smallest terminal the full table fits; below it a compact table says so."""


@dataclass(frozen=True)
class MenuEntry:
    label: str
    choice: Choice | None = None  # an action
    group: str | None = None  # or a submenu


class TableView(ABC):
    """The drawing half of the table screen (see the module docstring).  The state it
    draws is kept by :class:`cli.table.app.TableApp`."""

    session: TableSession
    app: Application[str]
    input: TextArea
    log: list[str]
    seen: int
    error: str
    status: Status | None
    away: dict[int, str]
    back: str | None
    fatal: str | None
    over: bool
    route: list[int]
    stack: list[str]
    sel: int
    overlay: str | None
    help_page: int
    help_scroll: int
    inspect: int
    confirm: Choice | None
    undo: tuple[Choice, asyncio.TimerHandle] | None
    sending: Choice | None
    log_window: Window
    gone: set[int]
    log_scroll: int
    end_note: tuple[str, ...]
    verdict: Verdict | None
    series_line: str | None
    _hidden_money: bool | None

    def stalled(self) -> bool:
        """Whether to offer "abandon" (:meth:`cli.table.app.TableApp.stalled`)."""
        return False

    def can_play_again(self) -> bool:
        """Whether the end screen offers "play again"
        (:meth:`cli.table.app.TableApp.can_play_again`)."""
        return False

    @abstractmethod
    def play_again(self) -> None:
        """Leave for the table's next game (:meth:`cli.table.app.TableApp.play_again`)."""

    @abstractmethod
    def entries(self) -> list[MenuEntry]:
        """The menu's entries now (the legal choices, or an open submenu's)."""

    @abstractmethod
    def my_turn(self) -> bool:
        """Whether the player has something to decide."""

    @abstractmethod
    def confirm_text(self, choice: Choice) -> str:
        """The question a choice that gives nothing asks before it is played."""

    @abstractmethod
    def abandon_target(self) -> str:
        """Who we would stop waiting for."""

    @abstractmethod
    def undo_left(self) -> int:
        """Seconds left before a waiting decline is played."""

    @abstractmethod
    def forced(self) -> Choice | None:
        """The menu's only choice, which plays itself (None: there is a choice)."""

    # --- what the keys ask of the screen (:mod:`cli.table.keys`); the app does them -------
    @abstractmethod
    def act(self, choice: Choice) -> None:
        """Play a choice."""

    @abstractmethod
    def pick(self, index: int) -> None:
        """A menu pick (digit or Enter)."""

    @abstractmethod
    def say(self, text: str) -> None:
        """Send a line of table talk."""

    @abstractmethod
    def cancel_undo(self) -> bool:
        """Keep the tile a waiting decline would give up (whether there was one)."""

    @abstractmethod
    def open_inspector(self, name: str = "") -> None:
        """Show a city in full words."""

    @abstractmethod
    def inspect_step(self, delta: int) -> None:
        """Inspect the next (or previous) city in map order."""

    @abstractmethod
    def ask_abandon(self) -> None:
        """Ask before abandoning a table that waits on a silent peer."""

    @abstractmethod
    def abandon(self) -> None:
        """Abandon the table (confirmed)."""

    @abstractmethod
    def ask_quit(self) -> None:
        """Ask before quitting (or quit when the game is over)."""

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
        width = self._width()
        watching = int(getattr(self.session, "watching", 0) or 0)
        seen = f"{watching} watching" if watching else ""
        # the keys' hint goes first when room is short, then the watchers
        for right in (f"{seen} · ? help  q quit " if seen else "? help  q quit ",
                      f"{seen} " if seen else "", ""):
            if len(left) + len(turn) + len(right) <= width:
                break
        if len(left) + len(turn) + len(right) > width:
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
            left = [n for s, n in self.away.items() if s in self.gone]
            lost = [n for s, n in self.away.items() if s not in self.gone]
            why = " and ".join(x for x in (
                f"{', '.join(left)} left the table" if left else "",
                f"{', '.join(lost)} disconnected" if lost else "") if x)
            how = " (silkroad join --resume)" if left else ""
            gone = " — a: abandon the table" if self.stalled() else ""
            return [("class:banner.bad", f" {why} — waiting for them to come back{how}; "
                                         f"the table pauses{gone} ")]
        words = self.session.auth_words
        if self.status is not None and self.status.text:
            text = f" {self.status.text}"
            if words and text.startswith(" Waiting") and self._first_moves():
                # the authentication words matter most now: a wait never hides them
                short = re.sub(r"^Waiting for | \(\d+ s\)$", "", self.status.text)
                both = f" Compare aloud: {' '.join(words)} · {short}"
                shown = both if len(both) < self._width() else \
                    f" Compare aloud: {' '.join(words)} "
                return [("class:banner.info", shown)]
            if self.status.done is not None and self.status.total:
                n = 20
                fill = n * self.status.done // self.status.total
                text += f"  [{'█' * fill}{'░' * (n - fill)}] {self.status.done}/{self.status.total}"
            return [("class:banner.info", text + " ")]
        if self.back:
            return [("class:banner.good", f" {self.back} ")]
        if words:
            return [("class:banner.info", " Compare aloud: " + " ".join(words) + " ")]
        return []

    def _first_moves(self) -> bool:
        """Whether the caravan has not left its start yet: when the players compare the
        authentication words aloud."""
        s = self.session.view().state
        return s.city == s.board.start

    def map_text(self) -> StyleAndTextTuples:
        s = self.session.view().state
        if s.phase == Phase.OVER and s.final is not None:
            out: StyleAndTextTuples = []
            for line in self.end_note[:-1]:  # how it ended (the last line names the winner)
                out.append(("class:log.me", "  " + line + "\n"))
            out.extend(render_scores(s, self.session.names, self.session.seat))
            v = self.verdict
            if v is not None:
                style = "class:muted" if not v.done else (
                    "class:win" if v.fair else "class:error")
                out.append((style, "\n  " + v.text + "\n"))
            if self.series_line:
                out.append(("class:log.me", "\n  " + self.series_line + "\n"))
            out.extend(self._file_commands())
            return out + self._end_map(sum(t.count("\n") for _, t, *_ in out))
        room, grow = self._map_room()
        return render_map(s, self.route, width=room, grow=grow, height=self._body_height(),
                          lines=self.road_lines())

    def _file_commands(self) -> StyleAndTextTuples:
        """The commands that audit and replay this game's transcript (a networked game's
        export, in our folder), on the end screen."""
        outcome = getattr(self.session, "outcome", None)
        path = getattr(outcome, "transcript", None)
        if path is None:
            return []
        return [("class:muted", f"\n  silkroad audit {path}\n  silkroad replay {path}\n")]

    def _end_map(self, used: int) -> StyleAndTextTuples:
        """The map with the caravan in its last city, under the scores, when the screen has
        the rows for all of it (a tall terminal); nothing otherwise."""
        s = self.session.view().state
        room = self._height() - FIXED_ROWS - used - 1
        plan = map_plan(s, self._width() - 1 - PANEL_MIN)
        if room < len(plan.rows) + 1:
            return []
        width, grow = self._map_room()
        return [("", "\n"), *render_map(s, self.route, width=width, grow=grow,
                                          height=room - 1)]

    def _map_room(self) -> tuple[int, int]:
        """(columns the map may take, columns it may spread into): the players' panels
        keep :data:`PANEL_MIN` columns for names (the map leaves its roads out rather than
        squeeze them; the inspector names them), and on a wide terminal the map spreads
        into what the panels do not want (:data:`PANEL_WANT`)."""
        s = self.session.view().state
        room = self._width() - 1 - PANEL_MIN
        natural = map_plan(s, room).width
        return room, max(0, self._width() - 1 - PANEL_WANT - natural)

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
        to act, name, money, goods, the pawn and (on our own line, marked :data:`YOU`)
        our goods by colour."""
        view = self.session.view()
        s = view.state
        me = self.session.seat
        waiting = self.session.waiting_for()
        out: StyleAndTextTuples = []
        for p in range(s.players):
            if p:
                out.append(("", "\n"))
            money = money_label(s, p, me, self.hidden_money())
            turn = "▶" if p in waiting else " "
            pawn = "♛" if p == pawn_seat(s) and s.phase not in (Phase.SEED, Phase.DEAL) \
                else " "
            name = fit_name(self.session.names[p], 9)
            line = f"{turn}{name:<9} ${money:<3} {len(s.goods[p]):>2}g {pawn}"
            out.append(("class:player.me" if p == me else "", line))
            if p == me:
                mine = goods_counts([view.hand[h] for h in s.goods[p] if h in view.hand])
                out.append(("class:player.me", f" {YOU} "))
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
        # the map's fixed width (every row, every tile), so the panels never shift: not
        # as the map scrolls, nor as the markets empty; a blank column before the panels
        # unless that would take one of the panels' PANEL_MIN
        room, grow = self._map_room()
        width = map_plan(s, room, grow).width
        return width + 1 if width < room else width

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
            if line.startswith(TALK_MARK):
                style = "class:log.talk"
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
                                        "PgDn, End: newest ──")
        out: StyleAndTextTuples = []
        for i, (style, text) in enumerate(shown):
            if i:
                out.append(("", "\n"))
            out.append((style, text))
        return out

    def title(self) -> StyleAndTextTuples:
        if self.error:
            style, text = "class:error", " ✗ " + self.error
        elif self.sending is not None:
            style = "class:menu.title"
            text = f" {SENDING} Sending your move: {self.sending.label}…"
        elif self.undo is not None:  # the grace before a decline, where the player looks
            style = "class:banner.bad"
            text = (f" {self.undo[0].label.capitalize()} in {self.undo_left()} s — "
                    "Esc: keep the tile · Enter: now ")
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
        if self.forced() is not None:
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
        if not self.entries() or self.sending is not None:
            return 1
        rows, own_row = self._menu_layout()
        return rows + own_row

    def menu_text(self) -> StyleAndTextTuples:
        if self.sending is not None:  # the pick, acknowledged until the table has it
            return [("class:menu.key", f" {SENDING} "), ("class:menu.sel", self.sending.label),
                    ("class:muted", "  on its way — the table is taking it")]
        entries = self.entries()
        if not entries:
            if self.can_play_again():
                return [("class:menu.key", f" {AGAIN_KEY} "), ("", "play again (same seats)"),
                        ("class:muted", "   q: leave the table   ?: help   PgUp: the log")]
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
                sel = start + i == self.sel if self.undo is None else (
                    e.choice is not None and e.choice.action == self.undo[0].action)
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


def touches_me(line: str) -> bool:
    """Whether a log line is about the player (the narrator says "You"/"you"/"your"), is
    a Grand Vizier's payout, or tells how the game ends: those are highlighted."""
    words = set(line.replace(",", " ").replace(".", " ").replace("—", " ").split())
    return bool(words & {"You", "you", "your", "Your"}) or line.startswith(
        ("Grand Vizier on", "This is the last market")) or "reveals their goods" in line \
        or " win" in line

"""The watcher's screen (``silkroad watch``): the read-only table, live, and what was checked.

The state shown is the judge's own: each audit of what the watcher holds (with
``record=True``) replays the engine from the verified envelopes, and this screen draws the
last state of that replay with the table's pieces (map, panels, narrator, score table).
So what a watcher sees is exactly what it verified, and only the public view: nobody's
goods in colour (``?`` where the table has not seen them), and at a table that hides
money, nobody's money until the final reveal.  The second line says what was checked
("checked: 143 steps, 512 envelopes, 61 crypto ops — nothing wrong so far"), and names a
cheat the moment the judge does.

A watcher talks as a player does: ``'`` opens a line (Enter sends it, Escape closes it),
F2…F4 say the common ones.  The host's table relays the line, signed by the host and marked
as a watcher's; it shows in the log, as every line of the table's talk does, once the
judge took it in from the transcript.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import textwrap
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import ConditionalContainer, Dimension, HSplit, Layout, VSplit, Window
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.layout.processors import BeforeInput
from prompt_toolkit.output import Output

from cli.screen import screen_size
from cli.table.mapview import board_rows, render_map
from cli.table.narrate import Narrator
from cli.table.panels import render_players, render_scores
from cli.table.session import SeatInfo, Talk
from cli.table.talk import QUICK, log_line
from cli.theme import STYLE, color_depth
from cli.verdict import verdict_text
from engine.actions import RESOLVER, Action
from engine.rules import actors
from engine.state import GameState, Phase
from engine.view import PlayerView
from p2p.front_door import (
    CERTIFIED,
    EXIT_UNREADABLE,
    INCOMPLETE,
    UNFAIR,
    GameAuditReport,
    TalkBook,
    TalkLine,
    Watcher,
    WatchError,
    WatchResult,
)

PHASES = {
    Phase.BID: "auction", Phase.CHOOSE: "auction", Phase.MOVE: "moving",
    Phase.TAKE: "market", Phase.PERFORM: "market", Phase.PASS: "market",
    Phase.VIZIER: "Grand Vizier", Phase.WITHDRAW: "market", Phase.STEAL: "market",
    Phase.OVER: "game over", Phase.REVEAL: "final reveal",
}
"""The header's word for each phase (as the table's header says it)."""

Start = Callable[[Watcher], Awaitable[WatchResult]]
"""What runs the watch: given the watcher (its ``on_event`` is this screen's)."""


def standing(fields: dict[str, Any]) -> str:
    """How the game stands, in a watcher's words: a named cheat as the seats name it."""
    status = str(fields.get("status") or "")
    report = fields.get("report")
    if status == UNFAIR and isinstance(report, GameAuditReport):
        v = report.violation
        names = report.names
        if v is not None and v.party is not None:
            who = names[v.party] if 0 <= v.party < len(names) else f"seat {v.party}"
            return f"UNFAIR: {who} (seat {v.party}), rule {v.rule}"
        return "UNFAIR"
    if status == INCOMPLETE:
        return "nothing wrong so far"
    return status.upper()



def verification_line(fields: dict[str, Any]) -> str:
    """"checked: 143 steps, 512 envelopes, 61 crypto ops — nothing wrong so far"."""
    return (f"checked: {fields.get('steps', 0)} steps, {fields.get('envelopes', 0)} "
            f"envelopes, {fields.get('ops', 0)} crypto ops — {standing(fields)}")


class WatchScreen:
    """One watch on screen.  ``run(start)`` returns the exit code of ``silkroad audit``
    for the last verdict; q leaves (mid-game, the transcript held so far is kept)."""

    def __init__(self, label: str, transcript: Path, *, every: float = 1.0,
                 input: Input | None = None, output: Output | None = None,
                 name: str = "") -> None:
        self.label = label
        self.transcript = transcript
        self.watcher = Watcher(every=every, record=True, on_event=self.on_event, name=name)
        self.names: list[str] = []
        self.hidden_money = False
        self.states: list[GameState] = []
        self.actions: list[Action] = []
        self.told: list[list[str]] = []  # log lines per step, narrated once
        #: the log as shown: (style, line), narration and talk in the order taken in
        self.rows: list[tuple[str, str]] = []
        self.talked = 0  # lines of talk taken into the log so far
        self._talk: TalkBook | None = None  # cleans and paces them, per seat
        self.talking = False
        self.talk_buffer = Buffer(multiline=False, accept_handler=self._send_typed)
        self.checked = "connecting…"
        self.status = ""
        self.report: GameAuditReport | None = None
        self.ended: str | None = None
        self.verdict: str | None = None
        self.note = ""
        self.failed: str | None = None
        self.app: Application[None] = Application(
            layout=Layout(self._layout()), key_bindings=self._bindings(), style=STYLE,
            full_screen=True, input=input, output=output, color_depth=color_depth(),
            mouse_support=False)

    # --- the watcher's events ---------------------------------------------------------
    def on_event(self, kind: str, fields: dict[str, Any]) -> None:
        """Take one event of the watch (also called directly by tests)."""
        if kind == "connected":
            self.checked = f"connected to {fields['host']}:{fields['port']}; waiting for " \
                "the game to start…"
        elif kind == "table":
            self.names = list(fields["names"])
            self.hidden_money = bool(fields.get("hidden_money"))
            self.label = str(fields.get("table") or self.label)
            self.checked = "the game is known; waiting for its envelopes…"
        elif kind in ("progress", "end"):
            report = fields.get("report")
            if isinstance(report, GameAuditReport):
                self._take(report, fields)
            if kind == "end":
                self.ended = str(fields.get("ended") or "")
                if isinstance(report, GameAuditReport):
                    self.verdict = verdict_text(report)
                where = fields.get("transcript")
                if where:
                    self.note = f"transcript kept: {where}"
        elif kind == "unsaid":
            self.note = f"your line was not said: {fields.get('reason', '')}"
        if self.app.is_running:
            self.app.invalidate()

    def _take(self, report: GameAuditReport, fields: dict[str, Any]) -> None:
        self.report = report
        rep = report.replay
        if rep is not None and rep.states:
            self.states = list(rep.states)
            self.actions = list(rep.applied)
            self._narrate()
        if rep is not None and rep.talk is not None:
            self._listen(rep.talk[self.talked:])
            self.talked = len(rep.talk)
        ops = report.crypto.ops if report.crypto is not None else 0
        envelopes = fields.get("envelopes")
        if envelopes is None:
            envelopes = report.crypto.envelopes if report.crypto is not None else 0
        self.status = standing({"status": report.status, "report": report})
        self.checked = (f"checked: {report.steps} steps, {envelopes} envelopes, "
                        f"{ops} crypto ops")

    def _narrate(self) -> None:
        n = Narrator(self.names or [f"seat {i}" for i in range(self.states[0].players)],
                     None, hidden_money=self.hidden_money)
        for i in range(len(self.told), len(self.actions)):
            told = n.tell(self.states[i], self.actions[i], self.states[i + 1], None, None)
            self.told.append(told)
            self.rows.extend(("class:log", line) for line in told)

    def _listen(self, lines: list[Any]) -> None:
        """New lines of talk (the judge's admitted talk envelopes), into the log: cleaned
        and paced per seat as every screen shows talk (:class:`p2p.table.talk.TalkBook`)."""
        for ev in lines:
            body = ev.envelope.body
            seat = ev.envelope.sender
            if self._talk is None or not 0 <= seat < len(self._talk.count):
                self._talk = TalkBook(max(len(self.names), seat + 1), -1)
                self._talk.on_line = self._heard
            self._talk.heard(seat, str(body[0]), str(body[1]) if len(body) > 1 else None)

    def _heard(self, line: TalkLine) -> None:
        seat = line.seat
        name = self.names[seat] if 0 <= seat < len(self.names) else f"seat {seat}"
        self.rows.append(("class:log.talk", log_line(
            Talk(seat, name, line.text, line.hidden, line.watcher), None)))

    # --- talking ----------------------------------------------------------------------
    def say(self, text: str) -> None:
        """Say a line to the table (through the host); why not, on the footer."""
        why = self.watcher.say(text)
        self.note = f"your line was not said: {why}" if why else f"said: {text}"

    def _send_typed(self, buf: Buffer) -> bool:
        text = buf.text.strip()
        self._stop_talking()
        if text:
            self.say(text)
        return False  # the buffer is emptied

    def _stop_talking(self) -> None:
        self.talking = False
        with contextlib.suppress(ValueError):
            self.app.layout.focus_last()

    # --- running ------------------------------------------------------------------------
    async def run(self, start: Start) -> int | None:
        """Watch with ``start(watcher)`` while the screen shows it; the exit code of the
        last verdict (:data:`p2p.front_door.EXIT_UNREADABLE` if the watch could not
        begin), None when the watcher left before the game began."""
        task = asyncio.ensure_future(start(self.watcher))
        failed: list[str] = []

        def done(t: asyncio.Future[WatchResult]) -> None:
            if t.cancelled():
                return
            exc = t.exception()
            if exc is not None:
                failed.append(exc.reason if isinstance(exc, WatchError) else str(exc))
                self.checked = "the watch could not begin"
                self.failed = failed[0]
                self.note = "nothing was watched"
            if self.app.is_running:
                self.app.invalidate()

        task.add_done_callback(done)
        try:
            await self.app.run_async()
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        if failed:
            print(f"silkroad watch: cannot watch: {failed[0]}", file=sys.stderr)
            return EXIT_UNREADABLE
        if not task.cancelled() and task.exception() is None:
            result = task.result()
            print(verdict_text(result.report))
            print(f"The transcript you watched is in {result.transcript} "
                  "(silkroad audit / silkroad replay read it).")
            return result.report.exit_code
        # left mid-game: keep what was verified so far
        saved = self.watcher.save(self.transcript)
        if saved is None:
            return None  # before the game began: nothing was watched
        print(f"You left mid-game; the transcript so far is in {saved} (silkroad audit "
              "reads it: incomplete, unless a seat signed something false).")
        report = self.report
        return report.exit_code if report is not None else EXIT_UNREADABLE

    def _bindings(self) -> KeyBindings:
        kb = KeyBindings()
        typing = Condition(lambda: self.talking)

        @kb.add("q", filter=~typing)
        @kb.add("c-q")
        @kb.add("c-c")
        @kb.add("escape", filter=~typing)
        def _quit(event: KeyPressEvent) -> None:
            event.app.exit()

        @kb.add("'", filter=~typing)
        def _talk(event: KeyPressEvent) -> None:
            self.talking = True
            self.talk_buffer.reset()
            event.app.layout.focus(self.talk_buffer)

        @kb.add("escape", filter=typing)
        def _hush(event: KeyPressEvent) -> None:
            self.talk_buffer.reset()
            self._stop_talking()

        for key, phrase in QUICK:
            kb.add(key, filter=~typing)(lambda _e, p=phrase: self.say(p))
        return kb

    # --- drawing ----------------------------------------------------------------------------
    @property
    def state(self) -> GameState | None:
        return self.states[-1] if self.states else None

    def header(self) -> StyleAndTextTuples:
        s = self.state
        where = ""
        if s is not None:
            stops = len(board_rows(s.board)) - 2
            where = f" │ {s.board.cities[s.city]} · stop {min(s.visit, stops)}/{stops} │ " \
                f"{PHASES.get(s.phase, 'setting up')}"
        left = f" WATCHING {self.label}{where}"
        right = "q leave "
        width = screen_size()[0]
        if len(left) + len(right) > width:
            left = left[: max(0, width - len(right))]
        return [("class:status", left + " " * max(1, width - len(left) - len(right)) + right)]

    def check_line(self) -> StyleAndTextTuples:
        report = self.report
        style = "class:banner.info"
        if report is not None and report.status == UNFAIR:
            style = "class:banner.bad"
        elif report is not None and report.status == CERTIFIED:
            style = "class:banner.good"
        width = screen_size()[0]
        text = f" {self.checked}" + (f" — {self.status}" if self.status else "")
        if len(text) > width and self.status:  # the standing (a named cheat) goes first
            text = f" {self.status} — {self.checked}"
        return [(style, text[:width])]

    def _route(self) -> list[int]:
        out: list[int] = []
        for s in self.states:
            if not out or out[-1] != s.city:
                out.append(s.city)
        return out

    def map_text(self) -> StyleAndTextTuples:
        s = self.state
        if s is None:
            return [("class:muted", " The table shows once the game begins.")]
        if s.phase == Phase.OVER and s.final is not None:
            return render_scores(s, self._names(s), None)
        return render_map(s, self._route(), height=self._body_height(), roads=False)

    def _names(self, s: GameState) -> list[str]:
        return self.names if len(self.names) == s.players else \
            [f"seat {i}" for i in range(s.players)]

    def players_text(self) -> StyleAndTextTuples:
        s = self.state
        if s is None:
            return []
        seats = [SeatInfo(n, "peer") for n in self._names(s)]
        waiting = [p for p in actors(s) if p != RESOLVER]
        # nobody's hand: the public view (goods the table has seen, ? for the rest)
        return render_players(PlayerView(s, 0, {}), seats, None, waiting,
                              width=max(20, screen_size()[0] - self._map_w() - 1),
                              hide_money=self.hidden_money)

    def log_rows(self) -> list[tuple[str, str]]:
        """The log's lines as the screen shows them: wrapped to the width, the newest at
        the bottom, then the verdict once the watch ended (a failure to begin, instead)."""
        width = max(20, screen_size()[0] - 1)
        told = self.rows[-60:]
        rows: list[tuple[str, str]] = []
        for i, (style, line) in enumerate(told):
            if i == len(told) - 1 and style == "class:log":
                style = "class:log.new"
            rows.extend((style, " " + part) for part in _wrap(line, width - 1))
        tail: list[tuple[str, str]] = []
        if self.verdict is not None:
            good = self.report is not None and self.report.status == CERTIFIED
            style = "class:banner.good" if good else "class:banner.bad"
            tail.extend((style, " " + part) for part in _wrap(self.verdict, width - 1))
        if self.ended:
            tail.extend(("class:muted", " " + part)
                        for part in _wrap(f"The watch ended: {self.ended}.", width - 1))
        if self.failed is not None:
            tail.extend(("class:banner.bad", " " + part)
                        for part in _wrap(f"Cannot watch: {self.failed}", width - 1))
        if not rows and not tail:
            rows.append(("class:muted", " Nothing played yet."))
        room = max(1, screen_size()[1] - 3 - self._body_height() - int(self.talking))
        tail = tail[:room]
        return (rows[-(room - len(tail)):] if room > len(tail) else []) + tail

    def log_text(self) -> StyleAndTextTuples:
        out: StyleAndTextTuples = []
        for style, text in self.log_rows():
            if out:
                out.append(("", "\n"))
            out.append((style, text))
        return out

    def footer(self) -> StyleAndTextTuples:
        note = self.note or f"the transcript is kept in {self.transcript} at the end"
        return [("class:muted", f" q leave · ' talk · {note}"[: screen_size()[0]])]

    def _body_height(self) -> int:
        """The board's rows, or what the screen leaves (4 lines of chrome, 3 of log)."""
        s = self.state
        rows = len(board_rows(s.board)) if s is not None else 3
        if s is not None and s.phase == Phase.OVER and s.final is not None:
            rows = max(rows, s.players + 8)
        return max(3, min(rows, screen_size()[1] - 7))

    def _map_w(self) -> int:
        s = self.state
        if s is None:
            return 40
        if s.phase == Phase.OVER:
            return 55
        text = "".join(t for _, t, *_ in render_map(s, self._route(), roads=False))
        return max(len(x.rstrip()) for x in text.split("\n")) + 1

    def _layout(self) -> HSplit:
        return HSplit([
            Window(FormattedTextControl(self.header), height=1),
            Window(FormattedTextControl(self.check_line), height=1),
            VSplit([
                Window(FormattedTextControl(self.map_text), width=lambda: self._map_w()),
                Window(width=1, char="│", style="class:frame.border"),
                Window(FormattedTextControl(self.players_text)),
            ], height=lambda: Dimension.exact(self._body_height())),
            Window(FormattedTextControl(self.log_text)),
            ConditionalContainer(
                Window(BufferControl(self.talk_buffer, focusable=Condition(
                    lambda: self.talking), input_processors=[
                    BeforeInput("say (Enter sends, Escape closes): ", style="class:muted")]),
                    height=1),
                filter=Condition(lambda: self.talking)),
            Window(FormattedTextControl(self.footer), height=1),
        ])


def _wrap(text: str, width: int) -> list[str]:
    return textwrap.wrap(text, max(10, width)) or [""]

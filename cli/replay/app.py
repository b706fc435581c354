"""The replay viewer: step through a recorded game from any seat's view or the auditor's.

It renders with the table's own pieces (map, panels, narrator) from a
:class:`cli.replay.model.ReplayModel`, so whatever feeds the model (a save file
today, a p2p transcript later) gets the same viewer.
"""

from __future__ import annotations

from prompt_toolkit.application import Application
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import Dimension, HSplit, Layout, VSplit, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.output import Output

from cli.replay.model import ReplayModel
from cli.screen import screen_size
from cli.table.mapview import board_rows, render_map
from cli.table.panels import goods_frags, render_players, render_scores
from cli.table.session import SeatInfo
from cli.theme import STYLE, color_depth
from engine.colours import NCOLOURS
from engine.state import Phase
from engine.view import PlayerView


class ReplayApp:
    """``step`` indexes ``model.states``; ``viewer`` is a seat or None (the auditor)."""

    def __init__(self, model: ReplayModel, viewer: int | None = None,
                 input: Input | None = None, output: Output | None = None) -> None:
        self.model = model
        self.viewer = viewer
        self.step = 0
        self.seats = [SeatInfo(n, k) for n, k in zip(model.names, model.kinds, strict=True)]
        self.app: Application[None] = Application(
            layout=Layout(self._layout()),
            key_bindings=self._bindings(),
            style=STYLE,
            full_screen=True,
            input=input,
            output=output,
            color_depth=color_depth(),
        )

    # --- navigation --------------------------------------------------------------------
    def go(self, step: int) -> None:
        self.step = max(0, min(len(self.model) - 1, step))

    def next_city(self, direction: int) -> None:
        """Jump to the next (or previous) auction: the rhythm of the game."""
        i = self.step + direction
        while 0 < i < len(self.model) - 1:
            if self.model.states[i].phase == Phase.BID and \
                    self.model.states[i - 1].phase != Phase.BID:
                break
            i += direction
        self.go(i)

    def set_viewer(self, viewer: int | None) -> None:
        if viewer is None or 0 <= viewer < self.model.players:
            self.viewer = viewer

    def _bindings(self) -> KeyBindings:
        kb = KeyBindings()
        kb.add("right")(lambda e: self.go(self.step + 1))
        kb.add("n")(lambda e: self.go(self.step + 1))
        kb.add("space")(lambda e: self.go(self.step + 1))
        kb.add("left")(lambda e: self.go(self.step - 1))
        kb.add("p")(lambda e: self.go(self.step - 1))
        kb.add("backspace")(lambda e: self.go(self.step - 1))
        kb.add("down")(lambda e: self.next_city(1))
        kb.add("up")(lambda e: self.next_city(-1))
        kb.add("home")(lambda e: self.go(0))
        kb.add("end")(lambda e: self.go(len(self.model) - 1))
        kb.add("a")(lambda e: self.set_viewer(None))
        for d in range(min(self.model.players, 10)):
            kb.add(str(d))(lambda e, d=d: self.set_viewer(d))

        @kb.add("q")
        @kb.add("c-q")
        @kb.add("c-c")
        @kb.add("escape")
        def _quit(event: KeyPressEvent) -> None:
            event.app.exit()

        return kb

    # --- rendering ------------------------------------------------------------------------
    def _view(self) -> PlayerView:
        s = self.model.states[self.step]
        seat = self.viewer if self.viewer is not None else 0
        return PlayerView(s, seat, self.model.hand(self.step, self.viewer))

    def route(self) -> list[int]:
        out: list[int] = []
        for s in self.model.states[: self.step + 1]:
            if not out or out[-1] != s.city:
                out.append(s.city)
        return out

    def header(self) -> StyleAndTextTuples:
        who = "auditor (every colour)" if self.viewer is None else \
            f"{self.model.names[self.viewer]}'s view"
        s = self.model.states[self.step]
        text = (f" REPLAY │ step {self.step}/{len(self.model) - 1} │ "
                f"{s.board.cities[s.city]} │ {who}")
        return [("class:status", text.ljust(80))]

    def map_text(self) -> StyleAndTextTuples:
        s = self.model.states[self.step]
        if s.phase == Phase.OVER and s.final is not None:
            return render_scores(s, self.model.names, self.viewer)
        return render_map(s, self.route(), height=self._body_height(), roads=self._roads())

    def _roads(self) -> bool:
        """Road arrows when the panels keep room for names (as at the table)."""
        from cli.table.view import PANEL_MIN

        s = self.model.states[self.step]
        text = "".join(t for _, t, *_ in render_map(s, self.route()))
        return self._width() - max(len(x.rstrip()) for x in text.split("\n")) - 2 >= PANEL_MIN

    def shown_hands(self) -> dict[int, dict[int, int]]:
        """Whose goods show in colour now, handle -> colour: only the viewer's own (the
        others show what the table has seen, ``?`` for the rest), or everyone's for the
        auditor.  The panels draw exactly this, so tests can check the view without bytes."""
        s = self.model.states[self.step]
        if self.viewer is not None:
            return {self.viewer: self.model.hand(self.step, self.viewer)}
        colours = self.model.hand(self.step, None)
        return {p: {h: colours[h] for h in s.goods[p] if h in colours}
                for p in range(s.players)}

    def bag_counts(self) -> list[int] | None:
        """The bag's goods per colour: the auditor's view only (None for a seat's view)."""
        s = self.model.states[self.step]
        if self.viewer is not None or not s.bag:
            return None
        colours = self.model.hand(self.step, None)
        bag = [0] * NCOLOURS
        for h in s.bag:
            if h in colours:
                bag[colours[h]] += 1
        return bag

    def players_text(self) -> StyleAndTextTuples:
        view = self._view()
        hands = self.shown_hands() if self.viewer is None else None
        out = render_players(view, self.seats, self.viewer, (), hands=hands,
                             width=self._width() - self._map_w() - 1,
                             hide_money=self.model.hides_money(self.viewer))
        bag = self.bag_counts()
        if bag is not None:
            out.append(("", "\n\n bag "))
            out.extend(goods_frags(bag))
        return out

    def log_text(self) -> StyleAndTextTuples:
        out: StyleAndTextTuples = []
        start = max(1, self.step - 8)
        for i in range(start, self.step + 1):
            for line in self.model.lines(i, self.viewer):
                if out:
                    out.append(("", "\n"))
                out.append(("class:log.new" if i == self.step else "class:log", " " + line))
        if not out:
            out.append(("class:muted", " The table is set. → to step forward."))
        return out

    def keys_text(self) -> StyleAndTextTuples:
        last = self.model.players - 1
        return [("class:muted",
                 f" ←→ step  ↑↓ by auction  Home/End  0-{last} a seat's view  a auditor"
                 "  q quit")]

    def _width(self) -> int:
        return screen_size()[0]

    def _height(self) -> int:
        return screen_size()[1]

    def _body_height(self) -> int:
        """The board's rows, or what the screen leaves (header, 3 log lines, keys): a
        tall board then scrolls with the caravan instead of hiding the log and the keys."""
        rows = len(board_rows(self.model.states[0].board))
        return max(3, min(rows, self._height() - 5))

    def _layout(self) -> HSplit:
        return HSplit([
            Window(FormattedTextControl(self.header), height=1),
            VSplit([
                Window(FormattedTextControl(self.map_text), width=lambda: self._map_w()),
                Window(width=1, char="│", style="class:frame.border"),
                Window(FormattedTextControl(self.players_text)),
            ], height=lambda: Dimension.exact(self._body_height())),
            Window(FormattedTextControl(self.log_text), wrap_lines=True,
                   get_vertical_scroll=lambda w: 10_000),
            Window(FormattedTextControl(self.keys_text), height=1),
        ])

    def _map_w(self) -> int:
        s = self.model.states[self.step]
        if s.phase == Phase.OVER:
            return 55
        text = "".join(t for _, t, *_ in render_map(s, self.route(), roads=self._roads()))
        return max(len(x.rstrip()) for x in text.split("\n")) + 1


def run_replay(model: ReplayModel, viewer: int | None = None) -> None:
    ReplayApp(model, viewer).app.run()

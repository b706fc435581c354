"""The table screen's layout: which part of :class:`cli.table.view.TableView` is drawn
where, and the floats over it (help, the city inspector, the questions, the completions).

Kept apart from the drawing code so each module stays one concept: this one says where,
``table_view`` says what.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from prompt_toolkit.data_structures import Point
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.layout import (
    AnyContainer,
    ConditionalContainer,
    Dimension,
    Float,
    FloatContainer,
    HSplit,
    VSplit,
    Window,
)
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.layout.menus import CompletionsMenu
from prompt_toolkit.widgets import Frame

from cli.theme import legend_lines
from engine.state import Phase

if TYPE_CHECKING:
    from cli.table.view import TableView


def table_layout(view: TableView) -> FloatContainer:
    """The screen's containers, each drawing from ``view``: header, banner, map beside the
    panels (or one line per player on a small terminal), legend, log, title, menu and the
    command line, with the overlays and the completion popup floating over them."""
    playing = Condition(lambda: view.session.view().state.phase != Phase.OVER)
    big = Condition(lambda: not view.small())
    body = VSplit([
        Window(FormattedTextControl(view.map_text), width=lambda: view._map_width()),
        ConditionalContainer(VSplit([
            Window(width=1, char="│", style="class:frame.border"),
            Window(FormattedTextControl(view.players_text)),
        ]), filter=playing),
    ], height=lambda: Dimension.exact(view._body_height()))
    log_control = FormattedTextControl(
        view.log_text,
        get_cursor_position=lambda: _last_line(view.log_text()),
        show_cursor=False,
    )
    view.log_window = Window(log_control, height=Dimension(min=1, weight=1))
    main = HSplit([
        Window(FormattedTextControl(view.header), height=1, style="class:status"),
        ConditionalContainer(
            Window(FormattedTextControl(view.banner), height=1),
            filter=Condition(lambda: bool(view.banner())),
        ),
        ConditionalContainer(body, filter=big),
        ConditionalContainer(
            Window(FormattedTextControl(view.compact_players),
                   height=lambda: view.session.view().state.players),
            filter=~big & playing,
        ),
        ConditionalContainer(
            Window(FormattedTextControl(view.legend),
                   height=lambda: len(legend_lines(view._width() - 2))),
            filter=Condition(view.legend_visible),
        ),
        view.log_window,
        Window(FormattedTextControl(view.title), height=view._title_rows),
        Window(FormattedTextControl(view.menu_text), height=view._menu_rows),
        view.input,
    ])
    help_box = Frame(
        Window(FormattedTextControl(view.help_text), style="class:overlay"),
        title=view.help_title,
        style="class:overlay",
    )
    city_box = Frame(
        Window(FormattedTextControl(view.city_text), style="class:overlay",
               height=lambda: 1 + sum(t.count("\n") for _, t, *_ in view.city_text())),
        title="City",
        style="class:overlay",
    )
    abandoning_now = Condition(lambda: view.overlay == "abandon")
    quit_box = Frame(
        Window(FormattedTextControl(
            " Leave the table? The game record is kept.\n\n  y: leave    any other key: stay "
        ), height=3, width=46, style="class:overlay"),
        title="Quit",
        style="class:overlay",
    )
    abandon_box = Frame(
        Window(FormattedTextControl(lambda: (
            f" Stop waiting for {view.abandon_target()}?\n The game ends here; "
            "the record so far is kept.\n\n  y: abandon    any other key: keep waiting ")),
            height=4, width=60, style="class:overlay"),
        title="Abandon the table",
        style="class:overlay",
    )
    confirm_box = Frame(
        Window(FormattedTextControl(lambda: (
            (view.confirm_text(view.confirm) if view.confirm else "")
            + "\n\n  y or Enter: do it    n or Esc: back ")),
            height=5, width=min(60, max(20, view._width() - 2)), style="class:overlay"),
        title="Are you sure?",
        style="class:overlay",
    )
    return FloatContainer(
        content=main,
        floats=[
            # the completions open over the log, never over what is being decided
            # and the menu (the player reads those while typing)
            AboveRows(ConditionalContainer(
                CompletionsMenu(max_height=6, scroll_offset=1),
                filter=Condition(lambda: bool(view.input.text) and view.overlay is None)),
                lambda: view._title_rows() + view._menu_rows() + 1),
            Float(ConditionalContainer(help_box, filter=Condition(
                lambda: view.overlay == "help")), top=0, bottom=0, left=0, right=0),
            Float(ConditionalContainer(city_box, filter=Condition(
                lambda: view.overlay == "city")), top=1, left=1, right=1),
            Float(ConditionalContainer(quit_box, filter=Condition(
                lambda: view.overlay == "quit"))),
            Float(ConditionalContainer(abandon_box, filter=abandoning_now)),
            Float(ConditionalContainer(confirm_box, filter=Condition(
                lambda: view.overlay == "confirm"))),
        ],
    )


class AboveRows(Float):
    """A float at the cursor's column whose bottom edge sits ``rows()`` lines above the
    bottom of the screen: prompt_toolkit's ``bottom`` is a fixed number, and the rows
    under the log (a title of one or two rows, a menu of one to four) change."""

    def __init__(self, content: AnyContainer, rows: Callable[[], int]) -> None:
        self._rows = rows
        super().__init__(content, xcursor=True)

    @property
    def bottom(self) -> int:
        return self._rows()

    @bottom.setter
    def bottom(self, value: int | None) -> None:
        """Float's constructor sets it; the rows callable is what counts."""


def _last_line(frags: StyleAndTextTuples) -> Point:
    """Where the log's cursor sits: its last row, so the window scrolls to the newest."""
    return Point(x=0, y=sum(t.count("\n") for _, t, *_ in frags))

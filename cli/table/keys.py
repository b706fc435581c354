"""The table screen's keys (bound in :class:`cli.table.app.TableApp`).

Kept apart from the screen so that a reader finds what each key does in one place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from cli.table.help_text import PAGES
from cli.table.talk import QUICK
from cli.table.view import AGAIN_KEY, KEYS

if TYPE_CHECKING:
    from cli.table.view import TableView


def table_bindings(app: TableView) -> KeyBindings:
    """Every key of the table screen: menu picks and pages, the log's scroll-back, the
    overlays (help, quit, abandon, the city inspector, a confirmation) and Esc."""
    kb = KeyBindings()
    empty = Condition(lambda: app.input.text == "" and app.overlay is None)
    quitting = Condition(lambda: app.overlay == "quit")
    helping = Condition(lambda: app.overlay == "help")
    abandoning = Condition(lambda: app.overlay == "abandon")
    inspecting = Condition(lambda: app.overlay == "city")
    confirming = Condition(lambda: app.overlay == "confirm")
    stalled = Condition(app.stalled)

    for i, key in enumerate(KEYS):
        def _pick(event: KeyPressEvent, i: int = i) -> None:
            start, _size = app._page()
            app.cancel_undo()
            app.pick(start + i)
        kb.add(key, filter=empty)(_pick)

    def mover(delta: Callable[[], int]) -> Callable[[KeyPressEvent], None]:
        def _move(event: KeyPressEvent) -> None:
            n = len(app.entries())
            if n:
                app.sel = max(0, min(n - 1, app.sel + delta()))
        return _move

    kb.add("left", filter=empty)(mover(lambda: -1))
    kb.add("right", filter=empty)(mover(lambda: 1))
    kb.add("up", filter=empty)(mover(lambda: -app._cols()))
    kb.add("down", filter=empty)(mover(lambda: app._cols()))

    @kb.add("+", filter=empty)
    def _next_page(event: KeyPressEvent) -> None:
        """More menu entries than keys (bids above 9): the next page, round again."""
        n = len(app.entries())
        start, size = app._page()
        app.sel = start + size if start + size < n else 0

    @kb.add("-", filter=empty)
    def _prev_page(event: KeyPressEvent) -> None:
        n = len(app.entries())
        start, size = app._page()
        app.sel = start - size if start else max(0, (n - 1) // size * size)

    @kb.add("pageup")
    def _log_back(event: KeyPressEvent) -> None:
        app.log_scroll = min(app.log_scroll + max(1, app._log_rows() - 1),
                              max(0, len(app._log_lines()) - app._log_rows()))

    @kb.add("pagedown")
    def _log_forward(event: KeyPressEvent) -> None:
        app.log_scroll = max(0, app.log_scroll - max(1, app._log_rows() - 1))

    @kb.add("end", filter=empty)
    def _log_newest(event: KeyPressEvent) -> None:
        app.log_scroll = 0

    @kb.add("i", filter=empty)
    def _inspect(event: KeyPressEvent) -> None:
        app.open_inspector()

    for key, phrase in QUICK:
        def _quick(event: KeyPressEvent, phrase: str = phrase) -> None:
            app.say(phrase)
        kb.add(key)(_quick)

    @kb.add("?", filter=empty)
    @kb.add("f1")
    def _help(event: KeyPressEvent) -> None:
        app.overlay = None if app.overlay == "help" else "help"
        app.help_page = 0
        app.help_scroll = 0

    @kb.add(AGAIN_KEY, filter=empty & Condition(lambda: app.can_play_again()))
    def _again(event: KeyPressEvent) -> None:
        app.play_again()

    @kb.add("q", filter=empty)
    @kb.add("c-q")
    @kb.add("c-c")
    def _quit(event: KeyPressEvent) -> None:
        if app.overlay == "quit":
            app.overlay = None
        else:
            app.ask_quit()

    @kb.add("y", filter=quitting)
    @kb.add("Y", filter=quitting)
    def _yes(event: KeyPressEvent) -> None:
        event.app.exit(result="quit")

    @kb.add("<any>", filter=quitting)
    def _no(event: KeyPressEvent) -> None:
        app.overlay = None

    @kb.add("a", filter=empty & stalled)
    def _ask_abandon(event: KeyPressEvent) -> None:
        app.ask_abandon()

    @kb.add("y", filter=abandoning)
    @kb.add("Y", filter=abandoning)
    def _yes_abandon(event: KeyPressEvent) -> None:
        app.abandon()

    @kb.add("<any>", filter=abandoning)
    def _keep_waiting(event: KeyPressEvent) -> None:
        app.overlay = None

    @kb.add("y", filter=confirming)
    @kb.add("Y", filter=confirming)
    @kb.add("enter", filter=confirming)
    def _yes_confirm(event: KeyPressEvent) -> None:
        choice, app.confirm, app.overlay = app.confirm, None, None
        if choice is not None and choice.action in app.session.legal():
            app.act(choice)
        else:
            app.error = "that choice is no longer possible: the table moved on"

    @kb.add("n", filter=confirming)
    @kb.add("N", filter=confirming)
    def _no_confirm(event: KeyPressEvent) -> None:
        app.confirm, app.overlay = None, None
        app.error = ""

    @kb.add("<any>", filter=confirming)
    def _answer_first(event: KeyPressEvent) -> None:
        """Another key keeps the question up and says so: a key that silently closed it
        (a digit pressed again while a loaded machine had not drawn the question yet) made
        the next press open it again, unseen — a menu that seemed not to answer."""
        app.error = "answer the question first: y or Enter to do it, n or Esc to go back"

    def helper(delta: int, scroll: int = 0) -> Callable[[KeyPressEvent], None]:
        def _turn(event: KeyPressEvent) -> None:
            if scroll:
                app.help_scroll = max(0, app.help_scroll + scroll)
            else:
                app.help_page = (app.help_page + delta) % len(PAGES)
                app.help_scroll = 0
        return _turn

    for key in ("right", "pagedown", " ", "n"):
        kb.add(key, filter=helping)(helper(1))
    for key in ("left", "pageup", "p"):
        kb.add(key, filter=helping)(helper(-1))
    kb.add("down", filter=helping)(helper(0, 1))
    kb.add("up", filter=helping)(helper(0, -1))

    @kb.add("<any>", filter=helping)
    def _close_help(event: KeyPressEvent) -> None:
        app.overlay = None

    for key in ("right", "down", " ", "n"):
        kb.add(key, filter=inspecting)(lambda e: app.inspect_step(1))
    for key in ("left", "up", "p"):
        kb.add(key, filter=inspecting)(lambda e: app.inspect_step(-1))

    @kb.add("<any>", filter=inspecting)
    def _close_city(event: KeyPressEvent) -> None:
        app.overlay = None

    @kb.add("escape", eager=True)
    def _esc(event: KeyPressEvent) -> None:
        buf = app.input.buffer
        if app.cancel_undo():
            pass  # a decline waiting for its countdown: the tile is kept
        elif buf.complete_state is not None:
            buf.cancel_completion()  # Esc first closes an open popup
        elif app.overlay is not None:
            app.overlay = None
            app.confirm = None
        elif app.input.text:
            app.input.text = ""
        elif app.stack:
            app.stack.pop()
            app.sel = 0
        app.error = ""

    return kb

"""The lobby screen: tables on the LAN, the join code, seats filling, the words to compare.

A deliberately small prompt_toolkit application: a title, a few lines of text that the
command's controller rewrites as things happen (tables found, seats taken), and an
optional one-line entry for the join code.  The user's choices arrive on :attr:`inbox` as
``("pick", index)``, ``("text", str)``, ``("enter",)``, ``("start",)`` or ``("quit",)``, so the
controller is a plain coroutine that awaits them alongside network events.
"""

from __future__ import annotations

import asyncio
from typing import Any

from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import ConditionalContainer, HSplit, Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.output import Output
from prompt_toolkit.widgets import TextArea

from cli.theme import STYLE, color_depth


class LobbyScreen:
    """Title + body + hint line + optional text entry; see the module docstring."""

    def __init__(self, title: str, input: Input | None = None,
                 output: Output | None = None) -> None:
        self.title = title
        self.lines: list[tuple[str, str]] = []  # (style class, text)
        self.hint = ""
        self.error = ""
        self.prompt: str | None = None  # shows the entry when set
        self.selectable = 0  # how many numbered entries the body lists
        self.sel = 0
        self.inbox: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
        self.entry = TextArea(height=1, multiline=False, prompt=self._prompt,
                              accept_handler=self._on_enter)
        typing = Condition(lambda: self.prompt is not None)
        body = Window(FormattedTextControl(self._body), wrap_lines=True)
        self.app: Application[None] = Application(
            layout=Layout(HSplit([
                Window(FormattedTextControl(self._title), height=1),
                body,
                Window(FormattedTextControl(self._hint), height=2, wrap_lines=True),
                ConditionalContainer(self.entry, filter=typing),
            ]), focused_element=self.entry),
            key_bindings=self._bindings(typing),
            style=STYLE, full_screen=True, input=input, output=output,
            color_depth=color_depth(), mouse_support=False,
        )

    # --- controller side --------------------------------------------------------------
    def show(self, lines: list[tuple[str, str]], hint: str = "", *, selectable: int = 0,
             prompt: str | None = None) -> None:
        self.lines, self.hint, self.selectable, self.prompt = lines, hint, selectable, prompt
        self.sel = min(self.sel, max(0, selectable - 1))
        if prompt is not None:
            self.app.layout.focus(self.entry)
        self.app.invalidate()

    def fail(self, text: str) -> None:
        self.error = text
        self.app.invalidate()

    # --- rendering ------------------------------------------------------------------------
    def _prompt(self) -> StyleAndTextTuples:
        return [("class:prompt", self.prompt or "> ")]

    def _title(self) -> StyleAndTextTuples:
        return [("class:header", f" SILK ROAD · {self.title} ".ljust(80))]

    def _body(self) -> StyleAndTextTuples:
        out: StyleAndTextTuples = [("", "\n")]
        n = 0
        for style, text in self.lines:
            if style == "entry":
                mark = "▶ " if n == self.sel else "  "
                cls = "class:menu.sel" if n == self.sel else "class:menu"
                out.append((cls, f"{mark}{n + 1}. {text}\n"))
                n += 1
            else:
                out.append((f"class:{style}" if style else "", f"  {text}\n"))
        return out

    def _hint(self) -> StyleAndTextTuples:
        out: StyleAndTextTuples = []
        if self.error:
            out.append(("class:error", f" {self.error}\n"))
        out.append(("class:hint", f" {self.hint}"))
        return out

    # --- input -------------------------------------------------------------------------------
    def _on_enter(self, buf: Buffer) -> bool:
        if self.prompt is not None:
            self.inbox.put_nowait(("text", buf.text))
        elif self.selectable:
            self.inbox.put_nowait(("pick", self.sel))
        else:
            self.inbox.put_nowait(("enter",))
        return False

    def _bindings(self, typing: Condition) -> KeyBindings:
        kb = KeyBindings()
        idle = ~typing
        for i in range(9):
            @kb.add(str(i + 1), filter=idle)
            def _pick(event: KeyPressEvent, i: int = i) -> None:
                if i < self.selectable:
                    self.error = ""
                    self.inbox.put_nowait(("pick", i))

        @kb.add("up", filter=idle)
        def _up(event: KeyPressEvent) -> None:
            self.sel = max(0, self.sel - 1)

        @kb.add("down", filter=idle)
        def _down(event: KeyPressEvent) -> None:
            self.sel = min(max(0, self.selectable - 1), self.sel + 1)

        @kb.add("enter", filter=idle)
        def _enter(event: KeyPressEvent) -> None:
            # the entry is hidden (and may not hold the focus) when nothing is typed, so
            # Enter is bound here too: pick the highlighted table, or "go on"
            self.inbox.put_nowait(("pick", self.sel) if self.selectable else ("enter",))

        @kb.add("s", filter=idle)
        def _start(event: KeyPressEvent) -> None:
            self.inbox.put_nowait(("start",))

        @kb.add("q", filter=idle)
        @kb.add("c-c")
        @kb.add("escape", filter=typing)
        def _quit(event: KeyPressEvent) -> None:
            self.inbox.put_nowait(("quit",))

        return kb

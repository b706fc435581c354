"""The terminal's size as the running prompt_toolkit app sees it (80×24 when unknown)."""

from __future__ import annotations

from prompt_toolkit.application.current import get_app


def screen_size() -> tuple[int, int]:
    """(columns, rows). Outside a running app (tests, headless rendering) there is no real
    output to ask, so the smallest supported terminal is assumed."""
    try:
        size = get_app().output.get_size()
    except Exception:  # no app, or an output without a size (DummyOutput in some versions)
        return 80, 24
    return size.columns, size.rows

"""Bot construction for the command line: one place that knows the bot kinds.

The heuristic bot is written alongside the engine (``engine/bots``); until it lands
the default kind falls back to the random bot, and says so, rather than failing.
"""

from __future__ import annotations

import importlib
from typing import Any

from engine.driver import Agent

BOT_KINDS = ("heuristic", "random")
_HEURISTIC_MODULES = ("engine.bots.heuristic", "engine.bots.heuristic_bot")


class BotUnavailable(RuntimeError):
    """The requested bot kind is not installed in this build."""


def _heuristic_class() -> Any | None:
    for mod in _HEURISTIC_MODULES:
        try:
            m = importlib.import_module(mod)
        except ModuleNotFoundError:
            continue
        cls = getattr(m, "HeuristicBot", None)
        if cls is not None:
            return cls
    return None


def available_kinds() -> tuple[str, ...]:
    return tuple(k for k in BOT_KINDS if k != "heuristic" or _heuristic_class() is not None)


def default_kind() -> str:
    """Heuristic when available (it plays sensibly), else random."""
    return "heuristic" if _heuristic_class() is not None else "random"


def make_bot(kind: str, seed: int) -> Agent:
    """A bot of ``kind`` with its own deterministic seed (so a game replays identically)."""
    if kind == "random":
        from engine.bots.random_bot import RandomBot

        return RandomBot(seed)
    if kind == "heuristic":
        cls = _heuristic_class()
        if cls is None:
            raise BotUnavailable(
                "the heuristic bot is not part of this build yet; use --bot-kind random"
            )
        return cls(seed)  # type: ignore[no-any-return]
    raise BotUnavailable(f"unknown bot kind {kind!r} (choose from {', '.join(BOT_KINDS)})")

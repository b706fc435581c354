"""Bot construction for the command line: delegates to the engine's bot registry."""

from __future__ import annotations

from engine.bots import BOT_KINDS as _REGISTRY
from engine.bots import make_bot as _make_bot
from engine.driver import Agent

BOT_KINDS: tuple[str, ...] = tuple(sorted(_REGISTRY))
DEFAULT_KIND = "heuristic"


class BotUnavailable(ValueError):
    """The requested bot kind does not exist."""


def make_bot(kind: str, seed: int) -> Agent:
    """A bot of ``kind`` with its own deterministic seed (so a game replays identically)."""
    try:
        return _make_bot(kind, seed)
    except ValueError as exc:
        raise BotUnavailable(str(exc)) from None

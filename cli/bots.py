"""Bot construction for the command line: delegates to the engine's bot registry."""

from __future__ import annotations

from engine.bots import BOT_KINDS as _REGISTRY
from engine.bots import DEFAULT_BUDGET, LEVELS, SEARCH_KINDS, parse_kind, with_budget
from engine.bots import make_bot as _make_bot
from engine.driver import Agent

BOT_KINDS: tuple[str, ...] = tuple(sorted(_REGISTRY))
DEFAULT_KIND = "heuristic"
BOT_LEVELS: tuple[str, ...] = tuple(LEVELS)
"""easy, normal, hard: what ``--bot-level`` offers."""

LEVEL_HELP = ("how well the bots play: easy (the heuristic with slips), normal (the "
              "heuristic, default), hard (a search over sampled hidden hands; slower)")
BUDGET_HELP = (f"playouts per decision of hard/search bots (default {DEFAULT_BUDGET}): more "
               "is stronger and slower, 5-10 ms each on one core")


class BotUnavailable(ValueError):
    """The requested bot kind does not exist."""


def make_bot(kind: str, seed: int) -> Agent:
    """A bot of ``kind`` with its own deterministic seed (so a game replays identically)."""
    try:
        return _make_bot(kind, seed)
    except ValueError as exc:
        raise BotUnavailable(str(exc)) from None


def bot_spec(kind: str | None, level: str | None, budget: int | None) -> str:
    """The bot kind string for ``--bot-kind``, ``--bot-level`` and ``--bot-budget``
    (e.g. ``"hard:200"``: bot peer processes receive it as it is).

    Raises :class:`BotUnavailable` naming the problem: a level and a kind that name
    different bots, a budget for a bot that has none, a kind or budget out of range."""
    if level is not None and level not in LEVELS:
        raise BotUnavailable(f"unknown bot level {level!r} (levels: {', '.join(LEVELS)})")
    if kind is not None and level is not None \
            and _REGISTRY.get(kind) is not _REGISTRY[LEVELS[level]]:
        raise BotUnavailable(f"--bot-kind {kind} and --bot-level {level} name different "
                             "bots: give one of them")
    base = level or kind or DEFAULT_KIND
    try:
        name, _ = parse_kind(base)
        if budget is not None and name not in SEARCH_KINDS:
            raise ValueError(f"--bot-budget is for hard (search) bots, not {name!r}")
        return with_budget(base, budget)
    except ValueError as exc:
        raise BotUnavailable(str(exc)) from None

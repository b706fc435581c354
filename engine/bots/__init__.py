"""Bots: they decide from a :class:`engine.view.PlayerView` only.

:func:`make_bot` is the one place that maps a bot kind (as typed on the command line)
to its class, so the simulator, the CLI and the benchmark agree on the names.

Kinds: ``random``, ``easy``, ``heuristic``, ``search``, and the levels ``easy``,
``normal`` (= ``heuristic``) and ``hard`` (= ``search``). A search kind may carry its
playout budget: ``hard:200`` or ``search:200`` (the string travels as is to bot peer
processes, so a budget chosen at the command line reaches them too).
"""

from __future__ import annotations

from engine.bots.easy import EasyBot
from engine.bots.heuristic import HeuristicBot
from engine.bots.random_bot import RandomBot
from engine.bots.search import DEFAULT_BUDGET, MAX_BUDGET, SearchBot
from engine.driver import Agent

BOT_KINDS: dict[str, type] = {
    RandomBot.kind: RandomBot,
    EasyBot.kind: EasyBot,
    HeuristicBot.kind: HeuristicBot,
    SearchBot.kind: SearchBot,
    "normal": HeuristicBot,
    "hard": SearchBot,
}
"""Bot kind -> class; every class takes a ``seed`` (bytes or int); search bots also a
``budget``."""

LEVELS: dict[str, str] = {"easy": "easy", "normal": "heuristic", "hard": "search"}
"""Difficulty level -> the bot kind that plays it."""

SEARCH_KINDS = tuple(k for k, cls in BOT_KINDS.items() if cls is SearchBot)
"""Kinds that take a playout budget."""


def parse_kind(spec: str) -> tuple[str, int | None]:
    """``"hard:200"`` -> ``("hard", 200)``; ``"heuristic"`` -> ``("heuristic", None)``.

    Raises ValueError naming the problem (unknown kind, a budget on a bot without one,
    a budget that is not a number in range)."""
    kind, sep, rest = spec.strip().partition(":")
    kind = kind.strip()
    if kind not in BOT_KINDS:
        known = ", ".join(sorted(BOT_KINDS))
        raise ValueError(f"unknown bot kind {kind!r} (known kinds: {known})")
    if not sep:
        return kind, None
    if kind not in SEARCH_KINDS:
        raise ValueError(f"bot kind {kind!r} takes no budget (only {', '.join(SEARCH_KINDS)})")
    try:
        budget = int(rest)
    except ValueError:
        raise ValueError(f"bot budget {rest!r} in {spec!r} is not a whole number") from None
    if not 1 <= budget <= MAX_BUDGET:
        raise ValueError(f"bot budget must be 1..{MAX_BUDGET} playouts, not {budget}")
    return kind, budget


def with_budget(spec: str, budget: int | None) -> str:
    """``spec`` with the playout budget ``budget`` when it names a search kind without one
    (other kinds and ``None`` leave it as it is). Raises ValueError on a bad budget."""
    kind, own = parse_kind(spec)
    if budget is None or kind not in SEARCH_KINDS or own is not None:
        return spec.strip()
    if not 1 <= budget <= MAX_BUDGET:
        raise ValueError(f"--bot-budget must be 1..{MAX_BUDGET} playouts, not {budget}")
    return f"{kind}:{budget}"


def make_bot(kind: str, seed: bytes | int) -> Agent:
    """A new bot of ``kind`` (see the module docstring) seeded with ``seed``."""
    name, budget = parse_kind(kind)
    cls = BOT_KINDS[name]
    bot: Agent = cls(seed) if budget is None else cls(seed, budget=budget)
    return bot


__all__ = [
    "BOT_KINDS",
    "DEFAULT_BUDGET",
    "LEVELS",
    "SEARCH_KINDS",
    "EasyBot",
    "HeuristicBot",
    "RandomBot",
    "SearchBot",
    "make_bot",
    "parse_kind",
    "with_budget",
]

"""Bots: they decide from a :class:`engine.view.PlayerView` only.

:func:`make_bot` is the one place that maps a bot kind (as typed on the command line)
to its class, so the simulator, the CLI and the benchmark agree on the names.
"""

from __future__ import annotations

from engine.bots.heuristic import HeuristicBot
from engine.bots.random_bot import RandomBot
from engine.driver import Agent

BOT_KINDS: dict[str, type] = {
    RandomBot.kind: RandomBot,
    HeuristicBot.kind: HeuristicBot,
}
"""Bot kind -> class; every class takes a ``seed`` (bytes or int) and nothing else."""


def make_bot(kind: str, seed: bytes | int) -> Agent:
    """A new bot of ``kind`` ("random", "heuristic") seeded with ``seed``."""
    cls = BOT_KINDS.get(kind)
    if cls is None:
        known = ", ".join(sorted(BOT_KINDS))
        raise ValueError(f"unknown bot kind {kind!r} (known kinds: {known})")
    bot: Agent = cls(seed)
    return bot


__all__ = ["BOT_KINDS", "HeuristicBot", "RandomBot", "make_bot"]

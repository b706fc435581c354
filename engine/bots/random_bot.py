"""The random bot: a uniformly random legal action (its own deterministic RNG)."""

from __future__ import annotations

from engine.actions import Action
from engine.rng import DetRng
from engine.view import PlayerView


class RandomBot:
    kind = "random"

    def __init__(self, seed: bytes | int = 0) -> None:
        if isinstance(seed, int):
            seed = seed.to_bytes(16, "big", signed=True)
        self.rng = DetRng(seed, b"silkroad/bot/random")

    def choose(self, view: PlayerView, legal: list[Action]) -> Action:
        return legal[self.rng.below(len(legal))]

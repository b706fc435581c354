"""LocalDealer: the trusted, omniscient, in-process resolver.

It knows every good's colour. Simulations, tests, benchmarks and bot tournaments use
it; networked tables use the cryptographic resolver in p2p/ instead, where nobody
is omniscient. Both answer the same questions (:class:`engine.resolver.Resolver`).
"""

from __future__ import annotations

from engine.actions import (
    Action,
    Dealt,
    ExchangePair,
    FinalReveal,
    Seed,
    Sell,
    Stolen,
    Trade,
    VizierReveals,
    Withdrawn,
)
from engine.colours import COLOURS, GOODS_PER_COLOUR, NCOLOURS
from engine.errors import IllegalAction
from engine.rng import DetRng
from engine.state import GameState, Phase

_CLAIMS = frozenset((Sell, Trade, ExchangePair, VizierReveals))
"""Action types that make claims about hidden goods colours."""


class LocalDealer:
    """Resolves hidden and random steps from its own deterministic RNG."""

    def __init__(self, seed: bytes | int = 0) -> None:
        if isinstance(seed, int):
            seed = seed.to_bytes(16, "big", signed=True)
        self.rng = DetRng(seed, b"silkroad/dealer/v1")
        self.colour: dict[int, int] = {}

    # --- the Resolver protocol -----------------------------------------------------
    def resolve(self, s: GameState) -> Action:
        ph = s.phase
        if ph == Phase.SEED:
            return Seed(self.rng.bytes_below_256(32))
        if ph == Phase.DEAL:
            deck = [c for c in range(NCOLOURS) for _ in range(GOODS_PER_COLOUR)]
            self.rng.shuffle(deck)
            self.colour = dict(enumerate(deck))
            return Dealt()
        if ph == Phase.WITHDRAW:
            return self._withdraw(s)
        if ph == Phase.STEAL:
            return self._steal(s)
        if ph == Phase.REVEAL:
            return FinalReveal(
                tuple(tuple(self.colour[h] for h in s.goods[p]) for p in range(s.players))
            )
        raise ValueError(f"nothing to resolve in the {s.phase.name} step")

    def check(self, s: GameState, a: Action) -> None:
        """Verify an action's hidden claims against the truth (the crypto opening's job)."""
        if type(a) not in _CLAIMS:  # most actions claim nothing hidden: one set lookup
            return
        t = s.tile
        if isinstance(a, Sell) and t is not None:
            self._claim(a.handles, (t.colour,) * len(a.handles))
        elif isinstance(a, Trade) and t is not None:
            self._claim(a.handles, t.give)
        elif isinstance(a, ExchangePair):
            self._claim((a.handle,), (a.give,))
        elif isinstance(a, VizierReveals):
            for r in a.reveals:
                self._claim(r, (s.vizier_colour,) * len(r))

    def hand(self, s: GameState, seat: int) -> dict[int, int]:
        """What ``seat`` privately knows: the colours of its own goods."""
        col = self.colour
        return {h: col[h] for h in s.goods[seat]}

    # --- internals --------------------------------------------------------------------
    def _claim(self, handles: tuple[int, ...], colours: tuple[int, ...]) -> None:
        for h, c in zip(handles, colours, strict=True):
            real = self.colour.get(h)
            if real != c:
                raise IllegalAction(
                    "hidden.claim",
                    f"good #{h} is not {COLOURS[c] if 0 <= c < NCOLOURS else c}",
                )

    def _withdraw(self, s: GameState) -> Withdrawn:
        """Goods of the requested colours from the bag: for a purchase, a trade, an
        exchange, or the Grand Vizier's marker (one good that then goes to nobody)."""
        assert s.pending is not None
        _, request, partial = s.pending
        picked: list[int] = []
        col = self.colour
        for c in request:
            h = next((h for h in s.bag if col[h] == c and h not in picked), None)
            if h is None:
                if partial:
                    break
                return Withdrawn(())
            picked.append(h)
        return Withdrawn(tuple(picked))

    def _steal(self, s: GameState) -> Stolen:
        old = s.goods[s.steal_victim]
        perm = list(range(len(old)))
        self.rng.shuffle(perm)
        for j, src in enumerate(perm):
            self.colour[s.next_handle + j] = self.colour[old[src]]
        return Stolen(self.rng.below(len(old)))

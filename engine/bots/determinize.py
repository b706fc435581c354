"""Sampling hidden worlds from one seat's view (the search bot's determinizations).

A *world* gives a colour to every good in play. It must agree with everything the seat
can see: its own hand, every good whose colour the table knows (``state.known``), and
the per-colour totals the rules fix (15 of each colour, less the Grand Vizier markers
set aside, when the rules set any aside). The goods nobody at the table can see from
this seat -- the other players' unseen goods and the whole bag -- share out the colours
that remain, uniformly at random: any such share is a world the seat cannot rule out.

Only the :class:`~engine.view.PlayerView` is read, never a resolver or a dealer, so two
true worlds that give the seat the same view give the same samples.
"""

from __future__ import annotations

from typing import NamedTuple

from engine.colours import GOODS_PER_COLOUR, NCOLOURS
from engine.rng import DetRng
from engine.state import GameState
from engine.view import PlayerView


class HiddenPool(NamedTuple):
    """What one seat knows and does not know about the goods in play."""

    fixed: dict[int, int]
    """handle -> colour for every good whose colour the seat knows (own hand, public)."""
    unknown: list[int]
    """Handles whose colour the seat cannot see, in a canonical (sorted) order."""
    colours: list[int]
    """The colours those handles share out: one entry per handle, sorted."""


def colour_totals(s: GameState) -> list[int]:
    """How many goods of each colour are in play (hands + bag): 15 each, less the
    Grand Vizier markers set aside (``state.set_aside``, one public colour per marker).
    A state without that record (engines before the marker rule) counts 15 each, and
    :func:`hidden_pool` reconciles the totals with the number of goods in play."""
    totals = [GOODS_PER_COLOUR] * NCOLOURS
    aside = getattr(s, "set_aside", None)
    if isinstance(aside, list | tuple):
        for c in aside:
            if isinstance(c, int) and 0 <= c < NCOLOURS and totals[c] > 0:
                totals[c] -= 1
    return totals


def hidden_pool(view: PlayerView) -> HiddenPool:
    """Split the goods in play into those the seat knows and those it must guess."""
    s = view.state
    me = view.seat
    hand = view.hand
    known = s.known
    fixed: dict[int, int] = {}
    unknown: list[int] = []
    for p in range(s.players):
        for h in s.goods[p]:
            c = hand.get(h) if p == me else known.get(h)
            if c is None:
                unknown.append(h)
            else:
                fixed[h] = c
    for h in s.bag:
        c = known.get(h)
        if c is None:
            unknown.append(h)
        else:
            fixed[h] = c
    unknown.sort()
    remaining = colour_totals(s)
    for c in fixed.values():
        remaining[c] -= 1
    _reconcile(remaining, len(unknown), s.locked)
    colours = [c for c in range(NCOLOURS) for _ in range(remaining[c])]
    return HiddenPool(fixed, unknown, colours)


def _reconcile(remaining: list[int], slots: int, locked: list[int]) -> None:
    """Make the colours left over fit the unseen goods exactly, in place.

    They differ only when goods left play without the state saying which colour (a
    Grand Vizier's marker: one good of the chosen colour each, so the chosen colours,
    in order, are taken off first), or when the view is inconsistent; a guess must
    still be made, so the surplus or the shortfall is spread over the colours."""
    for c in range(NCOLOURS):
        if remaining[c] < 0:
            remaining[c] = 0
    extra = sum(remaining) - slots
    for c in locked:
        if extra <= 0:
            break
        if 0 <= c < NCOLOURS and remaining[c] > 0:
            remaining[c] -= 1
            extra -= 1
    while extra > 0:  # still too many colours: drop from the most plentiful
        c = max(range(NCOLOURS), key=lambda k: (remaining[k], -k))
        remaining[c] -= 1
        extra -= 1
    while extra < 0:  # more unseen goods than colours left: add to the scarcest
        c = min(range(NCOLOURS), key=lambda k: (remaining[k], k))
        remaining[c] += 1
        extra += 1


def sample_world(pool: HiddenPool, rng: DetRng) -> dict[int, int]:
    """One world: every good's colour, the unseen ones drawn uniformly from the pool."""
    colours = list(pool.colours)
    rng.shuffle(colours)
    world = dict(pool.fixed)
    for h, c in zip(pool.unknown, colours, strict=True):
        world[h] = c
    return world

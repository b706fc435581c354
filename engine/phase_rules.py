"""Who acts in each phase, and the public predicates that both the legal-action lists
(:mod:`engine.legal`) and the state changes (:mod:`engine.flow`, :mod:`engine.perform`)
ask: whether a Barterer may be played, a Crook used, who may receive the pawn, which
Vizier colours are free.  One definition each, so "legal" and "accepted" cannot drift.
"""

from __future__ import annotations

from engine.actions import RESOLVER
from engine.colours import NCOLOURS
from engine.state import GameState, Phase
from engine.tiles import BUYER, SELLER, TRADER

# Phase members as module constants: ``Phase.X`` is an Enum class-attribute lookup,
# several times slower than a global, and the hot path tests the phase constantly.
PH_SEED = Phase.SEED
PH_DEAL = Phase.DEAL
PH_BID = Phase.BID
PH_CHOOSE = Phase.CHOOSE
PH_MOVE = Phase.MOVE
PH_TAKE = Phase.TAKE
PH_PERFORM = Phase.PERFORM
PH_VIZIER = Phase.VIZIER
PH_WITHDRAW = Phase.WITHDRAW
PH_STEAL = Phase.STEAL
PH_PASS = Phase.PASS
PH_REVEAL = Phase.REVEAL
PH_OVER = Phase.OVER

_RESOLVER_PHASES = (PH_SEED, PH_DEAL, PH_WITHDRAW, PH_STEAL, PH_REVEAL)


def actors(s: GameState) -> tuple[int, ...]:
    """The seats that must decide now; ``(RESOLVER,)`` for hidden/random steps; () at the end."""
    ph = s.phase
    if ph in _RESOLVER_PHASES:
        return (RESOLVER,)
    if ph == PH_BID:
        return (s.bid_order[s.bid_pos],)
    if ph in (PH_CHOOSE, PH_MOVE):
        return (s.holder,)
    if ph in (PH_TAKE, PH_PERFORM, PH_PASS):
        return (s.actor,)
    if ph == PH_VIZIER:
        return vizier_actors(s)
    return ()


def vizier_actors(s: GameState) -> tuple[int, ...]:
    """Players who hold goods decide what to reveal; the others can only reveal nothing."""
    return tuple(p for p in range(s.players) if s.goods[p])


def is_over(s: GameState) -> bool:
    return s.phase == PH_OVER


def is_simultaneous(s: GameState) -> bool:
    return s.phase == PH_VIZIER


def crook_possible(s: GameState, seat: int) -> bool:
    """A Crook may change the tile now: the seat holds one, none was used on this tile,
    nothing was performed yet, and the tile is a Seller, Buyer or Trader."""
    t = s.tile
    return (
        t is not None
        and s.crooks[seat] > 0
        and not s.crook_used
        and s.trades_done == 0
        and t.kind in (SELLER, BUYER, TRADER)
    )


def allowed_vizier_colours(s: GameState) -> list[int]:
    """Colours no earlier Grand Vizier chose (all of them again once every one was)."""
    free = [c for c in range(NCOLOURS) if c not in s.locked]
    return free or list(range(NCOLOURS))


def eligible(s: GameState) -> list[int]:
    """Seats that may receive the pawn: not the actor, and below the turn-token limit."""
    lim = s.config.token_limit
    return [q for q in range(s.players) if q != s.actor and s.tokens[q] < lim]


def can_barter(s: GameState) -> bool:
    """The actor may play a Barterer: one taken in an earlier city, none played this
    turn, no tile taken yet, and two tiles left to take."""
    a = s.actor
    return (
        not s.barterer_played
        and s.takes_left == 1
        and len(s.layout[s.city]) >= 2
        and any(v < s.visit for v in s.barterers[a])
    )

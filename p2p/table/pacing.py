"""Bots that pause before each move, so a person at the table can follow the log."""

from __future__ import annotations

import asyncio

from ..protocol.table_game import Move, View
from .deciders import think_aside
from .setup import Agent, HumanDecider


def paced(agent: Agent, delay: float) -> HumanDecider:
    """A bot as an async decider that waits ``delay`` s before each move.

    Peers may share an event loop (the player's peer and the table screen, or every peer
    with ``silkroad play --one-process``), so the pause must be an ``await``: a sleep inside
    ``Agent.choose`` would freeze everyone.  :class:`p2p.table.LockstepTable` awaits its
    ``human`` decider, so the paced bot is installed there; it thinks in a worker thread
    (:func:`p2p.table.deciders.think_aside`)."""
    async def decide(view: View, legal: list[Move]) -> Move:
        await asyncio.sleep(delay)
        return await think_aside(agent, view, legal)

    return decide

"""Who decides for a seat: one awaitable interface for people and bots.

A table awaits a :data:`p2p.table.setup.HumanDecider` for every decision of its seat,
whoever makes it.  A bot's ``choose`` is ordinary (blocking) code and may search for a
second or more, so :func:`thinking_aside` runs it in a worker thread: meanwhile the
table's event loop keeps taking envelopes, acknowledging, heartbeating and answering gap
sync — for itself and for every other peer that shares the loop (``silkroad play
--one-process``, the in-process tables of the tests).  The bot reads a copy of the state,
so nothing the loop does while it thinks can change what it sees.
"""

from __future__ import annotations

import asyncio

from ..protocol.table_game import Move, View
from .setup import Agent, HumanDecider


async def think_aside(agent: Agent, view: View, legal: list[Move]) -> Move:
    """``agent.choose`` on a frozen copy of ``view``, in a worker thread."""
    frozen = view._replace(state=view.state.copy(), hand=dict(view.hand))
    return await asyncio.to_thread(agent.choose, frozen, list(legal))


def thinking_aside(agent: Agent) -> HumanDecider:
    """``agent`` as an awaitable decider that thinks off the event loop."""
    async def decide(view: View, legal: list[Move]) -> Move:
        return await think_aside(agent, view, legal)

    return decide

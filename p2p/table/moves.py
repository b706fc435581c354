"""The action envelopes waiting for their step: the table's one queue of moves.

A seat's move for step ``s`` may arrive before the table reaches ``s`` (a fast peer), so
it waits here, per step, in its sender's chain order; the main loop takes the first one
for the step it decides (:meth:`p2p.table.loop.LockstepTable._player_step`).  What can never be
taken is its signer's: a malformed move at once, a move for a step already decided once
every peer acknowledged that step (:meth:`p2p.table.accuser.Accuser.suspect`), and more
than :data:`p2p.protocol.wire.MAX_QUEUED_ACTIONS` pending moves of one sender (the bound on what a
peer may make us hold).
"""

from __future__ import annotations

from crypto.transcript import Envelope

from ..protocol.wire import MAX_QUEUED_ACTIONS, action_body_ok
from .accuser import Accuser


class Moves:
    """Pending action envelopes by step, and which steps we signed a move for."""

    def __init__(self, me: int, accuser: Accuser) -> None:
        self.me = me
        self.accuser = accuser
        self.by_step: dict[int, list[Envelope]] = {}
        #: steps we already signed a move for (a resumed peer does not decide again)
        self.mine: set[int] = set()

    def take(self, env: Envelope, now: int, replaying: bool) -> bool:
        """Queue an action envelope while the table is at step ``now``; True if it is for
        ``now`` (the main loop should run)."""
        body = env.body
        who = env.sender
        if not action_body_ok(body):
            self.accuser.violation(env, "malformed-action",
                                   f"seat {who} signed a malformed action")
            return False
        step = body[0]
        if step < now:
            if not replaying:
                self.accuser.suspect(step, env, "stale-action", f"seat {who} signed an action "
                                     f"for step {step}, already decided")
            return False
        pending = sum(1 for q in self.by_step.values() for e in q if e.sender == who)
        if pending >= MAX_QUEUED_ACTIONS:
            self.accuser.violation(env, "too-many-actions", f"seat {who} signed actions for "
                                   f"{pending} future steps")
            return False
        self.by_step.setdefault(step, []).append(env)
        if who == self.me:
            self.mine.add(step)
        return step == now

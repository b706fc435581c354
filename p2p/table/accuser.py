"""What our own checks catch, turned into accusations only when the evidence holds.

A peer's checks run on the history *it* holds.  A seat that showed different versions of
its words to different peers can make an honest seat's next message look wrong to some of
them, so an accusation never fires on the spot when it could rest on a history that parted
ways:

* a move that breaks the rules *in the state at round r* (out of turn, illegal, stale)
  waits until every peer has acknowledged that state (:meth:`Accuser.suspect`);
* a failed crypto check first relays what we took in since the last agreed round and
  waits :data:`p2p.table.acks.DISPUTE_WAIT`, so that two versions meet and the
  equivocation proof names the real culprit (:meth:`Accuser.crypto_cheat`);
* an envelope that is wrong whatever the history (malformed, an unknown kind, a second
  ack) is its signer's violation at once (:meth:`Accuser.violation`).

Every accusation leaves as an abort notice carrying the culprit's own offending envelopes,
so a peer that never saw them judges them for itself (:mod:`p2p.table.aborts`, whose
verdicts come from the audit's judge).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from crypto.errors import CheatDetected
from crypto.session import TokenSession
from crypto.transcript import Envelope, Equivocation

from ..judge.evidence import HEADS_FREE, crypto_rests_on
from ..protocol.wire import CRYPTO_KIND
from .aborts import Aborts
from .acks import DISPUTE_WAIT, AckBook
from .context import TableContext
from .outcome import TableStopped
from .waiting import Waiter


class Accuser:
    """Accusations of one table: pending suspicions, evidence, and the notice that leaves."""

    def __init__(self, ctx: TableContext, waiter: Waiter, aborts: Aborts, acks: AckBook,
                 session: Callable[[], TokenSession], sync_all: Callable[[], None]) -> None:
        self.ctx = ctx
        self.waiter = waiter
        self.aborts = aborts
        self.acks = acks
        self._session = session  # the table's session (a resume replaces it)
        self._sync_all = sync_all
        #: accusations that depend on the state, waiting for every peer to agree on it:
        #: (round, envelope, rule, detail)
        self._suspects: list[tuple[int, Envelope, str, str]] = []
        acks.on_confirmed = self._fire_confirmed

    def violation(self, env: Envelope, rule: str, detail: str) -> TableStopped:
        """``env`` is its signer's violation: stop naming it, and tell the others in an abort
        notice that carries the envelope, so that a peer that never received it (it may
        have been shown to us alone) judges it for itself.  Returns the reason, to raise."""
        self.aborts.send(CheatDetected(env.sender, rule, detail), env, evidence=[env.wire])
        return self.waiter.stop(env.sender, rule, detail)

    def equivocation(self, eq: Equivocation) -> None:
        """Only we saw both envelopes: the others get the transferable proof."""
        self.aborts.send(eq, None, evidence=eq.proof.encode())
        self.waiter.stop(eq.culprit, eq.rule, eq.detail)

    def suspect(self, rnd: int, env: Envelope, rule: str, detail: str) -> None:
        """``env`` breaks the rules *in the state at round* ``rnd`` — who may act, what is
        legal.  If a seat showed different moves to different peers, our state may be the
        one that parted ways, and the sender honest; so the accusation waits until every
        peer has acknowledged that state (we ack it now; by closure so does everybody).
        If the acks disagree, the dispute exposes the equivocation instead."""
        if rnd <= self.acks.confirmed:
            self.violation(env, rule, detail)
            return
        self._suspects.append((rnd, env, rule, detail))
        if rnd in self.acks.chain_at:
            self.acks.send(rnd)

    async def accuse(self, rnd: int, env: Envelope, rule: str, detail: str) -> TableStopped:
        """:meth:`suspect`, then wait for the verdict (ours, or the dispute's); returns
        the reason the table stopped, to raise."""
        self.suspect(rnd, env, rule, detail)
        await self.acks.confirm(rnd)
        self._fire_confirmed()
        failure = self.waiter.failure
        assert failure is not None  # the accusation fired once its round was confirmed
        return failure

    def _fire_confirmed(self) -> None:
        """Fire the first accusation whose state every peer has now acknowledged."""
        for rnd, env, rule, detail in self._suspects:
            if rnd <= self.acks.confirmed:
                self._suspects.clear()
                self.violation(env, rule, detail)
                return

    def crypto_cheat(self, exc: CheatDetected, env: Envelope | None) -> None:
        """Our crypto session caught ``exc``: accuse its culprit — after exposing any
        equivocation it may stem from.  A crypto message does not name the messages it
        builds on, so a seat that showed two valid versions of its shuffle to two groups
        of peers makes the next seat's honest message fail for one group.  We first relay
        what we took in since the last agreed round (:meth:`AckBook.relay_unagreed`): where
        two versions meet, that peer's equivocation proof names the real culprit.  Only
        after :data:`DISPUTE_WAIT` without one do we send our accusation and stop on it
        (while replaying our own past, at once: nothing is sent then)."""
        where = self._culprit_evidence(exc, env)
        if self.ctx.replaying or exc.rule in HEADS_FREE:
            self._accuse(exc, where)
            return
        self.acks.relay_unagreed()
        self._sync_all()

        async def accuse_later() -> None:
            await asyncio.sleep(DISPUTE_WAIT)
            if self.waiter.failure is None:
                self._accuse(exc, where)

        self.aborts.tasks.append(asyncio.get_running_loop().create_task(accuse_later()))

    def _accuse(self, exc: CheatDetected, where: tuple[Envelope | None, list[bytes]]
                ) -> None:
        """Send the accusation and stop on it — unless the culprit's message was made on a
        history our log does not hold (its heads name another version of an envelope, or
        one we never received: :func:`p2p.judge.evidence.crypto_rests_on`, the audit's
        rule).  Then nobody is named: we stop saying so, and our stop notice tells the
        others, who may hold the history it did rest on."""
        env = where[0]
        why = None
        if (env is not None and env.sender == exc.culprit and env.kind == CRYPTO_KIND
                and exc.rule not in HEADS_FREE and isinstance(env.body, list)
                and len(env.body) == 6):
            why = crypto_rests_on(env.sender, env.body[5], self.ctx.log.by_sender)
        if why is not None:
            self.waiter.stop(None, "crypto-disputed",
                             f"seat {exc.culprit}'s crypto message fails here "
                             f"({exc.rule}: {str(exc.detail)[:200]}), but {why}: nobody is "
                             "named")
            return
        self.aborts.send(exc, *where)
        self.waiter.stop(exc.culprit, exc.rule, exc.detail)

    def _culprit_evidence(self, exc: CheatDetected, env: Envelope | None
                          ) -> tuple[Envelope | None, list[bytes]]:
        """What an abort notice for ``exc`` points at and carries: the culprit's own
        offending envelopes — ``env`` if it is the culprit's, else the culprit's messages of
        the op that failed (a deferred check fails while another seat's message completes
        the batch: that message proves nothing against the culprit)."""
        c = exc.culprit
        if env is not None and env.sender == c:
            return env, [env.wire]
        ses = self._session()
        idx = ses.current.index if ses.current is not None else ses.next_index - 1
        mine = [] if c is None else [
            e for e in self.ctx.log.by_sender.get(c, []) if e.kind == CRYPTO_KIND
            and isinstance(e.body, list) and e.body and e.body[0] == idx]
        if not mine:
            return env, [] if env is None else [env.wire]
        return mine[-1], [mine[-1].wire]  # its latest message of the op: the one checked

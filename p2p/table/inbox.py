"""Other peers' messages: from mesh events to verified envelopes in chain order.

What happens when a message arrives, in one place: the pump takes a batch of mesh events,
puts each sender's envelopes up to its move first (:meth:`Inbox.prioritise`), answers sync
requests, and :meth:`Inbox.accept` verifies each envelope into the log — or holds it while
an earlier one of the same sender is missing — then hands it to the table's dispatcher.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import msgpack

from crypto.errors import CheatDetected
from crypto.transcript import Envelope, Equivocation, EquivocationProof, parse

from ..net.mesh import PeerDown, PeerUp, Received
from ..protocol.envelope_header import peek_header
from ..protocol.wire import ACTION_KIND, ENV_TAG, KINDS, MAX_EARLY, SYNC_TAG, sync_counts_ok
from .context import TableContext
from .outcome import Refusal

log = logging.getLogger("p2p.table")

Dispatch = Callable[[Envelope], bool]
"""The table's handler of one verified envelope; True if the main loop should run now
(an action for the current step arrived)."""


class Inbox:
    """Verifies arriving envelopes into the log in each sender's chain order."""

    def __init__(self, ctx: TableContext, dispatch: Dispatch,
                 on_equivocation: Callable[[Equivocation], None],
                 on_violation: Callable[[Envelope, str, str], object]) -> None:
        """``on_violation`` is called with a validly signed envelope that is its signer's
        violation before it may join the log (an unknown kind, a flood of early ones)."""
        self.ctx = ctx
        self._dispatch = dispatch
        self._on_equivocation = on_equivocation
        self._on_violation = on_violation
        #: envelopes held for a missing predecessor, verified already: sender -> seq ->
        #: (envelope, via); at most MAX_EARLY per sender, so one seat's flood never crowds
        #: out another's messages
        self._early: dict[int, dict[int, tuple[Envelope, int | None]]] = {}
        #: per asker, how many envelopes of each sender we already sent it: a sync request
        #: is answered once per gap, never by queueing the same envelopes again
        self._served: dict[int, list[int]] = {}
        self._urgent = False
        #: set after a restart: every peer that comes up is asked for what we lack
        self.resumed = False

    @property
    def held(self) -> int:
        """How many early envelopes are held for a missing predecessor."""
        return sum(len(h) for h in self._early.values())

    async def pump(self) -> None:
        """Feed mesh events to the table, a batch at a time (runs all game).

        Latency: the move every peer waits for must not queue behind the acks that
        arrived before it (each costs a signature check).  So in a batch, the envelopes of
        a sender up to its action envelope go first (its chain order is kept; other
        senders' envelopes are independent), and right after an action is taken in we
        yield once so the main loop applies it before the rest of the batch is checked.
        """
        ctx = self.ctx
        batch_of = getattr(ctx.transport, "next_events", None)
        while True:
            if batch_of is not None:
                events = self.prioritise(await batch_of())
            else:
                events = [await ctx.transport.next_event()]
            for event in events:
                try:
                    if isinstance(event, Received):
                        self.on_bytes(event.seat, event.body)
                    elif isinstance(event, PeerUp) and (event.restarted or self.resumed):
                        # the mesh is reliable within one incarnation; only a restart loses
                        # messages, and then both sides ask for what they lack
                        self._served.pop(event.seat, None)
                        self.request_sync(event.seat)
                    elif isinstance(event, PeerDown):
                        log.info("seat %d: %s is down (%s)", ctx.me, event.label, event.reason)
                except Exception as exc:  # bad input must never kill the pump
                    log.exception("seat %d: error handling a message", ctx.me)
                    ctx.refuse(getattr(event, "seat", None), f"internal error: {exc!r}")
                if self._urgent:
                    self._urgent = False
                    ctx.waiter.notify()
                    await asyncio.sleep(0)  # let the main loop apply it now
            ctx.waiter.notify()

    @staticmethod
    def prioritise(events: list[Any]) -> list[Any]:
        """Stable reorder of a batch: each sender's envelopes up to (and including) its
        last action envelope first, everything else after, in arrival order."""
        if len(events) < 2:
            return events
        senders: list[int | None] = []
        last_action: dict[int, int] = {}
        for i, ev in enumerate(events):
            sender = None
            if isinstance(ev, Received) and ev.body[:1] == ENV_TAG:
                try:
                    sender, _seq, kind = peek_header(ev.body[1:])
                    if kind == ACTION_KIND:
                        last_action[sender] = i
                except Exception:  # refused properly by accept() later
                    sender = None
            senders.append(sender)
        if not last_action:
            return events
        front = [s is not None and i <= last_action.get(s, -1) for i, s in enumerate(senders)]
        return ([ev for ev, f in zip(events, front, strict=True) if f]
                + [ev for ev, f in zip(events, front, strict=True) if not f])

    def request_sync(self, seat: int) -> None:
        """Ask ``seat`` for every envelope beyond the ones we hold."""
        counts = [len(self.ctx.log.by_sender.get(p, [])) for p in range(self.ctx.n)]
        self.ctx.transport.send(seat, SYNC_TAG + msgpack.packb(counts))

    def on_bytes(self, via: int, body: bytes) -> None:
        """Handle one mesh message from ``via`` (never raises for bad input)."""
        ctx = self.ctx
        if body[:1] == ENV_TAG:
            self.accept(body[1:], via)
        elif body[:1] == SYNC_TAG:
            try:
                counts = msgpack.unpackb(body[1:])
                if not sync_counts_ok(counts, ctx.n):
                    raise ValueError("bad counts")
            except Exception as exc:
                ctx.refuse(via, f"malformed sync request: {exc}")
                return
            self._answer_sync(via, counts)
        else:
            ctx.refuse(via, "unknown message tag")

    def _answer_sync(self, via: int, counts: list[int]) -> None:
        """Send ``via`` every envelope it lacks that we have not sent it already."""
        served = self._served.setdefault(via, [0] * self.ctx.n)
        start = [max(c, s) for c, s in zip(counts, served, strict=True)]
        for env in self.ctx.log.entries:
            if env.seq >= start[env.sender]:
                self.ctx.transport.send(via, ENV_TAG + env.wire)
        for p in range(self.ctx.n):
            served[p] = max(start[p], len(self.ctx.log.by_sender.get(p, [])))

    def accept(self, wire: bytes, via: int | None, verified: Envelope | None = None) -> None:
        """Verify one envelope into the log (or hold it until its predecessor arrives).
        ``verified``: the envelope of ``wire``, parsed and signature-checked already (one
        that was held), so it is not checked twice."""
        ctx = self.ctx
        if verified is not None:
            sender, seq, kind = verified.sender, verified.seq, verified.kind
        else:
            try:
                sender, seq, kind = peek_header(wire)
                if not 0 <= sender < ctx.n:
                    raise ValueError("unknown sender")
            except Exception as exc:
                ctx.refuse(via, f"malformed envelope: {exc!s:.80}")
                return
        chain = ctx.log.by_sender.get(sender, [])
        if seq > len(chain) + MAX_EARLY:
            ctx.refuse(via, f"envelope {sender}/{seq} too far ahead; dropped")
            return
        if kind not in KINDS:
            self._refuse_unknown(wire, via)
            return
        if seq < len(chain) and chain[seq].wire == wire:
            if not ctx.replaying:
                log.debug("seat %d: duplicate envelope %d/%d ignored", ctx.me, sender, seq)
            ctx.refusals.append(Refusal(via, f"replayed envelope {sender}/{seq}"))
            return
        if seq > len(chain):
            self._hold(wire, via, sender, seq)
            return
        try:
            env = ctx.log.add(wire, via=via) if verified is None else ctx.log.link(verified, via)
        except CheatDetected as exc:
            if isinstance(exc, Equivocation):
                self._on_equivocation(exc)  # only we saw both: the others get the proof
            else:
                ctx.refuse(exc.culprit, f"{exc.rule}: {exc.detail}")
            return
        if ctx.store is not None:
            ctx.store.append(wire, durable=False)
        if ctx.on_accepted is not None:
            ctx.on_accepted(env)
        if self._dispatch(env):
            self._urgent = True
        early = self._early.get(sender)
        if early:
            nxt = early.pop(seq + 1, None)
            if nxt is not None:
                self.accept(nxt[0].wire, nxt[1], nxt[0])

    def _refuse_unknown(self, wire: bytes, via: int | None) -> None:
        """An envelope of a kind no table sends: never stored (it could be large); if its
        signature holds it is its signer's violation, carried in our abort notice."""
        try:
            env = parse(wire, self.ctx.keys, self.ctx.setup.game_id, via)
        except CheatDetected as exc:
            self.ctx.refuse(exc.culprit, f"{exc.rule}: {exc.detail}")
            return
        self._on_violation(env, "unknown-kind", f"seat {env.sender} signed an envelope of "
                                                f"unknown kind {str(env.kind)[:32]!r}")

    def _hold(self, wire: bytes, via: int | None, sender: int, seq: int) -> None:
        """Hold an early envelope for its predecessor, but only if it is genuinely signed:
        unverified bytes must not occupy memory."""
        ctx = self.ctx
        held = self._early.setdefault(sender, {})
        if seq in held and held[seq][0].wire == wire:
            ctx.refusals.append(Refusal(via, f"replayed envelope {sender}/{seq}"))
            return
        try:
            env = parse(wire, ctx.keys, ctx.setup.game_id, via)
        except CheatDetected as exc:
            ctx.refuse(exc.culprit, f"{exc.rule}: {exc.detail}")
            return
        if seq in held:  # two validly signed envelopes for one slot, both early
            proof = EquivocationProof(held[seq][0].wire, wire)
            self._on_equivocation(Equivocation(sender, proof,
                                               f"two different envelopes with seq {seq}"))
            return
        held[seq] = (env, via)  # at most MAX_EARLY per sender: accept() checks the window

"""Acknowledgements: the state-hash chain every peer signs, compared round by round.

Every peer folds each step's state hash into a chain (:mod:`p2p.protocol.ack_chain`) and signs an
``ack`` of the chain at ack points.  Acks are checked as they arrive instead of blocking
every step (a round trip saved per move): a peer may run :data:`ACK_LAG` plain steps ahead
of the last round whose acks all arrived, and every crypto step first waits for all
outstanding acks, so diverged peers never start different ops.  A difference is a
*dispute* (:meth:`AckBook.dispute`): everything received since the last agreed round is
relayed to all, and then the audit's judge (:mod:`.verdicts`) decides on the transcript held:
a seat is named only on what it signed, never by the majority of acks.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import msgpack

from crypto.transcript import Envelope, ack_body, compare_acks

from ..protocol.ack_chain import chain_next, chain_start, scheduled
from ..protocol.wire import ACK_KIND, ENV_TAG, MAX_ACK_AHEAD
from .context import TableContext
from .outcome import TableStopped

log = logging.getLogger("p2p.table")

ACK_LAG = 8
"""Plain steps a peer may run ahead of the last round whose acks all arrived.  The lag
bounds how far a desynced peer can get before the table stops; with an ack every
:data:`p2p.protocol.ack_chain.ACK_EVERY` rounds, a round is confirmed by the time the next
scheduled one is sent, so in sync nobody ever waits here."""
DISPUTE_WAIT = 1.0
"""Seconds a dispute's verdict waits for relayed envelopes to expose an equivocation (see
:meth:`AckBook.dispute`)."""

DisputeJudge = Callable[[list[bytes], int, dict[int, Envelope], list[int]], TableStopped]
"""The verdict on differing acks of a round, from the transcript held
(:meth:`p2p.table.verdicts.LiveJudge.dispute`)."""


class AckBook:
    """Our ack chain, the acks received per round, and the rounds confirmed."""

    def __init__(self, ctx: TableContext, state_hash: bytes,
                 emit: Callable[[str, Any], None], current_step: Callable[[], int],
                 dump_state: Callable[[], bytes]) -> None:
        self.ctx = ctx
        self._emit = emit
        self._step = current_step
        self._dump_state = dump_state
        #: acks received per round not yet confirmed: round -> seat -> envelope
        self.acks: dict[int, dict[int, Envelope]] = {}
        #: the chain value we acknowledged, per round whose acks are not all in yet
        self.my_hash: dict[int, bytes] = {}
        self.confirmed = 0  # acks of round r follow step r - 1; there is no round 0
        #: p2p.protocol.ack_chain values per round not yet confirmed (to answer others' acks)
        self.chain_at: dict[int, bytes] = {0: chain_start(ctx.setup.game_id, state_hash)}
        #: log position when we acked the last confirmed round (a dispute relays what came
        #: after it), per pending round
        self.log_mark = 0
        self._ack_pos: dict[int, int] = {}
        self._disputed = False
        #: every (seat, round) acknowledged so far: a second ack of a round is a violation
        self._seen: set[tuple[int, int]] = set()
        self.verdict_task: asyncio.Task[None] | None = None  # a dispute's delayed verdict
        #: called whenever a round is confirmed (accusations that waited for agreement)
        self.on_confirmed: Callable[[], None] | None = None
        #: draws a dispute's verdict (run in a worker thread); None: nobody is named
        self.judge: DisputeJudge | None = None

    @property
    def disputed(self) -> bool:
        """Whether a dispute is under way (its verdict will stop the table)."""
        return self._disputed

    def restart_at(self, rnd: int, chain: bytes, log_mark: int) -> None:
        """Resume: round ``rnd`` (chain value ``chain``) is where our snapshot starts."""
        self.chain_at = {rnd: chain}
        self.confirmed = rnd
        self.log_mark = log_mark

    async def fold(self, rnd: int, state_hash: bytes, crypto_next: bool) -> None:
        """Fold the state after step ``rnd - 1`` into the chain and acknowledge it if this
        round is an ack point, without waiting for the others' acks (see :data:`ACK_LAG`)."""
        self.chain_at[rnd] = chain_next(self.chain_at[rnd - 1], state_hash)
        if scheduled(rnd, crypto_next) or rnd in self.acks:
            self.send(rnd)
        for old in [r for r in self.chain_at if r < min(self.confirmed, rnd - 1)]:
            del self.chain_at[old]
        self.check()
        if rnd - ACK_LAG > self.confirmed:
            await self.confirm(rnd - ACK_LAG)

    def send(self, rnd: int) -> None:
        """Acknowledge round ``rnd`` (once; on resume our earlier ack may be in the log)."""
        if rnd in self.my_hash or rnd <= self.confirmed:
            return
        self.my_hash[rnd] = self.chain_at[rnd]
        self._ack_pos[rnd] = len(self.ctx.log.entries)
        if self.ctx.me not in self.acks.setdefault(rnd, {}):
            self._emit(ACK_KIND, ack_body(rnd, self.chain_at[rnd], self.ctx.log))

    async def confirm(self, upto: int) -> None:
        """Wait until every ack round ``<= upto`` that we acknowledged is complete and
        consistent (raises :class:`TableStopped` on a desync or a silent seat).  Rounds are
        confirmed by :meth:`check` as acks arrive; a disputed round never is, and the wait
        ends with the dispute's verdict."""
        self.check()
        for rnd in sorted(r for r in self.my_hash if self.confirmed < r <= upto):

            def ready(r: int = rnd) -> bool:
                return r <= self.confirmed

            def missing(r: int = rnd) -> list[int]:
                got = self.acks.get(r, {})
                return [] if r <= self.confirmed else [p for p in range(self.ctx.n)
                                                       if p not in got]

            await self.ctx.waiter.wait(ready, f"acks of step {rnd}", missing)
            self.check()

    def check(self) -> None:
        """Compare every complete ack round in order; dispute a difference."""
        n = self.ctx.n
        while self.my_hash:
            rnd = min(self.my_hash)
            acks = self.acks.get(rnd)
            if acks is None or len(acks) < n:
                return
            bad = compare_acks([acks[p] for p in range(n)])
            mine = self.my_hash[rnd]
            disagree = sorted({p for p in range(n) if acks[p].body[1] != mine})
            if bad or disagree:
                self.dispute(rnd, acks, [s for s, _ in bad] or disagree, bad)
                return
            self.confirmed = max(self.confirmed, rnd)
            # our ack of rnd covered the log up to here: what came later is not agreed yet
            self.log_mark = self._ack_pos.pop(rnd, self.log_mark)
            del self.acks[rnd]
            del self.my_hash[rnd]
            if self.on_confirmed is not None:
                self.on_confirmed()

    def take(self, sender: int, rnd: Any, ack: Envelope) -> bool:
        """Record ``sender``'s ack of round ``rnd`` and compare complete rounds.  False if
        the ack is its signer's violation: a second ack of one round, or one so far ahead
        of us that no honest peer could have reached it (a memory bound)."""
        ctx = self.ctx
        if isinstance(rnd, bool) or (sender, rnd) in self._seen:
            return False
        step = self._step()
        if rnd > step + MAX_ACK_AHEAD:
            return False
        self._seen.add((sender, rnd))
        if rnd <= self.confirmed:
            return True  # a round we already closed (resume replay)
        self.acks.setdefault(rnd, {})[sender] = ack
        if not ctx.replaying:
            if rnd <= step and rnd in self.chain_at:
                self.send(rnd)  # closure: a round anybody acks, everybody acks
            self.check()
        return True

    def judging(self) -> bool:
        """Whether a dispute's verdict is being drawn (it ends the table: no wait may time
        out meanwhile and name a seat that stopped on its own verdict)."""
        return self.verdict_task is not None and not self.verdict_task.done()

    def dispute(self, rnd: int, acks: dict[int, Envelope], culprits: list[int],
                bad: list[tuple[int, str]]) -> None:
        """Acks of round ``rnd`` disagree: expose any equivocation, then let the judge decide.

        A disagreement is either a peer that drifted (or lies in its ack), or a sender that
        showed different envelopes to different peers — and then the *majority* would point
        at an honest peer that received the odd version.  So nobody is blamed by count:
        every peer first relays to all the envelopes it took in since the last confirmed
        round (a second, different, validly signed envelope for one slot is an equivocation
        proof: the abort notice carries it, and every peer names the equivocator); after
        :data:`DISPUTE_WAIT` the judge audits the transcript held and names the seat its
        own signatures convict (an ack whose chain value contradicts the replay of moves
        it acknowledged), or nobody: the table stops *disputed*."""
        ctx = self.ctx
        if self._disputed:
            return
        self._disputed = True
        self._dump(rnd, acks)
        self.relay_unagreed()
        log.error("seat %d: step %d: acks differ; disagreeing seats %s (%s); relaying what we "
                  "received before judging", ctx.me, rnd, culprits, bad)
        held = dict(acks)

        async def judge_later() -> None:
            await asyncio.sleep(DISPUTE_WAIT)
            if ctx.waiter.failure is not None or self.judge is None:
                ctx.stop(None, "disputed", f"step {rnd}: acks differ; disagreeing seats "
                                           f"{culprits}: nobody is named")
                return
            verdict = await asyncio.to_thread(self.judge, ctx.log.wires(), rnd, held, culprits)
            ctx.stop(verdict.culprit, verdict.rule, verdict.detail)

        self.verdict_task = asyncio.get_running_loop().create_task(judge_later())

    def relay_unagreed(self) -> None:
        """Relay to everyone the others' envelopes we took in since the last round every
        seat acknowledged: if a sender showed another version of one of them to someone,
        the two meet there, and that peer's equivocation proof names the sender."""
        ctx = self.ctx
        for env in ctx.log.entries[self.log_mark:]:
            if env.sender != ctx.me:
                ctx.transport.broadcast(ENV_TAG + env.wire)

    def _dump(self, rnd: int, acks: dict[int, Envelope]) -> None:
        """Keep our canonical state next to the transcript, for whoever investigates."""
        ctx = self.ctx
        if ctx.store is None:
            return
        path = ctx.store.folder / f"desync-step{rnd}-seat{ctx.me}.msgpack"
        path.write_bytes(msgpack.packb([rnd, ctx.me, self._dump_state(),
                                        [[p, acks[p].body[1]] for p in sorted(acks)]],
                                       use_bin_type=True))
        log.error("desync at step %d; our state dumped to %s", rnd, path)

"""Identifiable aborts: telling the table why we stop, and judging others' accusations.

A stop that accuses no one (a timeout, the player abandoning, a local error) is told in a
``stop`` notice, so the others stop instead of waiting for us (:meth:`Aborts.tell_stop`).
A stop notice is an act of its signer: the others stop naming it as the seat that stopped
the table (not as a cheater), its reason shown as its unverified claim — but only after
they finished the checks they had pending (:meth:`Aborts.stop_received`), so a cheat
already sent is still named, and a stop is never a free exit from one.

A peer that catches a cheat (possibly one only it can check, docs/security.md "Deferred
checks") signs an ``abort`` notice naming the culprit, the rule and the envelope, so the
others confirm it from the public transcript instead of waiting on it and blaming its
silence.  A notice is judged by re-auditing the transcript so far with the evidence rule
of :mod:`p2p.judge.evidence` (or, for an equivocation, by checking its two signed envelopes): the
accused — or an earlier cheater — is confirmed; or the accuser is named for a false
accusation, but only once we hold everything the notice points at and it checks out; until
then we fetch what we lack, and if it never arrives nobody is named.

A notice (abort or stop) may reach some seats only, and a seat that acts on one stops
without a word of its own (:data:`SELF_EVIDENT`): the others would wait for it and name
it by timeout.  So a seat relays every notice it takes in to all at once, with what the
others may lack before it (:meth:`p2p.table.acks.AckBook.relay_unagreed`): every seat
judges (or honours) the same signed notice itself; and while we judge an accusation our
waits do not time out (:attr:`p2p.table.waiting.Waiter.holding`): its verdict ends the
table.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from crypto.errors import CheatDetected, MalformedInput
from crypto.transcript import Envelope, EquivocationProof

from ..judge.evidence import stop_words
from ..protocol.wire import ABORT_KIND, PROOF_RULES, STOP_KIND, abort_evidence
from ..sanitize import clean
from .context import TableContext
from .outcome import TableStopped

log = logging.getLogger("p2p.table")

SELF_EVIDENT = ("disputed", "peer-stopped", "false-abort", "unchecked-abort")
"""Stops every peer reaches by itself (a dispute's verdict, another seat's notice, an
accusation each peer judges — a notice is relayed to all on arrival, so each peer holds
it): no stop notice is sent for them, so that it can never pre-empt another peer's own
verdict."""

ABORT_WAIT = 5.0
"""Seconds an abort notice may wait for what it points at (and a stop notice for our
pending checks) before it is settled naming no one."""

STOP_GRACE = 1.0
"""Seconds a stop notice waits at least, even when we wait for nothing but its signer: an
accusation another peer's pending check is about to send may still be on its way."""

Judge = Callable[[list[bytes], int], TableStopped | None]
"""Audits a transcript for an abort notice of the given accuser: the verdict (a seat named,
or the accuser named for a false accusation), or None while it cannot be checked."""


class Aborts:
    """Our own abort notice (sent once) and our verdicts on other peers' notices."""

    def __init__(self, ctx: TableContext, emit: Callable[[str, Any], None],
                 take: Callable[[bytes, int], None], sync_all: Callable[[], None],
                 audit: Judge, relay: Callable[[], None]) -> None:
        """``take`` feeds an envelope a notice carries into our inbox, ``sync_all`` asks every
        peer for what we lack, ``audit`` audits a transcript (the whole game audit, so a
        notice is judged by exactly the rules ``silkroad audit`` applies), ``relay`` sends
        everyone the others' envelopes we took in since the last agreed round (a notice
        just taken in among them)."""
        self.ctx = ctx
        self._emit = emit
        self._take = take
        self._sync_all = sync_all
        self._audit = audit
        self._relay = relay
        self._sent = False
        self.tasks: list[asyncio.Task[None]] = []
        #: the tasks among them that judge an abort notice (at most one per seat)
        self.judges: list[asyncio.Task[None]] = []
        #: seats whose stop notice we received (honoured once our pending checks ran)
        self.stoppers: list[int] = []
        #: whether an ack dispute is under way (its verdict, not a stop, ends the table)
        self.disputed: Callable[[], bool] = lambda: False
        #: read by tests and tools: the abort claims this peer judged ``(accuser, verdict)``
        self.verdicts: list[tuple[int, TableStopped]] = []

    def send(self, exc: CheatDetected, env: Envelope | None,
             evidence: list[bytes] | None = None) -> None:
        """Tell everyone, in a signed notice, that we caught ``exc`` in ``env``, carrying the
        ``evidence`` (the offending signed envelope, or an equivocation's two).  Sent once;
        never while replaying our own past or after the table stopped."""
        ctx = self.ctx
        if self._sent or ctx.replaying or ctx.waiter.failure is not None:
            return
        self._sent = True
        ref = None if env is None else [env.sender, env.seq, env.id]
        body: list[Any] = [exc.culprit, str(exc.rule)[:64], str(exc.detail)[:400], ref]
        if evidence is not None:
            body.append(evidence)
        try:
            self._emit(ABORT_KIND, body)
        except Exception:  # the notice is best effort; our own stop still happens
            log.exception("seat %d could not send its abort notice", ctx.me)

    def tell_stop(self, rule: str, detail: str) -> None:
        """Tell the others why we stop (a stop notice, naming no one), unless an accusation
        — an abort notice, ours or one we judged — already does, or every peer reaches the
        verdict by itself: each of them would otherwise wait for us until its timeout."""
        if self.busy or rule in SELF_EVIDENT or self.disputed():
            return
        try:
            self._emit(STOP_KIND, [rule[:64], detail[:1000]])
        except Exception:  # best effort: we are stopping anyway
            log.exception("seat %d could not send its stop notice", self.ctx.me)

    @property
    def busy(self) -> bool:
        """Whether an accusation is under way: we sent a notice or are judging one."""
        return self._sent or bool(self.judges)

    async def settle(self) -> None:
        """Wait for the abort notices being judged (each is bounded by :data:`ABORT_WAIT`
        and one audit): a game does not end with an accusation unjudged."""
        pending = [t for t in self.judges if not t.done()]
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)

    def stop_received(self, env: Envelope) -> None:
        """Another seat signed that it stops the table.  We first finish what we have
        pending — the op or step under way, whose checks may still fail on what that seat
        sent — fetching what we lack; the stop is honoured once we wait only for seats that
        stopped, or after :data:`ABORT_WAIT`, naming that seat as the one that stopped."""
        if env.sender in self.stoppers:
            return
        self.stoppers.append(env.sender)
        self._relay()  # it may have reached us alone: the others must not wait for us
        self.tasks.append(asyncio.get_running_loop().create_task(self._honour(env)))

    async def _honour(self, env: Envelope) -> None:
        ctx = self.ctx
        start = time.monotonic()
        self._sync_all()
        while ctx.waiter.failure is None:
            if not self.judging() and not self.disputed():
                waited = time.monotonic() - start
                waiting = ctx.waiter.waiting_for()
                if waited >= ABORT_WAIT or (waited >= STOP_GRACE and waiting is not None
                                            and all(p in self.stoppers for p in waiting[1])):
                    break  # nothing more can come from the seats we wait for
            await asyncio.sleep(0.05)
        if ctx.waiter.failure is None:
            ctx.stop(None, "peer-stopped", stop_words(env.sender, env.body),
                     stopped_by=env.sender)

    def judging(self) -> bool:
        """Whether an accusation is being judged (its verdict, not a stop or a timeout, ends
        the table)."""
        return any(not t.done() for t in self.judges)

    def received(self, env: Envelope) -> None:
        """Another peer stopped, accusing someone: relay the notice (it may have reached us
        alone, and our verdict stops us without a word) and judge the claim ourselves."""
        if len(self.judges) >= self.ctx.n:
            self.ctx.refuse(env.sender, "too many abort notices")
            return
        self._relay()
        task = asyncio.get_running_loop().create_task(self._judge(env))
        self.judges.append(task)
        self.tasks.append(task)

    def _has(self, ref: list[Any] | None) -> bool:
        if ref is None:
            return True
        sender, seq, eid = ref
        chain = self.ctx.log.by_sender.get(sender, [])
        return 0 <= seq < len(chain) and chain[seq].id == eid

    async def _judge(self, env: Envelope) -> None:
        """Confirm (or refute) an abort notice from the evidence and the transcript so far.

        The envelopes the notice carries go through our own inbox first: if one is a
        violation our own checks stop the table on it, exactly as they would have had it
        reached us directly.  Then we audit our transcript as ``silkroad audit`` would
        (:mod:`p2p.judge.evidence`): that names the accused cheater — or an earlier one — whenever
        the accuser was right, and names the accuser only when everything the notice
        points at is here and checks out.  While neither holds we fetch what we lack (gap
        sync) and audit again as it arrives; if it never does, the table stops naming no
        one: the notice could not be checked."""
        ctx = self.ctx
        accuser = env.sender
        culprit, rule, _detail, _ref = env.body[:4]
        if rule in PROOF_RULES:
            self._judge_equivocation(accuser, culprit, rule, env.body[4])
            return
        for wire in abort_evidence(env.body):
            self._take(wire, accuser)
        deadline = time.monotonic() + ABORT_WAIT
        held = -1
        while True:
            own = ctx.waiter.failure
            if own is not None:
                self.verdicts.append((accuser, own))  # our own checks already decided
                return
            if len(ctx.log.entries) != held:
                held = len(ctx.log.entries)
                verdict = await asyncio.to_thread(self._audit, ctx.log.wires(), accuser)
                if verdict is not None:
                    self._judged(accuser, verdict)
                    return
                self._sync_all()
            if time.monotonic() >= deadline:
                break
            await asyncio.sleep(0.05)
        self._judged(accuser, TableStopped(
            None, "unchecked-abort",
            f"seat {accuser} accused seat {culprit} of {clean(rule, 64)}, and what the "
            "accusation points at never reached us: nobody is named"))

    def _judged(self, accuser: int, verdict: TableStopped) -> None:
        """Record our verdict on ``accuser``'s abort notice and stop on it."""
        self.verdicts.append((accuser, verdict))
        self.ctx.stop(verdict.culprit, verdict.rule, verdict.detail)

    def _judge_equivocation(self, accuser: int, culprit: Any, rule: str,
                            proof: list[bytes]) -> None:
        """An equivocation (or fork, rule ``bad-chain``) is proved by its two signed
        envelopes alone: check the proof (:meth:`EquivocationProof.verify`)."""
        ctx = self.ctx
        who: int | None = None
        why = ""
        try:
            who = EquivocationProof(proof[0], proof[1]).equivocator(ctx.keys, ctx.setup.game_id)
        except MalformedInput as exc:
            why = f" ({exc})"
        if who is not None and who == culprit:
            verdict = TableStopped(who, rule,
                                   f"seat {who} signed two envelopes that cannot both be in "
                                   f"its chain (proof sent by seat {accuser})")
        else:
            verdict = TableStopped(accuser, "false-abort",
                                   f"seat {accuser} accused seat {culprit} of equivocation "
                                   f"with a proof that does not hold{why}")
        self._judged(accuser, verdict)

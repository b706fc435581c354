"""Identifiable aborts: telling the table why we stop, and judging others' accusations.

A stop that accuses no one (a timeout, the player abandoning, a local error) is told in a
``stop`` notice, so the others stop at once instead of waiting for us
(:meth:`Aborts.tell_stop`).

A peer that catches a cheat (possibly one only it can check, docs/security.md "Deferred
checks") signs an ``abort`` notice naming the culprit, the rule and the envelope, so the
others confirm it from the public transcript instead of waiting on it and blaming its
silence.  A notice is judged by re-auditing the transcript so far (or, for an
equivocation, by checking its two signed envelopes): either the accused — or an earlier
cheater — is confirmed, or the accuser is named for a false accusation.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from crypto.audit import Violation
from crypto.errors import CheatDetected, MalformedInput
from crypto.transcript import Envelope, EquivocationProof

from ..sanitize import clean
from ..wire import ABORT_KIND, PROOF_RULES, STOP_KIND, abort_evidence
from .context import TableContext
from .outcome import TableStopped

log = logging.getLogger("p2p.table")

SELF_EVIDENT = ("desync", "peer-stopped", "false-abort")
"""Stops every peer reaches by itself (a dispute's majority, another seat's notice, an
accusation each peer judges): no stop notice is sent for them, so that it can never
pre-empt another peer's own verdict."""

ABORT_WAIT = 5.0
"""Seconds an abort notice may wait for the envelope it names before it is judged."""


class Aborts:
    """Our own abort notice (sent once) and our verdicts on other peers' notices."""

    def __init__(self, ctx: TableContext, emit: Callable[[str, Any], None],
                 take: Callable[[bytes, int], None], sync_all: Callable[[], None],
                 audit: Callable[[list[bytes]], Violation | None]) -> None:
        """``take`` feeds an envelope a notice carries into our inbox, ``sync_all`` asks every
        peer for what we lack, ``audit`` audits a transcript (the whole game audit, so a
        notice is judged by exactly the rules ``silkroad audit`` applies)."""
        self.ctx = ctx
        self._emit = emit
        self._take = take
        self._sync_all = sync_all
        self._audit = audit
        self._sent = False
        self.tasks: list[asyncio.Task[None]] = []
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
        if self.busy or rule in SELF_EVIDENT:
            return
        try:
            self._emit(STOP_KIND, [rule[:64], detail[:1000]])
        except Exception:  # best effort: we are stopping anyway
            log.exception("seat %d could not send its stop notice", self.ctx.me)

    @property
    def busy(self) -> bool:
        """Whether an accusation is under way: we sent a notice or are judging one."""
        return self._sent or bool(self.tasks)

    def received(self, env: Envelope) -> None:
        """Another peer stopped, accusing someone: judge the claim ourselves."""
        if len(self.tasks) >= self.ctx.n:
            self.ctx.refuse(env.sender, "too many abort notices")
            return
        self.tasks.append(asyncio.get_running_loop().create_task(self._judge(env)))

    def _has(self, ref: list[Any] | None) -> bool:
        if ref is None:
            return True
        sender, seq, eid = ref
        chain = self.ctx.log.by_sender.get(sender, [])
        return 0 <= seq < len(chain) and chain[seq].id == eid

    async def _judge(self, env: Envelope) -> None:
        """Confirm (or refute) an abort notice from the evidence and the transcript so far.

        The envelope the notice carries goes through our own inbox first: if it is a
        violation our own checks stop the table on it, exactly as they would have had it
        reached us directly.  Otherwise we fetch what we lack of the named envelope's chain
        and audit the transcript as ``silkroad audit`` would: that names the accused
        cheater — or an earlier one — whenever the accuser was right; if it shows nothing,
        the accusation is false and the accuser is named.  Either way the table stops on a
        signed, checkable fact."""
        ctx = self.ctx
        accuser = env.sender
        culprit, rule, _detail, ref = env.body[:4]
        if rule in PROOF_RULES:
            self._judge_equivocation(accuser, culprit, rule, env.body[4])
            return
        for wire in abort_evidence(env.body):
            self._take(wire, accuser)
        deadline = time.monotonic() + ABORT_WAIT
        if not self._has(ref):
            self._sync_all()
        while not self._has(ref) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)  # the named envelope may still be on its way
        own = ctx.waiter.failure
        if own is not None:
            self.verdicts.append((accuser, own))  # our own checks already decided
            return
        wires = ctx.log.wires()
        v = await asyncio.to_thread(self._audit, wires)
        if v is not None and v.party is not None and v.rule != "false-abort":
            # the accuser's rule is its own words: cleaned before a screen or log (sanitize)
            verdict = TableStopped(v.party, v.rule,
                                   f"confirmed from the transcript after seat {accuser}'s abort "
                                   f"(accused seat {culprit} of {clean(rule, 64)}): {v}")
        else:
            verdict = TableStopped(accuser, "false-abort",
                                   f"seat {accuser} accused seat {culprit} of {rule!r} but the "
                                   "transcript so far shows no such violation")
        self._judged(accuser, verdict)

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
            who = EquivocationProof(proof[0], proof[1]).verify(ctx.keys, ctx.setup.game_id)
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

"""The lockstep table: one peer's engine and crypto session driven by signed envelopes.

Every peer runs this same loop.  The game's state decides what happens next (the table
asks the game, :class:`p2p.protocol.table_game.TableGame`, never the engine's modules):

* the table's own step (``resolves``) — every peer runs the same crypto op(s) in the same
  order (the game's resolution script, :mod:`p2p.protocol.resolution`, driven by
  :class:`p2p.table.resolver.NetResolver`) and turns the op results into the resolution;
* one seat acts — that seat's peer decides and broadcasts ``action [step, encoded action,
  state hash before]``; every peer takes the first envelope for that step *from the actor*
  (in the actor's chain order, so all peers pick the same one) that decodes and is legal;
  anything else is refused with a logged reason naming the sender and the state is
  unchanged.  Hidden claims (Sell) are opened before the action is applied;
* the Grand Vizier — one ``sealed`` op carries everybody's simultaneous choice.

The parts: :mod:`.inbox` (arriving envelopes), :mod:`.outbox` (our envelopes, write-ahead),
:mod:`.acks` (the state-hash chain and disputes), :mod:`.accuser` (what our checks catch,
accused only when the evidence holds), :mod:`.aborts` (others' accusations and stops),
:mod:`.deciders` (bots think in a worker thread),
:mod:`.resume` (snapshots), :mod:`.waiting` (the one sleeper), :mod:`p2p.protocol.wire`
(kinds and shapes).  This module ties them together: the main loop, decisions and crypto ops.

Why re-entrant steps: to resume after a crash a peer restores its last snapshot (taken
*before* any of its crypto output is sent, so the snapshot always explains what it sent),
then re-runs the current step from its start.  Ops are addressed by index: an op already in
the session's history is reused, one in progress is awaited, only new ones are started; an
action we already sent is taken from the transcript instead of being decided again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from crypto.errors import CheatDetected, MalformedInput, ProtocolStateError
from crypto.session import TokenSession
from crypto.transcript import Envelope, Signer, TranscriptLog

from .. import heap
from ..identity import Identity
from ..net.handshake import PROTOCOL_VERSION
from ..protocol.resolution import ActionRefused, OpCall, deal_mode
from ..protocol.table_game import Move, View
from ..protocol.wire import (
    ABORT_KIND,
    ACK_KIND,
    ACTION_KIND,
    CLOSE_KIND,
    CRYPTO_KIND,
    MAX_WATCHER_TAG,
    STOP_KIND,
    TALK_KIND,
    abort_body_ok,
    ack_body_ok,
    crypto_core,
    crypto_heads_problem,
    stop_body_ok,
    talk_problem,
)
from ..sanitize import clean
from ..store import GameStore, Secrets, StoreError
from .aborts import Aborts
from .accuser import Accuser
from .acks import AckBook
from .closes import Closes
from .context import TableContext
from .deciders import thinking_aside
from .inbox import Inbox
from .moves import Moves
from .outbox import Outbox
from .outcome import Refusal, TableResult, TableStopped
from .resolver import NetResolver
from .resume import StepStart, decode_snapshot, encode_snapshot
from .setup import Agent, HumanDecider, TableSetup, Transport
from .talk import TalkBook
from .verdicts import LiveJudge
from .waiting import Waiter

log = logging.getLogger("p2p.table")

RELAY_RESERVE = 100
"""Lines of the game's talk bound (per seat) a seat keeps for its own player: watchers'
lines it relays stop short of them."""

class LockstepTable:
    """One peer of a lockstep game.  ``await run()`` plays to the end."""

    def __init__(self, transport: Transport, setup: TableSetup, identity: Identity,
                 store: GameStore | None, agent: Agent | None = None,
                 human: HumanDecider | None = None, *, stall_timeout: float = 5.0,
                 abandon_timeout: float = 60.0, elgamal_x: int | None = None,
                 on_step: Callable[[LockstepTable, Move], None] | None = None) -> None:
        self.setup = setup
        self.me = setup.my_seat
        self.n = setup.players
        self.identity = identity
        self.store = store
        self.agent = agent
        self.human = human
        #: one awaitable decider for our seat: the person (or a paced bot), else the bot
        #: thinking in a worker thread (:mod:`.deciders`)
        self.decider = human if human is not None else (
            thinking_aside(agent) if agent is not None else None)
        self.on_step = on_step
        #: hears the path of ``game.silkroad`` the moment a finished game wrote it (the
        #: audit of it starts there, not when the caller's clean-up is over)
        self.on_export: Callable[[Path], None] | None = None
        self.keys = setup.public_keys()
        self.waiter = Waiter(self.me, stall_timeout, abandon_timeout,
                             on_stall=lambda: self._on_stall())
        self.ctx = TableContext(setup, self.keys, transport, store, self.waiter,
                                TranscriptLog(setup.game_id, self.keys))
        self.signer = Signer(setup.game_id, self.me,
                             Ed25519PrivateKey.from_private_bytes(identity.to_bytes()))
        self.session = TokenSession(setup.game_id, self.n, self.me, lam=setup.lam,
                                    secret_key=elgamal_x)
        self.game = game = setup.game
        self.config = setup.config()
        self.state = game.new_state(self.config)
        self.zones = game.new_zones(self.n)
        self.step = 0
        self.cursor = 0
        self.resolver = NetResolver(self, game,
                                    deal_mode(setup.shuffle_mode, PROTOCOL_VERSION))
        self.outbox = Outbox(self.ctx, self.signer, self._dispatch)
        self.inbox = Inbox(self.ctx, self._dispatch,
                           lambda eq: self.accuser.equivocation(eq),
                           lambda env, rule, detail: self.accuser.violation(env, rule, detail))
        self.acks = AckBook(self.ctx, self.state.hash(), lambda k, b: self.emit(k, b),
                            lambda: self.step, lambda: self.state.encode())
        judge = LiveJudge(setup, self.config)
        self.acks.judge = judge.dispute
        self.aborts = Aborts(self.ctx, lambda k, b: self.emit(k, b), self.inbox.accept,
                             self._sync_all, judge.accusation, self.acks.relay_unagreed)
        self.aborts.disputed = lambda: self.acks.disputed
        # an accusation's or a dispute's verdict ends the table: no wait times out meanwhile
        self.waiter.holding = lambda: self.aborts.judging() or self.acks.judging()
        self.accuser = Accuser(self.ctx, self.waiter, self.aborts, self.acks,
                               lambda: self.session, self._sync_all)
        self.closes = Closes(self.ctx, lambda k, b: self.emit(k, b), self.accuser.violation)
        self.moves = Moves(self.me, self.accuser)
        #: table talk (:mod:`.talk`); a screen sets ``talk.on_line``
        self.talk = TalkBook(self.n, self.me)
        self._hash_now = self.state.hash()
        self._start = StepStart(0, self._hash_now, self.zones.copy(), 0)
        #: every applied action (encoded): a snapshot rebuilds the engine state from them
        self._applied: list[bytes] = []
        self.resumed = False
        #: after a resume, the step count the stored record reaches: the steps from the
        #: snapshot up to it are re-run from stored envelopes before anything new happens
        self.recorded_steps = 0
        self._think = 0.0
        #: per applied step: (kind, seconds incl. the ack round but not our own decision
        #: time, crypto ops run, acting seat or -1)
        self.step_times: list[tuple[str, float, int, int]] = []
        #: monotonic time each step was applied here, and (our own moves) when we decided
        self.applied_at: list[float] = []
        self.decided_at: dict[int, float] = {}
        self.done = False

    # ================================================================ public
    @property
    def transport(self) -> Transport:
        """The mesh (a test or tool may wrap it before the game starts)."""
        return self.ctx.transport

    @transport.setter
    def transport(self, transport: Transport) -> None:
        self.ctx.transport = transport

    @property
    def log(self) -> TranscriptLog:
        """Every envelope of the game we hold, verified, in arrival order."""
        return self.ctx.log

    @property
    def refusals(self) -> list[Refusal]:
        return self.ctx.refusals

    @property
    def failure(self) -> TableStopped | None:
        """Why the table stopped, once it has."""
        return self.waiter.failure

    @property
    def abort_verdicts(self) -> list[tuple[int, TableStopped]]:
        """The abort notices this peer judged: ``(accuser, verdict)``."""
        return self.aborts.verdicts

    @property
    def x(self) -> int:
        x = self.session.ctx.x
        assert x is not None
        return x

    def hand(self) -> dict[int, int]:
        """Our private knowledge ``{handle: colour}`` of our own goods (from the ledger)."""
        return self.game.hand(self.zones, self.me,
                              [slot.label() for slot in self.session.ledger.hands[self.me]])

    def state_hash(self) -> bytes:
        return self.state.hash()

    def applied_actions(self) -> list[Move]:
        """Every move applied so far, in order: from the game's new state of
        :attr:`config` they rebuild the game up to here (a resumed UI retells it)."""
        return [self.game.decode(e) for e in self._applied]

    def legal(self, seat: int) -> list[Move]:
        return self.game.legal(self.state, seat, self.hand())

    def waiting_for(self) -> tuple[str, list[int]] | None:
        """What the table is waiting for now and which seats it awaits (for the UI)."""
        return self.waiter.waiting_for()

    def abandon(self, reason: str = "abandoned by the player") -> None:
        """Give up waiting (e.g. the UI's "abandon" after a stall): the table stops naming
        the awaited seats; the stored transcript still audits up to here."""
        w = self.waiting_for()
        seats = w[1] if w else []
        self.stop(seats[0] if seats else None, "abandoned",
                  f"{reason}; was waiting for {w[0] if w else 'nothing'} from seats {seats}")

    def stop(self, culprit: int | None, rule: str, detail: str) -> TableStopped:
        """Stop the table (the first reason wins) and return that reason, to raise."""
        return self.waiter.stop(culprit, rule, detail)

    def say(self, text: str) -> str | None:
        """Sign and send a line of table talk; returns why it was not sent, or None."""
        line = self.talk.prepare(text)
        if not line:
            return "nothing to say"
        if self.waiter.failure is not None or self.closes.mine_sent(self.me):
            return "the game is closed: talk is over"
        why = self.talk.may_sign() or self.talk.may_send()
        if why is None:
            self.emit(TALK_KIND, [line])
        return why

    def relay_talk(self, watcher: str, text: str) -> str | None:
        """Sign and send a line a watcher of our table said, marked as that watcher's
        (``[text, watcher]``); returns why it was not sent, or None.  The watcher's pace is
        the hub's to bound; :data:`RELAY_RESERVE` of the game's lines stay our player's."""
        line = self.talk.prepare(text)
        tag = clean(watcher, MAX_WATCHER_TAG)
        if not line or not tag:
            return "nothing to say"
        if self.waiter.failure is not None or self.closes.mine_sent(self.me):
            return "the game is closed: talk is over"
        why = self.talk.may_sign(RELAY_RESERVE)
        if why is None:
            self.emit(TALK_KIND, [line, tag])
        return why

    def refuse(self, sender: int | None, reason: str) -> None:
        self.ctx.refuse(sender, reason)

    def emit(self, kind: str, body: Any) -> None:
        """Sign, store, process locally and send one non-crypto envelope (write-ahead:
        :mod:`p2p.table.outbox`)."""
        self.outbox.emit(kind, body)

    async def run(self) -> TableResult:
        """Play (or resume) to the end; raises :class:`TableStopped` if the table stops.

        A table that stops once the game reached its end (the engine's state is over: only
        the secrets or the closing acknowledgements were missing) still writes
        ``game.silkroad``, and the :class:`TableStopped` it raises carries its path
        (``export``; ``stopped.json`` records it too).  Without it a seat that never signs
        its close would leave every other seat with a folder only: the file shows what
        each seat signed, and its audit says who acknowledged the end (naming no one)."""
        loop = asyncio.get_running_loop()
        # the game's objects stay out of the collector's walks while it runs (p2p.heap)
        frozen = contextlib.ExitStack()
        frozen.enter_context(heap.held())
        pump = loop.create_task(self.inbox.pump())
        flusher = loop.create_task(self.outbox.flusher())
        stopped: TableStopped | None = None
        try:
            if self.store is not None and self.store.load_transcript():
                self._restore()
            elif self.store is not None:
                self._save_secrets(None)
            await self._play()
            # an accusation that came in the last steps is judged before the game counts as
            # played (its verdict may stop the table)
            await self.aborts.settle()
            if self.waiter.failure is not None:
                raise self.waiter.failure
        except TableStopped as exc:
            self.aborts.tell_stop(exc.rule, exc.detail)
            # why the table stopped stays in the folder next to the transcript, so an
            # audit of the folder later says who was blamed and why (abandon, timeout, cheat)
            if self.store is not None:
                with contextlib.suppress(OSError):
                    self.store.write_stopped(exc.culprit, exc.rule, exc.detail, self.step,
                                             len(self.log.entries))
            stopped = exc  # raised once everything we signed has left (below)
        except Exception as exc:  # a local failure (disk, bug): the others learn it at once
            self.aborts.tell_stop("local-error", f"{type(exc).__name__}: {exc}")
            raise
        finally:
            # whatever we signed (our last ack, an abort notice) still leaves, durably
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.outbox.drain(), 5.0)
            verdict = self.acks.verdict_task
            extra = [verdict] if verdict is not None else []
            for task in (pump, flusher, *self.aborts.tasks, *extra):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            if self.store is not None:
                self.store.close()
            frozen.close()  # the game's objects may be collected again
        if stopped is not None:
            raise self._export_stopped(stopped)
        wires = self.log.wires()
        export = self._write_export(wires)
        if export is not None and self.on_export is not None:
            try:
                self.on_export(export)
            except Exception:  # a listener's bug must not lose the game's result
                log.exception("the export listener failed")
        return TableResult(self.state, self.state.hash(), self.game.scores(self.state),
                           self.game.winners(self.state), wires, export, list(self.refusals),
                           self.step,
                           list(self.step_times), list(self.applied_at), dict(self.decided_at))

    def _write_export(self, wires: list[bytes]) -> Path | None:
        """Write ``game.silkroad`` from ``wires`` (None without a game folder)."""
        if self.store is None:
            return None
        roster, params, _seat, _gid = self.store.load_meta()
        return self.store.write_export(roster, params, self.setup.game_id, self.setup.lam,
                                       wires, self.setup.board)

    def _export_stopped(self, stopped: TableStopped) -> TableStopped:
        """After a stop at the end of the game (the engine's state is over), write the
        export all the same and say where (``stopped.export``, ``stopped.json``); returns
        ``stopped``, to raise.  A stop before the end leaves the folder alone: its audit
        (``silkroad audit FOLDER``) covers the part played."""
        if self.store is None or self.game.actors(self.state):
            return stopped
        try:
            stopped.export = self._write_export(self.log.wires())
            self.store.write_stopped(stopped.culprit, stopped.rule, stopped.detail, self.step,
                                     len(self.log.entries), stopped.export)
        except (OSError, StoreError) as exc:  # the stop is the news; the folder still audits
            log.error("seat %d could not write the export of its stopped game: %s",
                      self.me, exc)
        return stopped

    # ================================================================ main loop
    async def _play(self) -> None:
        game = self.game
        while True:
            # _hash_now is the hash of the state after the last step
            self._start = StepStart(self.step, self._hash_now, self.zones.copy(), self.cursor)
            acts = game.actors(self.state)
            if not acts:
                break
            t0, c0 = time.perf_counter(), self.cursor
            self._think = 0.0
            resolves, simultaneous = game.resolves(self.state), game.simultaneous(self.state)
            if resolves or simultaneous:
                # diverged peers must never start different crypto ops (an op mismatch
                # would blame an honest peer): confirm every outstanding ack round first
                await self.acks.confirm(self.step)
            applied, encoded = False, None  # a seat's move: applied while checked, signed
            if resolves:
                kind = f"resolve:{game.step_kind(self.state)}"
                a = await self.resolver.resolve(self.state, self.zones)
                heap.settle()  # a crypto step leaves thousands of long-lived objects
            elif simultaneous:
                kind = "vizier"
                a = await self.resolver.reveal(self.state, self.zones, acts)
                heap.settle()
            else:
                kind = f"action:{game.step_kind(self.state)}"
                a, applied, encoded = await self._player_step(acts[0])
            if not applied:
                game.apply(self.state, a)
            self._applied.append(game.encode(a) if encoded is None else encoded)
            self.applied_at.append(time.monotonic())
            for env in self.moves.by_step.pop(self.step, []):
                raise await self.accuser.accuse(
                    self.step, env, "superseded-action",
                    f"seat {env.sender} signed a second action for step {self.step}")
            self.step += 1
            if self.cursor != c0:  # only crypto ops move goods between zones
                game.check_zones(self.state, self.zones,
                                 [[s.public for s in self.session.ledger.hands[p]]
                                  for p in range(self.n)])
            self._hash_now = self.state.hash()
            crypto_next = (not game.actors(self.state) or game.resolves(self.state)
                           or game.simultaneous(self.state))
            await self.acks.fold(self.step, self._hash_now, crypto_next)
            self.step_times.append((kind, time.perf_counter() - t0 - self._think,
                                    self.cursor - c0, acts[0]))
            if self.on_step is not None:
                self.on_step(self, a)
        # the secrets end the game for good: only after everybody agreed on the final state
        await self.acks.confirm(self.step)
        try:
            await self.op(lambda: self.session.reveal_secrets(), "secrets")
        except TableStopped as exc:
            if exc.rule != "timeout" or exc.culprit is None:
                raise
            # it acknowledged the end but keeps what would let anyone check its shuffles
            # and its "none available" claims: a withheld secret, named as such
            raise TableStopped(exc.culprit, "secrets-withheld",
                               f"seat {exc.culprit} acknowledged the end of the game but did "
                               f"not reveal its secrets ({exc.detail})") from exc
        await self.closes.close(self.step, self.acks.chain_at[self.step])
        self.done = True

    # ================================================================ decisions
    async def decide(self) -> Move:
        """Ask our bot or human for one of ``legal`` (think time is kept out of latencies)."""
        t0 = time.perf_counter()
        try:
            hand = self.hand()
            view = self.game.view(self.state, self.me, hand)
            return await self._decide(view, self.game.legal(self.state, self.me, hand))
        finally:
            self._think += time.perf_counter() - t0

    async def _decide(self, view: View, legal: list[Move]) -> Move:
        while True:
            if self.decider is None:
                raise TableStopped(self.me, "no-agent", "nobody decides for our seat")
            a = await self.decider(view, legal)
            if a in legal:
                return a
            log.warning("seat %d: decision %r is not legal; asking again", self.me, a)
            if self.human is None:
                raise TableStopped(self.me, "bot-illegal", f"bot chose {a!r}")

    async def _player_step(self, actor: int) -> tuple[Move, bool, bytes]:
        """Take the actor's move for this step: the move, whether checking it applied it
        already (a move without hidden claims is checked by applying it), and its bytes as
        the actor signed them (they decode to the move: not encoded again).  The first
        action envelope for the step decides: anything else signed for it — from another
        seat, illegal, or a second one — is its signer's violation (the offline audit judges
        the same way)."""
        step = self.step
        queue = self.moves.by_step.setdefault(step, [])
        if actor == self.me and step not in self.moves.mine:
            a = await self.decide()
            self.decided_at[step] = time.monotonic()
            self.emit(ACTION_KIND, [step, self.game.encode(a), self._hash_now])
        await self.waiter.wait(lambda: bool(queue), f"the action of seat {actor}",
                               lambda: [actor])
        env = queue.pop(0)
        if env.sender != actor:
            raise await self.accuser.accuse(
                step, env, "out-of-turn", f"seat {env.sender} signed an action for step "
                f"{step}, where seat {actor} is to act")
        if len(env.body) == 3 and env.body[2] != self._hash_now and step > 0:
            # the actor saw another state: we ack this round, so every peer does
            # (closure, p2p.protocol.ack_chain); acks that differ go to the judge (raises); if
            # they agree, the actor contradicts its own ack
            self.acks.send(step)
            await self.acks.confirm(step)
            raise self.stop(actor, "action-state-mismatch",
                            f"step {step}: the action's state hash differs from the one its "
                            "sender acknowledged")  # the audit's rule and words
        try:
            a, applied = self.game.check_move(self.state, env.body[1], in_place=True)
        except ActionRefused as exc:
            raise await self.accuser.accuse(
                step, env, "illegal-action",
                f"seat {actor} signed an illegal action for step {step}: {exc}") from exc
        await self.resolver.check(self.state, self.zones, actor, a)
        return a, applied, env.body[1]

    # ================================================================ crypto ops
    async def run_op(self, call: OpCall) -> dict[str, Any]:
        """Run the next op of the resolution script (:class:`p2p.table.resolver.OpRunner`).
        A sealed reveal carries our private choice if we decide in it (asked only when the
        op is new: a resumed peer's choice is already in its session)."""
        choice: list[int] = []
        if self.me in call.deciding and not self.op_started():
            choice = self.game.choice_positions(self.zones, self.me, await self.decide())
        op = await self.op(lambda: call.start(self.session, choice), call.name)
        result: dict[str, Any] = op.result
        return result

    async def op(self, start: Callable[[], list[Any]], what: str) -> Any:
        """Run (or re-find, when resuming) the next crypto op of this step."""
        idx = self.cursor
        self.cursor += 1
        ses = self.session
        if idx >= ses.next_index:
            if idx != ses.next_index:
                raise TableStopped(None, "internal", f"op cursor {idx} skips {ses.next_index}")
            try:
                out = start()
            except CheatDetected as exc:
                self.accuser.crypto_cheat(exc, None)
                await self.waiter.wait(lambda: False, "the verdict on a crypto check",
                                       lambda: [])
                raise self._crypto_failure(exc) from exc  # not reached: the wait raises
            except ProtocolStateError as exc:
                raise self._crypto_failure(exc) from exc
            self.outbox.emit_crypto(out, self._save_secrets)
        await self.waiter.wait(lambda: len(ses.history) > idx, f"crypto op {what} #{idx}",
                               ses.waiting_for)
        return ses.history[idx]

    async def agree(self) -> None:
        """Every seat acknowledges the state this step began in, before a claim's op
        (:meth:`p2p.table.resolver.NetResolver.check`); by closure each peer's ack brings
        the others'."""
        self.acks.send(self.step)
        await self.acks.confirm(self.step)

    def op_started(self) -> bool:
        """Whether the op the cursor points at has already been started (resume)."""
        return self.cursor < self.session.next_index

    def _crypto_failure(self, exc: Exception) -> TableStopped:
        f = self.session.failed
        if f is not None:
            return TableStopped(f.culprit, f.rule, f.detail)
        return TableStopped(None, "crypto", str(exc))

    # ================================================================ receiving
    def _on_stall(self) -> None:
        """A wait that lasts: fetch what we may lack, and acknowledge the round we stand
        in.  By closure every peer acknowledges it too, so if the table stalls because the
        peers' states parted ways (a seat showed different moves to different peers) the
        acks disagree and the dispute brings the two signed versions together, instead of
        everyone timing out on a seat that is waiting for something else."""
        self._sync_all()
        if self.step > 0 and self.step in self.acks.chain_at:
            self.acks.send(self.step)

    def _sync_all(self) -> None:
        """Ask every other peer for whatever we lack (gap sync while playing)."""
        for seat in range(self.n):
            if seat != self.me:
                self.inbox.request_sync(seat)

    def _dispatch(self, env: Envelope) -> bool:
        """Handle one verified envelope (ours or a peer's); True if it is an action for the
        current step (the main loop should run now).  Whatever a seat signs that the table
        cannot accept is that seat's violation: an honest peer never signs it."""
        kind, body = env.kind, env.body
        who = env.sender
        if kind == CRYPTO_KIND:
            if who == self.me:
                return False
            shape = crypto_heads_problem(body, self.n, who)
            if shape is not None:
                self.accuser.violation(env, "malformed-crypto", f"seat {who} {shape}")
                return False
            try:
                out = self.session.receive(who, crypto_core(body))
            except CheatDetected as exc:
                self.accuser.crypto_cheat(exc, env)
                return False
            except MalformedInput as exc:
                self.accuser.violation(env, "malformed", f"crypto message: {exc}")
                return False
            except ProtocolStateError as exc:
                self.refuse(who, f"crypto message refused: {exc}")
                return False
            self.outbox.emit_crypto(out, self._save_secrets)
        elif kind == ACTION_KIND:
            return self.moves.take(env, self.step, self.ctx.replaying)
        elif kind == ACK_KIND:
            if not ack_body_ok(body, self.n):
                self.accuser.violation(env, "malformed-ack",
                                       f"seat {who} signed a malformed ack")
            elif not self.acks.take(who, body[0], env):
                self.accuser.violation(env, "second-ack", f"seat {who} signed a second ack "
                                       f"for round {body[0]} or one far ahead")
        elif kind == CLOSE_KIND:
            if not ack_body_ok(body, self.n):
                self.accuser.violation(env, "malformed-close",
                                       f"seat {who} signed a malformed close")
            else:
                self.closes.received(env)
        elif kind == ABORT_KIND:
            if not abort_body_ok(body):
                self.accuser.violation(env, "malformed-abort",
                                       f"seat {who} signed a malformed abort notice")
            elif who != self.me and not self.ctx.replaying:
                self.aborts.received(env)
        elif kind == STOP_KIND:
            if not stop_body_ok(body):
                self.accuser.violation(env, "malformed-stop",
                                       f"seat {who} signed a malformed stop notice")
            elif who != self.me and not self.ctx.replaying:
                # honoured once our pending checks ran (a cheat already sent is named), and
                # never over an accusation's or a dispute's verdict (p2p.table.aborts)
                self.aborts.stop_received(env)
        elif kind == TALK_KIND:
            problem = talk_problem(body, self.talk.count[who])
            if problem is not None:
                self.accuser.violation(env, problem[0], f"seat {who} {problem[1]}")
            else:
                self.talk.heard(who, body[0], body[1] if len(body) > 1 else None)
        else:
            self.accuser.violation(env, "unknown-kind", f"seat {who} signed an envelope of "
                                   f"unknown kind {str(kind)[:32]!r}")
        return False

    # ================================================================ persistence
    def _save_secrets(self, outgoing: list[bytes] | None) -> None:
        """Write-ahead snapshot (:mod:`p2p.table.resume`) with our secrets, just before
        ``outgoing`` leaves; None at the start of a game (no snapshot yet)."""
        assert self.store is not None
        snap = None
        if outgoing is not None:
            snap = encode_snapshot(self.session, self._start, self._applied,
                                   len(self.log.entries),
                                   len(self.log.by_sender.get(self.me, [])), outgoing)
        self.store.save_secrets(Secrets(self.identity.to_bytes(), self.x, snap))

    def _restore(self) -> None:
        """Rebuild log, session and step from the folder (see the module docstring)."""
        store = self.store
        assert store is not None
        wires = store.load_transcript()
        secrets = store.load_secrets()
        log.info("seat %d resuming from %d stored envelopes", self.me, len(wires))
        self.resumed = self.inbox.resumed = True
        self.ctx.log = TranscriptLog(self.setup.game_id, self.keys)
        for w in wires:
            self.log.add(w)
        processed = 0
        if secrets.snapshot is not None:
            # keep op classes a test or tool installed
            r = decode_snapshot(secrets.snapshot, self.me, self.game, self.config,
                                self.setup.game_id, self.session.ops)
            self.session = r.session
            self._applied = r.applied
            self._start = r.start
            missing = r.own - len(self.log.by_sender.get(self.me, []))
            if missing > 0:
                for w in r.outgoing[-missing:]:
                    self.log.add(w)
                    store.append(w)
            processed = r.processed
            self.state, self.zones = r.state, r.start.zones.copy()
            self.step, self.cursor = r.start.step, r.start.cursor
            self.acks.restart_at(r.start.step, r.chain, processed)
            self._hash_now = self.state.hash()
        # our signing chain continues after our last stored envelope
        mine = self.log.by_sender.get(self.me, [])
        self.signer.seq = len(mine)
        if mine:
            self.signer.prev = mine[-1].id
        # rebuild the engine from the start if we have no snapshot (nothing crypto sent yet)
        self.ctx.replaying = True
        try:
            for i, env in enumerate(self.log.entries):
                if env.kind == CRYPTO_KIND and i < processed:
                    continue
                self._dispatch(env)
        finally:
            self.ctx.replaying = False
        self.recorded_steps = max([self.step] + [k + 1 for k in self.moves.by_step])
        # envelopes we stored but maybe never sent reach the others through their sync
        # requests (sent on every PeerUp), so nothing is re-broadcast here.

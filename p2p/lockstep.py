"""The lockstep table: one peer's engine + TokenSession driven by signed envelopes.

Every peer runs this same loop.  The engine state decides what happens next:

* ``actors == (RESOLVER,)`` — every peer starts the same crypto op(s) in the same order
  (:mod:`p2p.net_resolver`) and turns the op results into the engine resolution;
* one seat acts — that seat's peer decides and broadcasts ``action [step, encoded action]``;
  every peer takes the first envelope for that step *from the actor* (in the actor's chain
  order, so all peers pick the same one) that decodes and is legal on a copy of the state;
  anything else is refused with a logged reason naming the sender and the state is
  unchanged.  Hidden claims (Sell) are opened before the action is applied;
* the Grand Vizier — one ``sealed`` op carries everybody's simultaneous choice.

Every peer folds each step's state hash into a chain and signs an ``ack`` of the chain at
ack points (:mod:`p2p.ack_chain`: every few steps, before crypto steps, and whenever another
peer acked a round); a different chain value stops the table (desync), names the odd peer
by majority and dumps our canonical state.

Why re-entrant steps: to resume after a crash a peer restores its last snapshot (taken
*before* any of its crypto output is sent, so the snapshot always explains what it sent),
then re-runs the current step from its start.  Ops are addressed by index: an op already in
the session's history is reused, one in progress is awaited, only new ones are started; an
action we already sent is taken from the transcript instead of being decided again.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import msgpack
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from crypto.errors import CheatDetected, MalformedInput, ProtocolStateError
from crypto.session import TokenSession
from crypto.transcript import (
    ACK_KIND,
    CRYPTO_KIND,
    Envelope,
    Equivocation,
    EquivocationProof,
    Signer,
    TranscriptLog,
    ack_body,
    compare_acks,
    parse,
    signing_key,
)
from engine.actions import RESOLVER, Action, Sell, decode, encode
from engine.errors import DecodeError, IllegalAction
from engine.game import new_game, scores, winners
from engine.rules import actors, apply, is_simultaneous, legal_actions
from engine.state import Config, GameState
from engine.view import PlayerView

from .ack_chain import chain_next, chain_start, scheduled
from .envelope_header import peek_header
from .game import DEFAULT_BOARD, GameParams, game_config
from .identity import Identity
from .mesh import PeerDown, PeerUp, Received
from .net_resolver import NetResolver
from .store import GameStore, Secrets
from .zones import COLOUR_OF, ZoneMap

log = logging.getLogger("p2p.table")

ACTION_KIND = "action"
ABORT_KIND = "abort"
ENV_TAG = b"E"
SYNC_TAG = b"S"
MAX_EARLY = 4096
"""Envelopes held back because an earlier one of the same sender has not arrived yet."""
MAX_QUEUED_ACTIONS = 64
"""Action envelopes one sender may have pending for future steps."""
ACK_LAG = 8
"""Plain steps a peer may run ahead of the last round whose acks all arrived.  Acks are
checked as they arrive instead of blocking every step (a round trip saved per move); the
lag bounds how far a desynced peer can get before the table stops, and every crypto step
first waits for all outstanding acks, so diverged peers never start different ops.  With
an ack every :data:`p2p.ack_chain.ACK_EVERY` rounds, a round is confirmed by the time the
next scheduled one is sent, so in sync nobody ever waits here."""
MAX_ACK_AHEAD = 4096
"""Ack rounds further ahead of our step than this are refused (memory bound)."""
SNAPSHOT_VERSION = 1
"""Version of the resume snapshot in ``secrets.bin`` (see :meth:`Table._save_secrets`)."""
ABORT_WAIT = 5.0
"""Seconds an abort notice may wait for the envelope it names before it is judged."""
DISPUTE_WAIT = 1.0
"""Seconds a desync verdict waits for relayed envelopes to expose an equivocation (see
:meth:`Table._dispute`)."""


def action_body_ok(body: Any) -> bool:
    """Shape of an action body: ``[step, encoded action]`` or ``[step, encoded action,
    state hash before]`` (the live table and the offline audit use this same test)."""
    return (isinstance(body, list) and len(body) in (2, 3) and isinstance(body[0], int)
            and not isinstance(body[0], bool) and isinstance(body[1], bytes)
            and (len(body) == 2 or isinstance(body[2], bytes)))


def _release(fut: asyncio.Future[None]) -> None:
    """Timer callback of :meth:`Table.wait`: wake the sleeper unless it was woken already."""
    if not fut.done():
        fut.set_result(None)


PROOF_RULES = ("equivocation", "bad-chain")
"""Abort rules proved by two signed envelopes (:class:`EquivocationProof`)."""


def abort_body_ok(body: Any) -> bool:
    """Shape of an abort notice: ``[culprit|None, rule, detail, [sender, seq, id]|None]``,
    plus for :data:`PROOF_RULES` a fifth element, the proof ``[wire, wire]``."""
    if not (isinstance(body, list) and len(body) in (4, 5)):
        return False
    culprit, rule, detail, ref = body[:4]
    if len(body) == 5 and not (rule in PROOF_RULES and isinstance(body[4], list)
                               and len(body[4]) == 2
                               and all(isinstance(w, bytes) for w in body[4])):
        return False
    if not (culprit is None or (isinstance(culprit, int) and not isinstance(culprit, bool))):
        return False
    if not (isinstance(rule, str) and isinstance(detail, str) and len(rule) <= 64):
        return False
    return ref is None or (isinstance(ref, list) and len(ref) == 3
                           and all(isinstance(x, int) and not isinstance(x, bool)
                                   for x in ref[:2]) and isinstance(ref[2], bytes))


def _settle_heap() -> None:
    """Move everything allocated so far out of the cyclic garbage collector's reach.

    A crypto step leaves thousands of long-lived containers (decoded decks, proofs, log
    entries); with them tracked, each full collection scanned the whole heap — 50 ms pauses
    with six peers in one process, the worst plain-move latencies.  ``gc.freeze`` only
    stops *scanning* them: reference counting still frees them when they die, so only
    cyclic garbage that already exists is kept until :meth:`Table.run` ends, which calls
    ``gc.unfreeze()`` so that a process playing many games (tests, a long session) frees
    each one.  Called after each crypto step, i.e. a few dozen times per game."""
    gc.freeze()


class Transport(Protocol):
    """What the table needs from :class:`p2p.mesh.Mesh` (which satisfies it)."""

    def broadcast(self, body: bytes) -> None: ...

    def send(self, seat: int, body: bytes) -> None: ...

    async def next_event(self) -> Any: ...


class Agent(Protocol):
    def choose(self, view: PlayerView, legal: list[Action]) -> Action: ...


HumanDecider = Callable[[PlayerView, list[Action]], Awaitable[Action]]


class TableStopped(Exception):
    """The table cannot go on: a cheat, a desync or a peer that never answered.

    ``culprit`` is the seat to blame (None if unknown), ``rule`` a stable id.
    """

    def __init__(self, culprit: int | None, rule: str, detail: str) -> None:
        who = "unattributed" if culprit is None else f"seat {culprit}"
        super().__init__(f"{who}: {rule}: {detail}")
        self.culprit = culprit
        self.rule = rule
        self.detail = detail


@dataclass
class TableSetup:
    """Everything agreed at the table (from the lobby's GameSetup, or meta.json)."""

    game_id: bytes
    keys: list[bytes]
    my_seat: int
    shuffle_mode: str = "audit"
    lam: int = 40
    variant: str = "base"
    #: board spec (``"default"`` or board JSON) and the digest the table agreed on
    board: str = DEFAULT_BOARD
    board_digest: bytes = b""

    @property
    def players(self) -> int:
        return len(self.keys)

    def public_keys(self) -> list[Ed25519PublicKey]:
        return [signing_key(k, f"seat {i}'s key") for i, k in enumerate(self.keys)]

    def config(self) -> Config:
        """The agreed engine config (raises :class:`p2p.game.BoardMismatch` for a board
        whose digest is not the agreed one, or an unknown variant)."""
        params = GameParams(self.players, self.variant, self.board_digest, self.shuffle_mode)
        return game_config(params, self.board)


@dataclass
class Refusal:
    """An envelope the table refused (never fatal): who sent it and why."""

    sender: int | None
    reason: str


@dataclass
class TableResult:
    """The end of one peer's game."""

    state: GameState
    state_hash: bytes
    scores: list[int]
    winners: list[int]
    transcript: list[bytes]
    export: Path | None
    refusals: list[Refusal] = field(default_factory=list)
    steps: int = 0
    step_times: list[tuple[str, float, int, int]] = field(default_factory=list)
    #: ``time.monotonic()`` when each step was applied here (system-wide clock, so peers in
    #: different processes on one host compare), and when we decided each of our moves
    applied_at: list[float] = field(default_factory=list)
    decided_at: dict[int, float] = field(default_factory=dict)


@dataclass
class _StepStart:
    """What a resumed peer restarts the current step from.  The state itself is not
    copied at every step (a snapshot rebuilds it from the applied actions); its hash is
    kept to check that rebuild."""

    step: int
    state_hash: bytes
    zones: ZoneMap
    cursor: int


class Table:
    """One peer of a lockstep game.  ``await run()`` plays to the end."""

    def __init__(self, transport: Transport, setup: TableSetup, identity: Identity,
                 store: GameStore | None, agent: Agent | None = None,
                 human: HumanDecider | None = None, *, stall_timeout: float = 5.0,
                 abandon_timeout: float = 60.0, elgamal_x: int | None = None,
                 on_step: Callable[[Table, Action], None] | None = None) -> None:
        self.transport = transport
        self.setup = setup
        self.me = setup.my_seat
        self.n = setup.players
        self.identity = identity
        self.store = store
        self.agent = agent
        self.human = human
        self.stall_timeout = stall_timeout
        self.abandon_timeout = abandon_timeout
        self.on_step = on_step
        self.keys = setup.public_keys()
        self.log = TranscriptLog(setup.game_id, self.keys)
        self.signer = Signer(setup.game_id, self.me,
                             Ed25519PrivateKey.from_private_bytes(identity.to_bytes()))
        self.session = TokenSession(setup.game_id, self.n, self.me, lam=setup.lam,
                                    secret_key=elgamal_x)
        self.config = setup.config()
        self.state = new_game(self.config)
        self.zones = ZoneMap(self.n)
        self.step = 0
        self.cursor = 0
        self.resolver = NetResolver(self)
        self.refusals: list[Refusal] = []
        self.failure: TableStopped | None = None
        self._wake = asyncio.Event()
        self._waiter: asyncio.Future[None] | None = None
        self._new_action = False
        self._applied_in_place = False  # _player_step applied the action already
        self._early: dict[int, dict[int, tuple[bytes, int | None]]] = {}
        self._nearly = 0
        self._actions: dict[int, list[Envelope]] = {}
        self._my_actions: set[int] = set()
        self._acks: dict[int, dict[int, Envelope]] = {}
        self._start = _StepStart(0, self.state.hash(), self.zones.copy(), 0)
        #: every applied action (encoded): a snapshot rebuilds the engine state from them
        self._applied: list[bytes] = []
        self._replaying = False
        self.resumed = False
        self._think = 0.0
        self.waiting_on: tuple[str, Callable[[], list[int]]] | None = None
        #: per applied step: (kind, seconds incl. the ack round but not our own decision
        #: time, crypto ops run, acting seat or -1)
        self.step_times: list[tuple[str, float, int, int]] = []
        #: monotonic time each step was applied here, and (our own moves) when we decided
        self.applied_at: list[float] = []
        self.decided_at: dict[int, float] = {}
        self.done = False
        #: the chain value we acknowledged, per round whose acks are not all in yet
        self._my_hash: dict[int, bytes] = {}
        self._confirmed = 0  # acks of round r follow step r - 1; there is no round 0
        self._hash_now = self.state.hash()
        #: p2p.ack_chain values per round not yet confirmed (to answer others' acks)
        self._chain_at: dict[int, bytes] = {0: chain_start(setup.game_id, self._hash_now)}
        self._outbox: list[tuple[int, bytes]] = []
        self._out_wake = asyncio.Event()
        self._aborted = False
        self._abort_tasks: list[asyncio.Task[None]] = []
        self._verdict_task: asyncio.Task[None] | None = None  # a dispute's delayed verdict
        #: log position when we acked the last confirmed round (a dispute relays what came
        #: after it), per pending round, and whether a dispute is under way
        self._log_mark = 0
        self._ack_pos: dict[int, int] = {}
        self._disputed = False
        #: set by tests/tools: the abort claims this peer judged ``(accuser, verdict)``
        self.abort_verdicts: list[tuple[int, TableStopped]] = []

    # ================================================================ public
    @property
    def x(self) -> int:
        x = self.session.ctx.x
        assert x is not None
        return x

    def hand(self) -> dict[int, int]:
        """Our private knowledge ``{handle: colour}`` of our own goods (from the ledger)."""
        slots = self.session.ledger.hands[self.me]
        out: dict[int, int] = {}
        for h, slot in zip(self.zones.hands[self.me], slots, strict=False):
            lab = slot.label()
            if lab is not None:
                out[h] = COLOUR_OF[lab]
        return out

    def state_hash(self) -> bytes:
        return self.state.hash()

    async def run(self) -> TableResult:
        """Play (or resume) to the end; raises :class:`TableStopped` if the table stops."""
        loop = asyncio.get_running_loop()
        pump = loop.create_task(self._pump())
        flusher = loop.create_task(self._flusher())
        try:
            if self.store is not None and self.store.load_transcript():
                self._restore()
            elif self.store is not None:
                self._save_secrets(None)
            await self._play()
        except TableStopped as exc:
            # why the table stopped stays in the folder next to the transcript, so an
            # audit of the folder later says who was blamed and why (abandon, timeout, cheat)
            if self.store is not None:
                with contextlib.suppress(OSError):
                    self.store.write_stopped(exc.culprit, exc.rule, exc.detail, self.step,
                                             len(self.log.entries))
            raise
        finally:
            # whatever we signed (our last ack, an abort notice) still leaves, durably
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._drain_outbox(), 5.0)
            extra = [self._verdict_task] if self._verdict_task is not None else []
            for task in (pump, flusher, *self._abort_tasks, *extra):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            if self.store is not None:
                self.store.close()
            gc.unfreeze()  # the game's objects may be collected again (see _settle_heap)
        export = None
        wires = self.log.wires()
        if self.store is not None:
            roster_keys = self.setup.keys
            export = self.store.write_export(self._roster_for_export(roster_keys),
                                             self._params_for_export(), self.setup.game_id,
                                             self.setup.lam, wires, self.setup.board)
        return TableResult(self.state, self.state.hash(), scores(self.state),
                           winners(self.state), wires, export, list(self.refusals), self.step,
                           list(self.step_times), list(self.applied_at), dict(self.decided_at))

    # the export needs RosterEntry/GameParams; the meta file has them
    def _roster_for_export(self, keys: list[bytes]) -> list[Any]:
        assert self.store is not None
        roster, _params, _seat, _gid = self.store.load_meta()
        return roster

    def _params_for_export(self) -> Any:
        assert self.store is not None
        return self.store.load_meta()[1]

    # ================================================================ main loop
    async def _play(self) -> None:
        while True:
            self._begin_step()
            acts = actors(self.state)
            if not acts:
                break
            t0, c0 = time.perf_counter(), self.cursor
            self._think = 0.0
            if acts[0] == RESOLVER or is_simultaneous(self.state):
                # diverged peers must never start different crypto ops (an op mismatch
                # would blame an honest peer): confirm every outstanding ack round first
                await self._confirm_acks(self.step)
            if acts[0] == RESOLVER:
                kind = f"resolve:{self.state.phase.name}"
                a = await self.resolver.resolve()
                _settle_heap()
            elif is_simultaneous(self.state):
                kind = "vizier"
                a = await self.resolver.vizier(acts)
                _settle_heap()
            else:
                kind = f"action:{self.state.phase.name}"
                a = await self._player_step(acts[0])
            if not self._applied_in_place:
                apply(self.state, a)
            self._applied_in_place = False
            self._applied.append(encode(a))
            self.applied_at.append(time.monotonic())
            for env in self._actions.pop(self.step, []):
                why = "out-of-turn" if env.sender not in acts else "superseded"
                self.refuse(env.sender, f"{why} action for step {self.step} not used")
            self.step += 1
            if self.cursor != c0:  # only crypto ops move goods between zones
                self.zones.check(self.state, [[s.public for s in self.session.ledger.hands[p]]
                                              for p in range(self.n)])
            await self._ack_round(self.step)
            self.step_times.append((kind, time.perf_counter() - t0 - self._think,
                                    self.cursor - c0, acts[0]))
            if self.on_step is not None:
                self.on_step(self, a)
        # the secrets end the game for good: only after everybody agreed on the final state
        await self._confirm_acks(self.step)
        await self.op(lambda: self.session.reveal_secrets(), "secrets")
        self.done = True

    def _begin_step(self) -> None:
        # _hash_now is the hash of the state after the last step (set by _ack_round)
        self._start = _StepStart(self.step, self._hash_now, self.zones.copy(), self.cursor)

    # ================================================================ decisions
    async def decide(self) -> Action:
        """Ask our bot or human for one of ``legal`` (think time is kept out of latencies)."""
        t0 = time.perf_counter()
        try:
            view = PlayerView(self.state, self.me, self.hand())
            return await self._decide(view, self.legal(self.me))
        finally:
            self._think += time.perf_counter() - t0

    async def _decide(self, view: PlayerView, legal: list[Action]) -> Action:
        while True:
            if self.human is not None:
                a = await self.human(view, legal)
            elif self.agent is not None:
                a = self.agent.choose(view, legal)
            else:
                raise TableStopped(self.me, "no-agent", "nobody decides for our seat")
            if a in legal:
                return a
            log.warning("seat %d: decision %r is not legal; asking again", self.me, a)
            if self.human is None:
                raise TableStopped(self.me, "bot-illegal", f"bot chose {a!r}")

    def legal(self, seat: int) -> list[Action]:
        return legal_actions(self.state, seat, self.hand())

    async def _player_step(self, actor: int) -> Action:
        step = self.step
        queue = self._actions.setdefault(step, [])
        refused_own = 0
        while True:
            if actor == self.me and step not in self._my_actions:
                a = await self.decide()
                self.decided_at[step] = time.monotonic()
                self.emit(ACTION_KIND, [step, encode(a), self._hash_now])
            await self.wait(lambda: bool(queue), f"the action of seat {actor}", lambda: [actor])
            env = queue.pop(0)
            if env.sender != actor:
                self.refuse(env.sender, f"out-of-turn action for step {step} "
                                        f"(seat {actor} is to act)")
                continue
            if len(env.body) == 3 and env.body[2] != self._hash_now and step > 0:
                # the actor saw another state: we ack this round, so every peer does
                # (closure, p2p.ack_chain) and the comparison names the odd peer by majority
                # (raises); if it does not, the actor contradicts its own ack
                self._send_ack(step)
                await self._confirm_acks(step)
                raise self.stop(actor, "desync", f"step {step}: the action's state hash differs "
                                           "from the one its sender acknowledged")
            try:
                a = decode(env.body[1])
                if isinstance(a, Sell):
                    apply(self.state.copy(), a)  # its claims are opened before it applies
                else:
                    # the engine leaves the state untouched when it refuses an action
                    apply(self.state, a)
                    self._applied_in_place = True
            except (DecodeError, IllegalAction) as exc:
                self.refuse(env.sender, f"illegal action at step {step}: {exc}")
                if env.sender == self.me:
                    refused_own += 1
                    if self.human is None and refused_own > 3:
                        # a bot would choose the same again: never spin on it
                        raise TableStopped(self.me, "bot-illegal",
                                           f"our moves at step {step} were refused: "
                                           f"{exc}") from exc
                    self._my_actions.discard(step)  # ours was refused too: decide again
                    await asyncio.sleep(0)  # never hold the event loop while retrying
                continue
            break
        await self.resolver.check_claims(actor, a)
        return a

    # ================================================================ crypto ops
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
                self._abort(exc, None)
                raise self._crypto_failure(exc) from exc
            except ProtocolStateError as exc:
                raise self._crypto_failure(exc) from exc
            self.emit_crypto(out)
        await self.wait(lambda: len(ses.history) > idx, f"crypto op {what} #{idx}",
                        ses.waiting_for)
        return ses.history[idx]

    def op_started(self) -> bool:
        """Whether the op the cursor points at has already been started (resume)."""
        return self.cursor < self.session.next_index

    def _crypto_failure(self, exc: Exception) -> TableStopped:
        f = self.session.failed
        if f is not None:
            return TableStopped(f.culprit, f.rule, f.detail)
        return TableStopped(None, "crypto", str(exc))

    # ================================================================ acks
    async def _ack_round(self, rnd: int) -> None:
        """Fold the state after step ``rnd - 1`` into the ack chain and acknowledge it if
        this round is an ack point (:mod:`p2p.ack_chain`), without waiting for the others'
        acks (checked as they arrive, see :data:`ACK_LAG`)."""
        self._hash_now = self.state.hash()
        self._chain_at[rnd] = chain_next(self._chain_at[rnd - 1], self._hash_now)
        acts = actors(self.state)
        crypto_next = not acts or acts[0] == RESOLVER or is_simultaneous(self.state)
        if scheduled(rnd, crypto_next) or rnd in self._acks:
            self._send_ack(rnd)
        for old in [r for r in self._chain_at if r < min(self._confirmed, rnd - 1)]:
            del self._chain_at[old]
        self._check_acks()
        if rnd - ACK_LAG > self._confirmed:
            await self._confirm_acks(rnd - ACK_LAG)

    def _send_ack(self, rnd: int) -> None:
        """Acknowledge round ``rnd`` (once; on resume our earlier ack may be in the log)."""
        if rnd in self._my_hash or rnd <= self._confirmed:
            return
        self._my_hash[rnd] = self._chain_at[rnd]
        self._ack_pos[rnd] = len(self.log.entries)
        if self.me not in self._acks.setdefault(rnd, {}):
            self.emit(ACK_KIND, ack_body(rnd, self._chain_at[rnd], self.log))

    async def _confirm_acks(self, upto: int) -> None:
        """Wait until every ack round ``<= upto`` that we acknowledged is complete and
        consistent (raises :class:`TableStopped` on a desync or a silent seat).  Rounds are
        confirmed by :meth:`_check_acks` as acks arrive; a disputed round never is, and the
        wait ends with the dispute's verdict."""
        self._check_acks()
        for rnd in sorted(r for r in self._my_hash if self._confirmed < r <= upto):

            def ready(r: int = rnd) -> bool:
                return r <= self._confirmed

            def missing(r: int = rnd) -> list[int]:
                got = self._acks.get(r, {})
                return [] if r <= self._confirmed else [p for p in range(self.n) if p not in got]

            await self.wait(ready, f"acks of step {rnd}", missing)
            self._check_acks()

    def _check_acks(self) -> None:
        """Compare every complete ack round in order; stop the table on a difference."""
        while self._my_hash:
            rnd = min(self._my_hash)
            acks = self._acks.get(rnd)
            if acks is None or len(acks) < self.n:
                return
            bad = compare_acks([acks[p] for p in range(self.n)])
            mine = self._my_hash[rnd]
            disagree = sorted({p for p in range(self.n) if acks[p].body[1] != mine})
            if bad or disagree:
                self._dispute(rnd, acks, [s for s, _ in bad] or disagree, bad)
                return
            self._confirmed = max(self._confirmed, rnd)
            # our ack of rnd covered the log up to here: what came later is not agreed yet
            self._log_mark = self._ack_pos.pop(rnd, self._log_mark)
            del self._acks[rnd]
            del self._my_hash[rnd]

    def _dispute(self, rnd: int, acks: dict[int, Envelope], culprits: list[int],
                 bad: list[tuple[int, str]]) -> None:
        """Acks of round ``rnd`` disagree: expose any equivocation before blaming anybody.

        A disagreement is either a peer that drifted (or lies in its ack), or a sender that
        showed different envelopes to different peers — and then the *majority* points at
        an honest peer that received the odd version.  So every peer first relays to all
        the envelopes it took in since the last confirmed round: a second, different,
        validly signed envelope for one slot is an equivocation proof (the abort notice
        carries it, and every peer names the equivocator).  Only if none turns up within
        :data:`DISPUTE_WAIT` does the majority verdict stand."""
        if self._disputed:
            return
        self._disputed = True
        self._dump_desync(rnd, acks)
        for env in self.log.entries[self._log_mark:]:
            if env.sender != self.me:
                self.transport.broadcast(ENV_TAG + env.wire)
        verdict = (culprits[0], f"step {rnd}: acks differ; disagreeing seats {culprits} "
                                f"({bad})")
        log.error("seat %d: %s; relaying what we received before blaming", self.me,
                  verdict[1])

        async def blame_later() -> None:
            await asyncio.sleep(DISPUTE_WAIT)
            self.stop(verdict[0], "desync", verdict[1])

        self._verdict_task = asyncio.get_running_loop().create_task(blame_later())

    def _dump_desync(self, rnd: int, acks: dict[int, Envelope]) -> None:
        if self.store is None:
            return
        path = self.store.folder / f"desync-step{rnd}-seat{self.me}.msgpack"
        path.write_bytes(msgpack.packb([rnd, self.me, self.state.encode(),
                                        [[p, acks[p].body[1]] for p in sorted(acks)]],
                                       use_bin_type=True))
        log.error("desync at step %d; our state dumped to %s", rnd, path)

    # ================================================================ waiting
    def _notify(self) -> None:
        """Wake the main loop if it waits (cheap: no task per wake, see :meth:`wait`)."""
        self._wake.set()
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    async def wait(self, ready: Callable[[], bool], what: str,
                   who: Callable[[], list[int]]) -> None:
        """Wait until ``ready()``; name the awaited seats when stalled; abandon when told.

        One plain future per sleep (woken by :meth:`_notify`, bounded by a timer handle)
        instead of ``wait_for(event.wait())``, which creates a task per wake-up: on a
        plain move that overhead was a measurable share of the latency."""
        loop = asyncio.get_running_loop()
        start = time.monotonic()
        warned = False
        self.waiting_on = (what, who)
        while not ready():
            if self.failure is not None:
                raise self.failure
            self._wake.clear()
            waited = time.monotonic() - start
            if waited >= self.abandon_timeout:
                missing = who()
                raise TableStopped(missing[0] if missing else None, "timeout",
                                   f"waited {waited:.1f} s for {what}; seats {missing} "
                                   "never answered")
            limit = self.stall_timeout if not warned else self.abandon_timeout
            fut: asyncio.Future[None] = loop.create_future()
            self._waiter = fut
            timer = loop.call_later(max(0.01, min(limit - waited, 1.0)), _release, fut)
            try:
                await fut
            finally:
                timer.cancel()
                self._waiter = None
            if not warned and time.monotonic() - start >= self.stall_timeout and not ready():
                warned = True
                log.warning("seat %d waiting for %s: seats %s have not answered",
                            self.me, what, who())
        self.waiting_on = None
        if self.failure is not None:
            raise self.failure

    def waiting_for(self) -> tuple[str, list[int]] | None:
        """What the table is waiting for now and which seats it awaits (for the UI)."""
        if self.waiting_on is None:
            return None
        what, who = self.waiting_on
        return what, who()

    def abandon(self, reason: str = "abandoned by the player") -> None:
        """Give up waiting (e.g. the UI's "abandon" after a stall): the table stops naming
        the awaited seats; the stored transcript still audits up to here."""
        w = self.waiting_for()
        seats = w[1] if w else []
        self.stop(seats[0] if seats else None, "abandoned",
                  f"{reason}; was waiting for {w[0] if w else 'nothing'} from seats {seats}")

    # ================================================================ sending
    def _sign(self, kind: str, body: Any) -> Envelope:
        """Sign and append our own envelope to the log.  We just made the signature and
        chain it to our own last envelope, so re-verifying it (``TranscriptLog.add``,
        ~0.2 ms of Ed25519) is skipped; the body is still decoded from the wire exactly as
        the peers will decode it."""
        wire = self.signer.sign(kind, body)
        outer = msgpack.unpackb(wire, raw=False, use_list=True, strict_map_key=True)
        _v, gid, sender, seq, prev, kind_w, body_w = msgpack.unpackb(
            outer[0], raw=False, use_list=True, strict_map_key=True)
        chain = self.log.by_sender.setdefault(sender, [])
        if sender != self.me or seq != len(chain) or prev != (chain[-1].id if chain
                                                               else bytes(32)):
            return self.log.add(wire, via=self.me)  # not our plain next envelope: full check
        env = Envelope(gid, sender, seq, prev, kind_w, body_w, wire)
        chain.append(env)
        self.log.entries.append(env)
        return env

    def emit(self, kind: str, body: Any) -> None:
        """Sign, store, process locally and send one non-crypto envelope.

        Nothing leaves before it is on disk (with every received envelope before it, group
        commit), so a restarted peer can never sign a different envelope with the same
        sequence number.  Moves and acks are fsynced right here (see :meth:`_send_own`);
        anything else goes through the background flusher.
        """
        env = self._sign(kind, body)
        self._dispatch(env)
        self._send_own([env.wire], urgent=kind in (ACTION_KIND, ACK_KIND))

    def emit_crypto(self, bodies: list[Any]) -> None:
        """Sign our crypto output; snapshot *before* anything leaves (write-ahead)."""
        if not bodies:
            return
        envs = [self._sign(CRYPTO_KIND, b) for b in bodies]
        if self.store is not None:
            self.store.sync()  # everything the snapshot counts as processed is on disk
            self._save_secrets([e.wire for e in envs])
        self._send_own([e.wire for e in envs])

    def _send_own(self, wires: list[bytes], urgent: bool = False) -> None:
        """Queue our envelopes for the flusher; ``urgent`` (a move every peer waits for, or
        an ack, one every few moves) fsyncs here and sends the whole outbox at once instead —
        an fsync costs ~0.3 ms, while the flusher's two hops through a worker thread cost
        several ms on the critical path of a move and, for acks, more CPU (thread hand-offs
        under the GIL) than the fsync itself: ~10 % less CPU per move measured with six
        peers.  Either way nothing leaves before it is on disk."""
        store = self.store
        if store is None:
            for w in wires:
                self.transport.broadcast(ENV_TAG + w)
            return
        for w in wires:
            self._outbox.append((store.append(w, durable=False), w))
        if urgent:
            store.sync()
            while self._outbox and self._outbox[0][0] <= store.synced:
                self.transport.broadcast(ENV_TAG + self._outbox.pop(0)[1])
            if not self._outbox:
                return
        self._out_wake.set()

    async def _flusher(self) -> None:
        """Send our envelopes in order, each only once it is on disk (see :meth:`emit`)."""
        store = self.store
        while True:
            await self._out_wake.wait()
            self._out_wake.clear()
            while self._outbox:
                if store is not None and self._outbox[-1][0] > store.synced:
                    await asyncio.to_thread(store.sync)
                while self._outbox and (store is None or self._outbox[0][0] <= store.synced):
                    self.transport.broadcast(ENV_TAG + self._outbox.pop(0)[1])

    async def _drain_outbox(self) -> None:
        while self._outbox:
            self._out_wake.set()
            await asyncio.sleep(0.005)

    def refuse(self, sender: int | None, reason: str) -> None:
        self.refusals.append(Refusal(sender, reason))
        log.warning("seat %d refused a message from seat %s: %s", self.me, sender, reason)

    def stop(self, culprit: int | None, rule: str, detail: str) -> TableStopped:
        """Stop the table (the first reason wins) and return that reason, to raise."""
        if self.failure is None:
            self.failure = TableStopped(culprit, rule, detail)
            log.error("seat %d stops the table: %s", self.me, self.failure)
        self._notify()
        return self.failure

    # ================================================================ identifiable abort
    def _abort(self, exc: CheatDetected, env: Envelope | None,
               proof: list[bytes] | None = None) -> None:
        """We caught a cheat (possibly one only we check, docs/security.md "Deferred
        checks"): tell everyone in a signed ``abort`` notice naming the culprit, the rule and
        the envelope, so they confirm it from the public transcript instead of waiting on
        us and blaming our silence.  Sent once; never while replaying our own past."""
        if self._aborted or self._replaying or self.failure is not None:
            return
        self._aborted = True
        ref = None if env is None else [env.sender, env.seq, env.id]
        body: list[Any] = [exc.culprit, str(exc.rule)[:64], str(exc.detail)[:400], ref]
        if proof is not None:
            body.append(proof)
        try:
            self.emit(ABORT_KIND, body)
        except Exception:  # the notice is best effort; our own stop still happens
            log.exception("seat %d could not send its abort notice", self.me)

    def _on_abort(self, env: Envelope) -> None:
        """Another peer stopped, accusing someone: judge the claim ourselves."""
        if len(self._abort_tasks) >= self.n:
            self.refuse(env.sender, "too many abort notices")
            return
        task = asyncio.get_running_loop().create_task(self._judge_abort(env))
        self._abort_tasks.append(task)

    def _has(self, ref: list[Any] | None) -> bool:
        if ref is None:
            return True
        sender, seq, eid = ref
        chain = self.log.by_sender.get(sender, [])
        return 0 <= seq < len(chain) and chain[seq].id == eid

    async def _judge_abort(self, env: Envelope) -> None:
        """Confirm (or refute) an abort notice by auditing the public transcript so far.

        The observer audit re-runs *every* public check (all shares, all blinding proofs,
        all decks), so it names the accused cheater — or an earlier one — whenever the
        accuser's own check was right.  If the transcript is clean the accusation is false
        and the accuser is named: either way the table stops on a signed, checkable fact.
        """
        from crypto.audit import audit

        accuser = env.sender
        culprit, rule, _detail, ref = env.body[:4]
        if len(env.body) == 5:
            self._judge_equivocation(accuser, culprit, rule, env.body[4])
            return
        deadline = time.monotonic() + ABORT_WAIT
        while not self._has(ref) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)  # the named envelope may still be on its way
        wires = self.log.wires()
        report = await asyncio.to_thread(audit, wires, self.keys, self.setup.game_id,
                                         self.setup.lam)
        v = report.violation
        if v is not None and v.rule != "missing-message" and v.party is not None:
            verdict = TableStopped(v.party, v.rule,
                                   f"confirmed from the transcript after seat {accuser}'s abort "
                                   f"(accused seat {culprit} of {rule}): {v}")
        else:
            verdict = TableStopped(accuser, "false-abort",
                                   f"seat {accuser} accused seat {culprit} of {rule!r} but the "
                                   f"transcript so far shows no such violation ({report})")
        self._judged(accuser, verdict)

    def _judged(self, accuser: int, verdict: TableStopped) -> None:
        """Record our verdict on ``accuser``'s abort notice and stop on it."""
        self.abort_verdicts.append((accuser, verdict))
        self.stop(verdict.culprit, verdict.rule, verdict.detail)

    def _judge_equivocation(self, accuser: int, culprit: Any, rule: str,
                            proof: list[bytes]) -> None:
        """An equivocation (or fork, rule ``bad-chain``) is proved by its two signed
        envelopes alone: check the proof (:meth:`EquivocationProof.verify`)."""
        who: int | None = None
        why = ""
        try:
            who = EquivocationProof(proof[0], proof[1]).verify(self.keys, self.setup.game_id)
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

    # ================================================================ receiving
    async def _pump(self) -> None:
        """Feed mesh events to the table, a batch at a time.

        Latency: the move every peer waits for must not queue behind the acks that
        arrived before it (each costs a signature check).  So in a batch, the envelopes of
        a sender up to its action envelope go first (its chain order is kept; other
        senders' envelopes are independent), and right after an action is taken in we
        yield once so the main loop applies it before the rest of the batch is checked.
        """
        batch_of = getattr(self.transport, "next_events", None)
        while True:
            if batch_of is not None:
                events = self._prioritise(await batch_of())
            else:
                events = [await self.transport.next_event()]
            for event in events:
                try:
                    if isinstance(event, Received):
                        self.on_bytes(event.seat, event.body)
                    elif isinstance(event, PeerUp) and (event.restarted or self.resumed):
                        # the mesh is reliable within one incarnation; only a restart loses
                        # messages, and then both sides ask for what they lack
                        self._request_sync(event.seat)
                    elif isinstance(event, PeerDown):
                        log.info("seat %d: %s is down (%s)", self.me, event.label, event.reason)
                except Exception as exc:  # bad input must never kill the pump
                    log.exception("seat %d: error handling a message", self.me)
                    self.refuse(getattr(event, "seat", None), f"internal error: {exc!r}")
                if self._new_action:
                    self._new_action = False
                    self._notify()
                    await asyncio.sleep(0)  # let the main loop apply it now
            self._notify()

    def _prioritise(self, events: list[Any]) -> list[Any]:
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

    def _request_sync(self, seat: int) -> None:
        counts = [len(self.log.by_sender.get(p, [])) for p in range(self.n)]
        self.transport.send(seat, SYNC_TAG + msgpack.packb(counts))

    def on_bytes(self, via: int, body: bytes) -> None:
        """Handle one mesh message from ``via`` (never raises for bad input)."""
        if body[:1] == ENV_TAG:
            self.accept(body[1:], via)
        elif body[:1] == SYNC_TAG:
            try:
                counts = msgpack.unpackb(body[1:])
                if not (isinstance(counts, list) and len(counts) == self.n
                        and all(isinstance(c, int) and c >= 0 for c in counts)):
                    raise ValueError("bad counts")
            except Exception as exc:
                self.refuse(via, f"malformed sync request: {exc}")
                return
            for env in self.log.entries:
                if env.seq >= counts[env.sender]:
                    self.transport.send(via, ENV_TAG + env.wire)
        else:
            self.refuse(via, "unknown message tag")

    def accept(self, wire: bytes, via: int | None) -> None:
        """Verify one envelope into the log (or hold it until its predecessor arrives)."""
        try:
            sender, seq, _kind = peek_header(wire)
            if not 0 <= sender < self.n:
                raise ValueError("unknown sender")
        except Exception as exc:
            self.refuse(via, f"malformed envelope: {exc!s:.80}")
            return
        chain = self.log.by_sender.get(sender, [])
        if seq < len(chain) and chain[seq].wire == wire:
            if not self._replaying:
                log.debug("seat %d: duplicate envelope %d/%d ignored", self.me, sender, seq)
            self.refusals.append(Refusal(via, f"replayed envelope {sender}/{seq}"))
            return
        if seq > len(chain):
            # hold it for its predecessor, but only if it is genuinely signed: unverified
            # bytes must not occupy memory
            held = self._early.setdefault(sender, {})
            if seq in held and held[seq][0] == wire:
                self.refusals.append(Refusal(via, f"replayed envelope {sender}/{seq}"))
                return
            if self._nearly >= MAX_EARLY or seq > len(chain) + MAX_EARLY:
                self.refuse(via, f"envelope {sender}/{seq} too far ahead; dropped")
                return
            try:
                parse(wire, self.keys, self.setup.game_id, via)
            except CheatDetected as exc:
                self.refuse(exc.culprit, f"{exc.rule}: {exc.detail}")
                return
            if seq in held:  # two validly signed envelopes for one slot, both early
                proof = EquivocationProof(held[seq][0], wire)
                eq = Equivocation(sender, proof, f"two different envelopes with seq {seq}")
                self._abort(eq, None, proof=proof.encode())
                self.stop(sender, eq.rule, eq.detail)
                return
            held[seq] = (wire, via)
            self._nearly += 1
            return
        try:
            env = self.log.add(wire, via=via)
        except CheatDetected as exc:
            if isinstance(exc, Equivocation):
                # only we saw both envelopes: the others get the transferable proof
                self._abort(exc, None, proof=exc.proof.encode())
                self.stop(exc.culprit, exc.rule, exc.detail)
            else:
                self.refuse(exc.culprit, f"{exc.rule}: {exc.detail}")
            return
        if self.store is not None:
            self.store.append(wire, durable=False)
        self._dispatch(env)
        early = self._early.get(sender)
        if early:
            nxt = early.pop(seq + 1, None)
            if nxt is not None:
                self._nearly -= 1
                self.accept(*nxt)

    def _dispatch(self, env: Envelope) -> None:
        kind, body = env.kind, env.body
        if kind == CRYPTO_KIND:
            if env.sender == self.me:
                return
            try:
                out = self.session.receive(env.sender, body)
            except CheatDetected as exc:
                self._abort(exc, env)
                self.stop(exc.culprit, exc.rule, exc.detail)
                return
            except (MalformedInput, ProtocolStateError) as exc:
                self.refuse(env.sender, f"crypto message refused: {exc}")
                return
            self.emit_crypto(out)
        elif kind == ACTION_KIND:
            if not action_body_ok(body):
                self.refuse(env.sender, "malformed action envelope")
                return
            step = body[0]
            if step < self.step:
                if not self._replaying:
                    self.refuse(env.sender, f"action for past step {step}")
                return
            queue = self._actions.setdefault(step, [])
            pending = sum(1 for q in self._actions.values() for e in q if e.sender == env.sender)
            if pending >= MAX_QUEUED_ACTIONS:
                self.refuse(env.sender, "too many queued actions")
                return
            queue.append(env)
            if step == self.step:
                self._new_action = True
            if env.sender == self.me:
                self._my_actions.add(step)
        elif kind == ACK_KIND:
            if not (isinstance(body, list) and len(body) == 3 and isinstance(body[0], int)
                    and isinstance(body[1], bytes) and isinstance(body[2], list)
                    and all(self._head_ok(h) for h in body[2])):
                self.refuse(env.sender, "malformed ack")
                return
            self._take_ack(env.sender, body[0], env)
        elif kind == ABORT_KIND:
            if not abort_body_ok(body):
                self.refuse(env.sender, "malformed abort notice")
            elif env.sender != self.me and not self._replaying:
                self._on_abort(env)
        else:
            self.refuse(env.sender, f"unknown envelope kind {kind[:32]!r}")

    def _head_ok(self, head: Any) -> bool:
        """One ``[sender, seq, envelope id]`` entry of an ack's heads."""
        return (isinstance(head, list) and len(head) == 3
                and all(isinstance(x, int) and not isinstance(x, bool) for x in head[:2])
                and 0 <= head[0] < self.n and head[1] >= 0
                and isinstance(head[2], bytes) and len(head[2]) == 32)

    def _take_ack(self, sender: int, rnd: Any, ack: Envelope) -> None:
        """Record ``sender``'s ack of round ``rnd`` and compare complete rounds."""
        if isinstance(rnd, bool) or rnd <= self._confirmed:
            return  # a round we already closed (resume replay)
        if rnd > self.step + MAX_ACK_AHEAD:
            self.refuse(sender, f"ack for step {rnd} too far ahead")
            return
        acks = self._acks.setdefault(rnd, {})
        if sender in acks:
            self.refuse(sender, f"second ack for step {rnd}")
            return
        acks[sender] = ack
        if not self._replaying:
            if rnd <= self.step and rnd in self._chain_at:
                self._send_ack(rnd)  # closure: a round anybody acks, everybody acks
            self._check_acks()

    # ================================================================ persistence
    def _save_secrets(self, outgoing: list[bytes] | None) -> None:
        """Write-ahead snapshot (versioned msgpack, no pickle): the session
        (:meth:`TokenSession.snapshot`), where the current step started — as the engine
        actions applied before it (the engine is deterministic, so replaying them rebuilds
        the state; its hash is kept to check) and the zone map — and what we are sending."""
        assert self.store is not None
        snap = None
        if outgoing is not None:
            st = self._start
            snap = msgpack.packb({
                "v": SNAPSHOT_VERSION,
                "session": self.session.snapshot(),
                "step": st.step,
                "cursor": st.cursor,
                "actions": self._applied[:st.step],
                "hash": st.state_hash,
                "zones": [st.zones.bag, st.zones.hands],
                "processed": len(self.log.entries),
                "own": len(self.log.by_sender.get(self.me, [])),
                "outgoing": outgoing,
            }, use_bin_type=True)
        self.store.save_secrets(Secrets(self.identity.to_bytes(), self.x, snap))

    def _load_snapshot(self, data: bytes) -> tuple[dict[str, Any], GameState]:
        """Parse our own snapshot and rebuild the session, the step start and the state at
        that start from it."""
        snap = msgpack.unpackb(data, raw=False)
        if not isinstance(snap, dict) or snap.get("v") != SNAPSHOT_VERSION:
            raise TableStopped(self.me, "resume", "secrets.bin holds no snapshot we can read")
        ops = self.session.ops  # keep op classes a test or tool installed
        self.session = TokenSession.restore(snap["session"], op_classes=ops)
        state = new_game(self.config)
        chain = chain_start(self.setup.game_id, state.hash())
        for enc in snap["actions"]:
            apply(state, decode(enc))
            chain = chain_next(chain, state.hash())
        self._chain_at = {len(snap["actions"]): chain}
        if state.hash() != snap["hash"]:
            raise TableStopped(self.me, "resume", "replayed actions do not give the "
                                                  "snapshot's state")
        zones = ZoneMap(self.n)
        zones.bag, zones.hands = snap["zones"]
        self._applied = list(snap["actions"])
        self._start = _StepStart(snap["step"], snap["hash"], zones, snap["cursor"])
        return snap, state

    def _restore(self) -> None:
        """Rebuild log, session and step from the folder (see the module docstring)."""
        assert self.store is not None
        wires = self.store.load_transcript()
        secrets = self.store.load_secrets()
        log.info("seat %d resuming from %d stored envelopes", self.me, len(wires))
        self.resumed = True
        self.log = TranscriptLog(self.setup.game_id, self.keys)
        for w in wires:
            self.log.add(w)
        processed = 0
        if secrets.snapshot is not None:
            snap, state = self._load_snapshot(secrets.snapshot)
            start = self._start
            mine = self.log.by_sender.get(self.me, [])
            missing = snap["own"] - len(mine)
            if missing > 0:
                for w in snap["outgoing"][-missing:]:
                    self.log.add(w)
                    self.store.append(w)
            processed = snap["processed"]
            self.state, self.zones = state, start.zones.copy()
            self.step, self.cursor = start.step, start.cursor
            self._confirmed = start.step
            self._log_mark = processed
            self._hash_now = self.state.hash()
        # our signing chain continues after our last stored envelope
        mine = self.log.by_sender.get(self.me, [])
        self.signer.seq = len(mine)
        if mine:
            self.signer.prev = mine[-1].id
        # rebuild the engine from the start if we have no snapshot (nothing crypto sent yet)
        self._replaying = True
        try:
            for i, env in enumerate(self.log.entries):
                if env.kind == CRYPTO_KIND and i < processed:
                    continue
                self._dispatch(env)
        finally:
            self._replaying = False
        # envelopes we stored but maybe never sent reach the others through their sync
        # requests (sent on every PeerUp), so nothing is re-broadcast here.

"""The engine replayed from a transcript: the audit's hook (:class:`EngineReplay`).

It takes actions per step from the actor exactly as the live table takes them, asks the
resolution script (:mod:`p2p.protocol.resolution`, the one the live table runs) for every crypto op
and checks each is the one asked for, checks every claim against the real colours, and
raises what a seat signed that the table would not accept — a :class:`p2p.judge.evidence.StateCheat`
where the violation holds only in the state the replay reached.  It also records what the
judge needs to apply the evidence rule: what the replay rested on at each step
(``frontier``), the state hashes and chain, the acks, closes, aborts and stops.  The
offline audit (:mod:`p2p.judge.game_audit`) and the replay viewer use it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from crypto.audit import EnvelopeEvent, OpEvent
from crypto.errors import CheatDetected
from crypto.transcript import Envelope
from engine.actions import RESOLVER, Action
from engine.errors import IllegalAction
from engine.game import new_game
from engine.rules import actors, apply, is_simultaneous
from engine.state import Config, GameState, make_config

from ..protocol import resolution
from ..protocol.ack_chain import chain_next, chain_start
from ..protocol.resolution import ActionRefused, OpCall, check_move
from ..protocol.wire import (
    ABORT_KIND,
    ACK_KIND,
    ACTION_KIND,
    CLOSE_KIND,
    STOP_KIND,
    TALK_KIND,
    abort_body_ok,
    ack_body_ok,
    action_body_ok,
    stop_body_ok,
    talk_problem,
)
from ..protocol.zones import COLOUR_OF, ZoneMap
from .evidence import StateCheat


class _NeedMore(Exception):
    """The step cannot be replayed yet: a later envelope or op is needed."""


@dataclass(frozen=True)
class _Recorded:
    """A completed op of the transcript, handed to the resolution script."""

    event: OpEvent
    replay: EngineReplay

    @property
    def result(self) -> dict[str, Any]:
        return self.event.result

    def learned(self) -> None:
        self.replay.learn(self.event)


@dataclass(frozen=True)
class Ack:
    """A signed acknowledgement (ack or close) read from the transcript."""

    seat: int
    round: int
    value: bytes
    heads: list[list[Any]]
    index: int
    seq: int


class EngineReplay:
    """The audit hook: replays the engine from action envelopes and completed ops, and
    checks every other non-crypto envelope as the live table would."""

    def __init__(self, players: int, config: Config | None = None, record: bool = False,
                 game_id: bytes = b"", deal: bool | str = False, talk: bool = True,
                 relayed_talk: bool = True) -> None:
        """``config`` is the game's engine config (board and variant, see
        :meth:`p2p.store.ExportedGame.config`); None is the default board, base rules.
        ``record`` keeps every state and action (for the replay viewer); ``deal`` is the
        deal's agreed shuffle mode (:func:`p2p.protocol.resolution.deal_mode`); ``talk`` whether the
        game's protocol has table talk (:data:`p2p.protocol.wire.TALK_SINCE`), ``relayed_talk``
        whether it has watchers' lines (:data:`p2p.protocol.wire.RELAYED_TALK_SINCE`)."""
        self.n = players
        self.deal = deal
        self.state = new_game(config if config is not None else make_config(players))
        self.zones = ZoneMap(players)
        self.step = 0
        self.ops: list[OpEvent] = []
        self.op_cursor = 0
        self.actions: dict[int, deque[EnvelopeEvent]] = {}
        #: the true colour of every handle the decrypted zones have shown so far
        self.truth: dict[int, int] = {}
        self.record = record
        self.states: list[GameState] = [self.state.copy()] if record else []
        self.applied: list[Action] = []
        #: the state-hash chain an honest peer acknowledges: ``chain[r]`` after ``r`` steps
        self.chain = [chain_start(game_id, self.state.hash())]
        self.acks: list[Ack] = []
        self.closes: list[Ack] = []
        self.aborts: list[EnvelopeEvent] = []
        #: stop notices: a seat said why its table stopped (a fact, naming no one)
        self.stops: list[EnvelopeEvent] = []
        #: table talk, in each sender's chain order (:mod:`p2p.table.talk`)
        self.talk: list[EnvelopeEvent] | None = [] if talk else None
        self._talk_count = [0] * players
        self._relayed_talk = relayed_talk
        self._acked: set[tuple[int, int]] = set()
        #: per sender, the seq of its last state-changing envelope the audit took (the
        #: auditor's :attr:`crypto.audit.Auditor.consumed`, shared)
        self.consumed: dict[int, int] = {}
        #: ``frontier[k]``: what the replay rested on when step ``k`` began (a copy of
        #: :attr:`consumed`), and ``hashes[k]`` the state hash then
        self.frontier: list[dict[int, int]] = [{}]
        self.hashes: list[bytes] = [self.state.hash()]
        #: the acting seat of every decided step (RESOLVER for the table's own steps)
        self.actor_at: list[int] = []
        #: the op the script waits for now (set while the replay is blocked on it)
        self.pending: OpCall | None = None
        #: the state-dependent violation the replay raised, with the step it depends on
        self.raised: StateCheat | None = None

    #: kinds that change the replay's state: taken in each sender's order, when usable
    main_kinds = (ACTION_KIND,)

    def wants(self, env: Envelope) -> bool:
        """Whether the replay can take this action now (an action for a later step waits
        in its sender's chain; a malformed one is taken, and named)."""
        body = env.body
        return not action_body_ok(body) or body[0] <= self.step

    def expects(self, index: int) -> bool:
        """Whether op ``index`` is the one the replay waits for now: the script's next op,
        or the secrets once the game is over."""
        return index == len(self.ops) and (self.pending is not None or not actors(self.state))

    def check_op(self, sender: int, name: str, args: list[Any]) -> None:
        """The first message of a new op must name the op the replay asks for: else it is
        its sender's (in the state the replay is in)."""
        if not actors(self.state):
            why = None if name == "secrets" else f"expects the secrets, {sender} sent {name}"
        else:
            why = None if self.pending is None else self.pending.mismatch(name, args)
        if why is not None:
            # the op the script asks for rests on this step's own moves (a sale's claim, a
            # theft's victim): the sender must have acknowledged those too
            self.raised = StateCheat(sender, "op-mismatch", f"step {self.step} {why}",
                                     self.step, rests_on=dict(self.consumed))
            raise self.raised

    # --- hook ----------------------------------------------------------------------------
    def __call__(self, ev: EnvelopeEvent | OpEvent) -> None:
        try:
            if isinstance(ev, OpEvent):
                self.ops.append(ev)
            else:
                self._envelope(ev)
            self.advance()
        except StateCheat as exc:
            self.raised = exc
            raise

    def _envelope(self, ev: EnvelopeEvent) -> None:
        """Take in one non-crypto envelope; what the table would refuse is its signer's
        violation (it is signed: the table's refusal never happens to an honest seat)."""
        env = ev.envelope
        kind, body, who = env.kind, env.body, env.sender
        if kind == ACTION_KIND:
            if not action_body_ok(body):
                raise CheatDetected(who, "malformed-action", "signed a malformed action")
            if body[0] < self.step:
                self._late(ev, body[0])
            self.actions.setdefault(body[0], deque()).append(ev)
        elif kind in (ACK_KIND, CLOSE_KIND):
            if not ack_body_ok(body, self.n):
                raise CheatDetected(who, f"malformed-{kind}", f"signed a malformed {kind}")
            key = (who, body[0]) if kind == ACK_KIND else (who, -1)
            if key in self._acked:
                raise CheatDetected(who, f"second-{kind}",
                                    f"signed a second {kind} for round {body[0]}")
            self._acked.add(key)
            ack = Ack(who, body[0], body[1], body[2], ev.index, env.seq)
            (self.acks if kind == ACK_KIND else self.closes).append(ack)
        elif kind == ABORT_KIND:
            if not abort_body_ok(body):
                raise CheatDetected(who, "malformed-abort", "signed a malformed abort notice")
            self.aborts.append(ev)
        elif kind == STOP_KIND:
            if not stop_body_ok(body):
                raise CheatDetected(who, "malformed-stop", "signed a malformed stop notice")
            self.stops.append(ev)
        elif kind == TALK_KIND and self.talk is not None:
            problem = talk_problem(body, self._talk_count[who], self._relayed_talk)
            if problem is not None:
                raise CheatDetected(who, *problem)
            self._talk_count[who] += 1
            self.talk.append(ev)
        else:
            raise CheatDetected(who, "unknown-kind", f"signed an envelope of unknown kind "
                                                     f"{str(kind)[:32]!r}")

    def advance(self) -> None:
        while actors(self.state):
            zones, cursor = self.zones.copy(), self.op_cursor
            acting = actors(self.state)[0]
            self.pending = None
            try:
                a = self._step()
            except _NeedMore:
                self.zones, self.op_cursor = zones, cursor
                return
            self.pending = None
            try:
                apply(self.state, a)
            except IllegalAction as exc:
                raise CheatDetected(None, "engine-illegal",
                                    f"step {self.step}: {type(a).__name__}: {exc}") from exc
            self.actor_at.append(acting)
            for ev in self.actions.pop(self.step, deque()):
                self._late(ev, self.step)
            self.step += 1
            h = self.state.hash()
            self.chain.append(chain_next(self.chain[-1], h))
            self.hashes.append(h)
            self.frontier.append(dict(self.consumed))
            if self.record:
                self.states.append(self.state.copy())
                self.applied.append(a)

    def _late(self, ev: EnvelopeEvent, step: int) -> None:
        """An action signed for a step already decided: a second action of the seat that
        acted there (its own two signatures: the live table stops on it the same way), or
        an action of a seat that was not to act there (in the replay's state)."""
        env = ev.envelope
        who = env.sender
        if self.actor_at[step] == who:
            raise CheatDetected(who, "superseded-action",
                                f"signed a second action for step {step} "
                                f"(envelope #{ev.index})")
        raise StateCheat(who, "stale-action",
                         f"signed an action for step {step}, already decided, where seat "
                         f"{self.actor_at[step]} was to act (envelope #{ev.index})", step,
                         self._binding(env))

    def _binding(self, env: Envelope) -> bytes | None:
        """The state hash an action names as the state it was chosen in (step 0 has none)."""
        return env.body[2] if len(env.body) == 3 and env.body[0] > 0 else None

    def learn(self, ev: OpEvent) -> None:
        """Record the true colour of every handle from the decrypted zones."""
        for z, labels in ev.zones.items():
            for h, lab in zip(self.zones.zone(z), labels, strict=False):
                if lab is not None:
                    self.truth[h] = COLOUR_OF[lab]

    # --- one step -------------------------------------------------------------------------
    def _step(self) -> Action:
        s = self.state
        acts = actors(s)
        if acts[0] == RESOLVER:
            return self._drive(resolution.resolve(s, self.zones, self.truth.get, self.deal))
        if is_simultaneous(s):
            return self._drive(resolution.vizier(s, self.zones, acts))
        actor = acts[0]
        queue = self.actions.get(self.step)
        if not queue:
            raise _NeedMore
        for ev in queue:
            if ev.envelope.sender != actor:
                raise StateCheat(ev.envelope.sender, "out-of-turn",
                                 f"signed an action for step {self.step}, where seat {actor} "
                                 f"is to act (envelope #{ev.index})", self.step,
                                 self._binding(ev.envelope))
        env = queue[0].envelope
        binding = self._binding(env)
        if binding is not None and binding != self.state.hash():
            raise StateCheat(actor, "action-state-mismatch",
                             f"its action for step {self.step} names another state than the "
                             "replay of the moves it acknowledged", self.step)
        try:
            a, _applied = check_move(s, env.body[1], in_place=False)
        except ActionRefused as exc:
            raise StateCheat(actor, "illegal-action",
                             f"signed an illegal action for step {self.step}: {exc}",
                             self.step, binding) from exc
        try:
            self._drive(resolution.claims(s, self.zones, actor, a, self.truth.get))
        except StateCheat:
            raise
        except CheatDetected as exc:  # a false claim: it holds in this step's state
            raise StateCheat(exc.culprit, exc.rule, exc.detail, self.step) from exc
        queue.popleft()
        return a

    def _drive(self, script: resolution.Script | resolution.ClaimScript) -> Any:
        """Feed the script the transcript's ops, each checked to be the one it asks for."""
        try:
            call = next(script)
            while True:
                call = script.send(_Recorded(self._take(call), self))
        except StopIteration as done:
            return done.value

    def _take(self, call: OpCall) -> OpEvent:
        if self.op_cursor >= len(self.ops):
            self.pending = call
            raise _NeedMore
        ev = self.ops[self.op_cursor]
        why = call.mismatch(ev.name, ev.args)
        if why is not None:
            raise CheatDetected(None, "op-sequence", f"step {self.step} {why}")
        self.op_cursor += 1
        return ev



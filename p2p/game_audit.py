"""Offline audit of a saved game: every signature, proof, token, ack and rule, and the
engine replayed — and whether the game is *certified*.

:func:`audit_game` reads a self-contained ``game.silkroad`` file.  In order:

1. the envelopes are read into each sender's chain (:func:`crypto.audit.read_chains`):
   the file's order and completeness are whoever exported it's choice, so a garbled,
   duplicated, reordered or missing envelope is a fact about the file that names no one;
   two signed versions of one envelope name their signer;
2. every seat's acks name the newest envelope it held of every sender (*heads*).  A head
   that contradicts the envelope the file holds is a rewritten history or a lying ack: the
   side the other seats' signed heads support is believed (:func:`check_heads`);
3. :func:`crypto.audit.audit` re-runs every proof and decrypts every token, with
   :class:`EngineReplay` as its hook: actions are taken per step from the actor exactly
   as the live table takes them, every crypto op must be the one the resolution script
   asks for (:mod:`p2p.resolution`, the same script the live table runs), every claim is
   checked against the real colours, and anything a seat signed that the table would not
   accept (an illegal, out-of-turn, superseded or malformed action, an unknown kind, a
   second ack) is that seat's violation;
4. every ack's state chain is compared with the replay's, and the closing
   acknowledgements (:data:`p2p.wire.CLOSE_KIND`) decide certification.

Verdicts (docs/security.md): **certified** (exit 0), **unfair** naming a seat on evidence it
signed (exit 1), **unreadable** (exit 2), and — naming no one — **incomplete**, **damaged**
or **not certified** (exit 3).  The replay viewer (:mod:`cli.replay_net`) reads games
through here too (``record=True``).
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from crypto.audit import (
    Auditor,
    AuditReport,
    Chains,
    EnvelopeEvent,
    OpEvent,
    Violation,
    read_chains,
)
from crypto.errors import CheatDetected, MalformedInput
from crypto.transcript import CRYPTO_KIND, Envelope, EquivocationProof, parse, signing_key
from engine.actions import RESOLVER, Action
from engine.errors import IllegalAction
from engine.game import new_game, scores, winners
from engine.rules import actors, apply, is_simultaneous
from engine.state import Config, GameState, make_config

from . import resolution
from .ack_chain import chain_next, chain_start
from .game import (
    CERTIFIED_SINCE,
    BoardMismatch,
    compute_game_id,
    game_config,
    lambda_problem,
)
from .handshake import PROTOCOL_VERSION
from .judge import (
    CERTIFIED,
    DAMAGED,
    DISPUTED,
    EXIT_FAIR,
    EXIT_NOT_CERTIFIED,
    EXIT_OF,
    EXIT_UNFAIR,
    EXIT_UNREADABLE,
    INCOMPLETE,
    NOT_CERTIFIED,
    SELF_EVIDENT,
    STOPPED,
    UNFAIR,
    UNREADABLE,
    Acknowledged,
    Findings,
    StateCheat,
    check_heads,
    decide,
    stop_words,
)
from .mesh import RosterEntry
from .resolution import ActionRefused, OpCall, check_move, deal_mode
from .sanitize import clean
from .store import GameStore, StoreError, read_export
from .wire import (
    ABORT_KIND,
    ACK_KIND,
    ACTION_KIND,
    CLOSE_KIND,
    PROOF_RULES,
    STOP_KIND,
    abort_body_ok,
    abort_evidence,
    ack_body_ok,
    action_body_ok,
    stop_body_ok,
)
from .zones import COLOUR_OF, ZoneMap

__all__ = [
    "CERTIFIED", "DAMAGED", "DISPUTED", "EXIT_FAIR", "EXIT_NOT_CERTIFIED", "EXIT_UNFAIR",
    "EXIT_UNREADABLE", "INCOMPLETE", "NOT_CERTIFIED", "STOPPED", "UNFAIR", "UNREADABLE",
    "EngineReplay", "GameAuditReport", "audit_folder", "audit_game", "audit_wires",
    "check_heads", "shown_names", "summary",
]

class _NeedMore(Exception):
    """The step cannot be replayed yet: a later envelope or op is needed."""


@dataclass
class GameAuditReport:
    """Outcome: the verdict, the first violation (if any) and what the audit checked."""

    fair: bool
    violation: Violation | None
    crypto: AuditReport | None
    engine_replayed: bool = False
    steps: int = 0
    final_hash: bytes | None = None
    scores: list[int] | None = None
    winners: list[int] | None = None
    error: str | None = None
    #: a folder audit: why that peer's table stopped (``stopped.json``), if it did
    stopped: dict[str, Any] | None = None
    #: the engine replay itself (its states and actions when audited with ``record=True``)
    replay: EngineReplay | None = field(default=None, repr=False)
    #: certified / unfair / incomplete / damaged / not certified / unreadable
    status: str = ""
    #: facts about the file (what it garbles or lacks) and why it is not certified
    notes: list[str] = field(default_factory=list)
    #: seats whose closing acknowledgement covers the final state
    closed_by: list[int] = field(default_factory=list)
    names: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        """Reports made before any judging (a file that cannot be read, or whose unsigned
        parts were edited) get their status here; every other one from
        :func:`p2p.judge.decide`."""
        if not self.status:
            if self.error is not None:
                self.status = UNREADABLE
            elif self.fair:
                self.status = CERTIFIED
            else:
                self.status = DAMAGED

    @property
    def exit_code(self) -> int:
        return EXIT_OF.get(self.status, EXIT_NOT_CERTIFIED)

    def _scores(self) -> str:
        if self.scores is None:
            return ""
        if self.names:
            return ", ".join(f"{n} {s}" for n, s in zip(self.names, self.scores, strict=False))
        return str(self.scores)

    def __str__(self) -> str:
        if self.status == UNREADABLE:
            return f"UNREADABLE: {self.error}"
        if self.status == UNFAIR:
            return f"UNFAIR: {self.violation}"
        if self.status == CERTIFIED:
            return (f"CERTIFIED: {self.steps} engine steps replayed; every signature, proof, "
                    f"claim and ack checks out and every seat signed the final state; "
                    f"scores {self._scores()}")
        shown = self.notes[:4] + ([f"(+{len(self.notes) - 4} more)"] if len(self.notes) > 4
                                  else [])
        why = "; ".join(shown) if self.notes else (
            self.violation.detail if self.violation is not None else "")
        return (f"NOT CERTIFIED ({self.status}): no seat is named, because {why}"[:2000])


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
                 game_id: bytes = b"", deal: bool | str = False) -> None:
        """``config`` is the game's engine config (board and variant, see
        :meth:`p2p.store.ExportedGame.config`); None is the default board, base rules.
        ``record`` keeps every state and action (for the replay viewer); ``deal`` is the
        deal's agreed shuffle mode (:func:`p2p.resolution.deal_mode`)."""
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


def _evidence(env: Envelope) -> list[bytes]:
    return abort_evidence(env.body) if env.kind == ABORT_KIND else []


def audit_wires(wires: list[bytes], keys: list[bytes], game_id: bytes,
                lam: int, config: Config | None = None, record: bool = False,
                version: int = PROTOCOL_VERSION, shuffle_mode: str = "verified",
                progress: Callable[[int, int], None] | None = None) -> GameAuditReport:
    """Audit envelopes with the engine replayed (the core of :func:`audit_game`);
    ``config`` is the agreed board/variant (default board, base rules if None);
    ``record`` keeps every replayed state in the report's ``replay``; ``version`` is the
    game's protocol version (games before :data:`p2p.game.CERTIFIED_SINCE` cannot be
    certified).  Who is named follows the evidence rule of :mod:`p2p.judge`."""
    pubs = []
    for seat, k in enumerate(keys):
        try:
            pubs.append(signing_key(k, f"seat {seat}'s roster key"))
        except MalformedInput as exc:
            # anybody could have signed in this seat's name: nothing it did is attributable
            return GameAuditReport(False, Violation(seat, None, None, "weak-key", str(exc)),
                                   None, status=UNFAIR)
    n = len(keys)
    chains = read_chains(wires, pubs, game_id, _evidence)
    replay = EngineReplay(n, config, record, game_id, deal_mode(shuffle_mode, version))
    found = Findings(players=n, version=version, certifiable=version >= CERTIFIED_SINCE)

    def report(rep: AuditReport | None) -> GameAuditReport:
        st = replay.state
        over = not actors(st)
        out = GameAuditReport(False, found.violation, rep, engine_replayed=over,
                              steps=replay.step, final_hash=st.hash(), replay=replay,
                              status=CERTIFIED)
        if over:
            out.scores, out.winners = scores(st), winners(st)
        found.over = over
        found.closed_by = sorted({c.seat for c in replay.closes})
        out.status, out.notes, out.violation = decide(found)
        out.fair = out.status == CERTIFIED
        out.closed_by = found.closed_by
        return out

    if chains.violation is not None:
        found.violation = chains.violation
        return report(None)
    acked = Acknowledged.from_chains(chains, n)
    head_violation, found.disputes, head_notes = check_heads(chains, n)
    if head_violation is not None:
        found.violation = head_violation
        return report(None)
    auditor = Auditor(pubs, game_id, lam, replay, progress)
    replay.consumed = auditor.consumed
    rep = auditor.run_chains(chains, len(wires))
    found.damage = list(rep.damage)
    found.missing = list(rep.missing) + sorted(set(head_notes))
    found.complete = rep.complete
    found.secrets_absent = [p for p in range(n) if p not in rep.secrets_from]
    found.unused = [f"seat {p} signed {k} envelope{'s' if k > 1 else ''} the game never used "
                    f"(from its envelope {q} on)" for p, (k, q) in sorted(auditor.unused.items())]
    found.unused += _after_close(chains) + _closes_short(chains, replay)
    if rep.violation is not None:
        _judged(found, _attribute(rep.violation, replay, acked))
    else:
        for candidate in _check_closes(replay, rep) + _check_acks(replay, version):
            if found.violation is None:
                _judged(found, _attribute(candidate, replay, acked))
        if found.violation is None and not found.disputes:
            whole = not actors(replay.state) and not found.missing and not auditor.left_over
            _judged(found, _check_aborts(replay, chains, pubs, game_id, whole))
    found.stops = [stop_words(ev.envelope.sender, ev.envelope.body) for ev in replay.stops]
    return report(rep)


def _after_close(chains: Chains) -> list[str]:
    """A close is its seat's last word on the game: what a seat signed after it (an honest
    seat only a stop notice, when the others' closes never came) is not certified by it."""
    out = []
    for seat, chain in sorted(chains.log.by_sender.items()):
        closes = [e.seq for e in chain if e.kind == CLOSE_KIND]
        if closes and len(chain) > closes[0] + 1:
            more = len(chain) - closes[0] - 1
            out.append(f"seat {seat} signed {more} envelope{'s' if more > 1 else ''} after "
                       f"its closing acknowledgement (from its envelope {closes[0] + 1} on)")
    return out


def _closes_short(chains: Chains, replay: EngineReplay) -> list[str]:
    """A close certifies the whole transcript only if its heads reach every seat's secrets
    (an honest seat closes once it holds them all): one that acknowledges less certifies
    less, naming no one."""
    secrets = {e.sender: e.seq for _i, e in chains.accepted if e.kind == CRYPTO_KIND
               and isinstance(e.body, list) and len(e.body) > 1 and e.body[1] == "secrets"}
    out = []
    for c in sorted(replay.closes, key=lambda c: c.seat):
        held = {h[0]: h[1] for h in c.heads}
        short = [p for p, q in sorted(secrets.items()) if p != c.seat and held.get(p, -1) < q]
        if short:
            out.append(f"seat {c.seat}'s closing acknowledgement does not acknowledge the "
                       f"secrets of seats {short}")
        if held.get(c.seat) != c.seq - 1:  # an honest seat's own head: its last envelope
            out.append(f"seat {c.seat}'s closing acknowledgement does not acknowledge its "
                       "own last envelope before it")
    return out


def _judged(found: Findings, outcome: tuple[Violation | None, list[str]]) -> None:
    """Record a judgement: a seat named, or what disputes it."""
    named, disputes = outcome
    if named is not None and found.violation is None:
        found.violation = named
    found.disputes.extend(d for d in disputes if d not in found.disputes)


def _acknowledged(seat: int, step: int, binding: bytes | None, engine: bool,
                  replay: EngineReplay, acked: Acknowledged) -> bool:
    """Whether ``seat`` acknowledged the history the replay rests on at ``step``: it signed
    that very state (for the game's rules: an action's state before, an ack's chain value),
    or its signed heads cover every envelope the replay had taken when the step began."""
    step = min(step, len(replay.frontier) - 1)
    if engine:
        if binding is not None and binding == replay.hashes[step]:
            return True
        for ack in (*replay.acks, *replay.closes):
            if (ack.seat == seat and step <= ack.round < len(replay.chain)
                    and ack.value == replay.chain[ack.round]):
                return True
    return acked.covers(seat, replay.frontier[step])


def _attribute(v: Violation, replay: EngineReplay, acked: Acknowledged,
               step: int | None = None) -> tuple[Violation | None, list[str]]:
    """Name ``v``'s seat if the evidence rule allows (:mod:`p2p.judge`), else say what
    disputes it.  ``step`` is the step the violation depends on (default: as raised)."""
    if v.party is None:
        return None, [f"rule {v.rule} is broken ({clean(v.detail, 300)}), and no single "
                      "seat's signature shows who broke it"]
    if v.rule in SELF_EVIDENT:
        return v, []
    raised = replay.raised
    engine = raised is not None and raised.culprit == v.party and raised.rule == v.rule
    binding = raised.binding if engine and raised is not None else None
    if step is None:
        step = raised.step if engine and raised is not None else replay.step
    rests_on = raised.rests_on if engine and raised is not None else None
    if rests_on is not None:
        if acked.covers(v.party, rests_on):
            return v, []
        gaps = acked.gaps(v.party, rests_on)
    elif _acknowledged(v.party, step, binding, engine, replay, acked):
        return v, []
    else:
        gaps = acked.gaps(v.party, replay.frontier[min(step, len(replay.frontier) - 1)])
    return None, [f"seat {v.party}'s envelope breaks rule {v.rule} ({clean(v.detail, 300)}) "
                  f"in the history this file holds at step {step}, but seat {v.party} never "
                  f"acknowledged holding the envelopes of seats {gaps} that it rests on: its "
                  "word and theirs disagree, and the file cannot tell which is false"]


def _check_acks(replay: EngineReplay, version: int) -> list[Violation]:
    """Every ack's chain value against the replay's chain (version 1 acked plain state
    hashes on another schedule: only its heads are checked), in seat and round order."""
    if version < 2:
        return []
    over = not actors(replay.state)
    out: list[Violation] = []
    for ack in sorted(replay.acks, key=lambda a: (a.seat, a.round)):
        if ack.round <= replay.step:
            if ack.value != replay.chain[ack.round]:
                out.append(Violation(ack.seat, ack.index, (ack.seat, ack.seq), "ack-mismatch",
                                     f"seat {ack.seat} acknowledged a state at step "
                                     f"{ack.round} that the replay of the signed moves "
                                     "contradicts"))
        elif over:
            out.append(Violation(ack.seat, ack.index, (ack.seat, ack.seq), "ack-beyond-end",
                                 f"seat {ack.seat} acknowledged step {ack.round} of a game "
                                 f"that ended after {replay.step}"))
    return out


def _check_closes(replay: EngineReplay, rep: AuditReport) -> list[Violation]:
    """A close's signer must have revealed its secrets before it (its chain up to the close
    is in the file, so an absent secret was never sent), and a close must cover the final
    state."""
    over = not actors(replay.state)
    out: list[Violation] = []
    for c in sorted(replay.closes, key=lambda c: c.seat):
        if c.seat not in rep.secrets_from:
            out.insert(0, Violation(c.seat, c.index, (c.seat, c.seq), "closed-without-secrets",
                                    f"seat {c.seat} signed the end of the game without "
                                    "revealing its secrets"))
        elif over and (c.round != replay.step or c.value != replay.chain[-1]):
            out.append(Violation(c.seat, c.index, (c.seat, c.seq), "close-mismatch",
                                 f"seat {c.seat} closed the game at step {c.round} with a "
                                 "state the replay contradicts"))
    return out


def _check_aborts(replay: EngineReplay, chains: Chains, keys: list[Any], game_id: bytes,
                  whole: bool) -> tuple[Violation | None, list[str]]:
    """Judge every abort notice; the audit found no violation.  A notice is false — its
    signer named — only when the audit holds everything it points at and that checked
    out: the ``whole`` game (it reached its end and nothing is missing or left over), or
    everything the notice names (:func:`_unchecked`); an equivocation proof is checked by
    itself.  Otherwise nobody is named: the notice is a dispute the file cannot settle."""
    disputes: list[str] = []
    for ev in sorted(replay.aborts, key=lambda e: (e.envelope.sender, e.envelope.seq)):
        env = ev.envelope
        culprit, rule = env.body[0], env.body[1]
        where = (env.sender, env.seq)
        if rule in PROOF_RULES:
            try:
                who = EquivocationProof(env.body[4][0], env.body[4][1]).verify(keys, game_id)
            except MalformedInput:
                return Violation(env.sender, ev.index, where, "false-abort",
                                 f"seat {env.sender} accused seat {culprit} of {clean(rule, 64)} "
                                 "with a proof that does not hold"), []
            return Violation(who, ev.index, where, rule,
                             f"seat {who} signed two envelopes that cannot both be in its "
                             f"chain (proof carried by seat {env.sender}'s notice)"), []
        why = None if whole else _unchecked(
            culprit, env.body[3], env.body[4] if len(env.body) == 5 else [], replay, chains,
            keys, game_id)
        if why is None:
            return Violation(env.sender, ev.index, where, "false-abort",
                             f"seat {env.sender} accused seat {culprit} of {clean(rule, 64)}, "
                             "but everything the accusation points at is in the file and "
                             "checks out"), []
        disputes.append(f"seat {env.sender} accused seat {culprit} of {clean(rule, 64)}, and "
                        f"the file cannot check it: {why}")
    return None, disputes


def _unchecked(culprit: int | None, ref: list[Any] | None, evidence: list[bytes],
               replay: EngineReplay, chains: Chains, keys: list[Any], game_id: bytes
               ) -> str | None:
    """Why the audit cannot check an accusation of ``culprit`` pointing at ``ref`` and
    carrying ``evidence`` (None if it holds all of it and checked all of it).  A notice
    must point at one of the culprit's own envelopes: a check that failed on what the
    culprit showed the accuser alone can be judged only from that envelope."""
    if ref is None:
        return "the notice names no envelope"
    points = [(ref[0], ref[1], ref[2])]
    for wire in evidence:
        try:
            e = parse(wire, keys, game_id)
        except CheatDetected:
            return "the evidence it carries is not a validly signed envelope of this game"
        points.append((e.sender, e.seq, e.id))
    if culprit is not None and all(s != culprit for s, _q, _i in points):
        return f"it carries none of seat {culprit}'s envelopes"
    for s, q, eid in points:
        chain = chains.log.by_sender.get(s, [])
        if not 0 <= q < len(chain) or chain[q].id != eid:
            return f"seat {s}'s envelope {q} that it points at is not in the file"
        target = chain[q]
        if target.kind == CRYPTO_KIND:
            idx = target.body[0] if isinstance(target.body, list) and target.body else None
            if replay.consumed.get(s, -1) < q or not isinstance(idx, int) \
                    or idx >= len(replay.ops):
                return (f"the crypto op of seat {s}'s envelope {q} that it points at never "
                        "completed in this file")
        elif target.kind == ACTION_KIND:
            if replay.consumed.get(s, -1) < q or target.body[0] >= replay.step:
                return f"the step of seat {s}'s action {q} that it points at was never decided"
        elif target.kind in (ACK_KIND, CLOSE_KIND):
            if not ack_body_ok(target.body, replay.n) or target.body[0] > replay.step:
                return f"the round seat {s}'s envelope {q} acknowledges was never reached"
    return None


def _lambda_problem(version: int, lam: int) -> str | None:
    """Why the file's λ cannot be this game's (:func:`p2p.game.lambda_problem`, the rule a
    live table applies to its folder too): λ is not signed by anyone, so a wrong one is the
    file's damage, naming no one."""
    why = lambda_problem(version, lam)
    return None if why is None else f"the file says {why}"


def _damaged(why: str, names: list[str]) -> GameAuditReport:
    report = GameAuditReport(False, Violation(None, None, None, "damaged", why), None,
                             status=DAMAGED, notes=["the file is damaged", why])
    report.names = names
    return report


def shown_names(roster: list[RosterEntry]) -> list[str]:
    """The roster's names as a screen may show them.  Whoever wrote the file chose them;
    they are hashed into the game id, so they are checked raw and only shown cleaned
    (:mod:`p2p.sanitize`)."""
    return [clean(e.name, 64) for e in roster]


def audit_game(path: str | os.PathLike[str], record: bool = False,
               progress: Callable[[int, int], None] | None = None) -> GameAuditReport:
    """Audit a ``game.silkroad`` file; never raises for bad input (see ``exit_code``).
    ``record`` keeps every replayed state and action (``report.replay``); ``progress``
    hears ``(envelopes checked, of)`` as the audit goes."""
    try:
        game = read_export(path)
    except StoreError as exc:
        return GameAuditReport(False, None, None, error=str(exc))
    names = shown_names(game.roster)
    if compute_game_id(game.roster, game.params) != game.game_id:
        return GameAuditReport(False, Violation(None, None, None, "game-id",
                                                "game id is not H(roster, params)"), None)
    try:
        config = game.config()
    except BoardMismatch as exc:
        # the board in the file is not the one whose digest the game id binds
        return GameAuditReport(False, Violation(None, None, None, "board", exc.reason), None)
    why = _lambda_problem(game.params.protocol_version, game.lam)
    if why is not None:
        return _damaged(why, names)
    return _guarded(lambda: audit_wires(game.wires, [e.key for e in game.roster],
                                        game.game_id, game.lam, config, record,
                                        game.params.protocol_version,
                                        game.params.shuffle_mode, progress), names)


def _guarded(run: Callable[[], GameAuditReport], names: list[str]) -> GameAuditReport:
    try:
        report = run()
    except Exception as exc:  # a bug, never the file's fault: reported, never raised
        report = GameAuditReport(False, Violation(None, None, None, "audit-error",
                                                  repr(exc)), None,
                                 error=f"the audit itself failed (a bug, reported): {exc!r}")
    report.names = names
    return report


def audit_folder(folder: str | os.PathLike[str],
                 progress: Callable[[int, int], None] | None = None) -> GameAuditReport:
    """Audit a peer's game folder as far as it goes (e.g. a table that was abandoned).

    A game that stopped early is ``incomplete`` (naming no one), but any signed violation
    up to the last stored envelope is found and named.
    """
    store = GameStore(folder)
    try:
        roster, params, _seat, game_id = store.load_meta()
        lam = store.load_lam()
        wires = store.load_transcript()
        config = game_config(params, store.load_board())
    except (StoreError, OSError) as exc:
        return GameAuditReport(False, None, None, error=str(exc))
    except BoardMismatch as exc:
        return GameAuditReport(False, Violation(None, None, None, "board", exc.reason), None)
    why = _lambda_problem(params.protocol_version, lam)
    if why is not None:
        return _damaged(why, shown_names(roster))
    report = _guarded(lambda: audit_wires(wires, [e.key for e in roster], game_id, lam, config,
                                          version=params.protocol_version,
                                          shuffle_mode=params.shuffle_mode,
                                          progress=progress),
                      shown_names(roster))
    report.stopped = store.load_stopped()
    return report


def summary(report: GameAuditReport) -> dict[str, Any]:
    """JSON-friendly summary for the CLI."""
    v = report.violation
    return {"fair": report.fair, "status": report.status, "exit_code": report.exit_code,
            "text": str(report), "steps": report.steps, "scores": report.scores,
            "winners": report.winners, "names": report.names,
            "culprit": v.party if v is not None and report.status == UNFAIR else None,
            "rule": v.rule if v is not None else None, "notes": report.notes,
            "closed_by": report.closed_by,
            "final_hash": report.final_hash.hex() if report.final_hash else None,
            "stopped": report.stopped}

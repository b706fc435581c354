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
from crypto.shuffle import DEFAULT_LAMBDA, check_lambda_range
from crypto.transcript import Envelope, signing_key
from engine.actions import RESOLVER, Action
from engine.errors import IllegalAction
from engine.game import new_game, scores, winners
from engine.rules import actors, apply, is_simultaneous
from engine.state import Config, GameState, make_config

from . import resolution
from .ack_chain import chain_next, chain_start
from .game import CERTIFIED_SINCE, BoardMismatch, compute_game_id, game_config
from .handshake import PROTOCOL_VERSION
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

EXIT_FAIR, EXIT_UNFAIR, EXIT_UNREADABLE, EXIT_NOT_CERTIFIED = 0, 1, 2, 3
CERTIFIED, UNFAIR, UNREADABLE = "certified", "unfair", "unreadable"
INCOMPLETE, DAMAGED, NOT_CERTIFIED = "incomplete", "damaged", "not certified"


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
        if not self.status:
            if self.error is not None:
                self.status = UNREADABLE
            elif self.violation is not None and self.violation.rule not in (
                    INCOMPLETE, DAMAGED, "not-certified"):
                self.status = UNFAIR
            elif self.fair:
                self.status = CERTIFIED
            else:
                self.status = INCOMPLETE

    @property
    def exit_code(self) -> int:
        return {CERTIFIED: EXIT_FAIR, UNFAIR: EXIT_UNFAIR,
                UNREADABLE: EXIT_UNREADABLE}.get(self.status, EXIT_NOT_CERTIFIED)

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
        return (f"NOT CERTIFIED ({self.status}): no seat signed anything false, but {why}"
                [:2000])


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

    # --- hook ----------------------------------------------------------------------------
    def __call__(self, ev: EnvelopeEvent | OpEvent) -> None:
        if isinstance(ev, OpEvent):
            self.ops.append(ev)
        else:
            self._envelope(ev)
        self.advance()

    def _envelope(self, ev: EnvelopeEvent) -> None:
        """Take in one non-crypto envelope; what the table would refuse is its signer's
        violation (it is signed: the table's refusal never happens to an honest seat)."""
        env = ev.envelope
        kind, body, who = env.kind, env.body, env.sender
        if kind == ACTION_KIND:
            if not action_body_ok(body):
                raise CheatDetected(who, "malformed-action", "signed a malformed action")
            if body[0] < self.step:
                raise CheatDetected(who, "stale-action",
                                    f"signed an action for step {body[0]}, already decided")
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
            try:
                a = self._step()
            except _NeedMore:
                self.zones, self.op_cursor = zones, cursor
                return
            try:
                apply(self.state, a)
            except IllegalAction as exc:
                raise CheatDetected(None, "engine-illegal",
                                    f"step {self.step}: {type(a).__name__}: {exc}") from exc
            self._superseded(self.step)
            self.step += 1
            self.chain.append(chain_next(self.chain[-1], self.state.hash()))
            if self.record:
                self.states.append(self.state.copy())
                self.applied.append(a)

    def _superseded(self, step: int) -> None:
        """Every other action signed for a step that is decided is its signer's violation
        (the live table stops on it the same way)."""
        for ev in self.actions.pop(step, deque()):
            raise CheatDetected(ev.envelope.sender, "superseded-action",
                                f"signed a second action for step {step} "
                                f"(envelope #{ev.index})")

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
        env = queue[0].envelope
        if env.sender != actor:
            raise CheatDetected(env.sender, "out-of-turn",
                                f"signed an action for step {self.step}, where seat {actor} "
                                f"is to act (envelope #{queue[0].index})")
        if len(env.body) == 3 and self.step > 0 and env.body[2] != self.state.hash():
            raise CheatDetected(actor, "action-state-mismatch",
                                f"its action for step {self.step} names another state than "
                                f"the one its acks and the replay agree on")
        try:
            a, _applied = check_move(s, env.body[1], in_place=False)
        except ActionRefused as exc:
            raise CheatDetected(actor, "illegal-action",
                                f"signed an illegal action for step {self.step}: {exc}") from exc
        self._drive(resolution.claims(s, self.zones, actor, a, self.truth.get))
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
            raise _NeedMore
        ev = self.ops[self.op_cursor]
        why = call.mismatch(ev.name, ev.args)
        if why is not None:
            raise CheatDetected(None, "op-sequence", f"step {self.step} {why}")
        self.op_cursor += 1
        return ev


def check_heads(chains: Chains, players: int) -> tuple[Violation | None, list[str]]:
    """Compare every ack's heads with the envelopes the file holds.

    A head ``[s, q, id]`` in seat p's ack is p's signed word that it held seat s's envelope
    q with that id.  Where the file holds another envelope there, p or s signed falsely: s
    rewrote its history (re-signed its chain from some point, or showed others another
    version), or p lies.  The seats' signed words decide: if more seats contradict s's
    version than support it (s's own signature on it counts as one support), s is named
    (``rewritten-history``); if fewer, the contradicting acker (``head-mismatch``); a seat
    whose own heads contradict each other is named; a tie names no one.  A head beyond
    what the file holds is a fact about the file.
    Returns the violation (if any) and the notes on what the file lacks."""
    notes: list[str] = []
    chain_of = chains.log.by_sender
    # per sender: the smallest contested seq, and who contradicts / supports from there
    contested: dict[int, int] = {}
    claims: list[tuple[int, int, int, bool, int]] = []  # (sender, seq, acker, agrees, index)
    for i, env in chains.accepted:
        if env.kind not in (ACK_KIND, CLOSE_KIND) or not ack_body_ok(env.body, players):
            continue
        for s, q, hid in env.body[2]:
            chain = chain_of.get(s, [])
            if q >= len(chain):
                notes.append(f"seat {env.sender} acknowledged seat {s}'s envelope {q}, which "
                             "is not in the file")
                continue
            agrees = chain[q].id == hid
            claims.append((s, q, env.sender, agrees, i))
            if not agrees:
                contested[s] = min(q, contested.get(s, q))
    for s in sorted(contested):
        q0 = contested[s]
        against = sorted({p for (ss, q, p, ok, _i) in claims if ss == s and q >= q0 and not ok})
        support = sorted({p for (ss, q, p, ok, _i) in claims
                          if ss == s and q >= q0 and ok and p != s})
        first = min(i for (ss, q, _p, ok, i) in claims if ss == s and q >= q0 and not ok)
        both = [p for p in against if p in support]
        if both:
            p = both[0]
            return Violation(p, first, None, "contradictory-acks",
                             f"seat {p}'s acks name two different versions of seat {s}'s "
                             f"envelopes from {q0} on"), notes
        if s in against:
            return Violation(s, first, None, "rewritten-history",
                             f"seat {s}'s own ack names another version of its envelope "
                             f"{q0} than the one it signed in the file"), notes
        weight = len(support) + 1  # seat s's own signature on the file's version counts
        if len(against) > weight:
            return Violation(s, first, None, "rewritten-history",
                             f"seats {against} signed that they received another version of "
                             f"seat {s}'s envelopes from {q0} on than the one in this file "
                             f"(supported by {support or 'no other seat'}): seat {s} signed "
                             "two histories"), notes
        if weight > len(against):
            return Violation(against[0], first, None, "head-mismatch",
                             f"seat {against[0]}'s ack names a version of seat {s}'s envelope "
                             f"{q0} that seats {support} and seat {s} itself contradict"), notes
        return Violation(None, first, None, "contradiction",
                         f"seats {against} and seats {support} signed different versions "
                         f"of seat {s}'s envelopes from {q0} on; who lies cannot be told "
                         "from this file"), notes
    return None, notes


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
    certified)."""
    pubs = []
    for seat, k in enumerate(keys):
        try:
            pubs.append(signing_key(k, f"seat {seat}'s roster key"))
        except MalformedInput as exc:
            # anybody could have signed in this seat's name: nothing it did is attributable
            return GameAuditReport(False, Violation(seat, None, None, "weak-key", str(exc)),
                                   None)
    n = len(keys)
    chains = read_chains(wires, pubs, game_id, _evidence)
    replay = EngineReplay(n, config, record, game_id, deal_mode(shuffle_mode, version))

    def report(rep: AuditReport | None, violation: Violation | None) -> GameAuditReport:
        st = replay.state
        over = not actors(st)
        out = GameAuditReport(False, violation, rep, engine_replayed=over, steps=replay.step,
                              final_hash=st.hash(), replay=replay)
        if over:
            out.scores, out.winners = scores(st), winners(st)
        return out

    if chains.violation is not None:
        return report(None, chains.violation)
    head_violation, head_notes = check_heads(chains, n)
    if head_violation is not None:
        return report(None, head_violation)
    rep = Auditor(pubs, game_id, lam, replay, progress).run_chains(chains, len(wires))
    if rep.violation is not None:
        return report(rep, rep.violation)
    violation = _check_acks(replay, version) or _check_closes(replay, rep, n)
    if violation is None:
        violation = _check_aborts(replay)
    out = report(rep, violation)
    if violation is not None:
        return out
    _verdict(out, rep, replay, n, version, head_notes)
    return out


def _check_acks(replay: EngineReplay, version: int) -> Violation | None:
    """Every ack's chain value against the replay's chain (version 1 acked plain state
    hashes on another schedule: only its heads are checked)."""
    if version < 2:
        return None
    over = not actors(replay.state)
    for ack in replay.acks:
        if ack.round <= replay.step:
            if ack.value != replay.chain[ack.round]:
                return Violation(ack.seat, ack.index, (ack.seat, ack.seq), "ack-mismatch",
                                 f"seat {ack.seat} acknowledged a state at step {ack.round} "
                                 "that the replay of the signed moves contradicts")
        elif over:
            return Violation(ack.seat, ack.index, (ack.seat, ack.seq), "ack-beyond-end",
                             f"seat {ack.seat} acknowledged step {ack.round} of a game that "
                             f"ended after {replay.step}")
    return None


def _check_closes(replay: EngineReplay, rep: AuditReport, n: int) -> Violation | None:
    """A close must cover the final state, and its signer must have revealed its secrets
    before it (its chain up to the close is complete, so an absent secret was never sent)."""
    over = not actors(replay.state)
    for c in replay.closes:
        if over and (c.round != replay.step or c.value != replay.chain[-1]):
            return Violation(c.seat, c.index, (c.seat, c.seq), "close-mismatch",
                             f"seat {c.seat} closed the game at step {c.round} with a state "
                             f"the replay contradicts")
        if c.seat not in rep.secrets_from:
            return Violation(c.seat, c.index, (c.seat, c.seq), "closed-without-secrets",
                             f"seat {c.seat} signed the end of the game without revealing "
                             "its secrets")
    return None


def _check_aborts(replay: EngineReplay) -> Violation | None:
    """An abort notice accuses a seat.  The audit found no violation at all, so the
    accusation is false: its signer is named (an equivocation proof that holds would have
    been read into the chains above and found)."""
    for ev in replay.aborts:
        env = ev.envelope
        culprit, rule = env.body[0], env.body[1]
        what = "with a proof that does not hold" if rule in PROOF_RULES else ""
        return Violation(env.sender, ev.index, (env.sender, env.seq), "false-abort",
                         f"seat {env.sender} accused seat {culprit} of {rule!r} {what}"
                         "but the transcript shows no such violation")
    return None


def _verdict(out: GameAuditReport, rep: AuditReport, replay: EngineReplay, n: int,
             version: int, head_notes: list[str]) -> None:
    """No seat signed anything false: certified, or why not (naming no one)."""
    over = not actors(replay.state)
    out.closed_by = sorted({c.seat for c in replay.closes})
    if rep.damage:
        out.status = DAMAGED
        out.notes = ["the file is damaged", *rep.damage, *rep.missing]
    elif rep.missing or head_notes or not over or not rep.complete:
        why = list(rep.missing) + sorted(set(head_notes))
        for ev in replay.stops[:3]:
            rule, detail = ev.envelope.body[:2]  # its own words: shown cleaned
            why.append(f"seat {ev.envelope.sender} stopped the table: {clean(rule, 64)}: "
                       f"{clean(detail, 230)}")
        if not over:
            why.append("the game did not reach its end")
        elif not rep.complete:
            absent = [p for p in range(n) if p not in rep.secrets_from]
            why.append(f"the secrets of seats {absent} are not in the file, so their "
                       "shuffles and claims cannot be checked" if absent
                       else "the secrets were not revealed")
        out.status, out.notes = INCOMPLETE, why
    elif version < CERTIFIED_SINCE:
        out.status = NOT_CERTIFIED
        out.notes = [f"games of protocol version {version} carry no closing "
                     "acknowledgements (everything present checks out)"]
    elif len(out.closed_by) < n:
        missing = [p for p in range(n) if p not in out.closed_by]
        out.status = NOT_CERTIFIED
        out.notes = [f"seat{'s' if len(missing) > 1 else ''} "
                     f"{', '.join(map(str, missing))} never acknowledged the end"]
    else:
        out.status, out.fair = CERTIFIED, True
        return
    rule = {DAMAGED: "damaged", INCOMPLETE: "incomplete"}.get(out.status, "not-certified")
    out.violation = Violation(None, None, None, rule, "; ".join(out.notes)[:1000])


def _lambda_problem(version: int, lam: int) -> str | None:
    """Why the file's λ (cut-and-choose rounds) cannot be this game's: since protocol
    version 4 it is the protocol's own (:data:`crypto.shuffle.DEFAULT_LAMBDA`), so the game
    id, which binds the version, binds it too; before, any value in range was recorded.
    λ is not signed by anyone: a wrong one is the file's damage, naming no one."""
    if version >= CERTIFIED_SINCE and lam != DEFAULT_LAMBDA:
        return (f"the file says λ = {lam!r:.20}, but protocol version {version} games use "
                f"{DEFAULT_LAMBDA}")
    try:
        check_lambda_range(lam)
    except MalformedInput as exc:
        return str(exc)
    return None


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
                                                  repr(exc)), None)
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

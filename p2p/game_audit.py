"""Offline audit of a saved game: every signature, proof and token, and the engine replayed.

:func:`audit_game` reads a self-contained ``game.silkroad`` file and runs
:func:`crypto.audit.audit` with a hook that replays the engine alongside: actions are taken
per step from the actor exactly as the live table takes them, and every crypto op must be
the one the resolution script asks for (:mod:`p2p.resolution`, the same script the live
table runs).  Because the auditor decrypts everything once the secrets are published, every
hidden claim (sold goods, given goods, final reveal) is also checked against the real
colours.  The first violation is reported with the party, the envelope position and the rule.
The replay viewer (:mod:`cli.replay_net`) reads games through here too (``record=True``).

Exit codes for the CLI: 0 fair, 1 unfair, 2 unreadable (:data:`EXIT_FAIR` …).
"""

from __future__ import annotations

import os
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from crypto.audit import AuditReport, EnvelopeEvent, OpEvent, Violation, audit
from crypto.errors import CheatDetected, MalformedInput
from crypto.transcript import signing_key
from engine.actions import RESOLVER, Action
from engine.errors import IllegalAction
from engine.game import new_game, scores, winners
from engine.rules import actors, apply, is_simultaneous
from engine.state import Config, GameState, make_config

from . import resolution
from .game import BoardMismatch, compute_game_id, game_config
from .resolution import ActionRefused, OpCall, check_move
from .store import GameStore, StoreError, read_export
from .wire import ACTION_KIND, action_body_ok
from .zones import COLOUR_OF, ZoneMap

EXIT_FAIR, EXIT_UNFAIR, EXIT_UNREADABLE = 0, 1, 2


class _NeedMore(Exception):
    """The step cannot be replayed yet: a later envelope or op is needed."""


@dataclass
class GameAuditReport:
    """Outcome: fair (crypto and engine), or the first violation."""

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

    @property
    def exit_code(self) -> int:
        if self.error is not None:
            return EXIT_UNREADABLE
        return EXIT_FAIR if self.fair else EXIT_UNFAIR

    def __str__(self) -> str:
        if self.error is not None:
            return f"UNREADABLE: {self.error}"
        if self.violation is not None:
            return f"UNFAIR: {self.violation}"
        if not self.fair:
            return "UNFAIR: incomplete"
        return f"fair: {self.steps} engine steps replayed, scores {self.scores}"


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


class EngineReplay:
    """The audit hook: replays the engine from action envelopes and completed ops."""

    def __init__(self, players: int, config: Config | None = None, record: bool = False
                 ) -> None:
        """``config`` is the game's engine config (board and variant, see
        :meth:`p2p.store.ExportedGame.config`); None is the default board, base rules.
        ``record`` keeps every state and action (for the replay viewer)."""
        self.n = players
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

    # --- hook ----------------------------------------------------------------------------
    def __call__(self, ev: EnvelopeEvent | OpEvent) -> None:
        if isinstance(ev, OpEvent):
            self.ops.append(ev)
        elif ev.envelope.kind == ACTION_KIND:
            body = ev.envelope.body
            if action_body_ok(body):
                self.actions.setdefault(body[0], deque()).append(ev)
        self.advance()

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
            self.step += 1
            if self.record:
                self.states.append(self.state.copy())
                self.applied.append(a)

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
            return self._drive(resolution.resolve(s, self.zones, self.truth.get, False))
        if is_simultaneous(s):
            return self._drive(resolution.vizier(s, self.zones, acts))
        actor = acts[0]
        queue = self.actions.get(self.step, deque())
        while True:
            if not queue:
                raise _NeedMore
            env = queue[0].envelope
            if env.sender != actor:
                queue.popleft()  # refused live: out of turn
                continue
            try:
                a, _applied = check_move(s, env.body[1], in_place=False)
            except ActionRefused:
                queue.popleft()  # refused live: illegal
                continue
            break
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


def audit_wires(wires: list[bytes], keys: list[bytes], game_id: bytes,
                lam: int, config: Config | None = None, record: bool = False
                ) -> GameAuditReport:
    """Audit envelopes with the engine replayed (the core of :func:`audit_game`);
    ``config`` is the agreed board/variant (default board, base rules if None);
    ``record`` keeps every replayed state in the report's ``replay``."""
    pubs = []
    for seat, k in enumerate(keys):
        try:
            pubs.append(signing_key(k, f"seat {seat}'s roster key"))
        except MalformedInput as exc:
            # anybody could have signed in this seat's name: nothing it did is attributable
            return GameAuditReport(False, Violation(seat, None, None, "weak-key", str(exc)),
                                   None)
    replay = EngineReplay(len(keys), config, record)
    rep = audit(wires, pubs, game_id, lam, replay)
    st = replay.state
    over = not actors(st)
    out = GameAuditReport(rep.fair, rep.violation, rep, engine_replayed=over, steps=replay.step,
                          final_hash=st.hash(), replay=replay)
    if over:
        out.scores, out.winners = scores(st), winners(st)
    if rep.fair and not (over and rep.complete):
        out.fair = False
        why = "the game did not reach its end" if not over else "the secrets were not revealed"
        out.violation = Violation(None, None, None, "incomplete", why)
    return out


def audit_game(path: str | os.PathLike[str], record: bool = False) -> GameAuditReport:
    """Audit a ``game.silkroad`` file; never raises for bad input (see ``exit_code``).
    ``record`` keeps every replayed state and action (``report.replay``)."""
    try:
        game = read_export(path)
    except StoreError as exc:
        return GameAuditReport(False, None, None, error=str(exc))
    if compute_game_id(game.roster, game.params) != game.game_id:
        return GameAuditReport(False, Violation(None, None, None, "game-id",
                                                "game id is not H(roster, params)"), None)
    try:
        config = game.config()
    except BoardMismatch as exc:
        # the board in the file is not the one whose digest the game id binds
        return GameAuditReport(False, Violation(None, None, None, "board", exc.reason), None)
    try:
        return audit_wires(game.wires, [e.key for e in game.roster], game.game_id, game.lam,
                           config, record)
    except Exception as exc:
        return GameAuditReport(False, Violation(None, None, None, "audit-error", repr(exc)),
                               None)


def audit_folder(folder: str | os.PathLike[str]) -> GameAuditReport:
    """Audit a peer's game folder as far as it goes (e.g. a table that was abandoned).

    Without the secrets op the report cannot be ``fair`` (``incomplete``), but any
    violation up to the last stored envelope is found and named.
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
    try:
        report = audit_wires(wires, [e.key for e in roster], game_id, lam, config)
    except Exception as exc:
        report = GameAuditReport(False, Violation(None, None, None, "audit-error", repr(exc)),
                                 None)
    report.stopped = store.load_stopped()
    return report


def summary(report: GameAuditReport) -> dict[str, Any]:
    """JSON-friendly summary for the CLI."""
    return {"fair": report.fair, "exit_code": report.exit_code, "text": str(report),
            "steps": report.steps, "scores": report.scores, "winners": report.winners,
            "final_hash": report.final_hash.hex() if report.final_hash else None,
            "stopped": report.stopped}

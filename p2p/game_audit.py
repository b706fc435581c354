"""Offline audit of a saved game: every signature, proof and token, and the engine replayed.

:func:`audit_game` reads a self-contained ``game.silkroad`` file and runs
:func:`crypto.audit.audit` with a hook that replays the engine alongside, exactly as the live
table did (:mod:`p2p.lockstep`): actions are taken per step from the actor, op results become
resolutions, and — because the auditor decrypts everything once the secrets are published —
every hidden claim (sold goods, given goods, final reveal) is checked against the real
colours.  The first violation is reported with the party, the envelope position and the rule.

Exit codes for the CLI: 0 fair, 1 unfair, 2 unreadable (:data:`EXIT_FAIR` …).
"""

from __future__ import annotations

import os
from collections import deque
from dataclasses import dataclass
from typing import Any

from crypto.audit import AuditReport, EnvelopeEvent, OpEvent, Violation, audit
from crypto.errors import CheatDetected, MalformedInput
from crypto.transcript import signing_key
from engine.actions import (
    RESOLVER,
    Action,
    Dealt,
    FinalReveal,
    Seed,
    Sell,
    Stolen,
    VizierReveals,
    Withdrawn,
    decode,
)
from engine.errors import DecodeError, IllegalAction
from engine.game import new_game, scores, winners
from engine.rules import actors, apply, is_simultaneous
from engine.state import BUY, TRADE, Config, GameState, Phase, make_config

from .game import BoardMismatch, compute_game_id, game_config
from .lockstep import action_body_ok
from .store import GameStore, StoreError, read_export
from .zones import COLOUR_OF, LABEL_OF, ZoneMap, group_request

EXIT_FAIR, EXIT_UNFAIR, EXIT_UNREADABLE = 0, 1, 2
ACTION_KIND = "action"


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


class EngineReplay:
    """The audit hook: replays the engine from action envelopes and completed ops."""

    def __init__(self, players: int, config: Config | None = None) -> None:
        """``config`` is the game's engine config (board and variant, see
        :meth:`p2p.store.ExportedGame.config`); None is the default board, base rules."""
        self.n = players
        self.state = new_game(config if config is not None else make_config(players))
        self.zones = ZoneMap(players)
        self.step = 0
        self.ops: list[OpEvent] = []
        self.op_cursor = 0
        self.actions: dict[int, deque[EnvelopeEvent]] = {}
        self.truth: dict[int, int] = {}
        self.secrets_seen = False

    # --- hook ----------------------------------------------------------------------------
    def __call__(self, ev: EnvelopeEvent | OpEvent) -> None:
        if isinstance(ev, OpEvent):
            self.ops.append(ev)
            if ev.name == "secrets":
                self.secrets_seen = True
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
            self.on_applied(a)

    def on_applied(self, action: Action) -> None:
        """Called after each replayed engine step (the replay viewer records states here)."""

    # --- ops ------------------------------------------------------------------------------
    def _op(self, name: str) -> OpEvent:
        if self.op_cursor >= len(self.ops):
            raise _NeedMore
        ev = self.ops[self.op_cursor]
        if ev.name != name:
            raise CheatDetected(None, "op-sequence",
                                f"step {self.step} expects op {name}, transcript has {ev.name}")
        self.op_cursor += 1
        return ev

    def _learn(self, ev: OpEvent) -> None:
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
            return self._resolve(s)
        if is_simultaneous(s):
            ev = self._op("sealed")
            rev = ev.result["revealed"]
            self._learn(ev)
            return VizierReveals(tuple(tuple(self.zones.hands[p][i] for i in rev[p])
                                       for p in range(self.n)))
        actor = acts[0]
        queue = self.actions.get(self.step, deque())
        while True:
            if not queue:
                raise _NeedMore
            aev = queue[0]
            env = aev.envelope
            if env.sender != actor:
                queue.popleft()  # refused live: out of turn
                continue
            try:
                a = decode(env.body[1])
                trial = s.copy()
                apply(trial, a)
            except (DecodeError, IllegalAction):
                queue.popleft()  # refused live: illegal
                continue
            break
        if isinstance(a, Sell):
            assert s.tile is not None
            self._claim(actor, a.handles, (s.tile.colour,) * len(a.handles), aev.index)
        queue.popleft()
        return a

    def _claim(self, seat: int, handles: tuple[int, ...], claimed: tuple[int, ...],
               where: int) -> None:
        positions = self.zones.positions(seat, handles)
        ev = self._op("open")
        self._learn(ev)
        if ev.result["zone"] != seat or list(ev.result["positions"]) != positions:
            raise CheatDetected(None, "op-sequence", f"step {self.step}: unexpected open")
        for h, c in zip(handles, claimed, strict=True):
            real = self.truth.get(h)
            if real is not None and real != c:
                raise CheatDetected(seat, "false-claim",
                                    f"step {self.step}: good #{h} claimed {LABEL_OF[c]} but is "
                                    f"{LABEL_OF[real]} (action envelope #{where})")
        self._op("return")
        self.zones.returned(seat, positions)

    def _resolve(self, s: GameState) -> Action:
        ph = s.phase
        if ph == Phase.SEED:
            return Seed(bytes(self._op("coinflip").result["coin"][:32]))
        if ph == Phase.DEAL:
            self._op("keys")
            ev = self._op("deal")
            self.zones.dealt(s.config.goods_each)
            self._learn(ev)
            return Dealt()
        if ph == Phase.WITHDRAW:
            assert s.pending is not None
            purpose, request, partial = s.pending
            ev = self._op("withdraw")
            reqs = group_request(request)
            per_req = self.zones.withdrawn(s.actor, ev.result["taken"])
            self._learn(ev)
            pools = {lab: list(hs) for (lab, _k), hs in zip(reqs, per_req, strict=True)}
            got: list[int] = []
            for c in request:
                if not pools[LABEL_OF[c]]:
                    break
                got.append(pools[LABEL_OF[c]].pop(0))
            if not partial and len(got) != len(request):
                got = []
            if got and purpose != BUY:
                assert s.tile is not None
                if purpose == TRADE:
                    self._claim(s.actor, tuple(s.trade_give), tuple(s.tile.give), ev.envelope)
                else:
                    self._claim(s.actor, tuple(p[0] for p in s.pairs),
                                tuple(p[1] for p in s.pairs), ev.envelope)
            return Withdrawn(tuple(got))
        if ph == Phase.STEAL:
            ev = self._op("steal")
            self.zones.stolen(s.actor, s.steal_victim, ev.result["index"], s.next_handle)
            self._learn(ev)
            return Stolen(ev.result["index"])
        if ph == Phase.REVEAL:
            colours: list[tuple[int, ...]] = []
            for p in range(self.n):
                if not s.goods[p]:
                    colours.append(())
                    continue
                ev = self._op("open")
                self._learn(ev)
                by = {h: COLOUR_OF[lab] for h, lab in zip(self.zones.hands[p],
                                                          ev.result["labels"], strict=True)}
                for h, c in by.items():
                    if self.truth.get(h, c) != c:
                        raise CheatDetected(p, "reveal-mismatch", f"good #{h}")
                colours.append(tuple(by[h] for h in s.goods[p]))
            return FinalReveal(tuple(colours))
        raise CheatDetected(None, "engine", f"unexpected resolver phase {ph.name}")


def audit_wires(wires: list[bytes], keys: list[bytes], game_id: bytes,
                lam: int, config: Config | None = None) -> GameAuditReport:
    """Audit envelopes with the engine replayed (the core of :func:`audit_game`);
    ``config`` is the agreed board/variant (default board, base rules if None)."""
    pubs = []
    for seat, k in enumerate(keys):
        try:
            pubs.append(signing_key(k, f"seat {seat}'s roster key"))
        except MalformedInput as exc:
            # anybody could have signed in this seat's name: nothing it did is attributable
            return GameAuditReport(False, Violation(seat, None, None, "weak-key", str(exc)),
                                   None)
    replay = EngineReplay(len(keys), config)
    rep = audit(wires, pubs, game_id, lam, replay)
    st = replay.state
    over = not actors(st)
    out = GameAuditReport(rep.fair, rep.violation, rep, engine_replayed=over, steps=replay.step,
                          final_hash=st.hash())
    if over:
        out.scores, out.winners = scores(st), winners(st)
    if rep.fair and not (over and rep.complete):
        out.fair = False
        why = "the game did not reach its end" if not over else "the secrets were not revealed"
        out.violation = Violation(None, None, None, "incomplete", why)
    return out


def audit_game(path: str | os.PathLike[str]) -> GameAuditReport:
    """Audit a ``game.silkroad`` file; never raises for bad input (see ``exit_code``)."""
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
                           config)
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

"""Offline audit of a saved game: every signature, proof, token, ack and rule, and the
engine replayed — and whether the game is *certified*.

:func:`audit_game` reads a self-contained ``game.silkroad`` file.  In order:

1. the envelopes are read into each sender's chain (:func:`crypto.audit.read_chains`),
   from the set of envelopes: the file's order and repetitions name no one, two signed
   versions of one envelope name their signer;
2. every ack's heads are compared with the file (:func:`p2p.judge.evidence.check_heads`): a seat
   contradicting its own signatures is named, any other disagreement is a dispute;
3. (version 6 on) every crypto body's heads are checked for shape and taken off
   (:func:`_crypto_heads`); then :class:`crypto.audit.Auditor` re-runs every proof and
   decrypts every token in one canonical order, with
   :class:`p2p.judge.engine_replay.EngineReplay` as its hook (actions, ops asked by the
   resolution script, claims);
4. acks, closes and abort notices are checked, and every violation found is attributed
   by the evidence rule (:mod:`p2p.judge.evidence`): a state-dependent one names its signer only
   if it acknowledged the history it rests on (a crypto message: by its acks and by its
   own heads).

Verdicts (:func:`p2p.judge.evidence.decide`, docs/security.md): **certified** (exit 0), **unfair**
always naming a seat (exit 1), **unreadable** (exit 2), and — naming no one —
**disputed**, **stopped**, **damaged**, **incomplete** or **not certified** (exit 3).  The
replay viewer (:mod:`cli.replay.network`) reads games through here too (``record=True``).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from crypto.audit import (
    Auditor,
    AuditReport,
    Chains,
    Violation,
    read_chains,
)
from crypto.errors import CheatDetected, MalformedInput
from crypto.transcript import CRYPTO_KIND, Envelope, EquivocationProof, parse, signing_key
from engine.game import scores, winners
from engine.rules import actors
from engine.state import Config

from ..game import (
    CERTIFIED_SINCE,
    BoardMismatch,
    compute_game_id,
    game_config,
    lambda_problem,
)
from ..net.handshake import PROTOCOL_VERSION
from ..net.mesh import RosterEntry
from ..protocol.resolution import deal_mode
from ..protocol.wire import (
    ABORT_KIND,
    ACK_KIND,
    ACTION_KIND,
    CLOSE_KIND,
    HEADS_SINCE,
    PROOF_RULES,
    RELAYED_TALK_SINCE,
    TALK_SINCE,
    abort_body_ok,
    abort_evidence,
    ack_body_ok,
    crypto_core,
    crypto_heads_problem,
)
from ..sanitize import clean
from ..store import GameStore, StoreError, read_export
from .engine_replay import EngineReplay
from .evidence import (
    CERTIFIED,
    DAMAGED,
    DISPUTED,
    EXIT_FAIR,
    EXIT_NOT_CERTIFIED,
    EXIT_OF,
    EXIT_UNFAIR,
    EXIT_UNREADABLE,
    HEADS_FREE,
    INCOMPLETE,
    NOT_CERTIFIED,
    SELF_EVIDENT,
    STOPPED,
    UNFAIR,
    UNREADABLE,
    Acknowledged,
    Findings,
    check_heads,
    crypto_rests_on,
    decide,
    stop_words,
)

__all__ = [
    "CERTIFIED", "DAMAGED", "DISPUTED", "EXIT_FAIR", "EXIT_NOT_CERTIFIED", "EXIT_UNFAIR",
    "EXIT_UNREADABLE", "INCOMPLETE", "NOT_CERTIFIED", "STOPPED", "UNFAIR", "UNREADABLE",
    "EngineReplay", "GameAuditReport", "audit_folder", "audit_game", "audit_wires",
    "check_heads", "shown_names", "summary",
]

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
        :func:`p2p.judge.evidence.decide`."""
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
    certified).  Who is named follows the evidence rule of :mod:`p2p.judge.evidence`."""
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
    replay = EngineReplay(n, config, record, game_id, deal_mode(shuffle_mode, version),
                          talk=version >= TALK_SINCE,
                          relayed_talk=version >= RELAYED_TALK_SINCE)
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
    proven = _proven_equivocation(chains, pubs, game_id)
    if proven is not None:
        found.violation = proven
        return report(None)
    acked = Acknowledged.from_chains(chains, n)
    head_violation, found.disputes, head_notes = check_heads(chains, n)
    if head_violation is not None:
        found.violation = head_violation
        return report(None)
    heads: dict[tuple[int, int], list[Any]] = {}
    run = chains
    if version >= HEADS_SINCE:
        malformed, run, heads = _crypto_heads(chains, n)
        if malformed is not None:
            found.violation = malformed
            return report(None)
    auditor = Auditor(pubs, game_id, lam, replay, progress)
    replay.consumed = auditor.consumed
    rep = auditor.run_chains(run, len(wires))
    found.damage = list(rep.damage)
    found.missing = list(rep.missing) + sorted(set(head_notes))
    found.complete = rep.complete
    found.secrets_absent = [p for p in range(n) if p not in rep.secrets_from]
    found.unused = [f"seat {p} signed {k} envelope{'s' if k > 1 else ''} the game never used "
                    f"(from its envelope {q} on)" for p, (k, q) in sorted(auditor.unused.items())]
    found.unused += _after_close(chains) + _closes_short(chains, replay)
    rests = _Rests(heads, chains.log.by_sender)
    if rep.violation is not None:
        _judged(found, _attribute(rep.violation, replay, acked, rests=rests))
    else:
        for candidate, at in _check_closes(replay, rep) + _check_acks(replay, version):
            if found.violation is None:
                _judged(found, _attribute(candidate, replay, acked, at, rests))
        if found.violation is None and not found.disputes:
            whole = not actors(replay.state) and not found.missing and not auditor.left_over
            _judged(found, _check_aborts(replay, chains, pubs, game_id, whole))
    found.stops = [stop_words(ev.envelope.sender, ev.envelope.body) for ev in replay.stops]
    return report(rep)


def _crypto_heads(chains: Chains, n: int
                  ) -> tuple[Violation | None, Chains, dict[tuple[int, int], list[Any]]]:
    """Version 6 on: every crypto body's heads checked for shape (a malformed one is its
    signer's ``malformed-crypto``, the first by sender and seq, as the chains alone
    decide), and taken off for the crypto audit, which reads crypto's five elements
    (:func:`p2p.protocol.wire.crypto_core`).  Returns the violation, the chains to audit and
    the heads by ``(sender, seq)``."""
    heads: dict[tuple[int, int], list[Any]] = {}
    accepted: list[tuple[int, Envelope]] = []
    for i, env in chains.accepted:
        if env.kind == CRYPTO_KIND:
            problem = crypto_heads_problem(env.body, n, env.sender)
            if problem is not None:
                return (Violation(env.sender, i, (env.sender, env.seq), "malformed-crypto",
                                  f"seat {env.sender} {problem}"), chains, heads)
            heads[(env.sender, env.seq)] = env.body[5]
            env = dataclasses.replace(env, body=crypto_core(env.body))
        accepted.append((i, env))
    return None, dataclasses.replace(chains, accepted=accepted), heads


@dataclass
class _Rests:
    """What a crypto failure is read against (version 6 on): the heads of every crypto
    message, and the chains the file holds (:func:`p2p.judge.evidence.crypto_rests_on`)."""

    heads: dict[tuple[int, int], list[Any]]
    by_sender: dict[int, list[Envelope]]

    def why_not(self, v: Violation) -> str | None:
        """Why ``v``'s crypto message was made on another history than the file's."""
        if v.sender_seq is None or v.party != v.sender_seq[0] or v.rule in HEADS_FREE:
            return None
        heads = self.heads.get(v.sender_seq)
        return None if heads is None else crypto_rests_on(v.party, heads, self.by_sender)


def _proven_equivocation(chains: Chains, keys: list[Any], game_id: bytes) -> Violation | None:
    """The first equivocation proved by an abort notice in the file (two envelopes the
    accused signed that cannot both be in its chain): the accused's own signatures, so it
    is named before anything the replay finds — a crypto message does not name the
    messages it builds on, so an honest seat's message may well fail against the version
    of the equivocator's the file holds.  A proof that does not hold is judged with the
    other notices (:func:`_check_aborts`)."""
    for i, env in chains.accepted:
        body = env.body
        if env.kind != ABORT_KIND or not abort_body_ok(body) or len(body) != 5 \
                or body[1] not in PROOF_RULES:
            continue
        try:
            who = EquivocationProof(body[4][0], body[4][1]).equivocator(keys, game_id)
        except MalformedInput:
            continue
        return Violation(who, i, (env.sender, env.seq), str(body[1]),
                         f"seat {who} signed two envelopes that cannot both be in its chain "
                         f"(proof carried by seat {env.sender}'s abort notice)")
    return None


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
               step: int | None = None, rests: _Rests | None = None
               ) -> tuple[Violation | None, list[str]]:
    """Name ``v``'s seat if the evidence rule allows (:mod:`p2p.judge.evidence`), else say what
    disputes it.  ``step`` is the step the violation depends on (default: as raised);
    ``rests`` the crypto messages' heads (version 6 on): a failing crypto message names
    its signer only if its heads name the file's envelopes."""
    if v.party is None:
        return None, [f"rule {v.rule} is broken ({clean(v.detail, 300)}), and no single "
                      "seat's signature shows who broke it"]
    if v.rule in SELF_EVIDENT:
        return v, []
    other = rests.why_not(v) if rests is not None else None
    if other is not None:
        return None, [f"seat {v.party}'s crypto message breaks rule {v.rule} "
                      f"({clean(v.detail, 300)}) in the history this file holds, but "
                      f"{other}: it rests on a history the file does not hold, and the "
                      "file cannot tell whose word is false"]
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


def _check_acks(replay: EngineReplay, version: int) -> list[tuple[Violation, int]]:
    """Every ack's chain value against the replay's chain (version 1 acked plain state
    hashes on another schedule: only its heads are checked), in seat and round order, each
    with the step it rests on: the ack's own round (its signer acknowledged holding what
    the replay had taken by then, or the violation names no one)."""
    if version < 2:
        return []
    over = not actors(replay.state)
    out: list[tuple[Violation, int]] = []
    for ack in sorted(replay.acks, key=lambda a: (a.seat, a.round)):
        if ack.round <= replay.step:
            if ack.value != replay.chain[ack.round]:
                out.append((Violation(ack.seat, ack.index, (ack.seat, ack.seq),
                                      "ack-mismatch", f"seat {ack.seat} acknowledged a state "
                                      f"at step {ack.round} that the replay of the signed "
                                      "moves contradicts"), ack.round))
        elif over:
            out.append((Violation(ack.seat, ack.index, (ack.seat, ack.seq), "ack-beyond-end",
                                  f"seat {ack.seat} acknowledged step {ack.round} of a game "
                                  f"that ended after {replay.step}"), replay.step))
    return out


def _check_closes(replay: EngineReplay, rep: AuditReport
                  ) -> list[tuple[Violation, int]]:
    """A close's signer must have revealed its secrets before it (its chain up to the close
    is in the file, so an absent secret was never sent), and a close must cover the final
    state."""
    over = not actors(replay.state)
    out: list[tuple[Violation, int]] = []
    for c in sorted(replay.closes, key=lambda c: c.seat):
        if c.seat not in rep.secrets_from:
            out.insert(0, (Violation(c.seat, c.index, (c.seat, c.seq),
                                     "closed-without-secrets", f"seat {c.seat} signed the "
                                     "end of the game without revealing its secrets"),
                           replay.step))
        elif over and (c.round != replay.step or c.value != replay.chain[-1]):
            out.append((Violation(c.seat, c.index, (c.seat, c.seq), "close-mismatch",
                                  f"seat {c.seat} closed the game at step {c.round} with a "
                                  "state the replay contradicts"), replay.step))
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
                EquivocationProof(env.body[4][0], env.body[4][1]).equivocator(keys, game_id)
            except MalformedInput:
                return Violation(env.sender, ev.index, where, "false-abort",
                                 f"seat {env.sender} accused seat {culprit} of {clean(rule, 64)} "
                                 "with a proof that does not hold"), []
            continue  # a proof that holds named its signer before the replay ran
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

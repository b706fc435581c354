"""After-the-game auditor: verify everything, decrypt everything, name the first violator.

Input: the complete transcript (envelope wire bytes, in the order one peer recorded them),
the parties' Ed25519 verification keys and the game id. The end-of-game ``secrets`` op in
the transcript provides every key share ``x_j`` and every audit-mode shuffle witness.

Steps, in transcript order:

1. every envelope: signature, per-sender chain, no equivocation (transcript.TranscriptLog);
2. every crypto envelope is fed to an *observer* :class:`TokenSession`, which re-runs all the
   live checks of the protocols (Schnorr, DLEQ, shuffle proofs, commitments, counts);
3. when an op completes: audit-mode shuffle witnesses are checked, every ciphertext in the
   ledger is decrypted with ``x = Σ x_j``, conservation is checked (the multiset of labels
   over bag + hands equals the dealt deck) and withdraw claims are compared with the bag;
4. the ``hook`` receives every non-crypto envelope (:class:`EnvelopeEvent`, e.g. game
   actions for p2p's engine replay) and every completed op (:class:`OpEvent`, with the
   decrypted zones) in order; it may raise :class:`CheatDetected` to report a violation.

The report is ``fair`` or the first violation (party, envelope index, rule, detail).  A
party is named only on evidence it signed.  The file's order and completeness are not
such evidence — whoever hands out the file chooses them — so envelopes are read into each
sender's chain whatever their order in the file (:func:`read_chains`), and what the file
lacks or garbles is reported as ``damage`` or ``missing`` facts naming no one: an envelope
whose signature does not check, one that appears twice or before its predecessor, a gap in
a sender's chain, an op still waiting for messages at the end.  A transcript without the
secrets op is audited as far as possible (``complete = False``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from . import group as g
from . import shuffle as sh
from .elgamal import Ciphertext, decrypt_with_key
from .errors import CheatDetected, MalformedInput, ProofInvalid
from .ledger import BAG
from .protocols.base import Op
from .protocols.chain import ShuffleChain
from .protocols.deal import Deal
from .protocols.steal import Steal
from .protocols.withdraw import Withdraw
from .session import TokenSession, parse_body
from .transcript import CRYPTO_KIND, Envelope, TranscriptLog, parse


@dataclass(frozen=True)
class Violation:
    """First rule broken: who, where (index into the transcript, sender/seq), which rule."""

    party: int | None
    envelope: int | None
    sender_seq: tuple[int, int] | None
    rule: str
    detail: str

    def __str__(self) -> str:
        who = "unattributed" if self.party is None else f"party {self.party}"
        where = "end of transcript" if self.envelope is None else f"envelope #{self.envelope}"
        if self.sender_seq is not None:
            where += f" (sender {self.sender_seq[0]}, seq {self.sender_seq[1]})"
        return f"{who} at {where}: rule {self.rule}: {self.detail}"


@dataclass
class AuditReport:
    """Outcome of an audit: ``fair`` means no signed violation was found; ``damage`` and
    ``missing`` say what the file garbles or lacks (facts about the file, naming no one)."""

    fair: bool
    violation: Violation | None = None
    complete: bool = True
    envelopes: int = 0
    ops: int = 0
    damage: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    #: seats whose end-of-game secrets (key share, witnesses) the transcript holds
    secrets_from: list[int] = field(default_factory=list)

    def __str__(self) -> str:
        if self.violation is not None:
            return f"VIOLATION: {self.violation}"
        if self.damage or self.missing:
            return "no violation so far; " + "; ".join([*self.damage, *self.missing])[:600]
        return "fair" if self.complete else "fair so far (transcript has no secrets op)"


Evidence = Callable[[Envelope], list[bytes]]
"""Extra wires an envelope carries as evidence (an abort notice's offending envelope): they
are read into their senders' chains like any other envelope of the file."""


@dataclass
class Chains:
    """The file read into per-sender chains (see :func:`read_chains`)."""

    log: TranscriptLog
    #: ``(file index, envelope)`` in the order the envelopes joined their chains
    accepted: list[tuple[int, Envelope]]
    damage: list[str]
    missing: list[str]
    violation: Violation | None = None


def read_chains(transcript: Sequence[bytes], keys: Sequence[Ed25519PublicKey],
                game_id: bytes, evidence: Evidence | None = None) -> Chains:
    """Read a file's envelopes into each sender's chain, tolerating the file's order.

    An envelope that arrives before its predecessor is held until the predecessor turns
    up; an exact duplicate is skipped; one that is not validly signed for this game is
    skipped.  Each is noted as damage: none of it is anybody's signed act.  Two different
    validly signed envelopes for one slot, or one that does not chain to its sender's
    previous one, *is* the sender's signed act: that is the returned violation."""
    log = TranscriptLog(game_id, keys)
    held: dict[int, dict[int, tuple[int, Envelope]]] = {}
    out = Chains(log, [], [], [])

    def take(i: int, env: Envelope) -> None:
        while True:
            chain = log.by_sender.get(env.sender, [])
            where = f"envelope #{i} ({env.sender}/{env.seq})"
            if env.seq < len(chain) and chain[env.seq].wire == env.wire:
                out.damage.append(f"{where} appears twice in the file")
                return
            if env.seq > len(chain):
                slot = held.setdefault(env.sender, {})
                other = slot.get(env.seq)
                if other is None:
                    slot[env.seq] = (i, env)
                elif other[1].wire == env.wire:
                    out.damage.append(f"{where} appears twice in the file")
                elif out.violation is None:
                    out.violation = Violation(env.sender, i, (env.sender, env.seq),
                                              "equivocation", f"two different envelopes with "
                                              f"seq {env.seq} (file #{other[0]} and #{i})")
                return
            try:
                log.link(env)
            except CheatDetected as exc:
                if out.violation is None:
                    out.violation = Violation(exc.culprit, i, (env.sender, env.seq),
                                              exc.rule, exc.detail)
                return
            out.accepted.append((i, env))
            for extra in (evidence(env) if evidence is not None else []):
                read(i, extra, f"evidence carried by envelope #{i}")
            nxt = held.get(env.sender, {}).pop(env.seq + 1, None)
            if nxt is None:
                return
            out.damage.append(f"{where} comes after {env.sender}/{env.seq + 1} in the file")
            i, env = nxt

    def read(i: int, wire: bytes, what: str) -> None:
        try:
            env = parse(wire, keys, game_id)
        except CheatDetected as exc:
            out.damage.append(f"{what} is not a validly signed envelope of this game "
                              f"({exc.rule}: {exc.detail})")
            return
        take(i, env)

    for i, wire in enumerate(transcript):
        read(i, wire, f"envelope #{i}")
    for sender in sorted(held):
        if held[sender]:
            have = len(log.by_sender.get(sender, []))
            later = sorted(held[sender])
            out.missing.append(f"seat {sender}'s envelope {have} is not in the file "
                               f"(its envelopes {later[0]}..{later[-1]} are)")
    return out


@dataclass(frozen=True)
class EnvelopeEvent:
    """A non-crypto envelope (e.g. a game action), passed to the hook in order."""

    index: int
    envelope: Envelope


@dataclass(frozen=True)
class OpEvent:
    """A completed crypto op with full information (None labels when secrets are absent)."""

    index: int
    envelope: int
    name: str
    args: list[Any]
    result: dict[str, Any]
    zones: dict[int, list[str | None]]
    extra: dict[str, Any] = field(default_factory=dict)


Hook = Callable[[EnvelopeEvent | OpEvent], None]
PROGRESS_EVERY = 64
"""Envelopes between two progress reports of :class:`Auditor`."""


class Auditor:
    """Replays a transcript; see the module docstring."""

    def __init__(self, keys: Sequence[Ed25519PublicKey], game_id: bytes,
                 lam: int = sh.DEFAULT_LAMBDA, hook: Hook | None = None,
                 progress: Callable[[int, int], None] | None = None) -> None:
        """``progress(done, total)`` is called every :data:`PROGRESS_EVERY` envelopes."""
        self.progress = progress
        self.keys = list(keys)
        self.n = len(self.keys)
        self.game_id = game_id
        self.lam = lam
        self.hook = hook
        self._x: int | None = None
        self._xs: dict[int, int] = {}
        self._secret_env: dict[int, int] = {}
        self._witnesses: dict[tuple[int, int], Any] = {}
        self._cache: dict[Ciphertext, str | None] = {}
        self._deck: Counter[str] | None = None
        self._env_index = -1
        self._env: Envelope | None = None

    # --- pre-pass ---------------------------------------------------------------------------
    def _collect_secrets(self, envs: list[Envelope]) -> None:
        for i, env in enumerate(envs):
            if env.kind != CRYPTO_KIND:
                continue
            try:
                _idx, name, _args, step, payload = parse_body(env.body)
                if name != "secrets" or step != "secrets":
                    continue
                xb, wits = payload
                self._xs[env.sender] = g.decode_scalar(xb, "secret key")
                self._secret_env[env.sender] = i
                for op_index, w in wits:
                    self._witnesses[(op_index, env.sender)] = w
            except (MalformedInput, ValueError, TypeError):
                continue  # the replay reports malformed secrets precisely
        if len(self._xs) == self.n:
            self._x = sum(self._xs.values()) % g.L

    # --- decryption -------------------------------------------------------------------------
    def _label(self, session: TokenSession, ct: Ciphertext) -> str | None:
        if ct not in self._cache:
            assert self._x is not None
            self._cache[ct] = session.ctx.label_of.get(decrypt_with_key(ct, self._x))
        return self._cache[ct]

    def _zones(self, session: TokenSession) -> dict[int, list[str | None]]:
        led = session.ledger
        if self._x is None:
            return {z: [s.public for s in led.zone(z)] for z in range(-1, self.n)}
        return {z: [self._label(session, s.ct) for s in led.zone(z)] for z in range(-1, self.n)}

    # --- per-op checks ----------------------------------------------------------------------
    def _fail(self, party: int | None, rule: str, detail: str) -> CheatDetected:
        return CheatDetected(party, rule, detail)

    def _on_op(self, session: TokenSession, op: Op) -> None:
        extra: dict[str, Any] = {}
        if op.name == "keys" and self._xs:
            for p, x in sorted(self._xs.items()):
                if g.base_mul(x) != session.ctx.keys[p]:
                    self._env_index = self._secret_env[p]
                    raise self._fail(p, "secret-key-mismatch",
                                     "published secret key does not match the public key")
        if self._x is not None and isinstance(op, ShuffleChain) and not op.verified:
            decks = op.decks
            for k in range(self.n):
                raw = self._witnesses.get((op.index, k))
                if raw is None:
                    raise self._fail(k, "witness-missing",
                                     f"no shuffle witness published for op {op.index}")
                try:
                    w = sh.Witness.decode(raw, len(decks[k]))
                except MalformedInput as exc:
                    raise self._fail(k, "witness-malformed", str(exc)) from exc
                try:
                    sh.check_witness(decks[k], decks[k + 1], w, session.ctx.require_keys())
                except ProofInvalid as exc:
                    raise self._fail(k, "shuffle-not-permutation",
                                     f"op {op.index} shuffle {k}: {exc.reason}") from exc
        if self._x is not None and isinstance(op, Withdraw):
            bag_before = [self._label(session, ct) for ct in op.bag]
            counts = Counter(lab for lab in bag_before if lab is not None)
            extra["available"] = []
            for (lab, k), claim in zip(op.requests, op.claims, strict=True):
                extra["available"].append(counts[lab])
                if claim != min(counts[lab], k):
                    raise self._fail(op.taker, "withdraw-false-count",
                                     f"claimed {claim} of {lab!r} available (asked {k}) but the "
                                     f"bag held {counts[lab]}")
        zones = self._zones(session)
        if self._x is not None and op.name not in ("keys", "secrets", "coinflip"):
            flat = [lab for z in zones.values() for lab in z]
            if any(lab is None for lab in flat):
                raise self._fail(None, "invalid-plaintext",
                                 f"after op {op.name}#{op.index} a token decrypts to no label")
            multiset = Counter(lab for lab in flat if lab is not None)
            if isinstance(op, Deal):
                self._deck = Counter(op.labels)
            if self._deck is not None and multiset != self._deck:
                raise self._fail(None, "conservation",
                                 f"after op {op.name}#{op.index} the tokens are "
                                 f"{dict(sorted(multiset.items()))}, expected "
                                 f"{dict(sorted(self._deck.items()))}")
            if isinstance(op, Steal):
                extra["stolen"] = zones[op.thief][-1]
        if self.hook is not None:
            self.hook(OpEvent(op.index, self._env_index, op.name, op.args, op.result, zones,
                              extra))

    # --- main -------------------------------------------------------------------------------
    def run(self, transcript: Sequence[bytes], evidence: Evidence | None = None
            ) -> AuditReport:
        """Audit ``transcript``; never raises for bad input, reports it instead."""
        chains = read_chains(transcript, self.keys, self.game_id, evidence)
        return self.run_chains(chains, len(transcript))

    def run_chains(self, chains: Chains, envelopes: int) -> AuditReport:
        """Audit a file already read into chains (:func:`read_chains`)."""

        def report(fair: bool, violation: Violation | None, ops: int = 0,
                   complete: bool = True) -> AuditReport:
            return AuditReport(fair, violation, complete, envelopes, ops, chains.damage,
                               chains.missing, sorted(self._xs))

        if chains.violation is not None:
            return report(False, chains.violation)
        accepted = chains.accepted
        self._collect_secrets([env for _i, env in accepted])
        session = TokenSession(self.game_id, self.n, None, lam=self.lam)
        session.know_secrets(self._xs)  # the same verdicts, cheaper share checks
        session.listeners.append(lambda op: self._on_op(session, op))
        for pos, (i, env) in enumerate(accepted):
            if self.progress is not None and pos % PROGRESS_EVERY == 0:
                self.progress(pos, len(accepted))
            self._env_index = i
            try:
                if env.kind == CRYPTO_KIND:
                    session.receive(env.sender, env.body)
                elif self.hook is not None:
                    self.hook(EnvelopeEvent(i, env))
            except CheatDetected as exc:
                at = self._env_index
                sv = (env.sender, env.seq) if at == i else self._sender_seq(accepted, at)
                return report(False, Violation(exc.culprit, at, sv, exc.rule, exc.detail),
                              len(session.history))
            except MalformedInput as exc:
                return report(False, Violation(env.sender, i, (env.sender, env.seq),
                                               "malformed", str(exc)), len(session.history))
        if session.busy:
            op = session.current
            assert op is not None
            chains.missing.append(f"op {op.name}#{op.index} still waits for the messages of "
                                  f"seats {session.waiting_for()}, which are not in the file")
        return report(True, None, len(session.history),
                      complete=self._x is not None and session.closed)

    @staticmethod
    def _sender_seq(accepted: list[tuple[int, Envelope]], at: int) -> tuple[int, int] | None:
        for i, env in accepted:
            if i == at:
                return env.sender, env.seq
        return None


def audit(transcript: Sequence[bytes], keys: Sequence[Ed25519PublicKey], game_id: bytes,
          lam: int = sh.DEFAULT_LAMBDA, hook: Hook | None = None,
          evidence: Evidence | None = None) -> AuditReport:
    """Convenience wrapper around :class:`Auditor`."""
    return Auditor(keys, game_id, lam, hook).run(transcript, evidence)


__all__ = ["BAG", "AuditReport", "Auditor", "Chains", "EnvelopeEvent", "Evidence", "OpEvent",
           "Violation", "audit", "read_chains"]

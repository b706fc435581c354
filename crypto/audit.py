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
   over bag + hands + tokens set aside equals the dealt deck) and withdraw claims are
   compared with the bag;
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

import itertools
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
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
    #: ``(file index, envelope)`` of every sender's chain, by sender then seq
    accepted: list[tuple[int, Envelope]]
    damage: list[str]
    missing: list[str]
    violation: Violation | None = None


def read_chains(transcript: Sequence[bytes], keys: Sequence[Ed25519PublicKey],
                game_id: bytes, evidence: Evidence | None = None) -> Chains:
    """Read a file's envelopes into each sender's chain, whatever their order in the file.

    The result depends only on the *set* of envelopes the file holds (and the evidence they
    carry), never on their order or repetition: the interleaving of a file is whoever
    exported it's choice.  An envelope that is not validly signed for this game is skipped
    and noted as damage (nobody's signed act).  Two different validly signed envelopes for
    one slot, or one that does not chain to its sender's previous one, *is* the sender's
    signed act: the returned violation (the lowest sender and seq, so that the verdict is
    a function of the chains).  A gap in a sender's chain is a fact about the file
    (``missing``)."""
    log = TranscriptLog(game_id, keys)
    out = Chains(log, [], [], [])
    slots: dict[tuple[int, int], dict[bytes, tuple[int, Envelope]]] = {}

    def read(i: int, wire: bytes, what: str) -> None:
        try:
            env = parse(wire, keys, game_id)
        except CheatDetected as exc:
            out.damage.append(f"{what} is not a validly signed envelope of this game "
                              f"({exc.rule}: {exc.detail})")
            return
        slot = slots.setdefault((env.sender, env.seq), {})
        if env.wire in slot:
            return  # a copy: the file's repetition, nobody's act
        slot[env.wire] = (i, env)
        for extra in (evidence(env) if evidence is not None else []):
            read(i, extra, f"evidence carried by envelope #{i}")

    for i, wire in enumerate(transcript):
        read(i, wire, f"envelope #{i}")
    for sender in sorted({s for s, _q in slots}):
        seq = 0
        while (sender, seq) in slots:
            versions = sorted(slots[(sender, seq)].values(), key=lambda v: v[0])
            i, env = versions[0]
            if len(versions) > 1:
                if out.violation is None:
                    out.violation = Violation(sender, versions[1][0], (sender, seq),
                                              "equivocation",
                                              f"two different envelopes with seq {seq} (file "
                                              f"#{i} and #{versions[1][0]})")
                break
            try:
                log.link(env)
            except CheatDetected as exc:
                if out.violation is None:
                    out.violation = Violation(exc.culprit, i, (sender, seq), exc.rule,
                                              exc.detail)
                break
            out.accepted.append((i, env))
            seq += 1
        later = sorted(q for s, q in slots if s == sender and q > seq)
        if later and out.violation is None:
            out.missing.append(f"seat {sender}'s envelope {seq} is not in the file "
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
"""Receives every non-crypto envelope and every completed op.  A hook may also say when it
can take an envelope (see :class:`Auditor`): ``main_kinds`` (kinds that advance its state,
taken in each sender's order only when ``wants(envelope)``) and ``expects(index, name,
args)`` (whether the op a first crypto message opens is the one it asks for now; it raises
:class:`CheatDetected` naming the sender when it is another)."""
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
        #: per sender, the seq of its last state-changing envelope taken (read by the hook:
        #: what the replay rests on at each step)
        self.consumed: dict[int, int] = {}
        #: per sender, its last crypto message taken (where a deferred check's culprit is)
        self.last_crypto: dict[int, tuple[int, Envelope]] = {}
        #: state-changing envelopes never taken (the chains part from the replay there), and
        #: per sender how many and from which seq
        self.left_over = 0
        self.unused: dict[int, tuple[int, int]] = {}

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
            return {z: [s.public for s in led.zone(z)] for z in led.zone_ids()}
        return {z: [self._label(session, s.ct) for s in led.zone(z)] for z in led.zone_ids()}

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
        if isinstance(op, ShuffleChain) and not op.verified:
            # a witness needs only public data: checked whenever its seat published it
            decks = op.decks
            for k in range(self.n):
                raw = self._witnesses.get((op.index, k))
                if raw is None:
                    if k not in self._xs:
                        continue  # seat k's secrets are not in the file: incomplete
                    self._env_index = self._secret_env[k]
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
        """Audit a file already read into chains (:func:`read_chains`).

        The envelopes are taken in one canonical order that depends on the chains alone:
        first every *side* envelope (those that change no state: acks, notices), then the
        senders' state-changing envelopes merged by demand — seat by seat, each sender's
        next envelope is taken when the audit can use it now (a message of the op in
        progress, the first message of the op the hook asks for, an action for the step
        being decided); the rest waits its turn.  So a reordered file is judged exactly as
        the original, nothing is ever held ahead (no buffer an exporter could overflow in
        a seat's name), and what can never be used (a chain that parts from the replay)
        is simply left over: the hook's replay then stops short of the end."""

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
        hook = self.hook
        main_kinds: tuple[str, ...] = getattr(hook, "main_kinds", ())
        side = [(i, env) for i, env in accepted
                if env.kind != CRYPTO_KIND and env.kind not in main_kinds]
        main: dict[int, deque[tuple[int, Envelope]]] = {}
        for i, env in accepted:
            if env.kind == CRYPTO_KIND or env.kind in main_kinds:
                main.setdefault(env.sender, deque()).append((i, env))
        done = 0
        for i, env in itertools.chain(side, self._merged(main, session)):
            if self.progress is not None and done % PROGRESS_EVERY == 0:
                self.progress(done, len(accepted))
            done += 1
            self._env_index = i
            self._env = env
            if env.kind == CRYPTO_KIND or env.kind in main_kinds:
                self.consumed[env.sender] = env.seq  # what the state now rests on
            try:
                if env.kind == CRYPTO_KIND:
                    self.last_crypto[env.sender] = (i, env)
                    self._check_opening(session, env)
                    session.receive(env.sender, env.body)
                elif hook is not None:
                    hook(EnvelopeEvent(i, env))
            except CheatDetected as exc:
                return report(False, self._located(exc, i, env), len(session.history))
            except MalformedInput as exc:
                return report(False, Violation(env.sender, i, (env.sender, env.seq),
                                               "malformed", str(exc)), len(session.history))
        if session.busy:
            op = session.current
            assert op is not None
            chains.missing.append(f"op {op.name}#{op.index} still waits for the messages of "
                                  f"seats {session.waiting_for()}, which are not in the file")
        self.unused = {p: (len(m), m[0][1].seq) for p, m in main.items() if m}
        self.left_over = sum(len(m) for m in main.values())
        return report(True, None, len(session.history),
                      complete=self._x is not None and session.closed)

    def _merged(self, main: dict[int, deque[tuple[int, Envelope]]],
                session: TokenSession) -> Iterator[tuple[int, Envelope]]:
        """The state-changing envelopes in demand order (see :meth:`run_chains`): each time,
        the next envelope of the lowest seat that has a usable one.  Each is popped from
        ``main`` as it is handed out, so what is left is what was never used."""
        senders = sorted(main)
        while True:
            for sender in senders:
                queue = main[sender]
                if queue and self._usable(queue[0][1], session):
                    yield queue.popleft()
                    break
            else:
                return

    def _usable(self, env: Envelope, session: TokenSession) -> bool:
        """Whether the audit can take ``env`` now (a violation is always "usable": taking
        it raises)."""
        if env.kind != CRYPTO_KIND:
            wants = getattr(self.hook, "wants", None)
            return wants is None or bool(wants(env))
        if session.failed is not None:
            return True
        try:
            idx, _name, _args, _step, _payload = parse_body(env.body)
        except MalformedInput:
            return True
        cur = session.current
        if cur is not None:
            return idx <= cur.index
        if idx < len(session.history) or session.closed:
            return True
        if idx > len(session.history):
            return False
        expects = getattr(self.hook, "expects", None)
        return expects is None or bool(expects(idx))

    def _check_opening(self, session: TokenSession, env: Envelope) -> None:
        """The first message of an op opens it in the observer with the op it names: that
        must be the op the hook asks for (``check_op`` raises naming the sender), so that a
        message naming another op is its sender's, never the others' who name the right
        one."""
        check = getattr(self.hook, "check_op", None)
        if check is None or session.current is not None or session.failed is not None:
            return
        try:
            idx, name, args, _step, _payload = parse_body(env.body)
        except MalformedInput:
            return  # the session names it
        if idx == len(session.history) and not session.closed:
            check(env.sender, name, args)

    def _located(self, exc: CheatDetected, i: int, env: Envelope) -> Violation:
        """The violation, located at the culprit's own envelope: the one being taken if it is
        the culprit's, else the culprit's latest crypto message (a check that fails when
        another seat's message completes a batch), else nowhere."""
        c = exc.culprit
        if c is None or c == env.sender:
            return Violation(c, i, (env.sender, env.seq), exc.rule, exc.detail)
        mine = self.last_crypto.get(c)
        if mine is None:
            return Violation(c, None, None, exc.rule, exc.detail)
        return Violation(c, mine[0], (c, mine[1].seq), exc.rule, exc.detail)

def audit(transcript: Sequence[bytes], keys: Sequence[Ed25519PublicKey], game_id: bytes,
          lam: int = sh.DEFAULT_LAMBDA, hook: Hook | None = None,
          evidence: Evidence | None = None) -> AuditReport:
    """Convenience wrapper around :class:`Auditor`."""
    return Auditor(keys, game_id, lam, hook).run(transcript, evidence)


__all__ = ["BAG", "AuditReport", "Auditor", "Chains", "EnvelopeEvent", "Evidence", "OpEvent",
           "Violation", "audit", "read_chains"]

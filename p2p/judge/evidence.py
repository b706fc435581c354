"""The judge's evidence rule: who may be named, on what, and the verdict's words.

One rule, written in docs/security.md ("The evidence rule") and applied here for the
offline audit (:mod:`p2p.judge.game_audit`) and for the live table's judgement of accusations
(:mod:`p2p.table.aborts`, which audits the transcript it holds):

* A seat is named only when envelopes **it signed**, read against the history **it
  itself acknowledged**, prove the violation.  Some violations need nothing else: two
  versions of one envelope, a malformed or unknown envelope, a second ack, a close without
  secrets, a head that contradicts the signer's own chain (:data:`SELF_EVIDENT`).  Every
  other one holds only in the state the replay reached (:class:`StateCheat`): who is to
  act, what is legal, what state an ack or an action names, whether a crypto message
  checks against the decks before it.  Such a violation names its signer only if the
  signer acknowledged the history the replay rests on there — its signed heads cover every
  envelope the replay had taken when the step began (:meth:`Acknowledged.covers`), or, for
  the game's rules, it signed the very state the replay is in (an action's "state before",
  an ack's chain value).  Otherwise two seats' words disagree and the file does not hold
  what each acknowledged: nobody is named, the game is **disputed** (not certified) and the
  text says which seats disagree.
* A crypto message (protocol version 6 on) names its signer only if the heads it signed
  name the envelopes the file holds (:func:`crypto_rests_on`): a message does not name
  the inputs it used, its heads say what history it rested on.
* The file's order, gaps and repetitions name no one (:func:`crypto.audit.read_chains`,
  :meth:`crypto.audit.Auditor.run_chains`: the verdict is a function of the per-sender
  chains, never of their interleaving).
* An accusation (abort notice) is judged false only when the judge holds everything it
  points at and that checks out (:func:`unchecked`); otherwise nobody is named.
* A stop notice is an act: the game is **stopped** by its signer, the reason shown as that
  seat's unverified claim.

:func:`decide` is the one place where a verdict's status and words are set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from crypto.audit import Chains, Violation
from crypto.errors import CheatDetected
from crypto.transcript import Envelope

from ..protocol.wire import ACK_KIND, CLOSE_KIND, ack_body_ok
from ..sanitize import clean

EXIT_FAIR, EXIT_UNFAIR, EXIT_UNREADABLE, EXIT_NOT_CERTIFIED = 0, 1, 2, 3
CERTIFIED, UNFAIR, UNREADABLE = "certified", "unfair", "unreadable"
INCOMPLETE, DAMAGED, NOT_CERTIFIED = "incomplete", "damaged", "not certified"
DISPUTED, STOPPED = "disputed", "stopped"
"""The statuses that name no one (exit 3): seats' signed words disagree and the file does
not show who lied (*disputed*); a seat signed that it stopped the table (*stopped*); the
file was edited where nothing is signed (*damaged*); it lacks envelopes or secrets
(*incomplete*); a seat never signed the end, or the protocol predates closes (*not
certified*)."""

EXIT_OF = {CERTIFIED: EXIT_FAIR, UNFAIR: EXIT_UNFAIR, UNREADABLE: EXIT_UNREADABLE}

SELF_EVIDENT = frozenset({
    "equivocation", "bad-chain", "malformed-action", "malformed-ack", "malformed-close",
    "malformed-abort", "malformed-stop", "unknown-kind", "second-ack", "second-close",
    "superseded-action", "secret-key-mismatch", "closed-without-secrets", "witness-missing",
    "witness-malformed", "rewritten-history", "contradictory-acks", "false-abort",
    "weak-key", "malformed-crypto",
})
"""Rules a seat's own signed envelopes prove whatever the rest of the file holds."""


class StateCheat(CheatDetected):
    """A violation that holds in the replay's state at ``step`` only (see the module
    docstring); ``binding`` is the state hash the culprit signed with it, if any.
    ``rests_on``, when given, is everything the violation rests on (what the replay had
    taken when it was found, in-step envelopes included): the culprit must have
    acknowledged all of it, and a state it signed at the step's start is not enough."""

    def __init__(self, culprit: int | None, rule: str, detail: str, step: int,
                 binding: bytes | None = None, rests_on: dict[int, int] | None = None
                 ) -> None:
        super().__init__(culprit, rule, detail)
        self.step = step
        self.binding = binding
        self.rests_on = rests_on


@dataclass
class Acknowledged:
    """What each seat signed that it held: per acker, per sender, the highest seq whose id
    one of its acks (or closes) names *and* the file's chain agrees with (a chain is
    hash-linked, so that seat held the file's whole prefix up to there)."""

    heads: dict[int, dict[int, int]] = field(default_factory=dict)

    @classmethod
    def from_chains(cls, chains: Chains, players: int) -> Acknowledged:
        out = cls()
        by = chains.log.by_sender
        for _i, env in chains.accepted:
            if env.kind not in (ACK_KIND, CLOSE_KIND) or not ack_body_ok(env.body, players):
                continue
            mine = out.heads.setdefault(env.sender, {})
            for s, q, hid in env.body[2]:
                chain = by.get(s, [])
                if q < len(chain) and chain[q].id == hid and q > mine.get(s, -1):
                    mine[s] = q
        return out

    def covers(self, seat: int, frontier: dict[int, int]) -> bool:
        """Whether ``seat`` acknowledged holding every envelope of ``frontier`` (per
        sender, the last seq the replay rested on); its own chain is its own."""
        mine = self.heads.get(seat, {})
        return all(q <= mine.get(s, -1) for s, q in frontier.items() if s != seat)

    def gaps(self, seat: int, frontier: dict[int, int]) -> list[int]:
        """The seats whose envelopes ``seat`` never acknowledged as far as ``frontier``."""
        mine = self.heads.get(seat, {})
        return sorted(s for s, q in frontier.items() if s != seat and q > mine.get(s, -1))


HEADS_FREE = frozenset({"malformed", "flooding"})
"""Crypto failures of the message's own shape or count (a body crypto cannot parse, too
many messages ahead): wrong whatever history the signer held, so its heads do not matter
(the live table names them at once)."""


def crypto_rests_on(seat: int, heads: list[list[Any]],
                    by_sender: dict[int, list[Envelope]]) -> str | None:
    """Why a crypto message ``seat`` signed with ``heads`` (protocol version 6 on:
    :func:`p2p.protocol.wire.crypto_heads_problem`) was not made on the history
    ``by_sender`` holds, or None if it was.

    A crypto message does not name the messages it builds on: a seat that re-signs its
    own shuffle with another valid one makes the next seat's honest proof fail against the
    deck the file holds.  The heads are the signer's word of what it had taken in when it
    made the message.  Each must name the envelope the chains hold at that seq: since a
    chain is hash-linked, the signer then held the chains' very prefixes, the previous
    contributions of the op among them (an honest seat takes in its inputs before it
    answers them).  A head naming another id at its seq, or a seq beyond the chain, says
    the signer rested on a history these chains do not hold: its failure here names no
    one (unless that history's author equivocated, which names the author first).

    One rule for the live table (:meth:`p2p.table.accuser.Accuser.crypto_cheat`, on the
    log it holds) and the audit (:func:`p2p.judge.game_audit.audit_wires`, on the file)."""
    for s, q, hid in heads:
        chain = by_sender.get(s, [])
        if q >= len(chain):
            return (f"seat {seat} made it after taking in seat {s}'s envelope {q}, which is "
                    "not here")
        if chain[q].id != hid:
            return (f"seat {seat} made it on another version of seat {s}'s envelope {q} "
                    "than the one here")
    return None


def check_heads(chains: Chains, players: int
                ) -> tuple[Violation | None, list[str], list[str]]:
    """Compare every ack's heads with the envelopes the file holds.

    A head ``[s, q, id]`` in seat p's ack is p's signed word that it held seat s's envelope
    q with that id.  Only p's own words can name p: a head naming another version of p's
    *own* envelope (p signed two histories: ``rewritten-history``), or p's heads naming two
    versions of one slot of s's chain, or a version of an earlier slot than one it also
    acknowledged the file's version of (p held two forks: ``contradictory-acks``).  Any
    other head that contradicts the file is a dispute between p's word and s's signature:
    nobody is named (p may lie, or s may have shown p another version the file does not
    hold).  Returns the violation, the disputes and the notes on what the file lacks."""
    notes: list[str] = []
    by = chains.log.by_sender
    agree: dict[tuple[int, int], int] = {}
    disagree: dict[tuple[int, int], tuple[int, int, Envelope]] = {}
    named: dict[tuple[int, int, int], bytes] = {}
    for i, env in chains.accepted:
        if env.kind not in (ACK_KIND, CLOSE_KIND) or not ack_body_ok(env.body, players):
            continue
        p = env.sender
        for s, q, hid in env.body[2]:
            before = named.setdefault((p, s, q), hid)
            if before != hid:
                return (Violation(p, i, (p, env.seq), "contradictory-acks",
                                  f"seat {p}'s acks name two different envelopes as seat "
                                  f"{s}'s envelope {q}"), [], notes)
            chain = by.get(s, [])
            if q >= len(chain):
                notes.append(f"seat {p} acknowledged seat {s}'s envelope {q}, which is not "
                             "in the file")
                continue
            if chain[q].id == hid:
                agree[(p, s)] = max(q, agree.get((p, s), -1))
            elif s == p:
                return (Violation(p, i, (p, env.seq), "rewritten-history",
                                  f"seat {p}'s own ack names another version of its envelope "
                                  f"{q} than the one it signed in the file"), [], notes)
            elif (p, s) not in disagree or q < disagree[(p, s)][0]:
                disagree[(p, s)] = (q, i, env)
    for (p, s), (q, i, env) in sorted(disagree.items(), key=lambda kv: kv[0]):
        if agree.get((p, s), -1) >= q:
            return (Violation(p, i, (p, env.seq), "contradictory-acks",
                              f"seat {p} acknowledged seat {s}'s envelope "
                              f"{agree[(p, s)]} as the file holds it, and another version "
                              f"of the envelope {q} it chains to"), [], notes)
    disputes: list[str] = []
    for s in sorted({s for _p, s in disagree}):
        against = sorted(p for p, ss in disagree if ss == s)
        q0 = min(disagree[(p, s)][0] for p in against)
        disputes.append(f"seat{'s' if len(against) > 1 else ''} "
                        f"{', '.join(map(str, against))} signed that "
                        f"{'they' if len(against) > 1 else 'it'} held another version of seat "
                        f"{s}'s envelopes from {q0} on than the one in this file (seat {s} "
                        "rewrote its history, or the other seat's word is false: the file "
                        "cannot tell which)")
    return None, disputes, notes


def stop_words(sender: int, body: list[Any]) -> str:
    """A stop notice as shown: the seat that stopped the table, its reason as its claim
    (cleaned: :mod:`p2p.sanitize`)."""
    return (f"seat {sender} stopped the table; its reason, unverified: {clean(body[0], 64)}: "
            f"{clean(body[1], 230)}")


@dataclass
class Findings:
    """Everything the judge found, for :func:`decide`."""

    violation: Violation | None = None
    disputes: list[str] = field(default_factory=list)
    stops: list[str] = field(default_factory=list)
    damage: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    over: bool = False
    complete: bool = False
    secrets_absent: list[int] = field(default_factory=list)
    #: the game's protocol version, and whether that version carries closes
    version: int = 0
    certifiable: bool = True
    #: envelopes a seat signed that the game never used (its chain parts from the replay)
    unused: list[str] = field(default_factory=list)
    closed_by: list[int] = field(default_factory=list)
    players: int = 0


def decide(f: Findings) -> tuple[str, list[str], Violation | None]:
    """The verdict: ``(status, notes, violation)``; the one place it is set.

    A named seat (*unfair*) comes first: a cheat already signed is named whatever else
    happened.  Then, naming no one: *disputed*, *stopped*, *damaged*, *incomplete*, *not
    certified*; else *certified*.  ``violation`` is the named one, or a summary naming no
    one."""
    if f.violation is not None and f.violation.party is not None:
        return UNFAIR, [], f.violation
    status = CERTIFIED
    notes: list[str] = []
    if f.disputes:
        status, notes = DISPUTED, list(f.disputes)
    elif f.stops:
        status, notes = STOPPED, list(f.stops)
    elif f.damage:
        status, notes = DAMAGED, ["the file is damaged", *f.damage]
    elif f.missing or not f.over or not f.complete:
        status, notes = INCOMPLETE, list(f.missing)
        if not f.over:
            notes.append("the game did not reach its end")
        elif not f.complete:
            notes.append(f"the secrets of seats {f.secrets_absent} are not in the file, so "
                         "their shuffles and claims cannot be checked" if f.secrets_absent
                         else "the secrets were not revealed")
    elif f.unused:
        status, notes = NOT_CERTIFIED, list(f.unused)
    elif not f.certifiable:
        status, notes = NOT_CERTIFIED, [f"games of protocol version {f.version} carry no "
                                        "closing acknowledgements (everything present "
                                        "checks out)"]
    elif len(f.closed_by) < f.players:
        missing = [p for p in range(f.players) if p not in f.closed_by]
        status = NOT_CERTIFIED
        notes = [f"seat{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))} "
                 f"never acknowledged the end (seats {f.closed_by} did)"]
    if status == CERTIFIED:
        return status, [], None
    # what else the file shows, after the reason that decided
    lacks = list(f.missing)
    if not f.over:
        lacks.append("the game did not reach its end")
    elif not f.complete and f.secrets_absent:
        lacks.append(f"the secrets of seats {f.secrets_absent} are not in the file, so their "
                     "shuffles and claims cannot be checked")
    unclosed = [p for p in range(f.players) if p not in f.closed_by]
    if f.over and f.certifiable and unclosed:
        lacks.append(f"seat{'s' if len(unclosed) > 1 else ''} {', '.join(map(str, unclosed))} "
                     f"never acknowledged the end (seats {f.closed_by} did)")
    for extra in (f.disputes, f.stops, f.damage, lacks, f.unused):
        notes.extend(x for x in extra if x not in notes)
    rule = {DAMAGED: "damaged", INCOMPLETE: "incomplete", DISPUTED: "disputed",
            STOPPED: "stopped"}.get(status, "not-certified")
    return status, notes, Violation(None, None, None, rule, "; ".join(notes)[:1000])

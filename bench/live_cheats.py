"""A live adversary: one seat of a real table misbehaves, in a way and at a moment chosen
at random.

Why: the table and the audit promise that an honest seat is never named, whatever the
others sign or withhold.  The hand-written cheat tests each check one cheat at one chosen
moment; the judge's corner cases (a stop notice racing a deferred check, an accusation
judged before the envelope it names arrives, a split view of one envelope) show up at
moments nobody thought to pick.  This module makes one seat misbehave in many ways at
random moments, so that :mod:`bench.live_adversary` (and its test) can check every honest
seat's verdicts over many games.

How: :func:`arm` is a ``prepare(table)`` hook for the cheating seat's table.  It replaces
the table's transport with a :class:`CheatTransport` (which may send an envelope to some
peers only, hold it back a while, show different peers different versions, or drop
everything) and its outbox with a :class:`CheatOutbox` (the one place where every envelope
of the seat is signed: it may change a body, sign a second version with the same sequence
number, or slip in envelopes of its own).  Everything else is the real table, with real
crypto, over real loopback sockets.  The misbehaviour fires at a random point — the first
suitable envelope the cheater signs once it has signed ``point`` envelopes — and
:attr:`Plan.acts` says in words what it did, for the report.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from dataclasses import dataclass, field
from typing import Any, cast

from crypto import group
from crypto.protocols.base import Step
from crypto.protocols.chain import ShuffleChain
from crypto.transcript import Envelope
from engine.actions import (
    RESOLVER,
    Action,
    Bid,
    Decline,
    KeepLead,
    Move,
    PassBid,
    PassPawn,
    SellLead,
    Steal,
    TakeTile,
    decode,
    encode,
)
from engine.rules import actors, is_simultaneous
from p2p.protocol.wire import (
    ABORT_KIND,
    ACK_KIND,
    ACTION_KIND,
    CLOSE_KIND,
    CRYPTO_KIND,
    ENV_TAG,
    PROOF_RULES,
    STOP_KIND,
)
from p2p.table import LockstepTable
from p2p.table.outbox import Outbox

MISBEHAVIOURS: tuple[str, ...] = (
    "partial-action",     # its action reaches some peers only
    "partial-ack",        # an ack reaches some peers only
    "partial-crypto",     # a crypto message reaches some peers only
    "partial-close",      # its close reaches some peers only
    "delay",              # a few envelopes held back a while (so they arrive out of order)
    "equivocate-action",  # two different legal actions for one step, one per group of peers
    "equivocate-ack",     # two acks of one round (one with a made-up chain value)
    "false-abort",        # an abort notice accusing an honest seat, honest evidence
    "stop-silent",        # a stop notice with some words, then nothing more
    "withhold-close",     # never sends its close
    "withhold-secrets",   # never sends its end-of-game secrets
    "go-silent",          # sends nothing more from some envelope on
    "wrong-state-hash",   # an action naming a made-up state hash
    "illegal-action",     # an action the rules forbid
    "unknown-kind",       # envelopes of kinds no table sends
    "corrupt-crypto",     # a crypto message with one point or byte changed
    "wrong-share",        # a decryption share changed: often only its recipient checks it
    "wrong-claim-share",  # a share changed in a claim's op (a sale: inside a player's step)
    "extra-action",       # an action for a step that is not its own, or a second one
    "equivocate-crypto",  # two valid shuffles of one deck, one per group of peers
)
"""Every misbehaviour :func:`choose_plan` may pick."""

POINT_RANGE = (0, 100)
"""The cheater's own envelope count at which it starts to misbehave (a 3-seat game with
frugal bots signs about 90–130 envelopes per seat)."""
EARLY_RANGE = (0, 12)
"""Points drawn one time in three: the set-up (coin flip, keys, the deal and its shares,
whose check only their recipient runs) is a dozen envelopes of a long game, and would
otherwise rarely be hit."""

AT_THE_END = ("partial-close", "withhold-close", "withhold-secrets")
"""Misbehaviours whose envelope is signed once, at the end: they fire whatever the point
(point 0), so that a short game cannot end before the cheater reaches it."""

AT_THE_START = ("equivocate-crypto",)
"""Misbehaviours that need the deal (the shuffles come at the start, and again only when
the bag is reshuffled): they fire at the first chance (point 0)."""

AT_THE_FIRST_SALE = ("wrong-claim-share",)
"""Misbehaviours that need a sale's claim inside a player's step: a game has a few, and
where they fall depends on the deal, which the shared coin makes different in every run
of one seed, so a late point may see none; they fire at the first chance (point 0)."""

DELAY_RANGE = (0.1, 5.0)
"""Seconds a delayed envelope is held back (the bench's abandon timeout is longer, so a
delay alone never makes an honest seat give up)."""

FALSE_RULES = ("illegal-action", "dleq-invalid", "ack-mismatch", "out-of-turn", "invalid-point",
               "shuffle-proof-invalid", "equivocation", "bad-chain", "timeout")
"""Rules a false accusation may name (the proof rules carry two honest envelopes that fit
one chain)."""

STOP_WORDS = ("disk on fire", "the cat unplugged it", "out of coffee", "lost the connection",
              "abandoned by the player", "I give up")
"""Words of the stop notices the cheater signs."""


@dataclass
class Plan:
    """Who cheats, how and from when; filled in with what it actually did."""

    seed: int
    players: int
    cheater: int
    kind: str
    point: int
    rng: random.Random = field(repr=False)
    #: what the cheater did, in words, in order
    acts: list[str] = field(default_factory=list)

    @property
    def fired(self) -> bool:
        """Whether the misbehaviour happened at all (the game may end before ``point``)."""
        return bool(self.acts)

    def describe(self) -> str:
        """One line for a report: enough to read what happened and to play it again."""
        did = "; ".join(self.acts) if self.acts else "never fired (the game ended first)"
        return (f"seed {self.seed}, {self.players} seats: seat {self.cheater} {self.kind} "
                f"from its envelope #{self.point}: {did}")


def choose_plan(seed: int, players: int, kinds: tuple[str, ...] | None = None) -> Plan:
    """The cheater, its misbehaviour and its point, drawn from ``seed`` (every later random
    choice of the cheater comes from the same generator, so a seed replays the plan)."""
    rng = random.Random(seed)
    cheater = rng.randrange(players)
    kind = rng.choice(kinds or MISBEHAVIOURS)
    if kind not in MISBEHAVIOURS:
        raise ValueError(f"unknown misbehaviour {kind!r}; known: {', '.join(MISBEHAVIOURS)}")
    point = rng.randint(*(EARLY_RANGE if rng.random() < 1 / 3 else POINT_RANGE))
    if kind in AT_THE_END or kind in AT_THE_START or kind in AT_THE_FIRST_SALE:
        point = 0
    return Plan(seed, players, cheater, kind, point, rng)


@dataclass
class _Route:
    """Where one of our envelopes goes: ``to`` (None: everyone), a second version ``alt``
    for the seats ``alt_to``, held back ``hold`` seconds, or the last thing we send."""

    to: frozenset[int] | None = None
    alt: bytes | None = None
    alt_to: frozenset[int] = frozenset()
    hold: float = 0.0
    released: bool = False
    scheduled: bool = False
    then_silent: bool = False


class CheatTransport:
    """The cheater's mesh: routes its envelopes as told (:meth:`route`), or drops
    everything once :attr:`silent`.  Sync answers go through it too, so an envelope sent
    to some peers only cannot be fetched from the cheater: only from the peers that got
    it."""

    def __init__(self, inner: Any, me: int, players: int) -> None:
        self.inner = inner
        self.others = [s for s in range(players) if s != me]
        self.routes: dict[bytes, _Route] = {}
        self.silent = False
        self.closed = False
        self._timers: list[asyncio.TimerHandle] = []

    def route(self, wire: bytes, *, to: frozenset[int] | None = None, alt: bytes | None = None,
              alt_to: frozenset[int] = frozenset(), hold: float = 0.0,
              then_silent: bool = False) -> None:
        """Say where ``wire`` (one of our envelopes) goes when it is sent."""
        self.routes[wire] = _Route(to, alt, alt_to, hold, then_silent=then_silent)

    def _lookup(self, body: bytes) -> _Route | None:
        if body[:1] != ENV_TAG:
            return None
        return self.routes.get(body[1:])

    def _deliver(self, seat: int, wire: bytes, r: _Route) -> None:
        if r.to is None or seat in r.to:
            self.inner.send(seat, ENV_TAG + wire)
        elif r.alt is not None and seat in r.alt_to:
            self.inner.send(seat, ENV_TAG + r.alt)

    def broadcast(self, body: bytes) -> None:
        if self.silent:
            return
        r = self._lookup(body)
        if r is None:
            self.inner.broadcast(body)
            return
        if r.hold > 0 and not r.released:
            if not r.scheduled:
                r.scheduled = True
                loop = asyncio.get_running_loop()
                self._timers.append(loop.call_later(r.hold, self._release, body[1:]))
            return
        for seat in self.others:
            self._deliver(seat, body[1:], r)
        if r.then_silent:
            self.silent = True

    def send(self, seat: int, body: bytes) -> None:
        if self.silent:
            return
        r = self._lookup(body)
        if r is None:
            self.inner.send(seat, body)
        elif r.hold <= 0 or r.released:
            self._deliver(seat, body[1:], r)

    def _release(self, wire: bytes) -> None:
        """A held envelope's time is up: send it now (after later ones: out of order)."""
        r = self.routes[wire]
        r.released = True
        if self.silent or self.closed:
            return
        try:
            for seat in self.others:
                self._deliver(seat, wire, r)
        except Exception:  # the mesh closed meanwhile (the game is over): nothing to send
            return

    def close(self) -> None:
        """The game is over: nothing held is sent any more."""
        self.closed = True
        for t in self._timers:
            t.cancel()

    async def next_event(self) -> Any:
        return await self.inner.next_event()

    async def next_events(self) -> list[Any]:
        return list(await self.inner.next_events())


def _some(rng: random.Random, seats: list[int]) -> frozenset[int]:
    """A random non-empty proper subset of ``seats`` (all of them if there is one)."""
    if len(seats) < 2:
        return frozenset(seats)
    return frozenset(rng.sample(seats, rng.randint(1, len(seats) - 1)))


def _shown(seats: frozenset[int]) -> str:
    return str(sorted(seats))


def _leaves(obj: Any, path: tuple[int, ...] = ()) -> list[tuple[int, ...]]:
    """Paths to every bytes leaf of a nested list."""
    if isinstance(obj, bytes):
        return [path] if obj else []
    if isinstance(obj, list | tuple):
        return [p for i, x in enumerate(obj) for p in _leaves(x, (*path, i))]
    return []


def _copy(obj: Any) -> Any:
    """A deep copy of a body (lists rebuilt, so a change never reaches the session's
    own objects)."""
    if isinstance(obj, list | tuple):
        return [_copy(x) for x in obj]
    return obj


def _get(obj: Any, path: tuple[int, ...]) -> Any:
    for i in path:
        obj = obj[i]
    return obj


def _set(obj: Any, path: tuple[int, ...], value: Any) -> None:
    for i in path[:-1]:
        obj = obj[i]
    obj[path[-1]] = value


def corrupt(body: Any, rng: random.Random) -> tuple[Any, str] | None:
    """A copy of a crypto body ``[op_index, op_name, op_args, step, payload]`` with one
    value of its payload changed — a valid point replaced by another valid point (a wrong
    share, a wrong blinding: only a proof or a later check can tell), else one bit of a
    byte string flipped — and what was changed; None if the payload holds no bytes."""
    new = _copy(body)
    paths = [(4, *p) for p in _leaves(new[4])]
    if not paths:
        return None
    points = [p for p in paths if group.is_point(_get(new, p))]
    if points:
        p = rng.choice(points)
        _set(new, p, group.base_mul(rng.randrange(1, group.L)))
        return new, f"point at payload{list(p[1:])} replaced by another valid point"
    p = rng.choice(paths)
    raw = bytearray(_get(new, p))
    i = rng.randrange(len(raw))
    raw[i] ^= 1 << rng.randrange(8)
    _set(new, p, bytes(raw))
    return new, f"bit flipped in byte {i} of payload{list(p[1:])}"


def _illegal_candidates(rng: random.Random, me: int) -> list[Action]:
    return [Bid(rng.randint(1_000, 10**6)), Bid(-1), PassBid(), Move(99), TakeTile(999),
            PassPawn(me), Steal(me), Decline(), SellLead(), KeepLead()]


class CheatOutbox(Outbox):
    """The cheater's outbox: every envelope it signs passes :meth:`sign`, where the plan
    may change it, split it, hold it or add envelopes after it."""

    def __init__(self, table: LockstepTable, plan: Plan, transport: CheatTransport) -> None:
        super().__init__(table.ctx, table.signer, table._dispatch)
        self.table = table
        self.plan = plan
        self.transport = transport
        self.rng = plan.rng
        self._done = False
        self._left: int | None = None  # envelopes still to hold back (delay)
        #: envelopes whose signed body differs from the one this seat itself acts on: the
        #: cheater plays on as if it had sent the honest one
        self._local: dict[bytes, Envelope] = {}
        #: a second valid payload of each of our shuffles, by (op index, step name)
        self.alternates: dict[tuple[int, str], Any] = {}

    # --- the hooks ----------------------------------------------------------------------
    def emit(self, kind: str, body: Any) -> Envelope:
        env = self.sign(kind, body)
        self._dispatch(self._local.pop(env.wire, env))
        self.send_own([env.wire], urgent=kind in (ACTION_KIND, ACK_KIND))
        return env

    def sign(self, kind: str, body: Any) -> Envelope:
        if self._done or self.signer.seq < self.plan.point:
            return self._plain(kind, body)
        handler = getattr(self, "_" + self.plan.kind.replace("-", "_"))
        env: Envelope | None = handler(kind, body)
        return env if env is not None else self._plain(kind, body)

    # --- helpers ------------------------------------------------------------------------
    def _plain(self, kind: str, body: Any) -> Envelope:
        return super().sign(kind, body)

    def _second(self, kind: str, body: Any, first: Envelope) -> bytes:
        """Sign ``body`` as a second version of ``first`` (same sequence number, same
        predecessor): the equivocation.  It stays out of our own log."""
        s = self.signer
        after = (s.seq, s.prev)
        s.seq, s.prev = first.seq, first.prev_hash
        try:
            return s.sign(kind, self.signed_body(kind, body))  # a crypto body: with heads
        finally:
            s.seq, s.prev = after

    def _did(self, what: str, done: bool = True) -> None:
        self.plan.acts.append(what)
        if done:
            self._done = True

    @staticmethod
    def _what(kind: str, seq: int, body: Any) -> str:
        if kind == ACTION_KIND:
            return f"action #{seq} (step {body[0]}: {decode(body[1])!r})"
        if kind == ACK_KIND:
            return f"ack #{seq} (round {body[0]})"
        if kind == CRYPTO_KIND:
            return f"crypto message #{seq} (op {body[0]} {body[1]})"
        return f"{kind} #{seq}"

    def _others(self) -> list[int]:
        return list(self.transport.others)

    def _split(self) -> tuple[frozenset[int], frozenset[int]]:
        a = _some(self.rng, self._others())
        return a, frozenset(self._others()) - a

    def _later(self, inject: Any) -> None:
        """Run ``inject`` once the envelope being signed has been handed to the transport
        (the signing call returns first; the event loop runs this right after)."""
        asyncio.get_running_loop().call_soon(self._guarded, inject)

    def _guarded(self, inject: Any) -> None:
        if self.transport.closed or self.table.done:
            self.plan.acts.append(f"({inject.__name__} skipped: the game was over)")
            return
        try:
            inject()
        except Exception as exc:  # the table stopped meanwhile (its store is closed)
            self.plan.acts.append(f"({inject.__name__} failed: {type(exc).__name__}: {exc})")

    def _inject(self, kind: str, body: Any, *, to: frozenset[int] | None = None,
                urgent: bool = False, then_silent: bool = False) -> Envelope:
        """Sign and send an envelope of our own making (never seen by our own table)."""
        env = self._plain(kind, body)
        if to is not None or then_silent:
            self.transport.route(env.wire, to=to, then_silent=then_silent)
        self.send_own([env.wire], urgent=urgent)
        return env

    # --- misbehaviours: each returns the envelope for our log, or None (not yet) ---------
    def _partial(self, kind: str, body: Any, want: str) -> Envelope | None:
        if kind != want:
            return None
        env = self._plain(kind, body)
        seats = _some(self.rng, self._others())
        self.transport.route(env.wire, to=seats)
        self._did(f"sent its {self._what(kind, env.seq, body)} to seats {_shown(seats)} only")
        return env

    def _partial_action(self, kind: str, body: Any) -> Envelope | None:
        return self._partial(kind, body, ACTION_KIND)

    def _partial_ack(self, kind: str, body: Any) -> Envelope | None:
        return self._partial(kind, body, ACK_KIND)

    def _partial_crypto(self, kind: str, body: Any) -> Envelope | None:
        return self._partial(kind, body, CRYPTO_KIND)

    def _partial_close(self, kind: str, body: Any) -> Envelope | None:
        return self._partial(kind, body, CLOSE_KIND)

    def _delay(self, kind: str, body: Any) -> Envelope | None:
        if self._left is None:
            self._left = self.rng.randint(1, 4)
        env = self._plain(kind, body)
        hold = round(self.rng.uniform(*DELAY_RANGE), 2)
        self.transport.route(env.wire, hold=hold)
        self._left -= 1
        self._did(f"held its {self._what(kind, env.seq, body)} back {hold} s",
                  done=self._left == 0)
        return env

    def _equivocate_action(self, kind: str, body: Any) -> Envelope | None:
        if kind != ACTION_KIND or len(body) != 3:
            return None
        t = self.table
        alts = [a for a in t.legal(t.me) if encode(a) != body[1]]
        if not alts:
            return None  # a forced move: wait for one with a choice
        alt = self.rng.choice(alts)
        env = self._plain(kind, body)
        second = self._second(kind, [body[0], encode(alt), body[2]], env)
        a, b = self._split()
        self.transport.route(env.wire, to=a, alt=second, alt_to=b)
        self._did(f"equivocated on its action #{env.seq} for step {body[0]}: "
                  f"{decode(body[1])!r} to seats {_shown(a)}, {alt!r} to seats {_shown(b)}")
        return env

    def _equivocate_ack(self, kind: str, body: Any) -> Envelope | None:
        if kind != ACK_KIND:
            return None
        env = self._plain(kind, body)
        second = self._second(kind, [body[0], self.rng.randbytes(32), body[2]], env)
        a, b = self._split()
        self.transport.route(env.wire, to=a, alt=second, alt_to=b)
        self._did(f"equivocated on its ack #{env.seq} of round {body[0]}: the true one to "
                  f"seats {_shown(a)}, one with a made-up chain value to seats {_shown(b)}")
        return env

    def _false_abort(self, kind: str, body: Any) -> Envelope | None:
        env = self._plain(kind, body)
        self._done = True
        self._later(self.accuse)
        return env

    def accuse(self) -> None:
        """Sign an abort notice naming a random honest seat for a random rule, with one of
        its (honest) envelopes as evidence — or two that fit one chain as a "proof"."""
        rng, t = self.rng, self.table
        accused = rng.choice(self._others())
        rule = rng.choice(FALSE_RULES)
        chain = t.log.by_sender.get(accused, [])
        evidence: list[bytes] = []
        ref: list[Any] | None = None
        if rule in PROOF_RULES and len(chain) >= 2:
            i = rng.randrange(len(chain) - 1)
            evidence = [chain[i].wire, chain[i + 1].wire]
            ref = [accused, chain[i + 1].seq, chain[i + 1].id]
            shown = f"its envelopes #{i} and #{i + 1} as a proof"
        else:
            if rule in PROOF_RULES:
                rule = "illegal-action"
            if chain:
                e = rng.choice(chain)
                evidence, ref = [e.wire], [accused, e.seq, e.id]
                shown = f"its {e.kind} #{e.seq} as evidence"
            else:
                shown = "no evidence"
        to = _some(rng, self._others()) if rng.random() < 0.3 else None
        then = rng.choice(("played on", "went silent"))
        self._inject(ABORT_KIND, [accused, rule, f"made up by seat {t.me}", ref, evidence],
                     to=to, urgent=True, then_silent=then == "went silent")
        where = "everyone" if to is None else f"seats {_shown(to)} only"
        self._did(f"at step {t.step} accused seat {accused} of {rule!r} falsely ({shown}), "
                  f"told {where}, then {then}")

    def _stop_silent(self, kind: str, body: Any) -> Envelope | None:
        env = self._plain(kind, body)
        self._done = True
        self._later(self.stop_notice)
        return env

    def stop_notice(self) -> None:
        """Sign a stop notice with some words, then send nothing more."""
        rule = self.rng.choice(("local-error", "abandoned", "left", "timeout"))
        words = self.rng.choice(STOP_WORDS)
        self._inject(STOP_KIND, [rule, words], urgent=True, then_silent=True)
        self._did(f"at step {self.table.step} signed a stop notice {rule}: {words!r}, then "
                  "went silent")

    def _withhold_close(self, kind: str, body: Any) -> Envelope | None:
        if kind != CLOSE_KIND:
            return None
        env = self._plain(kind, body)
        self.transport.route(env.wire, to=frozenset())
        self._did(f"never sent its close #{env.seq}")
        return env

    def _withhold_secrets(self, kind: str, body: Any) -> Envelope | None:
        if kind != CRYPTO_KIND or body[1] != "secrets":
            return None
        env = self._plain(kind, body)
        self.transport.route(env.wire, to=frozenset())
        self._did(f"never sent its secrets (crypto message #{env.seq})")
        return env

    def _go_silent(self, kind: str, body: Any) -> Envelope | None:
        env = self._plain(kind, body)
        self.transport.silent = True
        self._did(f"went silent at step {self.table.step} from its "
                  f"{self._what(kind, env.seq, body)} on")
        return env

    def _wrong_state_hash(self, kind: str, body: Any) -> Envelope | None:
        if kind != ACTION_KIND or len(body) != 3 or body[0] == 0:
            return None
        env = self._plain(kind, [body[0], body[1], self.rng.randbytes(32)])
        self._local[env.wire] = dataclasses.replace(env, body=body)
        self._did(f"signed its {self._what(kind, env.seq, body)} with a made-up state hash")
        return env

    def _illegal_action(self, kind: str, body: Any) -> Envelope | None:
        if kind != ACTION_KIND:
            return None
        t = self.table
        if self.rng.random() < 0.2:
            enc = self.rng.randbytes(self.rng.randint(0, 6))
            what = f"garbage bytes {enc.hex()!r} as its action"
        else:
            legal = t.legal(t.me)
            a = self.rng.choice([x for x in _illegal_candidates(self.rng, t.me)
                                 if x not in legal])
            enc, what = encode(a), f"the illegal {a!r}"
        env = self._plain(kind, [body[0], enc, *body[2:]])
        self._local[env.wire] = dataclasses.replace(env, body=body)
        self._did(f"signed {what} for step {body[0]} (envelope #{env.seq}) instead of "
                  f"{decode(body[1])!r}")
        return env

    def _unknown_kind(self, kind: str, body: Any) -> Envelope | None:
        env = self._plain(kind, body)
        self._done = True
        self._later(self.spam)
        return env

    def spam(self) -> None:
        """Sign a few envelopes of kinds no table sends."""
        rng = self.rng
        kinds = [rng.choice(("chat", "junk", "Ack", "actions", f"x-{rng.randrange(999)}"))
                 for _ in range(rng.randint(1, 4))]
        for k in kinds:
            self._inject(k, [rng.randrange(100), rng.randbytes(rng.randint(0, 16))])
        self._did(f"at step {self.table.step} signed envelopes of unknown kinds {kinds}")

    def _wrong_share(self, kind: str, body: Any) -> Envelope | None:
        if kind != CRYPTO_KIND or body[3] != "share":
            return None
        return self._corrupt_crypto(kind, body)

    def _wrong_claim_share(self, kind: str, body: Any) -> Envelope | None:
        st = self.table.state
        who = actors(st)
        in_a_move = bool(who) and who[0] != RESOLVER and not is_simultaneous(st)
        if kind != CRYPTO_KIND or body[3] != "share" or not in_a_move:
            return None
        return self._corrupt_crypto(kind, body)

    def _equivocate_crypto(self, kind: str, body: Any) -> Envelope | None:
        if kind != CRYPTO_KIND or not str(body[3]).startswith("shuffle"):
            return None
        alt = self.alternates.pop((body[0], body[3]), None)
        if alt is None:
            return None
        env = self._plain(kind, body)
        second = self._second(kind, [*body[:4], alt], env)
        a, b = self._split()
        self.transport.route(env.wire, to=a, alt=second, alt_to=b)
        self._did(f"equivocated on its {self._what(kind, env.seq, body)}: one valid shuffle "
                  f"to seats {_shown(a)}, another valid shuffle of the same deck to seats "
                  f"{_shown(b)}")
        return env

    def _corrupt_crypto(self, kind: str, body: Any) -> Envelope | None:
        if kind != CRYPTO_KIND:
            return None
        changed = corrupt(body, self.rng)
        if changed is None:
            return None
        new, how = changed
        env = self._plain(kind, new)
        then = self.rng.choice(("played on", "signed a stop notice", "went silent"))
        if then == "went silent":
            self.transport.route(env.wire, then_silent=True)
        elif then == "signed a stop notice":
            self._later(self.stop_after_cheat)
        self._did(f"corrupted its {self._what(kind, env.seq, body)}: {how}; then {then}")
        return env

    def stop_after_cheat(self) -> None:
        """A stop notice right behind a cheat: it may reach a peer before that peer's own
        check of the cheat has run."""
        words = self.rng.choice(STOP_WORDS)
        self._inject(STOP_KIND, ["local-error", words], urgent=True)
        self.plan.acts.append(f"stop notice local-error: {words!r}")

    def _extra_action(self, kind: str, body: Any) -> Envelope | None:
        env = self._plain(kind, body)
        self._done = True
        self._later(self.extra)
        return env

    def extra(self) -> None:
        """Sign an action for the current step, whoever is to act in it."""
        t = self.table
        choices: list[Action] = [PassBid(), Decline(), Bid(1), Bid(self.rng.randint(2, 40))]
        a = self.rng.choice(choices)
        who = actors(t.state)
        self._inject(ACTION_KIND, [t.step, encode(a), t.state_hash()], urgent=True)
        self._did(f"signed an extra action {a!r} for step {t.step} (actors there: "
                  f"{list(who)})")


@dataclass
class Adversary:
    """An armed cheater: its plan and the parts it replaced in its table."""

    plan: Plan
    table: LockstepTable
    transport: CheatTransport
    outbox: CheatOutbox

    def close(self) -> None:
        """The game is over: cancel whatever is still held back."""
        self.transport.close()


def arm(table: LockstepTable, plan: Plan) -> Adversary:
    """Make ``table`` (the cheater's, not yet running) misbehave as ``plan`` says: the
    ``prepare`` hook of a game runner."""
    if table.me != plan.cheater:
        raise ValueError(f"the plan's cheater is seat {plan.cheater}, not seat {table.me}")
    transport = CheatTransport(table.transport, table.me, table.n)
    table.transport = transport
    outbox = CheatOutbox(table, plan, transport)
    table.outbox = outbox
    if plan.kind == "equivocate-crypto":
        ses = table.session
        ses.ops = {name: _two_shuffles(cls, outbox.alternates, lambda: outbox._done)
                   if issubclass(cls, ShuffleChain) else cls for name, cls in ses.ops.items()}
    return Adversary(plan, table, transport, outbox)


def _two_shuffles(cls: type[Any], alternates: dict[tuple[int, str], Any],
                  done: Any) -> type[Any]:
    """``cls`` whose every shuffle of ours is made twice: the first is sent (and kept, with
    its witness), the second stashed in ``alternates`` for an equivocation."""

    class TwoShuffles(cls):
        def make_shuffle(self, st: Step) -> list[Any]:
            first = super().make_shuffle(st)
            if alternates or done():  # one equivocation (a shuffle with a proof is costly)
                return first
            witness = cast(ShuffleChain, self).witness
            alternates[(self.index, st.name)] = super().make_shuffle(st)
            cast(ShuffleChain, self).witness = witness
            return first

    TwoShuffles.__name__ = cls.__name__
    return TwoShuffles

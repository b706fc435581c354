"""Step machinery shared by every protocol op.

An op is a fixed sequence of *steps*; a step names the parties expected to send one message
each, in seat order. A party's own message is produced as soon as the step becomes
current (every earlier step fully processed), so parallel steps cost one round and
chains (one sender per step, such as the shuffle chain) fall out naturally. Received
messages are processed strictly in (step, seat) order, which makes every honest peer
process — and therefore blame — in the same order regardless of network arrival order.
Messages for later steps are buffered.

Each op class declares how every kind of step is played in :meth:`Op.step_handlers`: a
table from the step's kind to its :class:`StepHandlers` (``make`` builds this party's
payload, ``on`` checks and applies a sender's), checked when the op starts.

Every message body on the wire is ``[op_index, op_name, op_args, step_name, payload]``; the
header lets an auditor (an *observer* session with ``me = None``) rebuild the op and lets a
peer detect an op mismatch. A party never receives its own messages: they are applied
locally when produced.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .. import group as g
from ..elgamal import label_point
from ..errors import CheatDetected, InvalidPoint, MalformedInput, ProtocolStateError
from ..ledger import Ledger
from ..shuffle import DEFAULT_LAMBDA

Body = list[Any]


@dataclass
class Context:
    """Everything an op needs that is fixed for the session."""

    game_id: bytes
    n: int
    me: int | None
    x: g.Scalar | None = None
    keys: list[g.Point] = field(default_factory=list)
    joint: g.Point | None = None
    lam: int = DEFAULT_LAMBDA
    label_of: dict[bytes, str] = field(default_factory=dict)
    #: Observer only: the parties' published key shares (see TokenSession.know_secrets),
    #: used to check their share proofs the cheaper, exactly equivalent way.
    known_secrets: dict[int, int] = field(default_factory=dict)
    #: whether each known share matches its party's public key (checked once, on first use)
    known_checked: dict[int, bool] = field(default_factory=dict)

    def point_of(self, label: str) -> g.Point:
        """Plaintext point of a label (registering it in the decode table)."""
        p = label_point(label)
        self.label_of.setdefault(p, label)
        return p

    def require_keys(self) -> g.Point:
        """The joint key; raises if the key set-up has not run."""
        if self.joint is None:
            raise ProtocolStateError("key set-up has not completed")
        return self.joint


@dataclass
class Step:
    """One round: ``senders`` each send one message named ``name``."""

    name: str
    senders: list[int]

    @property
    def kind(self) -> str:
        """The name without its trailing index (``shuffle_3`` → ``shuffle``): the key of the
        step's handlers, so that N numbered steps of one kind share them."""
        return self.name.rstrip("0123456789_")


class StepHandlers(NamedTuple):
    """How one kind of step is played (bound methods of the op)."""

    #: This party's payload for the step (called once, when the step becomes current).
    make: Callable[[Step], Any]
    #: Check and apply ``sender``'s payload (called in seat order; raises to name a cheat).
    on: Callable[[Step, int, Any], None]


def check_int(v: object, what: str, lo: int = 0, hi: int | None = None) -> int:
    """Validate a received integer in ``[lo, hi)``."""
    if isinstance(v, bool) or not isinstance(v, int) or v < lo or (hi is not None and v >= hi):
        raise MalformedInput(f"{what} must be an integer in [{lo}, {hi}), got {v!r:.40}")
    return v


def check_list(v: object, what: str, length: int | None = None) -> list[Any]:
    """Validate a received list (optionally of a fixed length)."""
    if not isinstance(v, list):
        raise MalformedInput(f"{what} must be a list")
    if length is not None and len(v) != length:
        raise MalformedInput(f"{what} must have {length} entries, has {len(v)}")
    return v


class Op:
    """Base class of a protocol run. Subclasses set ``steps`` and declare their handlers in
    :meth:`step_handlers`."""

    name = "op"

    def __init__(self, ctx: Context, index: int, args: list[Any], ledger: Ledger) -> None:
        self.ctx = ctx
        self.index = index
        self.args = args
        self.ledger = ledger
        self.steps: list[Step] = []
        self._cur = 0
        self._pos = 0  # next sender index inside the current step
        self._inbox: dict[tuple[str, int], Any] = {}
        self._made: set[tuple[str, int]] = set()
        self.done = False
        self.started = False
        #: Public outcome (identical on every peer), set when done.
        self.result: dict[str, Any] = {}
        #: What only this party learned, set when done.
        self.private: dict[str, Any] = {}
        #: Observers of ciphertext-level facts (used by the auditor), called on completion.
        self.on_done: list[Callable[[Op], None]] = []

    def progress(self) -> tuple[int, int] | None:
        """``(done, total)`` of a long op's visible stages for a progress display, or None
        for ops without such stages."""
        return None

    def step_handlers(self) -> dict[str, StepHandlers]:
        """Step kind → handlers, for every kind of step this op has.

        Bound methods, so a subclass that overrides a handler (a test's cheater) is used. An
        op class that lacks a kind fails in :meth:`start`, before any message is made."""
        return {}

    # --- header -------------------------------------------------------------------------
    def header(self) -> list[Any]:
        """``[op_index, op_name, op_args]`` carried by every message of this op."""
        return [self.index, self.name, self.args]

    # --- driving ------------------------------------------------------------------------
    def start(self) -> list[Body]:
        """Begin the op; returns this party's first messages (possibly none)."""
        if self.started:
            raise ProtocolStateError(f"op {self.index} already started")
        table = self.step_handlers()
        missing = [st.name for st in self.steps if st.kind not in table]
        if missing:
            raise TypeError(f"{type(self).__name__}.step_handlers() has no handlers for "
                            f"steps {missing}")
        self.started = True
        return self._advance()

    def receive(self, sender: int, step: str, payload: Any) -> list[Body]:
        """Store a message from ``sender`` and process whatever became processable."""
        if not isinstance(sender, int) or not 0 <= sender < self.ctx.n:
            raise MalformedInput(f"unknown sender {sender!r}")
        if sender == self.ctx.me:
            raise ProtocolStateError("a party must not be fed its own messages")
        names = {s.name: s for s in self.steps}
        st = names.get(step) if isinstance(step, str) else None
        if st is None or sender not in st.senders:
            raise CheatDetected(sender, "unexpected-message",
                                f"op {self.name}#{self.index} has no step {step!r} for it")
        key = (step, sender)
        idx = self.steps.index(st)
        done_already = idx < self._cur or (idx == self._cur and
                                           st.senders.index(sender) < self._pos)
        if key in self._inbox or done_already:
            raise CheatDetected(sender, "duplicate-message",
                                f"second {step!r} message in op {self.name}#{self.index}")
        self._inbox[key] = payload
        return self._advance() if self.started else []

    def waiting_for(self) -> list[int]:
        """Parties whose message is awaited now (for naming who timed out)."""
        if self.done or not self.started:
            return []
        st = self.steps[self._cur]
        return [p for p in st.senders[self._pos:] if (st.name, p) not in self._inbox]

    def _advance(self) -> list[Body]:
        out: list[Body] = []
        table = self.step_handlers()
        while not self.done:
            st = self.steps[self._cur]
            me = self.ctx.me
            if me in st.senders:  # never for an observer (me None): narrows me to int
                mine = (st.name, me)
                if mine not in self._made:
                    # Produced as soon as the step is current: parallel steps cost one round.
                    self._made.add(mine)
                    payload = table[st.kind].make(st)
                    self._inbox[mine] = payload
                    out.append([*self.header(), st.name, payload])
            while self._pos < len(st.senders):
                sender = st.senders[self._pos]
                key = (st.name, sender)
                if key not in self._inbox:
                    return out
                payload = self._inbox.pop(key)
                handler = table[st.kind].on
                try:
                    handler(st, sender, payload)
                except InvalidPoint as exc:
                    raise CheatDetected(sender, "invalid-point", str(exc)) from exc
                except MalformedInput as exc:
                    raise CheatDetected(sender, "malformed", str(exc)) from exc
                self._pos += 1
            self.step_done(st)
            self._cur += 1
            self._pos = 0
            if self._cur == len(self.steps):
                self.finish()
                self.done = True
                for cb in self.on_done:
                    cb(self)
        return out

    # --- hooks for subclasses -----------------------------------------------------------
    def step_done(self, step: Step) -> None:
        """Called after every sender of ``step`` has been processed."""

    def finish(self) -> None:
        """Called once after the last step: update the ledger, fill ``result``."""

    # --- helpers ------------------------------------------------------------------------
    def dleq_ctx(self, sender: int, purpose: str, *extra: object) -> list[object]:
        """Fiat–Shamir context binding a proof to game, op, sender and purpose."""
        return [self.ctx.game_id, self.index, self.name, sender, purpose, *extra]

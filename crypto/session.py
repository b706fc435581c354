"""Per-party orchestrator: key material, the ledger of zones, and one op at a time.

Typical use by the network layer (identically, in the same order, on every peer)::

    s = TokenSession(game_id, n_parties, me)   # lam: cut-and-choose rounds (≥ 128)
    out = s.setup_keys()                  # → bodies to broadcast
    out = s.receive(sender, body)         # for every crypto body received (never our own)
    s.current.done / s.current.waiting_for() / s.history[-1].result / .private
    out = s.deal([["silk", 15], …], per_party=3, verified=False)
    … s.withdraw(taker, [("silk", 1), ("spice", 1)], all_or_nothing=True)
    … s.open(zone, positions), s.return_to_bag(party, positions), s.steal(thief, victim),
    … s.sealed_reveal(label, my_positions), s.transfer(src, dst, positions),
    … s.set_aside(party, positions),
    … s.coin_flip(purpose), s.reshuffle_bag(verified), s.reveal_secrets()

Only one op runs at a time; starting another before it is done raises
:class:`ProtocolStateError` (no silent restart after an abort). Bodies of a later op that
arrive early are buffered. An *observer* session (``me=None``, used by the auditor) starts
ops from the headers of the messages it is fed.
"""

from __future__ import annotations

from typing import Any, Protocol

from . import group as g
from .coinflip import CoinFlip
from .errors import CheatDetected, MalformedInput, ProtocolStateError
from .ledger import Ledger
from .protocols.base import Body, Context, Op
from .protocols.deal import Deal, ReshuffleBag
from .protocols.keys import KeySetup
from .protocols.moves import Return, SetAside, Transfer
from .protocols.open import Open
from .protocols.sealed import SealedReveal
from .protocols.secrets_op import RevealSecrets
from .protocols.steal import Steal
from .protocols.withdraw import Withdraw
from .shuffle import (
    DEFAULT_LAMBDA,
    PROOF_CC,
    PROOF_TW,
    LambdaRefused,
    check_lambda,
    check_lambda_range,
    mode_arg,
)

OPS: dict[str, type[Op]] = {
    cls.name: cls
    for cls in (KeySetup, Deal, ReshuffleBag, Open, Withdraw, Steal, SealedReveal, Return,
                Transfer, SetAside, CoinFlip, RevealSecrets)
}
MAX_STEPS_PER_SENDER = 3
"""Most messages one party sends in one op: the sealed reveal's ``commit``, ``reveal`` and
``share`` (every other op asks a party for at most two: a shuffle and its shares, a blinding
and its PET shares, a commitment and its opening)."""
MAX_OPS_AHEAD = 32
"""How many ops a party may be ahead of a peer, with room to spare (see
:data:`MAX_BUFFERED_PER_SENDER`)."""
MAX_BUFFERED_PER_SENDER = MAX_STEPS_PER_SENDER * MAX_OPS_AHEAD
"""Bodies of *future* ops held for one sender; one more is that sender's fault (``flooding``).

Why an honest party never reaches it: a party sends a body of op ``j`` only once it has
completed every op before ``j``, and every op but ``return``, ``transfer`` and ``aside``
awaits a message from every party (the withdraw's taker sends the choice, the steal's thief
the pick). So an honest sender can be ahead of us by the op we are in, plus one op that
awaits *our* message (we have not started it, so it cannot complete), plus the ``return`` /
``transfer`` / ``aside`` announcements between them that need nothing from us: a few ops
(Silk Road's script, p2p/protocol/resolution.py, follows an ``open`` with at most one
``return`` and a ``withdraw`` with at most one ``aside``), a handful of bodies.
``MAX_OPS_AHEAD`` allows 32 ops of ``MAX_STEPS_PER_SENDER`` bodies each. The bound is per
sender, so one seat flooding us with validly signed bodies for an op that never runs fills
only its own share and is named, while every honest seat's next body is still taken."""


class CompletedOp(Protocol):
    """What a completed op in :attr:`TokenSession.history` offers: a live :class:`Op`, or
    the :class:`_DoneOp` record a restored session keeps in its place."""

    name: str
    index: int
    args: list[Any]
    result: dict[str, Any]
    private: dict[str, Any]
    done: bool
    started: bool

    def header(self) -> list[Any]: ...

    def waiting_for(self) -> list[int]: ...


def parse_body(body: object) -> tuple[int, str, list[Any], str, Any]:
    """Validate the shape ``[op_index, op_name, op_args, step, payload]`` of a crypto body."""
    if not isinstance(body, list) or len(body) != 5:
        raise MalformedInput("crypto body must be [op_index, op_name, op_args, step, payload]")
    idx, name, args, step, payload = body
    if isinstance(idx, bool) or not isinstance(idx, int) or idx < 0:
        raise MalformedInput("op index must be a non-negative integer")
    if not isinstance(name, str) or name not in OPS:
        raise MalformedInput(f"unknown op {name!r:.40}")
    if not isinstance(args, list) or not isinstance(step, str):
        raise MalformedInput("op args must be a list and step a string")
    return idx, name, args, step, payload


class TokenSession:
    """One party's (or an observer's) view of the hidden-token state of a game."""

    def __init__(self, game_id: bytes, n: int, me: int | None, *, lam: int = DEFAULT_LAMBDA,
                 secret_key: int | None = None, op_classes: dict[str, type[Op]] | None = None
                 ) -> None:
        if not isinstance(game_id, bytes) or not game_id:
            raise MalformedInput("game id must be non-empty bytes")
        if not 2 <= n <= 64:
            raise MalformedInput("between 2 and 64 parties")
        if me is not None and not 0 <= me < n:
            raise MalformedInput("seat out of range")
        # λ must be a sane integer here; its strength is checked when a cut-and-choose proof
        # is asked for (crypto.shuffle.check_lambda), since TW and audit-mode ops ignore it.
        check_lambda_range(lam)
        x = None
        if me is not None:
            x = g.check_scalar(secret_key) if secret_key is not None else g.random_scalar()
        self.ctx = Context(game_id=game_id, n=n, me=me, x=x, lam=lam)
        self.ledger = Ledger(n)
        self.ops = dict(OPS, **(op_classes or {}))
        self.current: Op | None = None
        self.history: list[CompletedOp] = []
        self.failed: CheatDetected | None = None
        self.closed = False
        self._buffer: dict[int, list[tuple[int, Body]]] = {}
        self._nbuf: dict[int, int] = {}
        #: ``[[op_index, witness], …]`` of this party's audit-mode shuffles.
        self.witnesses: list[list[Any]] = []
        #: Called with every completed op (used by the auditor).
        self.listeners: list[Any] = []

    # --- properties ------------------------------------------------------------------------
    @property
    def me(self) -> int | None:
        """This party's seat (None for an observer)."""
        return self.ctx.me

    @property
    def next_index(self) -> int:
        """Index the next op will get."""
        return len(self.history) + (1 if self.current is not None else 0)

    def progress(self) -> tuple[str, int, int] | None:
        """``(op name, done, total)`` of the running op if it reports stages (the shuffle
        chain of a deal or bag reshuffle), else None: for progress displays."""
        op = self.current
        if op is None:
            return None
        p = op.progress()
        return None if p is None else (op.name, p[0], p[1])

    @property
    def busy(self) -> bool:
        """True while an op is running."""
        return self.current is not None

    def waiting_for(self) -> list[int]:
        """Parties whose messages the running op awaits (empty when idle)."""
        return self.current.waiting_for() if self.current else []

    def last(self) -> CompletedOp:
        """The most recently completed op."""
        if not self.history:
            raise ProtocolStateError("no op has completed")
        return self.history[-1]

    def my_labels(self) -> list[str | None]:
        """What this party knows of each token of its own hand, in hand order."""
        if self.me is None:
            return []
        return [s.label() for s in self.ledger.hands[self.me]]

    def know_secrets(self, secrets: dict[int, int]) -> None:
        """Observer only (the auditor): the key shares ``x_j`` the parties published at the end
        of the game, known before the replay starts.

        They change no verdict: a party's share proofs are then checked by
        :func:`crypto.dleq.verify_share_known`, which accepts and rejects exactly what the
        full DLEQ verification does, with one multiplication less, and only for a party
        whose ``x_j·G`` is its public key (any other is checked the full way, and its
        ``secret-key-mismatch`` is the auditor's to report)."""
        if self.me is not None:
            raise ProtocolStateError("only an observer is given the parties' secrets")
        known: dict[int, int] = {}
        for p, x in sorted(secrets.items()):
            if isinstance(p, int) and 0 <= p < self.ctx.n and isinstance(x, int) \
                    and 0 < x < g.L:
                known[p] = x
        self.ctx.known_secrets = known
        self.ctx.known_checked = {}

    # --- op starters -----------------------------------------------------------------------
    def _start(self, name: str, args: list[Any], **kw: Any) -> list[Body]:
        if self.failed is not None:
            raise ProtocolStateError(f"session aborted: {self.failed}")
        if self.closed:
            raise ProtocolStateError("session closed (secrets revealed)")
        if self.current is not None:
            raise ProtocolStateError(
                f"op {self.current.name}#{self.current.index} still waiting for "
                f"{self.current.waiting_for()}")
        op = self.ops[name](self.ctx, len(self.history), args, self.ledger, **kw)
        self.current = op
        out = self._guard(op.start)
        for sender, body in self._unbuffer(op.index):
            out.extend(self._deliver(sender, body))
        self._maybe_complete()
        return out

    def setup_keys(self) -> list[Body]:
        """Key set-up (must be the first op)."""
        return self._start("keys", [])

    def deal(self, spec: list[tuple[str, int]] | list[list[Any]], per_party: int,
             verified: bool = False, *, proof: str = PROOF_TW, last_proven: bool = False
             ) -> list[Body]:
        """Deal ``per_party`` tokens to everyone from the deck ``[(label, count), …]``.

        ``verified`` shuffles carry a ``proof`` (``"tw"``, default, or ``"cut-and-choose"``);
        in audit mode, ``last_proven`` has the last shuffle TW-proven (see
        :data:`crypto.shuffle.AUDIT_LAST_PROVEN`).
        """
        return self._start("deal", [[[lab, c] for lab, c in spec], per_party,
                                    mode_arg(verified, proof, last_proven=last_proven)])

    def reshuffle_bag(self, verified: bool = False, *, proof: str = PROOF_TW,
                      last_proven: bool = False) -> list[Body]:
        """Joint re-shuffle of the bag (``proof`` and ``last_proven`` as for :meth:`deal`)."""
        return self._start("reshuffle_bag", [mode_arg(verified, proof,
                                                      last_proven=last_proven)])

    def open(self, zone: int, positions: list[int]) -> list[Body]:
        """Publicly open positions of a zone (``-1`` = bag)."""
        return self._start("open", [zone, list(positions)])

    def withdraw(self, taker: int, requests: list[tuple[str, int]],
                 all_or_nothing: bool = False) -> list[Body]:
        """Taker withdraws ``k`` tokens of each requested label from the bag."""
        return self._start("withdraw", [taker, [[lab, k] for lab, k in requests],
                                        all_or_nothing])

    def steal(self, thief: int, victim: int, *, proof: str = PROOF_TW) -> list[Body]:
        """Thief takes a uniformly random token of the victim (victim's re-shuffle proven by
        ``proof``: ``"tw"``, default, or ``"cut-and-choose"``)."""
        mode_arg(True, proof)
        return self._start("steal", [thief, victim] + ([proof] if proof != PROOF_TW else []))

    def sealed_reveal(self, label: str, my_positions: list[int]) -> list[Body]:
        """Simultaneous reveal of tokens claimed to be ``label``; my subset is private."""
        return self._start("sealed", [label], choice=list(my_positions))

    def return_to_bag(self, party: int, positions: list[int]) -> list[Body]:
        """Move positions of ``party``'s hand to the end of the bag."""
        return self._start("return", [party, list(positions)])

    def transfer(self, src: int, dst: int, positions: list[int]) -> list[Body]:
        """Move positions of ``src``'s hand to the end of ``dst``'s hand."""
        return self._start("transfer", [src, dst, list(positions)])

    def set_aside(self, party: int, positions: list[int]) -> list[Body]:
        """Set publicly labelled positions of ``party``'s hand aside, out of play for good."""
        return self._start("aside", [party, list(positions)])

    def coin_flip(self, purpose: str) -> list[Body]:
        """Joint coin; result ``{"coin": 64 bytes}``."""
        return self._start("coinflip", [purpose])

    def reveal_secrets(self) -> list[Body]:
        """Publish the key share and audit-mode witnesses (end of game)."""
        return self._start("secrets", [], witnesses=self.witnesses)

    # --- receiving -------------------------------------------------------------------------
    def receive(self, sender: int, body: object) -> list[Body]:
        """Feed one crypto body broadcast by ``sender``; returns bodies to broadcast."""
        if self.failed is not None:
            raise ProtocolStateError(f"session aborted: {self.failed}")
        if isinstance(sender, bool) or not isinstance(sender, int) or not 0 <= sender < self.ctx.n:
            raise MalformedInput(f"unknown sender {sender!r}")
        try:
            idx, name, args, _step, _payload = parse_body(body)
        except MalformedInput as exc:
            self.failed = CheatDetected(sender, "malformed", str(exc))
            raise self.failed from exc
        assert isinstance(body, list)
        cur = self.current
        if cur is None and self.me is None and idx == len(self.history) and not self.closed:
            try:
                op = self.ops[name](self.ctx, idx, args, self.ledger)
            except LambdaRefused as exc:
                # a cut-and-choose op under a λ the game's parameters make forgeable: no
                # honest party starts it (its own session refuses to)
                self.failed = CheatDetected(sender, "weak-lambda", str(exc))
                raise self.failed from exc
            except MalformedInput as exc:
                self.failed = CheatDetected(sender, "malformed", f"bad op header: {exc}")
                raise self.failed from exc
            self.current = op
            self._guard(op.start)
            cur = op
        if cur is not None and idx == cur.index:
            out = self._deliver(sender, body)
            self._maybe_complete()
            if self.me is None:
                self._drain_observer()
            return out
        if idx >= self.next_index and not self.closed:
            held = self._nbuf.get(sender, 0)
            if held >= MAX_BUFFERED_PER_SENDER:
                self.failed = CheatDetected(
                    sender, "flooding",
                    f"more than {MAX_BUFFERED_PER_SENDER} messages for ops not yet started "
                    f"(this one for op {idx}, the next op is {self.next_index})")
                raise self.failed
            self._buffer.setdefault(idx, []).append((sender, body))
            self._nbuf[sender] = held + 1
            return []
        self.failed = CheatDetected(sender, "unexpected-message",
                                    f"message for finished op {idx}")
        raise self.failed

    def _drain_observer(self) -> None:
        """Observer: start the next op from buffered bodies once the previous one is done."""
        while self.current is None and not self.closed:
            queued = self._unbuffer(len(self.history))
            if not queued:
                return
            for sender, body in queued:
                self.receive(sender, body)

    def _unbuffer(self, index: int) -> list[tuple[int, Body]]:
        """Take the buffered bodies of op ``index`` (in arrival order) off every sender's
        count."""
        queued = self._buffer.pop(index, [])
        for sender, _body in queued:
            self._nbuf[sender] -= 1
        return queued

    @staticmethod
    def _count_buffered(buffer: dict[int, list[tuple[int, Body]]]) -> dict[int, int]:
        counts: dict[int, int] = {}
        for queued in buffer.values():
            for sender, _body in queued:
                counts[sender] = counts.get(sender, 0) + 1
        return counts

    def _deliver(self, sender: int, body: Body) -> list[Body]:
        op = self.current
        assert op is not None
        if body[:3] != op.header():
            self.failed = CheatDetected(sender, "op-mismatch",
                                        f"header {body[:3]!r:.120} differs from local op")
            raise self.failed
        return self._guard(lambda: op.receive(sender, body[3], body[4]))

    def _guard(self, fn: Any) -> list[Body]:
        try:
            return fn()
        except CheatDetected as exc:
            self.failed = exc
            raise

    def _maybe_complete(self) -> None:
        op = self.current
        if op is None or not op.done:
            return
        self.current = None
        self.history.append(op)
        w = getattr(op, "witness", None)
        if w is not None and not getattr(op, "verified", True):
            self.witnesses.append([op.index, w.encode()])
        if op.name == "secrets":
            self.closed = True
        for cb in self.listeners:
            cb(op)

    # --- snapshot / restore (resume without pickle) ------------------------------------------
    def snapshot(self) -> bytes:
        """This party's whole session state as versioned msgpack (never sent anywhere).

        What is kept: the context (seat, ElGamal secret, keys, joint key, label table), the
        ledger (ciphertexts, public labels and our private knowledge of each slot), every
        completed op reduced to what later steps read (name, index, args, ``result``,
        ``private``), our audit-mode witnesses, buffered early bodies, and the op in
        progress *with its internals* (its own random choices are already in what we sent;
        a resumed party must continue with exactly those).  Objects are written as
        ``[tag, …]`` trees with shared references kept, and :meth:`restore` rebuilds only
        classes of the crypto package it knows, so loading a snapshot can never run code the
        way unpickling can.
        """
        if self.listeners:
            raise ProtocolStateError("a session with listeners (an auditor) is not snapshotted")
        failed = None
        if self.failed is not None:
            failed = [self.failed.culprit, str(self.failed.rule), str(self.failed.detail)]
        state = {
            "ctx": self.ctx,
            "ledger": self.ledger,
            "history": [[op.name, op.index, op.args, op.result, op.private]
                        for op in self.history],
            "current": self.current,
            "failed": failed,
            "closed": self.closed,
            "buffer": self._buffer,
            "witnesses": self.witnesses,
        }
        return _GraphCodec(self._snapshot_classes()).dumps(state)

    @classmethod
    def restore(cls, data: bytes, *, op_classes: dict[str, type[Op]] | None = None
                ) -> TokenSession:
        """Rebuild a session from :meth:`snapshot` (``op_classes`` as for the constructor).

        Raises :class:`MalformedInput` for bytes that are not a snapshot of this version.
        """
        ops = dict(OPS, **(op_classes or {}))
        state = _GraphCodec(cls._classes_for(ops)).loads(data)
        try:
            ctx, ledger = state["ctx"], state["ledger"]
            self = cls.__new__(cls)
            self.ctx = ctx
            self.ledger = ledger
            self.ops = ops
            self.history = [_DoneOp(name, index, args, result, private)
                            for name, index, args, result, private in state["history"]]
            self.current = state["current"]
            failed = state["failed"]
            self.failed = None if failed is None else CheatDetected(*failed)
            self.closed = bool(state["closed"])
            self._buffer = state["buffer"]
            self._nbuf = self._count_buffered(self._buffer)
            self.witnesses = state["witnesses"]
            self.listeners = []
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise MalformedInput(f"bad session snapshot: {exc!r}") from exc
        if not isinstance(ctx, Context) or not isinstance(ledger, Ledger):
            raise MalformedInput("bad session snapshot: context or ledger missing")
        try:
            check_lambda_range(ctx.lam)
            if getattr(self.current, "proof_kind", None) == PROOF_CC:
                # an op in progress proves by cut-and-choose: its λ must be strong enough,
                # or a verification would fail on our parameter and blame its prover
                check_lambda(ctx.lam)
        except LambdaRefused as exc:
            raise MalformedInput(f"bad session snapshot: {exc}") from exc
        if self.current is not None and not isinstance(self.current, Op):
            raise MalformedInput("bad session snapshot: current op")
        return self

    def _snapshot_classes(self) -> dict[str, type]:
        return self._classes_for(self.ops)

    @staticmethod
    def _classes_for(ops: dict[str, type[Op]]) -> dict[str, type]:
        from .ledger import Slot
        from .protocols.base import Step
        from .shuffle import Witness

        allowed: dict[str, type] = {}
        for c in (Context, Ledger, Slot, Step, Witness, *ops.values()):
            for k in c.__mro__:
                if k is not object:
                    allowed[f"{k.__module__}.{k.__qualname__}"] = k
        return allowed


class _DoneOp:
    """A completed op as a restored session keeps it: what later steps read of it."""

    done = True
    started = True

    def __init__(self, name: str, index: int, args: list[Any], result: dict[str, Any],
                 private: dict[str, Any]) -> None:
        self.name, self.index, self.args = name, index, args
        self.result, self.private = result, private

    def header(self) -> list[Any]:
        return [self.index, self.name, self.args]

    def waiting_for(self) -> list[int]:
        return []


SNAPSHOT_MAGIC = "silkroad-session"
SNAPSHOT_VERSION = 1


class _GraphCodec:
    """msgpack of an object graph with shared references and a class whitelist.

    Nodes: ``None``/bool/str/bytes/float/int64 as themselves; ``["I", bytes]`` big int;
    ``["L"|"D"|"S", id, items]`` list/dict (pairs)/set; ``["T", items]`` tuple;
    ``["O", id, class, [[attr, node]…]]`` object of a whitelisted class; ``["R", id]`` a
    reference to an earlier list/dict/set/object (aliasing survives: an op and the session
    share one ledger, an op keeps slots of a hand).
    """

    def __init__(self, classes: dict[str, type]) -> None:
        self.classes = classes
        self.names = {c: n for n, c in classes.items()}

    # --- encode ---------------------------------------------------------------------------
    def dumps(self, obj: Any) -> bytes:
        import msgpack

        memo: dict[int, int] = {}
        keep: list[Any] = []
        tree = self._enc(obj, memo, keep)
        return bytes(msgpack.packb([SNAPSHOT_MAGIC, SNAPSHOT_VERSION, tree], use_bin_type=True))

    def _enc(self, o: Any, memo: dict[int, int], keep: list[Any]) -> Any:
        t = type(o)
        if t is bytes or t is str or o is None or t is bool or t is float:
            return o
        if t is tuple and all(type(x) is bytes for x in o):
            return ["T", list(o)]  # a ciphertext (the bulk of a snapshot): no recursion
        if isinstance(o, int):
            if -(1 << 63) <= o < (1 << 64):
                return o
            return ["I", o.to_bytes((o.bit_length() + 8) // 8, "big", signed=True)]
        if isinstance(o, tuple):
            return ["T", [self._enc(x, memo, keep) for x in o]]
        ref = memo.get(id(o))
        if ref is not None:
            return ["R", ref]
        nid = len(memo)
        memo[id(o)] = nid
        keep.append(o)  # ids stay unique while we walk
        if isinstance(o, list):
            return ["L", nid, [self._enc(x, memo, keep) for x in o]]
        if isinstance(o, dict):
            return ["D", nid, [[self._enc(k, memo, keep), self._enc(v, memo, keep)]
                               for k, v in o.items()]]
        if isinstance(o, set | frozenset):
            return ["S", nid, [self._enc(x, memo, keep) for x in o]]
        name = self.names.get(type(o))
        if name is None:
            raise TypeError(f"cannot snapshot a {type(o).__module__}.{type(o).__qualname__}")
        attrs = vars(o).items() if hasattr(o, "__dict__") else (
            (a, getattr(o, a)) for a in getattr(type(o), "__slots__", ()))
        return ["O", nid, name, [[a, self._enc(v, memo, keep)] for a, v in attrs
                                 if not (a == "on_done" and v == [])]]

    # --- decode ---------------------------------------------------------------------------
    def loads(self, data: bytes) -> Any:
        import msgpack

        try:
            obj = msgpack.unpackb(data, raw=False, use_list=True, strict_map_key=False)
        except Exception as exc:
            raise MalformedInput(f"bad session snapshot: {exc}") from exc
        if not (isinstance(obj, list) and len(obj) == 3 and obj[0] == SNAPSHOT_MAGIC):
            raise MalformedInput("not a session snapshot")
        if obj[1] != SNAPSHOT_VERSION:
            raise MalformedInput(f"session snapshot version {obj[1]!r} (we read "
                                 f"{SNAPSHOT_VERSION})")
        try:
            return self._dec(obj[2], {})
        except MalformedInput:
            raise
        except Exception as exc:
            raise MalformedInput(f"bad session snapshot: {exc!r}") from exc

    def _dec(self, n: Any, memo: dict[int, Any]) -> Any:
        if not isinstance(n, list):
            return n
        tag = n[0]
        if tag == "I":
            return int.from_bytes(n[1], "big", signed=True)
        if tag == "T":
            return tuple(self._dec(x, memo) for x in n[1])
        if tag == "R":
            return memo[n[1]]
        nid = n[1]
        if tag == "L":
            out_l: list[Any] = []
            memo[nid] = out_l
            out_l.extend(self._dec(x, memo) for x in n[2])
            return out_l
        if tag == "D":
            out_d: dict[Any, Any] = {}
            memo[nid] = out_d
            for k, v in n[2]:
                out_d[self._dec(k, memo)] = self._dec(v, memo)
            return out_d
        if tag == "S":
            out_s: set[Any] = set()
            memo[nid] = out_s
            out_s.update(self._dec(x, memo) for x in n[2])
            return out_s
        if tag == "O":
            cls: type[object] | None = self.classes.get(n[2])
            if cls is None:
                raise MalformedInput(f"bad session snapshot: class {n[2]!r:.80} not allowed")
            obj: Any = cls.__new__(cls)
            memo[nid] = obj
            if not hasattr(obj, "on_done") and issubclass(cls, Op):
                obj.on_done = []
            for a, v in n[3]:
                if not isinstance(a, str):
                    raise MalformedInput("bad session snapshot: attribute name")
                object.__setattr__(obj, a, self._dec(v, memo))
            return obj
        raise MalformedInput(f"bad session snapshot: tag {tag!r:.20}")

"""The full TCP mesh of a running game: one authenticated link per pair of seats.

Rules (see docs/network.md for the rationale):

* **Who dials:** the lower seat dials the higher seat, so each pair has exactly one link and
  there is never a simultaneous-open race.  An acceptor refuses a key that is not in the
  roster, a key dialing in the wrong direction, and any other game (the handshake purpose is
  ``b"mesh/" + game_id``).
* **Reliable per-peer FIFO across reconnects:** every data message gets a per-link sequence
  number; heartbeats carry a cumulative ack; after a reconnect both ends exchange
  ``resume(last_received)`` and the sender re-sends what was not received.  So ``send``
  never fails because a link is momentarily down, and nothing is delivered twice.
  If the remote *process restarted* (new incarnation id in its hello) both sequences
  restart from zero, unacknowledged messages for the dead incarnation are dropped and
  :class:`PeerUp` carries ``restarted=True`` — the lockstep layer then re-syncs it from
  its signed transcript.
* **Liveness:** every ``heartbeat_interval`` each side sends a ping (which also acks); a
  link that delivers no frame for ``peer_timeout`` seconds is closed and reported as
  :class:`PeerDown` naming the seat, its name and key fingerprint.  The dialing side keeps
  redialing with capped exponential backoff, so a restarted peer that comes back on the
  same address with the same key rejoins automatically.

Bodies are opaque ``bytes``: phase 2 sends signed transcript envelopes and must verify the
exact bytes it received, so the mesh never re-encodes them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections import deque
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import HandshakeError, P2PError, ProtocolError
from ..identity import KEY_LEN, fingerprint, is_signing_key
from ..sanitize import clean
from .connection import Connection, Listener, dial
from .handshake import AcceptPolicy

log = logging.getLogger("p2p.mesh")

#: bytes of msgpack around a data body (["d", seq, bin32 header]); used for the size check
_DATA_OVERHEAD = 32


@dataclass(frozen=True)
class RosterEntry:
    """One seated peer: seat index, per-game public key, mesh address and display name."""

    seat: int
    key: bytes
    host: str
    port: int
    name: str = ""

    def to_wire(self) -> list[Any]:
        return [self.seat, self.key, self.host, self.port, self.name]

    @classmethod
    def from_wire(cls, obj: Any, *, weak_key_ok: bool = False) -> RosterEntry:
        """Parse and validate; raises :class:`ProtocolError` naming the bad field.
        ``weak_key_ok`` lets the audit read a file whose roster has a weak key, so that it
        can name that seat instead of calling the file unreadable."""
        if not isinstance(obj, list) or len(obj) != 5:
            raise ProtocolError("roster entry must be [seat, key, host, port, name]")
        seat, key, host, port, name = obj
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < 6:
            raise ProtocolError(f"bad seat {clean(repr(seat), 40)}")
        if not isinstance(key, bytes) or len(key) != KEY_LEN:
            raise ProtocolError("roster key must be 32 bytes")
        if not weak_key_ok and not is_signing_key(key):
            raise ProtocolError(f"seat {seat}: roster key is not a valid Ed25519 public key "
                                "(small order or not canonical)")
        if not isinstance(host, str) or not 0 < len(host) <= 255:
            raise ProtocolError("bad roster host")
        if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
            raise ProtocolError(f"bad roster port {clean(repr(port), 40)}")
        if not isinstance(name, str) or len(name) > 64:
            raise ProtocolError("bad roster name")
        return cls(seat, key, host, port, name)

    @property
    def label(self) -> str:
        """How logs and events name this peer: seat, display name and key fingerprint."""
        who = f"{self.name}, " if self.name else ""
        return f"seat {self.seat} ({who}{fingerprint(self.key)[:8]})"


def validate_roster(roster: Sequence[RosterEntry]) -> None:
    """Seats 0..n-1 in order, distinct keys; raises :class:`ProtocolError`."""
    if not 2 <= len(roster) <= 6:
        raise ProtocolError(f"roster of {len(roster)} seats (2..6 allowed)")
    if [e.seat for e in roster] != list(range(len(roster))):
        raise ProtocolError("roster seats must be 0..n-1 in order")
    if len({e.key for e in roster}) != len(roster):
        raise ProtocolError("roster contains a key twice")


@dataclass(frozen=True)
class Received:
    """A data message from ``seat`` (delivered once, in that peer's send order)."""

    seat: int
    body: bytes


@dataclass(frozen=True)
class PeerUp:
    """The link to ``seat`` is (again) established; ``restarted`` if its process restarted."""

    seat: int
    label: str
    restarted: bool = False


@dataclass(frozen=True)
class PeerDown:
    """The link to ``seat`` is lost; ``reason`` says why (silence, closed, protocol error)."""

    seat: int
    label: str
    reason: str


MeshEvent = Received | PeerUp | PeerDown


@dataclass
class _Link:
    entry: RosterEntry
    conn: Connection | None = None
    incarnation: bytes | None = None
    out_seq: int = 0
    outbox: deque[tuple[int, bytes]] = field(default_factory=deque)
    in_seq: int = 0
    ready: bool = False
    up: bool = False
    last_heard: float = 0.0
    unconsumed: int = 0
    lost: asyncio.Event = field(default_factory=asyncio.Event)
    reader: asyncio.Task[None] | None = None
    pings: dict[int, float] = field(default_factory=dict)
    ping_counter: int = 0
    rtt: float | None = None
    connects: int = 0
    down_reason: str = ""


class Mesh:
    """Authenticated full mesh among the roster, with reliable per-peer delivery.

    Typical use::

        mesh = Mesh(listener, roster, game_id)
        await mesh.start()
        await mesh.wait_all_up(10)
        mesh.broadcast(b"...")
        async for event in mesh:          # Received | PeerUp | PeerDown
            ...
        await mesh.close()

    The listener is shared (the lobby may use it too) and is not closed by the mesh.
    """

    def __init__(
        self,
        listener: Listener,
        roster: Sequence[RosterEntry],
        game_id: bytes,
        *,
        heartbeat_interval: float = 1.0,
        peer_timeout: float = 5.0,
        reconnect_min: float = 0.05,
        reconnect_max: float = 2.0,
        max_unconsumed: int = 256 << 20,
    ) -> None:
        validate_roster(roster)
        self.listener = listener
        self.identity = listener.identity
        self.roster = tuple(roster)
        self.game_id = game_id
        self.purpose = b"mesh/" + game_id
        me = [e.seat for e in roster if e.key == self.identity.public]
        if len(me) != 1:
            raise ValueError("our identity is not in the roster")
        self.my_seat = me[0]
        self.heartbeat_interval = heartbeat_interval
        self.peer_timeout = peer_timeout
        self.reconnect_min = reconnect_min
        self.reconnect_max = reconnect_max
        self.max_unconsumed = max_unconsumed
        self.max_body = listener.limits.max_frame - _DATA_OVERHEAD
        self._links = {e.seat: _Link(e) for e in roster if e.seat != self.my_seat}
        self._by_key = {e.key: e.seat for e in roster}
        self._events: asyncio.Queue[MeshEvent] = asyncio.Queue()
        self._tasks: set[asyncio.Task[None]] = set()
        self._changed = asyncio.Event()
        self._closed = False

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        """Serve incoming links and start dialing every higher seat."""
        # a roster seat that may dial us is "known": the listener keeps room for it while
        # strangers hold connections (a resume gets in under a flood of idle sockets)
        self.listener.register(self.purpose,
                               AcceptPolicy(self._authorize,
                                            known=lambda key: self._authorize(key) is None),
                               self._on_incoming)
        self._spawn(self._heartbeat_loop())
        for seat, link in self._links.items():
            if self.my_seat < seat:
                self._spawn(self._dial_loop(link))

    async def close(self, reason: str = "leaving the table") -> None:
        """Say goodbye on every live link and stop; idempotent."""
        if self._closed:
            return
        self._closed = True
        self.listener.unregister(self.purpose)
        for link in self._links.values():
            if link.conn is not None:
                with contextlib.suppress(P2PError, OSError):
                    link.conn.send(["bye", reason[:200]])
                    await asyncio.wait_for(link.conn.drain(), 1.0)
        for task in list(self._tasks):
            task.cancel()
        for link in self._links.values():
            if link.reader is not None:
                link.reader.cancel()
        for task in [*self._tasks, *(lk.reader for lk in self._links.values() if lk.reader)]:
            with contextlib.suppress(BaseException):
                await task
        for link in self._links.values():
            if link.conn is not None:
                await link.conn.aclose()
                link.conn = None

    async def __aenter__(self) -> Mesh:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ public API
    def send(self, seat: int, body: bytes) -> None:
        """Queue ``body`` for ``seat``; delivered in order, once, even across reconnects."""
        if self._closed:
            raise P2PError("mesh is closed")
        link = self._links.get(seat)
        if link is None:
            raise ValueError(f"no peer at seat {seat} (our seat is {self.my_seat})")
        if not isinstance(body, bytes):
            raise TypeError("mesh bodies are bytes (signed envelopes are never re-encoded)")
        if len(body) > self.max_body:
            raise ValueError(f"body of {len(body)} bytes exceeds the limit of {self.max_body}")
        link.out_seq += 1
        link.outbox.append((link.out_seq, body))
        if link.ready and link.conn is not None:
            self._transmit(link, ["d", link.out_seq, body])

    def broadcast(self, body: bytes) -> None:
        """:meth:`send` to every other seat."""
        for seat in self._links:
            self.send(seat, body)

    async def next_event(self) -> MeshEvent:
        """The next :class:`Received`, :class:`PeerUp` or :class:`PeerDown`, in arrival order."""
        event = await self._events.get()
        if isinstance(event, Received):
            link = self._links.get(event.seat)
            if link is not None:
                link.unconsumed -= len(event.body)
        return event

    async def next_events(self, limit: int = 256) -> list[MeshEvent]:
        """Wait for the next event, then also take (without waiting) up to ``limit - 1``
        more already queued: the table looks at a whole batch so that it can handle the
        move everybody waits for before the acks queued ahead of it."""
        out = [await self.next_event()]
        q = self._events
        while len(out) < limit and not q.empty():
            event = q.get_nowait()
            if isinstance(event, Received):
                link = self._links.get(event.seat)
                if link is not None:
                    link.unconsumed -= len(event.body)
            out.append(event)
        return out

    async def recv(self) -> Received:
        """The next data message, skipping up/down events (convenience for simple users)."""
        while True:
            event = await self.next_event()
            if isinstance(event, Received):
                return event

    def __aiter__(self) -> AsyncIterator[MeshEvent]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[MeshEvent]:
        while not self._closed:
            yield await self.next_event()

    def is_up(self, seat: int) -> bool:
        link = self._links.get(seat)
        return bool(link and link.up)

    def up_seats(self) -> list[int]:
        return [s for s, link in self._links.items() if link.up]

    def down_seats(self) -> list[int]:
        return [s for s, link in self._links.items() if not link.up]

    def left_seats(self) -> list[int]:
        """Seats whose link is down because the peer said goodbye (it left on purpose),
        as opposed to a link that was lost (silence, a reset, a crash)."""
        return [s for s, link in self._links.items()
                if not link.up and link.down_reason.startswith("left:")]

    async def wait_all_up(self, timeout: float) -> None:
        """Wait until every link is up; on timeout raise naming the missing peers."""
        try:
            async with asyncio.timeout(timeout):
                while self.down_seats():
                    self._changed.clear()
                    await self._changed.wait()
        except TimeoutError:
            missing = ", ".join(self._links[s].entry.label for s in self.down_seats())
            raise P2PError(f"peers not connected after {timeout} s: {missing}") from None

    def stats(self) -> dict[int, dict[str, Any]]:
        """Per-seat link figures: up, last RTT (s), connects, queued unacked messages."""
        return {
            seat: {
                "up": link.up,
                "rtt": link.rtt,
                "connects": link.connects,
                "unacked": len(link.outbox),
            }
            for seat, link in self._links.items()
        }

    # ------------------------------------------------------------------ internals
    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _emit(self, event: MeshEvent) -> None:
        self._events.put_nowait(event)
        self._changed.set()

    def _authorize(self, key: bytes) -> str | None:
        seat = self._by_key.get(key)
        if seat is None:
            return f"key {fingerprint(key)[:8]} is not in this game's roster"
        if seat == self.my_seat:
            return "that is our own key"
        if seat > self.my_seat:
            return f"seat {seat} must not dial seat {self.my_seat} (the lower seat dials)"
        return None

    def _on_incoming(self, conn: Connection) -> None:
        seat = self._by_key[conn.remote_key]
        if self._closed:
            conn.close()
            return
        self._attach(self._links[seat], conn)

    def _transmit(self, link: _Link, msg: list[Any]) -> None:
        conn = link.conn
        if conn is None:
            return
        try:
            conn.send(msg)
        except (P2PError, OSError) as exc:
            self._lose(link, conn, f"send failed: {exc}")

    def _attach(self, link: _Link, conn: Connection) -> None:
        """Adopt a freshly authenticated connection for ``link`` (replacing any old one)."""
        if link.conn is not None:
            old = link.conn
            link.conn = None
            if link.up:
                self._down(link, "replaced by a new connection")
            old.close()
        restarted = link.incarnation is not None and link.incarnation != conn.remote_incarnation
        if restarted:
            log.info("%s restarted: resetting the link's sequence numbers", link.entry.label)
            link.in_seq = 0
            link.out_seq = 0
            link.outbox.clear()
        link.incarnation = conn.remote_incarnation
        link.conn = conn
        link.ready = False
        link.lost.clear()
        link.last_heard = time.monotonic()
        link.connects += 1
        link.pings.clear()
        self._transmit(link, ["resume", link.in_seq])
        link.reader = asyncio.get_running_loop().create_task(self._read_loop(link, conn, restarted))

    def _down(self, link: _Link, reason: str) -> None:
        link.down_reason = reason
        if link.up:
            link.up = False
            # a goodbye ("left: …") is the normal end of a game, not worth a warning
            level = logging.INFO if reason.startswith("left:") else logging.WARNING
            log.log(level, "%s down: %s", link.entry.label, reason)
            self._emit(PeerDown(link.entry.seat, link.entry.label, reason))

    def _lose(self, link: _Link, conn: Connection, reason: str) -> None:
        """Drop ``conn`` if it is still the link's current connection."""
        if link.conn is not conn:
            conn.close()
            return
        link.conn = None
        link.ready = False
        conn.close()
        self._down(link, reason)
        link.lost.set()
        self._changed.set()

    async def _read_loop(self, link: _Link, conn: Connection, restarted: bool) -> None:
        reason = "connection closed"
        try:
            while True:
                msg = await conn.recv()
                link.last_heard = time.monotonic()
                self._dispatch(link, conn, msg, restarted)
                if not link.up and link.ready and link.conn is conn:
                    link.up = True
                    log.info("%s up%s", link.entry.label, " (restarted)" if restarted else "")
                    self._emit(PeerUp(link.entry.seat, link.entry.label, restarted))
        except asyncio.CancelledError:
            raise
        except _Bye as exc:
            reason = f"left: {exc.reason}"
        except P2PError as exc:
            reason = exc.reason
        except (ConnectionError, OSError) as exc:
            reason = f"socket error: {exc}"
        except Exception as exc:  # a peer's bytes must never crash us
            log.exception("unexpected error reading from %s", link.entry.label)
            reason = f"internal error: {type(exc).__name__}"
        if link.conn is conn:
            log.info("%s link lost: %s", link.entry.label, reason)
        self._lose(link, conn, reason)

    def _dispatch(self, link: _Link, conn: Connection, msg: Any, restarted: bool) -> None:
        if not isinstance(msg, list) or not msg or not isinstance(msg[0], str):
            raise ProtocolError("mesh message must be a non-empty array starting with a tag")
        tag = msg[0]
        if tag == "d":
            if len(msg) != 3 or not _is_uint(msg[1]) or not isinstance(msg[2], bytes):
                raise ProtocolError("data message must be ['d', seq, body]")
            if not link.ready:
                raise ProtocolError("data before resume")
            seq = msg[1]
            if seq <= link.in_seq:
                return  # a re-send after reconnect that we already delivered
            if seq != link.in_seq + 1:
                raise ProtocolError(f"sequence gap: got {seq}, expected {link.in_seq + 1}")
            link.in_seq = seq
            link.unconsumed += len(msg[2])
            if link.unconsumed > self.max_unconsumed:
                raise ProtocolError("flooding: too many unconsumed bytes")
            self._emit(Received(link.entry.seat, msg[2]))
        elif tag == "p":
            if len(msg) != 3 or not _is_uint(msg[1]) or not _is_uint(msg[2]):
                raise ProtocolError("ping must be ['p', ack, token]")
            self._acked(link, msg[1])
            self._transmit(link, ["q", msg[2]])
        elif tag == "q":
            if len(msg) != 2 or not _is_uint(msg[1]):
                raise ProtocolError("pong must be ['q', token]")
            sent = link.pings.pop(msg[1], None)
            if sent is not None:
                link.rtt = time.monotonic() - sent
        elif tag == "resume":
            if len(msg) != 2 or not _is_uint(msg[1]):
                raise ProtocolError("resume must be ['resume', last_received]")
            if link.ready:
                raise ProtocolError("second resume on one connection")
            self._acked(link, msg[1])
            link.ready = True
            for seq, body in list(link.outbox):
                self._transmit(link, ["d", seq, body])
        elif tag == "bye":
            why = msg[1] if len(msg) == 2 and isinstance(msg[1], str) else "no reason"
            raise _Bye(clean(why))  # the remote's words, shown in PeerDown and logs
        else:
            raise ProtocolError(f"unknown mesh message {clean(tag, 32)!r}")

    def _acked(self, link: _Link, ack: int) -> None:
        if ack > link.out_seq:
            raise ProtocolError(f"ack {ack} beyond our last sent {link.out_seq}")
        while link.outbox and link.outbox[0][0] <= ack:
            link.outbox.popleft()

    async def _heartbeat_loop(self) -> None:
        while True:
            await asyncio.sleep(self.heartbeat_interval)
            now = time.monotonic()
            for link in self._links.values():
                conn = link.conn
                if conn is None:
                    continue
                silent = now - link.last_heard
                if silent > self.peer_timeout:
                    self._lose(link, conn, f"{link.entry.label} silent for {silent:.1f} s")
                    continue
                if link.ready:
                    link.ping_counter += 1
                    link.pings = {k: v for k, v in link.pings.items() if now - v < 60}
                    link.pings[link.ping_counter] = now
                    self._transmit(link, ["p", link.in_seq, link.ping_counter])

    async def _dial_loop(self, link: _Link) -> None:
        delay = self.reconnect_min
        entry = link.entry
        while not self._closed:
            if link.conn is not None:
                await link.lost.wait()
                delay = self.reconnect_min
                continue
            try:
                conn = await dial(
                    entry.host,
                    entry.port,
                    self.identity,
                    self.purpose,
                    incarnation=self.listener.incarnation,
                    expected_key=entry.key,
                    timeout=max(self.peer_timeout, 1.0),
                    version=self.listener.version,
                    limits=self.listener.limits,
                )
            except HandshakeError as exc:
                log.warning("dialing %s failed: %s", entry.label, exc.reason)
            except (OSError, TimeoutError) as exc:
                log.debug("dialing %s failed: %s", entry.label, exc)
            else:
                if self._closed:
                    conn.close()
                    return
                self._attach(link, conn)
                continue
            await asyncio.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, self.reconnect_max)


class _Bye(P2PError):
    """The remote said goodbye."""


def _is_uint(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0

"""Authenticated, encrypted TCP connections: one listener per peer, and dialing.

A peer process owns exactly one :class:`Listener` (one TCP port): the lobby of a table it
hosts and the mesh links of the game it plays are both served on it, told apart by the
handshake's *purpose*.  Services register an :class:`AcceptPolicy` plus a callback that
receives each authenticated :class:`Connection`.

Robustness rules: any failure closes that one socket, is logged with its reason and
counted in :attr:`Listener.refusals`; the listener itself never stops because of what a
peer sent.  Unauthenticated connections are cheap to open and were once enough to lock
honest players out (about 80 idle sockets made 15 of 18 joins fail and a resume four times
slower), so:

* **deadlines:** the first message must arrive within ``hello_timeout`` and the whole
  handshake within ``handshake_timeout``.  An honest dialer sends its hello at once, but
  on a lossy link TCP resends a lost one only after its retransmission timeout (3 s once
  a SYN or SYN-ACK was lost, RFC 6298), so the deadline leaves room for one resend (6 s);
  the limits below, not the deadline, are what keep silent sockets from piling up;
* **sockets that sent nothing yet** are cheap (no key work is done for them): up to
  ``max_idle`` in all and ``idle_per_address`` from one IP.  When there is no room the
  *oldest* of them goes (from the IP holding the most), never the newcomer, so a flood of
  idle sockets only displaces itself: an honest dialer's hello arrives long before
  hundreds of newer sockets could push it out;
* **handshakes of strangers in progress** (a hello arrived, key work begins): at most
  ``per_address`` from one IP and ``max_pending`` in all, the oldest giving way;
* **reserved room for known seats:** once its hello names a key the service expects (a
  seat of the game's roster: :attr:`p2p.net.handshake.AcceptPolicy.known`), a connection is no
  stranger: none of the limits above push it out; up to ``reserved`` such, one per key (a
  newer claim of the same key replaces the older, so a stranger claiming a seat's public
  key holds that room only until the seat itself dials).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..errors import ConnectionClosed, FramingError, HandshakeError, P2PError
from ..identity import Identity, fingerprint
from .framing import DEFAULT_LIMITS, FrameLimits, frame, pack, read_frame, unpack
from .handshake import (
    PROTOCOL_VERSION,
    TAG_LEN,
    AcceptPolicy,
    HandshakeResult,
    accept_handshake,
    dial_handshake,
    new_incarnation,
)

log = logging.getLogger("p2p")

OnConnection = Callable[["Connection"], Awaitable[None] | None]
LOG_BURST = 50
LOG_WINDOW = 10.0
"""Refusals logged at most ``LOG_BURST`` per ``LOG_WINDOW`` seconds (all are counted)."""
HELLO_TIMEOUT = 6.0
"""Seconds a new socket has to send its hello: one TCP resend of a lost hello (3 s after a
lost SYN-ACK) must still make it, or a lossy link loses the game at the door."""
HANDSHAKE_TIMEOUT = 10.0
"""Seconds for the whole handshake (the hello's deadline, then room for the rest)."""


class Connection:
    """An authenticated, encrypted, framed msgpack channel to one remote key.

    ``send`` is synchronous (encrypt + queue in the transport) so frame order always equals
    call order; ``recv`` returns the next decoded object or raises a :class:`P2PError`
    (``ConnectionClosed`` on clean EOF, ``FramingError`` on any bad frame).
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        result: HandshakeResult,
        limits: FrameLimits = DEFAULT_LIMITS,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._send = result.send_cipher
        self._recv = result.recv_cipher
        self.limits = limits
        self.purpose = result.purpose
        self.remote_key = result.remote_key
        self.remote_incarnation = result.remote_incarnation
        self.transcript = result.transcript
        peer = writer.get_extra_info("peername")
        self.peer_host: str = peer[0] if peer else "?"
        local = writer.get_extra_info("sockname")
        #: our address on this connection (what the remote reached us at)
        self.local_host: str | None = local[0] if local else None

    @property
    def remote_fingerprint(self) -> str:
        return fingerprint(self.remote_key)

    @property
    def closed(self) -> bool:
        return self._writer.is_closing()

    def send(self, obj: Any) -> None:
        """Encrypt and queue one message; raises ``ConnectionClosed`` if already closed."""
        if self._writer.is_closing():
            raise ConnectionClosed("connection is closed")
        payload = pack(obj)
        if len(payload) > self.limits.max_frame:
            raise FramingError(
                f"outgoing message of {len(payload)} bytes exceeds the limit of "
                f"{self.limits.max_frame}"
            )
        self._writer.write(frame(self._send.seal(payload)))

    async def drain(self) -> None:
        """Wait until the transport's buffer is below its high-water mark."""
        await self._writer.drain()

    def cap_send_buffer(self, size: int) -> None:
        """Cap the kernel's send buffer of this socket (a listener that only streams to a
        remote which may stop reading keeps what it cannot send where it can count it)."""
        sock = self._writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, size)

    def write_buffer_size(self) -> int:
        transport = self._writer.transport
        return transport.get_write_buffer_size() if transport else 0

    async def recv(self) -> Any:
        """The next message (strictly decoded under :attr:`limits`)."""
        payload = await read_frame(self._reader, self.limits.max_frame + TAG_LEN)
        return unpack(self._recv.open(payload), self.limits)

    def close(self) -> None:
        self._writer.close()

    async def aclose(self) -> None:
        self._writer.close()
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()

    def __repr__(self) -> str:
        return f"Connection({self.remote_fingerprint[:8]}@{self.peer_host})"


@dataclass
class _Service:
    policy: AcceptPolicy
    on_connection: OnConnection


@dataclass(eq=False)
class _Pending:
    """One connection still in its handshake (see the module doc for the limits)."""

    host: str
    addr: str
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    task: asyncio.Task[None] | None
    started: float
    #: 0 nothing received yet, 1 the hello arrived
    stage: int = 0
    #: the key its hello claims, when the service knows that key (reserved room)
    known_key: bytes | None = None
    evicted: str | None = None

    def sent_something(self) -> bool:
        """Bytes arrived that the handshake has not read yet (under load the loop may lag
        behind an honest dialer's hello: that socket is not idle).  Read from the stream's
        buffer; without that (private) attribute, only the hello's arrival counts."""
        return bool(getattr(self.reader, "_buffer", b""))

    def order(self) -> tuple[bool, float]:
        """Which goes first when room is needed: one that sent nothing, then the oldest."""
        return (self.sent_something(), self.started)


class Listener:
    """The peer's single TCP endpoint; dispatches authenticated connections by purpose."""

    def __init__(
        self,
        identity: Identity,
        *,
        host: str = "0.0.0.0",
        port: int = 0,
        incarnation: bytes | None = None,
        version: int = PROTOCOL_VERSION,
        handshake_timeout: float = HANDSHAKE_TIMEOUT,
        hello_timeout: float = HELLO_TIMEOUT,
        max_pending: int = 64,
        per_address: int = 8,
        max_idle: int = 256,
        idle_per_address: int = 128,
        reserved: int = 16,
        limits: FrameLimits = DEFAULT_LIMITS,
    ) -> None:
        self.identity = identity
        self.host = host
        self._port = port
        self.incarnation = incarnation or new_incarnation()
        self.version = version
        self.handshake_timeout = handshake_timeout
        self.hello_timeout = min(hello_timeout, handshake_timeout)
        self.max_pending = max_pending
        self.per_address = per_address
        self.max_idle = max_idle
        self.idle_per_address = idle_per_address
        self.reserved = reserved
        self.limits = limits
        self._services: dict[bytes, _Service] = {}
        self._server: asyncio.Server | None = None
        self._pending: list[_Pending] = []
        #: connections pushed out to make room (idle or surplus strangers)
        self.evicted_count = 0
        self._log_window = float("-inf")
        self._log_lines = 0
        self._log_skipped = 0
        self._tasks: set[asyncio.Task[None]] = set()
        #: recent (peer address, reason) of refused/failed incoming connections
        self.refusals: deque[tuple[str, str]] = deque(maxlen=256)
        self.refused_count = 0
        self.accepted_count = 0

    @property
    def port(self) -> int:
        return self._port

    async def start(self) -> Listener:
        self._server = await asyncio.start_server(
            self._handle, self.host, self._port, limit=1 << 16
        )
        self._port = self._server.sockets[0].getsockname()[1]
        return self

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task

    async def __aenter__(self) -> Listener:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def register(self, purpose: bytes, policy: AcceptPolicy, on_connection: OnConnection) -> None:
        """Serve ``purpose`` (e.g. ``b"lobby"``) with ``policy``; replaces any previous one."""
        self._services[purpose] = _Service(policy, on_connection)

    def unregister(self, purpose: bytes) -> None:
        self._services.pop(purpose, None)

    def _policy_for(self, purpose: bytes) -> AcceptPolicy | str:
        service = self._services.get(purpose)
        if service is None:
            if purpose == b"lobby":
                return "no table is open here"
            return "no such game here (different roster or parameters?)"
        return service.policy

    def _refused(self, addr: str, reason: str) -> None:
        """Count and log a refusal.  At most :data:`LOG_BURST` lines per
        :data:`LOG_WINDOW` seconds, then one line saying how many were not logged: a flood
        of connections must not become a flood of log lines (a verbose peer's log is a file
        in its game folder)."""
        self.refused_count += 1
        self.refusals.append((addr, reason))
        now = asyncio.get_running_loop().time()
        if now - self._log_window >= LOG_WINDOW:
            if self._log_skipped:
                log.warning("%d more refused connections were not logged",
                            self._log_skipped)
            self._log_window, self._log_lines, self._log_skipped = now, 0, 0
        if self._log_lines < LOG_BURST:
            self._log_lines += 1
            log.warning("refused connection from %s: %s", addr, reason)
        else:
            self._log_skipped += 1

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        try:
            await self._serve(reader, writer)
        except asyncio.CancelledError:
            # close() cancels connections in progress.  Not re-raised: Python 3.11's stream
            # server callback calls exception() on this task and would print the
            # cancellation as an "Exception in callback" traceback.
            writer.close()

    @property
    def pending(self) -> int:
        """Handshakes in progress."""
        return len(self._pending)

    def _evict(self, victim: _Pending, reason: str) -> None:
        """Close a connection still in its handshake to make room (its task stops)."""
        victim.evicted = reason
        self.evicted_count += 1
        with contextlib.suppress(ValueError):
            self._pending.remove(victim)
        victim.writer.close()
        if victim.task is not None and victim.task is not asyncio.current_task():
            victim.task.cancel()

    def _make_room(self, group: list[_Pending], per_address: int, total: int,
                   host: str, what: str) -> None:
        """Push out the oldest of ``group`` (strangers in one stage) until ``host`` holds
        fewer than ``per_address`` of them and the group fewer than ``total``."""
        same = [p for p in group if p.host == host]
        if len(same) >= per_address:
            victim = min(same, key=_Pending.order)
            self._evict(victim, f"pushed out: too many {what} from {host} at once")
            group.remove(victim)
        if len(group) >= total:
            hog, _n = Counter(p.host for p in group).most_common(1)[0]
            self._evict(min((p for p in group if p.host == hog), key=_Pending.order),
                        f"pushed out: too many {what}")

    def _admit(self, entry: _Pending) -> None:
        """Room for a new socket among those that sent nothing yet (module doc)."""
        idle = [p for p in self._pending if p.stage == 0 and p.known_key is None]
        self._make_room(idle, self.idle_per_address, self.max_idle, entry.host,
                        "silent connections")
        self._pending.append(entry)

    def _hello(self, entry: _Pending, key: bytes, policy: AcceptPolicy) -> None:
        """The hello arrived: a key the service expects gets reserved room (one per key);
        a stranger's handshake counts against the per-address and overall limits."""
        entry.stage = 1
        if policy.known is not None and policy.known(key):
            for other in [p for p in self._pending if p.known_key == key and p is not entry]:
                self._evict(other, "replaced by a newer connection of the same key")
            if sum(p.known_key is not None for p in self._pending) < self.reserved:
                entry.known_key = key
                return
        active = [p for p in self._pending
                  if p.stage > 0 and p.known_key is None and p is not entry]
        self._make_room(active, self.per_address, self.max_pending, entry.host,
                        "handshakes")

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        addr = f"{peer[0]}:{peer[1]}" if peer else "?"
        host = str(peer[0]) if peer else "?"
        entry = _Pending(host, addr, reader, writer, asyncio.current_task(),
                         asyncio.get_running_loop().time())
        self._admit(entry)
        try:
            async with asyncio.timeout(self.handshake_timeout):
                result = await accept_handshake(
                    reader,
                    writer,
                    self.identity,
                    self._policy_for,
                    incarnation=self.incarnation,
                    version=self.version,
                    peer_host=host,
                    hello_timeout=self.hello_timeout,
                    on_hello=lambda key, policy: self._hello(entry, key, policy),
                )
        except asyncio.CancelledError:
            if entry.evicted is None:
                raise
            self._refused(addr, entry.evicted)
            return
        except TimeoutError:
            self._refused(addr, "handshake timed out")
            writer.close()
            return
        except P2PError as exc:
            self._refused(addr, exc.reason)
            writer.close()
            return
        except (ConnectionError, OSError) as exc:
            self._refused(addr, f"socket error during handshake: {exc}")
            writer.close()
            return
        except Exception as exc:  # never let a peer's bytes kill the listener
            log.exception("unexpected error in handshake from %s", addr)
            self._refused(addr, f"internal error: {type(exc).__name__}")
            writer.close()
            return
        finally:
            with contextlib.suppress(ValueError):
                self._pending.remove(entry)
        if entry.evicted is not None:  # pushed out while its last message was in flight
            self._refused(addr, entry.evicted)
            writer.close()
            return
        service = self._services.get(result.purpose)
        if service is None:  # unregistered while handshaking
            self._refused(addr, "service closed during handshake")
            writer.close()
            return
        self.accepted_count += 1
        conn = Connection(reader, writer, result, self.limits)
        try:
            outcome = service.on_connection(conn)
            if outcome is not None:
                await outcome
        except Exception:
            log.exception("service handler failed for %r", conn)
            conn.close()


async def dial(
    host: str,
    port: int,
    identity: Identity,
    purpose: bytes,
    *,
    incarnation: bytes,
    expected_key: bytes | None = None,
    join_code: str | None = None,
    timeout: float = 5.0,
    version: int = PROTOCOL_VERSION,
    limits: FrameLimits = DEFAULT_LIMITS,
) -> Connection:
    """Connect and handshake; raises :class:`HandshakeError` (with the reason) or ``OSError``.

    Every error carries a reason a player can read (a bare ``TimeoutError`` prints as
    nothing).  A connection closed, or left unanswered, before the handshake ended is a
    :attr:`~HandshakeError.transient` :class:`HandshakeError`: dialling again may work.
    ``TimeoutError`` means no TCP connection within ``timeout``.
    """
    connected = False
    try:
        async with asyncio.timeout(timeout):
            reader, writer = await asyncio.open_connection(host, port, limit=1 << 16)
            connected = True
            try:
                result = await dial_handshake(
                    reader,
                    writer,
                    identity,
                    purpose,
                    incarnation=incarnation,
                    expected_key=expected_key,
                    join_code=join_code,
                    version=version,
                )
            except FramingError as exc:
                writer.close()
                raise HandshakeError(
                    f"bad handshake frame from {host}:{port}: {exc.reason}"
                ) from None
            except ConnectionClosed:
                writer.close()
                raise HandshakeError(
                    "closed the connection during the handshake", transient=True
                ) from None
            except BaseException:
                writer.close()
                raise
    except TimeoutError:
        if connected:
            said = round(timeout, 1)  # the budget left: "2 s", not "1.99999 s"
            raise HandshakeError(f"it accepted the connection but did not finish the "
                                 f"handshake within {said:g} s", transient=True) from None
        raise TimeoutError(f"no connection within {round(timeout, 1):g} s") from None
    return Connection(reader, writer, result, limits)

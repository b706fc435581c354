"""The lobby: a host opens a table, joiners take seats, the host starts the game.

Protocol on an authenticated ``b"lobby"`` connection (the join code, when set, was already
checked in the handshake — a peer without it never gets this far)::

    J→H  ["join", name, mesh_host | nil, mesh_port, commitment, board_digest | nil]
    H→J  ["seated", table_name, seats_total, variant]        or ["refuse", reason]
    H→J  ["lobby", [[name, fp8], ...], seats_total]            (whenever seats change)
    H→J  ["start", roster, params, commitments, board | nil]  (roster/params as wire arrays)
    J→H  ["reveal", nonce]
    H→J  ["nonces", [nonce per seat]]
    J→H  ["ready", game_id]
    H→J  ["cancel", reason]                                     (host closed the table)

Names at a table are unique: a joiner whose (cleaned) name matches a seated player's,
ignoring case, is seated as ``"Name (2)"`` (``(3)``, … — :func:`unique_name`).  The host
renames before the roster is sent, so the new name is the one the game id binds; the
joiner learns it from the ``lobby`` and ``start`` rosters (the entry with its own key).

``commitment = H(key ‖ nonce)`` is sent when joining, long before any nonce is revealed;
the authentication words hash the game id together with every seat's nonce (see
:mod:`p2p.game`).  The host is seat 0, joiners take seats in join order.  Every joiner
checks that the host's key sits at seat 0, that its own key and commitment are in the
roster, and every revealed nonce against its commitment.  Then all peers compute the same
``game_id`` and words and build the :class:`~p2p.net.mesh.Mesh` on the same listener.

Board: the host sends the board spec (``"default"`` or the JSON of its board file) with
``start``; every joiner checks its digest against ``params.board_digest`` (hashed into the
game id), so all peers load the same board.  A joiner that brings its own board file sends
its digest when joining and a host playing another board refuses it, naming both digests
(the trailing ``board_digest``/``board`` fields are optional for older peers).

A series (:mod:`p2p.lobby.series`): the host opens a new lobby on the same listener for each
game, given a :class:`~p2p.lobby.series.NextGame`; it numbers the game in the params and, at
the start, puts returning seats back in their places and names the rotated first leader.
The messages are the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import LobbyError, P2PError, ProtocolError
from ..game import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    MONEY_MODES,
    NONCE_LEN,
    SHUFFLE_MODES,
    BoardMismatch,
    GameParams,
    GameSetup,
    auth_words,
    board_spec_digest,
    check_board,
    commitment,
    compute_game_id,
    read_board_spec,
    variant_reverse,
)
from ..identity import fingerprint
from ..net.connection import Connection, Listener
from ..net.handshake import AcceptPolicy, join_key
from ..net.mesh import RosterEntry
from ..sanitize import clean, is_clean
from .code_guard import CodeGuard
from .dial import DIAL_TIMEOUT, LOBBY, reach
from .discovery import Advertisement, Discovery, TableAd, TableInfo
from .series import NextGame

log = logging.getLogger("p2p.lobby")
MAX_NAME = 32
MAX_ROSTER_NAME = 64
"""Longest name a roster entry may carry (:meth:`p2p.net.mesh.RosterEntry.from_wire`)."""
MAX_INBOX = 8
"""Unread lobby messages kept per joiner: the protocol needs three, more is a flood."""
MAX_JOINING = 32
"""Authenticated lobby connections waiting for their join request at once (a table
without a code admits anyone to the handshake; each has ``join_timeout`` to ask)."""


def _clean_name(name: Any) -> str:
    """A joiner's name as the table will show and hash it: cleaned
    (:func:`p2p.sanitize.clean`), so no seat's screen or log ever prints an escape
    sequence a player typed or a peer sent."""
    if not isinstance(name, str):
        raise ProtocolError("player name must be a string")
    return clean(name, MAX_NAME) or "player"


def unique_name(name: str, taken: Iterable[str]) -> str:
    """``name``, or ``name (2)``, ``name (3)``, … — the first that no name in ``taken``
    equals ignoring case.  Why: two players both called "Root" (the default is the
    login name) made every log line, score row and audit ambiguous.  Deterministic, so
    a table seated in the same order names its seats the same way; the result stays
    within :data:`MAX_NAME` and clean (:func:`p2p.sanitize.is_clean`), as roster names
    must be."""
    used = {t.casefold() for t in taken}
    if name.casefold() not in used:
        return name
    n = 2
    while True:
        suffix = f" ({n})"
        candidate = name[: MAX_NAME - len(suffix)].rstrip() + suffix
        if candidate.casefold() not in used:
            return candidate
        n += 1


@dataclass
class _Seat:
    name: str
    key: bytes
    host: str
    port: int
    commitment: bytes
    conn: Connection | None = None
    inbox: asyncio.Queue[Any] = field(default_factory=lambda: asyncio.Queue(MAX_INBOX))
    board_digest: bytes | None = None


class LobbyTable:
    """The host side of a table (the host is always seat 0)."""

    def __init__(
        self,
        listener: Listener,
        *,
        name: str,
        seats: int,
        host_name: str = "host",
        variant: str = "base",
        board_digest: bytes = b"",
        shuffle_mode: str = "verified",
        join_code: str | None = None,
        discovery: Discovery | None = None,
        advertise_addresses: list[str] | None = None,
        join_timeout: float = 5.0,
        board: str | os.PathLike[str] | None = None,
        money: str = "open",
        code_guard: CodeGuard | None = None,
        series: NextGame | None = None,
        advertisement: Advertisement | None = None,
    ) -> None:
        """``board`` is the path of a board JSON file (None: the built-in board, unless only
        a ``board_digest`` is given, in which case joiners are sent no board).  ``money``
        (``open``/``hidden``, :data:`p2p.game.MONEY_MODES`) is agreed like the variant: it
        goes into the params every joiner receives, hence into the game id.
        ``code_guard`` (default: a fresh :class:`p2p.lobby.code_guard.CodeGuard`) slows, then
        shuts out, addresses that guess the join code; tests pass short delays.
        ``series`` (games 2.. of a series, :mod:`p2p.lobby.series`) numbers the game, keeps
        returning seats in their places and rotates the first leader; ``advertisement``
        is the previous game's, reused (the table stays one entry on the LAN)."""
        if not MIN_PLAYERS <= seats <= MAX_PLAYERS:
            raise ValueError(f"a table has {MIN_PLAYERS}..{MAX_PLAYERS} seats, not {seats}")
        if shuffle_mode not in SHUFFLE_MODES:
            raise ValueError(f"shuffle mode must be one of {SHUFFLE_MODES}")
        if money not in MONEY_MODES:
            raise ValueError(f"money must be one of {MONEY_MODES}")
        self.money = money
        self.listener = listener
        self.identity = listener.identity
        self.name = name
        self.seats_total = seats
        variant_reverse(variant)
        self.variant = variant
        self.board: str | None = None
        if board is not None or not board_digest:
            self.board = read_board_spec(board)
            digest = board_spec_digest(self.board)
            if board_digest and board_digest != digest:
                raise ValueError("board_digest is not the digest of the board file")
            board_digest = digest
        self.board_digest = board_digest
        self.shuffle_mode = shuffle_mode
        self.join_code = join_code
        self.code_guard = code_guard if code_guard is not None else CodeGuard()
        self.discovery = discovery
        self.advertise_addresses = advertise_addresses
        self.join_timeout = join_timeout
        self._nonce = os.urandom(NONCE_LEN)
        host = listener.host if listener.host not in ("0.0.0.0", "") else "127.0.0.1"
        me = _Seat(
            _clean_name(host_name),
            self.identity.public,
            host,
            listener.port,
            commitment(self._nonce, self.identity.public),
        )
        self.seated: list[_Seat] = [me]
        self.started = False
        self.closed = False
        self.series = series
        self.advertisement: Advertisement | None = advertisement
        self._changed = asyncio.Event()
        self._ad_task: asyncio.Task[None] | None = None
        self._joining = 0
        #: watchers at the table (:mod:`p2p.watch`), as the advertisement states it
        self.watchers = 0

    # ---------------------------------------------------------------- lifecycle
    async def open(self) -> LobbyTable:
        """Start accepting joiners (and advertise, if a :class:`Discovery` was given)."""
        key = None
        if self.join_code is not None:
            loop = asyncio.get_running_loop()
            key = await loop.run_in_executor(None, join_key, self.join_code, self.identity.public)
        self.listener.register(LOBBY, AcceptPolicy(self._authorize, key,
                                                   guard=self.code_guard), self._on_join)
        if self.advertisement is not None:
            self._refresh()  # the series' advertisement: back to the lobby phase
        elif self.discovery is not None:
            self.advertisement = await self.discovery.advertise(
                self._ad(), self.listener.port, addresses=self.advertise_addresses
            )
        return self

    async def close(self, reason: str = "the host closed the table", *,
                    withdraw: bool = True) -> None:
        """Stop the lobby and withdraw the advertisement; joiners still waiting are told why.

        After :meth:`start` the advertisement stays up (phase ``playing``) until this is
        called, so the LAN can see the game in progress.  ``withdraw=False`` leaves it up
        for the next game of a series (:attr:`advertisement` is handed on).
        """
        await self._end_lobby(reason)
        if self._ad_task is not None:
            with contextlib.suppress(BaseException):
                await self._ad_task
        if self.advertisement is not None and withdraw:
            with contextlib.suppress(Exception):
                await self.advertisement.withdraw()
            self.advertisement = None

    async def _end_lobby(self, reason: str) -> None:
        if self.closed:
            return
        self.closed = True
        self.listener.unregister(LOBBY)
        for seat in self.seated[1:]:
            if seat.conn is not None:
                if not self.started:
                    with contextlib.suppress(P2PError, OSError):
                        seat.conn.send(["cancel", reason])
                await seat.conn.aclose()

    def _ad(self) -> TableAd:
        return TableAd(
            name=self.name,
            seats_taken=len(self.seated),
            seats_total=self.seats_total,
            fingerprint=self.identity.fingerprint,
            phase="playing" if self.started else "lobby",
            code_required=self.join_code is not None,
            variant=self.variant,
            money=self.money,
            watchers=self.watchers,
        )

    def set_watchers(self, count: int) -> None:
        """The watchers at the table changed: tell the LAN (the advertisement only; the
        seats' lobby connections hear nothing of it)."""
        if count != self.watchers:
            self.watchers = count
            self._publish()

    def _refresh(self) -> None:
        """Tell joiners and the LAN that the seats changed."""
        self._changed.set()
        roster = [[s.name, fingerprint(s.key)[:8]] for s in self.seated]
        for seat in self.seated[1:]:
            if seat.conn is not None:
                with contextlib.suppress(P2PError, OSError):
                    seat.conn.send(["lobby", roster, self.seats_total])
        self._publish()

    def _publish(self) -> None:
        """Update the advertisement (in order, best effort)."""
        if self.advertisement is not None:
            previous = self._ad_task
            ad = self._ad()

            async def publish() -> None:
                if previous is not None:
                    with contextlib.suppress(BaseException):
                        await previous
                assert self.advertisement is not None
                try:
                    await self.advertisement.update(ad)
                except Exception as exc:  # advertising is best effort
                    log.warning("could not update the advertisement: %s", exc)

            self._ad_task = asyncio.get_running_loop().create_task(publish())

    # ---------------------------------------------------------------- joining
    def _authorize(self, key: bytes) -> str | None:
        if self.started:
            return "the game has already started"
        if self.closed:
            return "the table is closed"
        if any(s.key == key for s in self.seated):
            return "this key is already seated"
        if len(self.seated) >= self.seats_total:
            return "the table is full"
        return None

    async def _on_join(self, conn: Connection) -> None:
        if self._joining >= MAX_JOINING:
            # a table without a code lets anyone through the handshake: bound how many
            # may sit between the handshake and their join request at once
            with contextlib.suppress(P2PError, OSError):
                conn.send(["refuse", "too many joins in progress; try again"])
            await conn.aclose()
            return
        self._joining += 1
        try:
            async with asyncio.timeout(self.join_timeout):
                msg = await conn.recv()
            seat = self._parse_join(conn, msg)
        except (P2PError, TimeoutError, OSError) as exc:
            reason = getattr(exc, "reason", None) or "no join request in time"
            log.warning("join from %s refused: %s", conn.peer_host, reason)
            with contextlib.suppress(P2PError, OSError):
                conn.send(["refuse", reason])
            await conn.aclose()
            return
        finally:
            self._joining -= 1
        refusal = self._authorize(conn.remote_key)  # may have filled while we waited
        if refusal is None and seat.board_digest is not None \
                and seat.board_digest != self.board_digest:
            refusal = (f"board mismatch: this table plays board digest "
                       f"{self.board_digest.hex()[:16]}…, yours is "
                       f"{seat.board_digest.hex()[:16]}…")
            log.warning("join of %s refused: %s", seat.name, refusal)
        if refusal is not None:
            with contextlib.suppress(P2PError, OSError):
                conn.send(["refuse", refusal])
            await conn.aclose()
            return
        # renamed here, while the seating is still open: the name is hashed into the game
        # id once the roster is sent, so it can never be changed afterwards
        asked = seat.name
        seat.name = unique_name(asked, (s.name for s in self.seated))
        self.seated.append(seat)
        log.info("%s (%s) took a seat%s", seat.name, fingerprint(seat.key)[:8],
                 f" (asked for {asked!r}, already taken)" if seat.name != asked else "")
        conn.send(["seated", self.name, self.seats_total, self.variant])
        self._refresh()
        try:
            while True:
                msg = await conn.recv()
                if seat.inbox.full():
                    reason = "sent more lobby messages than the protocol has"
                    break
                seat.inbox.put_nowait(msg)
        except (P2PError, OSError) as exc:
            reason = getattr(exc, "reason", str(exc))
        finally:
            await conn.aclose()
        if seat.inbox.full():  # the leaving notice must get through
            seat.inbox.get_nowait()
        seat.inbox.put_nowait(LobbyError(f"{seat.name} left: {reason}"))
        if not self.started and seat in self.seated:
            self.seated.remove(seat)
            log.info("%s left the lobby (%s)", seat.name, reason)
            self._refresh()

    def _parse_join(self, conn: Connection, msg: Any) -> _Seat:
        if not isinstance(msg, list) or len(msg) not in (5, 6) or msg[0] != "join":
            raise ProtocolError("expected ['join', name, host, port, commitment, board digest]")
        _, name, host, port, commit = msg[:5]
        digest = msg[5] if len(msg) == 6 else None
        if digest is not None and (not isinstance(digest, bytes) or len(digest) > 64):
            raise ProtocolError("bad board digest")
        if host is not None and (not isinstance(host, str) or not 0 < len(host) <= 255):
            raise ProtocolError("bad mesh host")
        if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
            raise ProtocolError("bad mesh port")
        if not isinstance(commit, bytes) or len(commit) != 32:
            raise ProtocolError("commitment must be 32 bytes")
        return _Seat(_clean_name(name), conn.remote_key, host or conn.peer_host, port, commit, conn,
                     board_digest=digest)

    async def wait_for_players(self, count: int | None = None, timeout: float = 60.0) -> None:
        """Wait until ``count`` (default: all) seats are taken."""
        want = count or self.seats_total
        async with asyncio.timeout(timeout):
            while len(self.seated) < want:
                self._changed.clear()
                await self._changed.wait()

    # ---------------------------------------------------------------- starting
    async def start(self, *, timeout: float = 10.0) -> GameSetup:
        """Seat order is join order; distribute roster, params and nonces; return the setup."""
        if self.started or self.closed:
            raise LobbyError("table already started or closed")
        if len(self.seated) < MIN_PLAYERS:
            raise LobbyError(f"{len(self.seated)} seated; at least {MIN_PLAYERS} are needed")
        self.started = True
        seats = list(self.seated)
        game_no, first_leader = 1, None
        if self.series is not None:  # returning seats keep their places (p2p.lobby.series)
            seats = [seats[j] for j in self.series.arrange([s.key for s in seats])]
            game_no = self.series.game_no
            first_leader = self.series.first_leader(len(seats))
        params = GameParams(len(seats), self.variant, self.board_digest, self.shuffle_mode,
                            money=self.money, game_no=game_no, first_leader=first_leader)
        commitments = [s.commitment for s in seats]
        try:
            async with asyncio.timeout(timeout):
                for index, seat in enumerate(seats[1:], start=1):
                    assert seat.conn is not None
                    roster = self._roster_for(seats, seat.conn, index)
                    seat.conn.send(
                        ["start", [e.to_wire() for e in roster], params.to_wire(), commitments,
                         self.board]
                    )
                nonces = [self._nonce]
                for index, seat in enumerate(seats[1:], start=1):
                    nonces.append(await self._expect_reveal(seat, index))
                for seat in seats[1:]:
                    assert seat.conn is not None
                    seat.conn.send(["nonces", nonces])
                host_roster = self._roster_for(seats, None, 0)
                game_id = compute_game_id(host_roster, params)
                for index, seat in enumerate(seats[1:], start=1):
                    msg = await self._next(seat)
                    if msg != ["ready", game_id]:
                        raise LobbyError(f"seat {index} ({seat.name}) computed a different game")
        except TimeoutError:
            await self.close("start timed out")
            raise LobbyError("start timed out waiting for the joiners") from None
        except LobbyError as exc:
            await self.close(exc.reason)
            raise
        words = auth_words(game_id, nonces)
        await self._end_lobby("started")
        self._refresh()  # phase=playing in the advertisement
        return GameSetup(tuple(host_roster), params, game_id, words, 0, self.board,
                         self.name, tuple(nonces))

    def _roster_for(
        self, seats: list[_Seat], conn: Connection | None, me: int
    ) -> list[RosterEntry]:
        """Roster as seen by one recipient (addresses may differ; the game id does not)."""
        out = []
        for index, seat in enumerate(seats):
            host = seat.host
            if index == 0 and conn is not None:
                host = conn.local_host or host
            out.append(RosterEntry(index, seat.key, host, seat.port, seat.name))
        return out

    async def _next(self, seat: _Seat) -> Any:
        msg = await seat.inbox.get()
        if isinstance(msg, LobbyError):
            raise msg
        return msg

    async def _expect_reveal(self, seat: _Seat, index: int) -> bytes:
        msg = await self._next(seat)
        if isinstance(msg, list) and len(msg) == 2 and msg[0] == "refuse":
            raise LobbyError(f"seat {index} ({seat.name}) refused the game: {clean(msg[1])}")
        if not (isinstance(msg, list) and len(msg) == 2 and msg[0] == "reveal"):
            raise LobbyError(f"seat {index} ({seat.name}) sent {clean(str(msg), 40)} instead "
                             "of a reveal")
        nonce = msg[1]
        if not isinstance(nonce, bytes) or commitment(nonce, seat.key) != seat.commitment:
            raise LobbyError(
                f"seat {index} ({seat.name}) revealed a nonce that breaks its commitment"
            )
        return nonce


async def join_table(
    listener: Listener,
    host: str,
    port: int,
    *,
    name: str,
    join_code: str | None = None,
    expected_fingerprint: str | None = None,
    mesh_host: str | None = None,
    timeout: float = 5.0,
    start_timeout: float | None = None,
    on_lobby: Callable[[list[tuple[str, str]], int], None] | None = None,
    board: str | os.PathLike[str] | None = None,
    dial_timeout: float | None = None,
) -> GameSetup:
    """Take a seat at the table at ``host:port`` and wait for the host to start.

    Reaching the table is retried for up to ``dial_timeout`` seconds (default
    :data:`DIAL_TIMEOUT`) while it fails for a passing reason (see :func:`p2p.lobby.dial.reach`);
    ``timeout`` bounds each later step of the lobby.

    ``expected_fingerprint`` (from discovery) makes sure we talk to the advertised host.
    ``on_lobby(seats, total)`` is called whenever the seating changes.  ``board`` (the path
    of our board JSON file) makes a host playing another board refuse us with the reason;
    without it we accept the host's board (checked against the agreed digest).
    """
    try:
        my_board = read_board_spec(board) if board is not None else None
    except BoardMismatch as exc:
        raise LobbyError(exc.reason) from None
    conn = await reach(listener, host, port, join_code,
                        DIAL_TIMEOUT if dial_timeout is None else dial_timeout)
    try:
        if expected_fingerprint is not None and conn.remote_fingerprint != expected_fingerprint:
            raise LobbyError("the table's key does not match its advertisement")
        return await _joined(conn, listener, name, mesh_host, timeout, start_timeout, on_lobby,
                             my_board)
    except P2PError as exc:
        if isinstance(exc, LobbyError):
            raise
        raise LobbyError(f"lobby failed: {exc.reason}") from None
    except TimeoutError:
        raise LobbyError("timed out waiting for the host") from None
    finally:
        await conn.aclose()


async def join_discovered(listener: Listener, table: TableInfo, **kwargs: Any) -> GameSetup:
    """:func:`join_table` for a table found by :class:`~p2p.lobby.discovery.TableBrowser`."""
    return await join_table(
        listener, table.host, table.port, expected_fingerprint=table.ad.fingerprint, **kwargs
    )


def _expect(msg: Any, tag: str, arity: int) -> list[Any]:
    if isinstance(msg, list) and msg and msg[0] in ("refuse", "cancel") and len(msg) == 2:
        raise LobbyError(f"the host said: {clean(msg[1])}")
    if not isinstance(msg, list) or len(msg) != arity or msg[0] != tag:
        raise ProtocolError(f"expected {tag!r} from the host")
    return msg


async def _joined(
    conn: Connection,
    listener: Listener,
    name: str,
    mesh_host: str | None,
    timeout: float,
    start_timeout: float | None,
    on_lobby: Callable[[list[tuple[str, str]], int], None] | None,
    my_board: str | None = None,
) -> GameSetup:
    me = listener.identity.public
    nonce = os.urandom(NONCE_LEN)
    mine = commitment(nonce, me)
    digest = board_spec_digest(my_board) if my_board is not None else None
    conn.send(["join", _clean_name(name), mesh_host, listener.port, mine, digest])
    async with asyncio.timeout(timeout):
        table_name = clean(_expect(await conn.recv(), "seated", 4)[1], MAX_NAME)
    async with asyncio.timeout(start_timeout):
        while True:
            msg = await conn.recv()
            if isinstance(msg, list) and msg and msg[0] == "lobby" and len(msg) == 3:
                if on_lobby is not None and isinstance(msg[1], list):
                    seats = [
                        (clean(s[0], MAX_NAME), clean(s[1], 8))
                        for s in msg[1][:MAX_PLAYERS]
                        if isinstance(s, list) and len(s) == 2
                    ]
                    on_lobby(seats, msg[2] if isinstance(msg[2], int) else 0)
                continue
            if isinstance(msg, list) and len(msg) == 5 and msg[0] == "start":
                start = msg
            else:
                start = [*_expect(msg, "start", 4), None]
            break
    if not isinstance(start[1], list):
        raise ProtocolError("roster must be an array")
    roster = tuple(RosterEntry.from_wire(e) for e in start[1])
    params = GameParams.from_wire(start[2])
    params.check_playable()
    commitments = start[3]
    if [e.seat for e in roster] != list(range(len(roster))) or len(roster) != params.players:
        raise LobbyError("roster seats do not match the player count")
    if len({e.key for e in roster}) != len(roster):
        raise LobbyError("roster contains a key twice")
    if roster[0].key != conn.remote_key:
        raise LobbyError("the host is not seat 0 of its own roster")
    for e in roster:
        # names are hashed into the game id, so they cannot be cleaned here without
        # splitting the table; an honest host cleaned them when seating (_clean_name)
        if not is_clean(e.name, MAX_ROSTER_NAME):
            raise LobbyError(f"the host's roster gives seat {e.seat} the name "
                             f"{clean(e.name, MAX_NAME)!r}, which holds control characters or "
                             "escape sequences")
    seat = next((e.seat for e in roster if e.key == me), None)
    if seat is None:
        raise LobbyError("we are not in the roster")
    if not isinstance(commitments, list) or len(commitments) != len(roster):
        raise LobbyError("commitment list does not match the roster")
    if commitments[seat] != mine:
        raise LobbyError("the host altered our commitment")
    host_board = start[4]
    if host_board is not None and not isinstance(host_board, str):
        raise ProtocolError("board must be a string")
    try:
        if my_board is not None:
            check_board(params, my_board, "this peer")
        if host_board is not None:
            check_board(params, host_board, "the host")
        variant_reverse(params.variant)
    except BoardMismatch as exc:
        conn.send(["refuse", exc.reason])
        raise
    board = my_board if my_board is not None else host_board
    conn.send(["reveal", nonce])
    async with asyncio.timeout(timeout):
        nonces = _expect(await conn.recv(), "nonces", 2)[1]
    if not isinstance(nonces, list) or len(nonces) != len(roster):
        raise LobbyError("nonce list does not match the roster")
    for entry, n, c in zip(roster, nonces, commitments, strict=True):
        if not isinstance(n, bytes) or commitment(n, entry.key) != c:
            raise LobbyError(f"{entry.label} revealed a nonce that breaks its commitment")
    game_id = compute_game_id(roster, params)
    conn.send(["ready", game_id])
    await conn.drain()
    return GameSetup(roster, params, game_id, auth_words(game_id, nonces), seat, board,
                     table_name)

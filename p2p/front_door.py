"""The CLI's one way into p2p: host a table, join one, resume one, play on this machine.

Why one module: the commands used to assemble listeners, zeroconf, the lobby, bot child
processes and game folders themselves.  Here each way to sit at a table is one call (or
one small object for the lobby, which a screen drives step by step), and every one of
them plays through a :class:`p2p.handle.TableHandle` that the UI follows:

* :class:`HostedTable` — listener, zeroconf advertisement, lobby, bot seats (each joins
  like anyone else, then plays in its own process); :meth:`HostedTable.next_game` seats
  the next game of a series (:mod:`p2p.lobby.series`) on the same listener;
* :class:`JoiningSeat` — a listener that joins a discovered table or one at
  ``HOST:PORT``; :func:`browse_tables` and :func:`find_table` list what the LAN
  advertises (with an optional filter, so one test run never sees another's tables);
* :func:`resume_seat` — a seat from its game folder after a crash or a quit, with the bot
  seats it ran brought back from their own folders;
* :func:`play_local` — ``silkroad play``: every seat a real peer on 127.0.0.1.

It is also the only p2p module the CLI imports (``tests/test_import_graph.py`` checks
this): the few names a screen or a command needs from elsewhere in p2p (the audit's
verdicts, the join code, the folder's files, a series' record) and from crypto (the
default λ, the worker count) are re-exported here and listed in ``__all__``, so the
package's inside can be rearranged without touching the CLI.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crypto.parallel import workers
from crypto.shuffle import DEFAULT_LAMBDA
from engine.bots import make_bot

from .audit_ahead import AuditAhead
from .errors import LobbyError, P2PError, ProtocolError
from .game import MAX_SERIES, MONEY_MODES, GameParams, GameSetup
from .handle import TableHandle
from .identity import Identity, fingerprint
from .judge.game_audit import (
    CERTIFIED,
    EXIT_UNREADABLE,
    INCOMPLETE,
    UNFAIR,
    UNREADABLE,
    GameAuditReport,
    audit_folder,
    audit_game,
    shown_names,
    summary,
)
from .lobby.code_guard import AUTO, estimate_bits, generate_code
from .lobby.discovery import Discovery, TableBrowser, TableFilter, TableInfo
from .lobby.seating import DIAL_TIMEOUT, LobbyTable, join_discovered, join_table
from .lobby.series import (
    KeptListener,
    NextGame,
    SeriesRecord,
    first_leader_of,
    read_series,
    rotation_refusal,
)
from .local_table import (
    CHILD_FINISH,
    LocalGameResult,
    prepare_folder,
    run_local_game,
    stop_on_child_exit,
)
from .net.connection import Listener
from .net.handshake import normalize_code
from .net.mesh import RosterEntry
from .netgame import play_setup, resume_folder, setup_board
from .peer_process import PeerProcess, spawn, stop, wait_all, watch
from .sanitize import clean
from .store import (
    EXPORT_MAGIC,
    BotSeat,
    FolderLock,
    GameStore,
    StoreError,
    game_folder,
    private_dirs,
    read_export,
    write_private,
)
from .table import Agent, HumanDecider, LockstepTable, TableResult, TableStopped
from .table.talk import TalkBook, TalkLine
from .watch.client import EVERY as WATCH_EVERY
from .watch.client import Watcher, WatchError, WatchResult
from .watch.hub import WatchHub
from .watch.stream import MAX_WATCHERS, GameInfo

__all__ = [  # the CLI's names: this module's own and those re-exported for it
    "AUTO", "BOT_ABANDON", "BOT_FINISH", "CERTIFIED", "DEFAULT_LAMBDA",
    "EXIT_UNREADABLE", "EXPORT_MAGIC", "INCOMPLETE",
    "MAX_SERIES", "MAX_WATCHERS", "MONEY_MODES", "UNFAIR", "UNREADABLE", "WATCH_EVERY",
    "Agent", "AuditAhead", "GameAuditReport", "GameSetup",
    "HostedTable", "HumanDecider", "JoiningSeat", "LobbyError", "NoSuchTable", "P2PError",
    "RosterEntry", "RotationRefused", "SeatRecord", "SeriesRecord", "StoreError",
    "TableBrowser", "TableHandle", "TableInfo", "TableStopped", "TalkBook", "TalkLine",
    "WatchError",
    "WatchResult", "Watcher",
    "audit_folder", "audit_game", "browse_tables", "clean",
    "estimate_bits", "find_table", "follow_watchers", "generate_code", "headless_agent",
    "lan_discovery", "normalize_code",
    "play_local", "private_dirs", "read_export", "read_seat", "read_series", "resume_seat",
    "shown_names", "summary", "watch_table", "workers", "write_private",
]

log = logging.getLogger("p2p.front_door")
BOT_ABANDON = 1800.0
"""How long a host's bot seat waits for a slow player (people think; the same patience as
:func:`p2p.netgame.play_setup`'s)."""
BOT_FINISH = 30.0
"""Seconds our bot seats get to finish after our own table ended."""
NOT_OPEN_YET = ("no table is open here", "the game has already started")
"""What a host whose next game's lobby is not open yet answers (its table is still
finishing the last game): a seat of a series dials again (:meth:`JoiningSeat.join`)."""
REJOIN_DIAL = 2.0
"""Seconds a seat of a series dials a host that does not answer before it takes the
series as over (:meth:`JoiningSeat.join`)."""
REJOIN_WAIT = 60.0
"""Seconds a seat of a series waits for the host's next lobby when it has no limit."""


def _bind(interface: str | None) -> str:
    return interface or "0.0.0.0"


def _interfaces(interface: str | None) -> list[str] | None:
    return [interface] if interface else None


# --- the LAN's tables ---------------------------------------------------------------------
async def browse_tables(interface: str | None, timeout: float,
                        until: Callable[[dict[str, TableInfo]], bool] | None = None,
                        match: TableFilter | None = None) -> dict[str, TableInfo]:
    """Collect advertised tables (instance → info) for ``timeout`` seconds, or until
    ``until(tables)`` holds; ``match`` keeps only the tables it accepts."""
    async with Discovery(_interfaces(interface)) as disc, disc.browse(match=match) as browser:
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            left = end - loop.time()
            if left <= 0:
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(browser.next_event(), left)
            if until is not None and until(browser.tables):
                break
        return dict(browser.tables)


def lan_discovery(interface: str | None) -> Discovery:
    """A zeroconf browser on ``interface`` (None: every IPv4 one); ``async with`` it, then
    ``browse()`` (a watcher picking a table: it has no seat's listener to ask)."""
    return Discovery(_interfaces(interface))


async def follow_watchers(interface: str | None, host_key: bytes,
                          on_count: Callable[[int], None]) -> None:
    """Tell ``on_count`` the watcher count the table of the host's key ``host_key``
    (seat 0's roster key) advertises, whenever its record changes, until cancelled: a
    joined seat hears of the watchers through the LAN (only the host relays to them).
    Best effort: where multicast does not pass it never tells."""
    fp = fingerprint(host_key)
    async with Discovery(_interfaces(interface)) as disc, \
            disc.browse(match=lambda ad: ad.fingerprint == fp) as browser:
        while True:
            event = await browser.next_event()
            if event.table is not None:
                on_count(event.table.ad.watchers)


class NoSuchTable(LookupError):
    """No advertised table has the name asked for (the message lists those seen)."""


async def find_table(interface: str | None, name: str, timeout: float,
                     match: TableFilter | None = None) -> TableInfo:
    """The advertised table called ``name`` (mDNS), or :class:`NoSuchTable`."""
    def found(tables: dict[str, TableInfo]) -> bool:
        return any(i.ad.name == name for i in tables.values())

    tables = await browse_tables(interface, timeout, until=found, match=match)
    hits = sorted((i for i in tables.values() if i.ad.name == name), key=lambda i: i.instance)
    if not hits:
        names = ", ".join(sorted({i.ad.name for i in tables.values()})) or "none"
        raise NoSuchTable(f"no table called {name!r} on the network (seen: {names}); "
                          "join by HOST:PORT if multicast does not get through")
    return hits[0]


# --- hosting --------------------------------------------------------------------------------
@dataclass
class _BotPlan:
    """A bot seat of the host: its identity is made up front so its folder (keyed by the
    key) is known to the host, which records it for a resume."""

    index: int
    name: str
    identity: Identity
    kind: str
    seed: int


class HostedTable:
    """A table this process opens on the LAN: listener, advertisement, lobby, bot seats.

    ``await open()``, then watch :attr:`seated` fill (or :meth:`wait_full`), then
    :meth:`start` (the lobby's start: roster, nonces, words) and :meth:`play`; always
    :meth:`close`.  Bot seats join as soon as the table is open.
    """

    def __init__(self, *, name: str, seats: int, player: str, root: str | Path,
                 code: str | None = None, shuffle: str = "verified",
                 interface: str | None = None, port: int = 0, bots: int = 0,
                 bot_kind: str = "heuristic", bot_names: Sequence[str] = (),
                 money: str = "open") -> None:
        self.name = name
        #: ``open`` or ``hidden`` (others' money behind their screens), agreed by all seats
        self.money = money
        self.seats_total = seats
        self.player = player
        self.root = Path(root)
        self.code = code
        self.shuffle = shuffle
        self.interface = interface
        self._port = port
        self._plans = [_BotPlan(i, bot_names[i % len(bot_names)] if bot_names else f"bot{i}",
                                Identity.generate(), bot_kind, 7919 * (i + 1))
                       for i in range(bots)]
        self._listener: KeptListener | None = None
        self._discovery: Discovery | None = None
        self._lobby: LobbyTable | None = None
        self._bot_tasks: list[asyncio.Task[dict[str, object]]] = []
        #: the games of this table's series so far (``series.json``, :mod:`p2p.lobby.series`)
        self.series = SeriesRecord(name)
        self._next: NextGame | None = None
        self._next_from: NextGame | None = None
        #: the address joiners dial (the chosen interface, else the first LAN address)
        self.dial = interface or "127.0.0.1"
        #: hears the number of watchers whenever it changes (the host's screen shows it)
        self.on_watchers: Callable[[int], None] | None = None
        self._hub: WatchHub | None = None
        self._hub_done: asyncio.Task[None] | None = None

    @property
    def watchers(self) -> int:
        """Watchers at the table now (:mod:`p2p.watch`)."""
        return self._hub.count if self._hub is not None else 0

    @property
    def bots(self) -> int:
        return len(self._plans)

    @property
    def port(self) -> int:
        return self._listener.port if self._listener is not None else self._port

    @property
    def fingerprint(self) -> str:
        """The table's key fingerprint, as its advertisement shows it (to pick it out)."""
        assert self._listener is not None, "open() first"
        return self._listener.identity.fingerprint

    @property
    def seated(self) -> list[str]:
        """Names of the seated players in seat order (the host is seat 0)."""
        return [s.name for s in self._lobby.seated] if self._lobby is not None else []

    async def open(self) -> HostedTable:
        """Listen, advertise and start the bot seats (OSError: the port is taken)."""
        self._listener = KeptListener(Identity.generate(), host=_bind(self.interface),
                                      port=self._port)
        await self._listener.start()
        self._discovery = await Discovery(_interfaces(self.interface)).start()
        await self._open_lobby(None)
        addrs = self._discovery.local_addresses()
        self.dial = self.interface or (addrs[0] if addrs else "127.0.0.1")
        self._seat_bots()
        return self

    async def _open_lobby(self, series: NextGame | None) -> None:
        assert self._listener is not None
        previous = self._lobby
        if previous is not None:  # the series' advertisement goes on to the next lobby
            await previous.close("the next game is being seated", withdraw=False)
        self._lobby = LobbyTable(self._listener, name=self.name, seats=self.seats_total,
                                 host_name=self.player, shuffle_mode=self.shuffle,
                                 join_code=self.code, discovery=self._discovery,
                                 advertise_addresses=_interfaces(self.interface),
                                 money=self.money, series=series,
                                 advertisement=previous.advertisement if previous else None)
        await self._open_hub()  # before the LAN sees the table: a watcher may come at once
        await self._lobby.open()

    async def _open_hub(self) -> None:
        """A new watch hub for the game being seated.  One hub per game (not one per
        series): each game has its own id, roster and transcript, so a watcher watches
        one game and leaves with its file; the last game's watchers were sent its end
        (:meth:`play`) before the next hub takes the listener's watch service."""
        assert self._listener is not None and self._lobby is not None
        await self._close_hub()
        self._hub = await WatchHub(self._listener, join_code=self.code,
                                   guard=self._lobby.code_guard,
                                   on_change=self._watchers_changed).open()

    async def _close_hub(self) -> None:
        if self._hub_done is not None:
            with contextlib.suppress(Exception):
                await self._hub_done
            self._hub_done = None
        if self._hub is not None:
            await self._hub.close()
            self._hub = None

    def _watchers_changed(self, count: int) -> None:
        if self._lobby is not None:
            self._lobby.set_watchers(count)
        if self.on_watchers is not None:
            self.on_watchers(count)

    def _seat_bots(self) -> None:
        loop = asyncio.get_running_loop()
        self._bot_tasks = [loop.create_task(self._bot_seat(p)) for p in self._plans]

    @property
    def game_no(self) -> int:
        """The number of the game being seated or played (1, then 2… of a series)."""
        return self._next.game_no if self._next is not None else 1

    async def next_game(self) -> int:
        """After :meth:`play`: open the lobby again for the series' next game, on the same
        key, address and advertisement, with the same bot seats; returns its number.
        Seats that come back keep their places, a seat that does not frees its place
        for a joiner (then :meth:`wait_full`/:meth:`start`/:meth:`play` as for game 1)."""
        if not self.series.games or self._next_from is None:
            raise LobbyError("the series' next game comes after a game played to its end")
        await self._cancel_bots()
        self._next, self._next_from = self._next_from, None
        await self._open_lobby(self._next)
        self._seat_bots()
        return self._next.game_no

    async def wait_full(self, timeout: float) -> None:
        """Wait until every seat is taken (TimeoutError after ``timeout`` s)."""
        assert self._lobby is not None, "open() first"
        await self._lobby.wait_for_players(timeout=timeout)

    async def start(self) -> GameSetup:
        """Start with whoever is seated (3 or more); :class:`p2p.errors.LobbyError` says why
        it failed."""
        assert self._lobby is not None, "open() first"
        setup = await self._lobby.start()
        if self._hub is not None:  # watchers who came in the lobby learn the game now
            self._hub.start(GameInfo(setup.table or self.name, list(setup.roster),
                                     setup.params, setup_board(setup), setup.game_id,
                                     DEFAULT_LAMBDA, list(setup.nonces)))
        return setup

    def _bot_folder(self, plan: _BotPlan, setup: GameSetup) -> Path:
        return game_folder(self.root / f"bot{plan.index}", setup.game_id,
                           plan.identity.public)

    async def _bot_seat(self, plan: _BotPlan) -> dict[str, object]:
        """One bot seat: its own listener joins like anyone else, then the game is played
        by a child process (:mod:`p2p.peer_process`) so the host's bots share every core.
        Returns the child's final report."""
        lis = await Listener(plan.identity, host=_bind(self.interface), port=0).start()
        try:
            setup = await join_table(lis, self.dial, self.port, name=plan.name,
                                     join_code=self.code, mesh_host=self.dial,
                                     start_timeout=None)
        finally:
            await lis.close()  # the child binds this port again for the game
        folder = self._bot_folder(plan, setup)
        prepare_folder(folder, list(setup.roster), setup.params, setup.my_seat, setup.game_id,
                       plan.identity, board=setup_board(setup))
        child = await spawn(setup.my_seat, folder, plan.kind, plan.seed, abandon=BOT_ABANDON)
        try:
            return (await wait_all([child], None))[0]
        finally:
            await stop(child)

    async def play(self, setup: GameSetup, handle: TableHandle, agent: Agent | None = None,
                   human: HumanDecider | None = None) -> TableResult:
        """Play our seat (0) to the end; our bot seats finish their own games."""
        assert self._listener is not None, "open() first"
        keys = {e.key: e.seat for e in setup.roster}
        bots = [BotSeat(keys[p.identity.public], str(self._bot_folder(p, setup).resolve()),
                        p.kind, p.seed, 0.0, BOT_ABANDON)
                for p in self._plans if p.identity.public in keys]
        hub = self._hub

        def on_table(table: LockstepTable, folder: Path) -> None:
            handle.attach(table, folder)
            if hub is not None:
                hub.attach(table)

        try:
            result = await play_setup(setup, self._listener, self.root, agent, human,
                                      on_table=on_table, bot_seats=bots)
        except TableStopped as exc:
            self._finish_hub(f"the table stopped: {exc}")
            raise
        except BaseException:
            self._finish_hub("the host left the table")
            raise
        self._finish_hub("the game ended")
        handle.result = result
        for task in self._bot_tasks:  # their transcripts are theirs; give them a moment
            with contextlib.suppress(Exception):
                await asyncio.wait_for(task, BOT_FINISH)
        leader = first_leader_of(handle.record())
        self.series.add(setup.params.game_no, setup.game_id, [e.name for e in setup.roster],
                        result.winners, leader)
        folders = [game_folder(self.root, setup.game_id, self._listener.identity.public)]
        _save_series(self.series, [*folders, *(Path(b.folder) for b in bots)])
        if setup.params.game_no < MAX_SERIES:
            self._next_from = NextGame(setup.params.game_no + 1,
                                       tuple(e.key for e in setup.roster), leader)
        return result

    def _finish_hub(self, reason: str) -> None:
        """Send the watchers the game's last envelopes and its end, aside: a slow watcher
        must not hold up the host's report (the listener stays open until :meth:`close`,
        which waits for this first)."""
        if self._hub is not None and self._hub_done is None:
            self._hub_done = asyncio.get_running_loop().create_task(self._hub.finish(reason))

    async def _cancel_bots(self) -> None:
        for task in self._bot_tasks:
            if not task.done():
                task.cancel()
            with contextlib.suppress(BaseException):
                await task

    async def close(self) -> None:
        """Withdraw the table, stop the bot seats, free the port (idempotent)."""
        await self._cancel_bots()
        with contextlib.suppress(Exception):
            await self._close_hub()
        if self._lobby is not None:
            with contextlib.suppress(Exception):
                await self._lobby.close()
        if self._discovery is not None:
            with contextlib.suppress(Exception):
                await self._discovery.close()
        if self._listener is not None:
            with contextlib.suppress(Exception):
                await self._listener.close_for_good()


def _save_series(record: SeriesRecord, folders: Sequence[Path]) -> None:
    """Write ``series.json`` into each existing game folder.  A folder that cannot take
    it is said in the log: the game itself is over and recorded, so it stands."""
    for folder in folders:
        if folder.exists():
            try:
                record.save(folder)
            except OSError as exc:
                log.warning("could not write the series record into %s: %s", folder, exc)


# --- joining ----------------------------------------------------------------------------------
class RotationRefused(LobbyError):
    """This seat refused the host's next game: its first leader is not the rotated one
    (:func:`p2p.lobby.series.rotation_refusal`).  Its own class because a joiner of a
    series reads any other refusal of a next game as "the series is over"."""


class JoiningSeat:
    """This process's seat at someone else's table: one listener (its key is the seat's
    identity for the game), used to join and then to play."""

    def __init__(self, *, name: str, interface: str | None = None,
                 match: TableFilter | None = None) -> None:
        self.name = name
        self.interface = interface
        #: which advertised tables this seat may see (None: all of them)
        self.match = match
        self._listener: KeptListener | None = None
        #: the games this seat played at the table so far (``series.json``)
        self.series = SeriesRecord()

    @property
    def listener(self) -> Listener:
        assert self._listener is not None, "open() first"
        return self._listener

    async def open(self) -> JoiningSeat:
        """Listen on any port; the listener (its key is this seat's identity) stays open
        for every game this seat plays, until :meth:`close`."""
        self._listener = KeptListener(Identity.generate(), host=_bind(self.interface),
                                      port=0)
        await self._listener.start()
        return self

    def discovery(self) -> Discovery:
        """A zeroconf browser on this seat's interface (start it with ``async with``)."""
        return Discovery(_interfaces(self.interface))

    async def join(self, target: TableInfo | tuple[str, int], *, code: str | None,
                   timeout: float | None,
                   on_lobby: Callable[[list[tuple[str, str]], int], None] | None = None,
                   again: bool = False) -> GameSetup:
        """Take a seat at a discovered table or at ``(host, port)`` and wait for the start;
        :class:`p2p.errors.LobbyError` says why not.  A connection that fails for a passing
        reason is dialled again for :data:`p2p.lobby.seating.DIAL_TIMEOUT` seconds, or ``timeout``
        when that is shorter (the player's own limit).

        ``again``: the next game of a series at the same table.  The host may still be
        finishing the last game (its lobby is not open yet, :data:`NOT_OPEN_YET`): this
        seat dials again until it is, within ``timeout`` (or :data:`REJOIN_WAIT`).

        Every game this seat is seated for is checked against its own series record: a
        host whose first leader is not the seat after the one of the previous game this
        seat played is refused (:func:`p2p.lobby.series.rotation_refusal` gives the
        reason).  The seat learns the first leader only with the start, so the refusal
        comes after the lobby closed: the host's game then cannot connect to this seat."""
        setup = await self._join_rejoin(target, code, timeout, on_lobby, again)
        refusal = rotation_refusal(self.series, setup.params.game_no,
                                   setup.params.first_leader, [e.name for e in setup.roster])
        if refusal is not None:
            raise RotationRefused(refusal)
        return setup

    async def _join_rejoin(self, target: TableInfo | tuple[str, int], code: str | None,
                           timeout: float | None,
                           on_lobby: Callable[[list[tuple[str, str]], int], None] | None,
                           again: bool) -> GameSetup:
        dial_timeout = DIAL_TIMEOUT if timeout is None else min(timeout, DIAL_TIMEOUT)
        if not again:
            return await self._join_once(target, code, timeout, on_lobby, dial_timeout)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (REJOIN_WAIT if timeout is None else timeout)
        delay = 0.1
        while True:
            try:
                # the host's listener stays up for its whole series: a port that does not
                # answer means the host stopped, so a short dial budget is enough
                return await self._join_once(target, code, timeout, on_lobby,
                                             min(dial_timeout, REJOIN_DIAL))
            except LobbyError as exc:
                if not any(r in exc.reason for r in NOT_OPEN_YET) \
                        or loop.time() + delay >= deadline:
                    raise
            await asyncio.sleep(delay)  # the host's last game is still closing
            delay = min(delay * 2, 1.0)

    async def _join_once(self, target: TableInfo | tuple[str, int], code: str | None,
                         timeout: float | None,
                         on_lobby: Callable[[list[tuple[str, str]], int], None] | None,
                         dial_timeout: float) -> GameSetup:
        if isinstance(target, TableInfo):
            return await join_discovered(self.listener, target, name=self.name,
                                         join_code=code, start_timeout=timeout,
                                         on_lobby=on_lobby, dial_timeout=dial_timeout)
        return await join_table(self.listener, target[0], target[1], name=self.name,
                                join_code=code, start_timeout=timeout, on_lobby=on_lobby,
                                dial_timeout=dial_timeout)

    async def play(self, setup: GameSetup, root: str | Path, handle: TableHandle,
                   agent: Agent | None = None,
                   human: HumanDecider | None = None) -> TableResult:
        """Play the started game to the end from this seat's own folder under ``root``."""
        result = await play_setup(setup, self.listener, root, agent, human,
                                  on_table=handle.attach)
        handle.result = result
        self.series.table = setup.table
        self.series.add(setup.params.game_no, setup.game_id, [e.name for e in setup.roster],
                        result.winners, first_leader_of(handle.record()))
        _save_series(self.series, [game_folder(root, setup.game_id,
                                               self.listener.identity.public)])
        return result

    async def close(self) -> None:
        if self._listener is not None:
            with contextlib.suppress(Exception):
                await self._listener.close_for_good()


# --- watching -------------------------------------------------------------------------------
WatchEvent = Callable[[str, dict[str, Any]], None]


async def watch_table(target: TableInfo | tuple[str, int], *, code: str | None,
                      timeout: float, transcript: str | Path | None,
                      on_event: WatchEvent | None = None, record: bool = False,
                      every: float = WATCH_EVERY,
                      watcher: Watcher | None = None) -> WatchResult:
    """``silkroad watch``: sit a watcher at a discovered table (its key must be the one it
    advertised) or at ``(host, port)``, verify everything live and return the verdict
    (:class:`p2p.watch.client.Watcher`; :class:`WatchError` if it cannot watch).
    ``record`` keeps every replayed state for a screen (``report.replay``).  ``watcher``:
    one made by the caller (to :meth:`~p2p.watch.client.Watcher.save` what it holds if
    the watch is given up); ``every``, ``record`` and ``on_event`` then are its own."""
    if isinstance(target, TableInfo):
        host, port, fp = target.host, target.port, target.ad.fingerprint
    else:
        (host, port), fp = target, None
    if watcher is None:
        watcher = Watcher(every=every, record=record, on_event=on_event)
    return await watcher.watch(host, port, code=code, fingerprint=fp, timeout=timeout,
                               transcript=transcript)


# --- resuming -------------------------------------------------------------------------------
@dataclass(frozen=True)
class SeatRecord:
    """What a game folder says about its seat (enough to label the screen)."""

    folder: Path
    roster: list[RosterEntry]
    params: GameParams
    seat: int
    bots: list[BotSeat]
    #: the table's name when the game began ("" if the folder predates it)
    table: str = ""


def read_seat(folder: str | os.PathLike[str]) -> SeatRecord:
    """Check that ``folder`` is a seat's game folder this peer can resume;
    :class:`p2p.store.StoreError` (or ValueError) says what is wrong (a λ in ``meta.json``
    that is not the protocol's included: it is refused here, before any bot seat comes
    back, and again when the table starts)."""
    store = GameStore(folder)
    try:
        roster, params, seat, _gid = store.load_meta()
        params.check_playable()
        store.load_table_lam()
        store.load_secrets()
        bots = store.load_bot_seats()
        for bot in bots:  # each comes back from its own folder: refused there alike
            if GameStore(bot.folder).exists():
                GameStore(bot.folder).load_table_lam()
    except ProtocolError as exc:
        raise StoreError(str(exc)) from None
    return SeatRecord(Path(folder), roster, params, seat, bots, store.load_table_name())


async def resume_seat(folder: str | os.PathLike[str], handle: TableHandle,
                      agent: Agent | None = None, human: HumanDecider | None = None, *,
                      abandon_timeout: float = 1800.0) -> TableResult:
    """Come back to a table from this seat's folder (same key, same address).

    The bot seats this seat ran (``bots.json``: ``silkroad play``, ``host --bots``) are
    brought back first, each resuming from its own folder in its own process: without
    them the table would wait for them forever.  A bot child that ends early stops our
    table naming it, as during the first run."""
    record = read_seat(folder)
    lock = FolderLock(folder).acquire()  # before any bot comes back: a clash is ours alone
    children: list[PeerProcess] = []
    watcher: asyncio.Future[None] | None = None
    try:
        for bot in record.bots:
            if GameStore(bot.folder).exists():
                children.append(await spawn(bot.seat, Path(bot.folder), bot.kind, bot.seed,
                                            pace=bot.pace, abandon=bot.abandon))
        if children:
            watcher = asyncio.ensure_future(watch(children, stop_on_child_exit(handle.stop)))
        result = await resume_folder(Path(folder), agent, human,
                                     abandon_timeout=abandon_timeout,
                                     on_table=handle.attach, lock=lock)
        handle.result = result
        if watcher is not None:
            watcher.cancel()
            watcher = None
        await wait_all(children, CHILD_FINISH)
        return result
    finally:
        lock.release()  # resume_folder released it already, unless it never started
        if watcher is not None:
            watcher.cancel()
        await asyncio.gather(*(stop(c) for c in children))


# --- this machine only ----------------------------------------------------------------------
async def play_local(names: Sequence[str], bot_kind: str, seed: int, shuffle_mode: str,
                     root: str | Path, handle: TableHandle,
                     human: HumanDecider | None = None, *, lam: int = DEFAULT_LAMBDA,
                     pace: float = 0.0,
                     variant: str | None = None, board: str | None = None,
                     bot_processes: bool = True, money: str = "open") -> LocalGameResult:
    """``silkroad play``: seat 0 is ``human`` (or a ``bot_kind`` bot), the others are bot
    peers, each in its own process unless ``bot_processes`` is false; every peer has its
    own keys, listener and folder under ``root`` and they only talk over TCP.  ``money``
    (``open``/``hidden``) is agreed by every peer like the variant (in the params)."""
    return await run_local_game(len(names), bot_kind, seed, shuffle_mode, root, human,
                                lam=lam, audit=False, names=list(names), variant=variant,
                                board=board, pace=pace, bot_processes=bot_processes,
                                handle=handle, money=money)


def headless_agent(kind: str, seed: int) -> Agent:
    """The bot that plays a headless seat."""
    return make_bot(kind, seed)


"""Run N real peers on this machine over loopback (what ``silkroad play`` uses).

Each peer has its own identity, :class:`~p2p.net.connection.Listener` on 127.0.0.1, mesh,
TokenSession and game folder; they only talk through TCP.  No lobby is needed: the roster
is built here because every peer is ours.  :func:`make_local_setup` is also used by the
multi-process entry (:mod:`p2p.peer`) and the tests, which need the same roster before any
peer runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crypto import group as g
from crypto.shuffle import DEFAULT_LAMBDA
from engine.bots import make_bot

from .game import (
    DEFAULT_BOARD,
    MONEY_MODES,
    GameParams,
    board_spec_digest,
    check_board,
    compute_game_id,
    read_board_spec,
    variant_reverse,
)
from .handle import TableHandle
from .identity import Identity
from .judge.game_audit import GameAuditReport, audit_game
from .net.connection import Listener
from .net.mesh import Mesh, RosterEntry
from .peer_process import PeerProcess, spawn, stop, wait_all, watch
from .store import BotSeat, FolderLock, GameStore, Secrets, game_folder
from .table import HumanDecider, LockstepTable, TableResult, TableSetup
from .table.pacing import paced

LOOPBACK = "127.0.0.1"
CHILD_FINISH = 30.0
"""Seconds bot children get to finish after seat 0's table ended (they end together)."""


@dataclass
class LocalPeer:
    """Everything one local peer owns."""

    seat: int
    identity: Identity
    listener: Listener
    roster: list[RosterEntry]
    params: GameParams
    game_id: bytes
    folder: Path
    mesh: Mesh | None = None
    table: LockstepTable | None = None
    #: the agreed board spec (``"default"`` or board JSON), see :mod:`p2p.game`
    board: str = DEFAULT_BOARD
    #: held while this peer plays from ``folder`` (:class:`p2p.store.FolderLock`)
    lock: FolderLock | None = None


@dataclass
class LocalGameResult:
    """What :func:`run_local_game` returns."""

    scores: list[int]
    winners: list[int]
    state_hashes: list[bytes]
    wall_time: float
    transcript: Path
    transcript_bytes: int
    envelopes: int
    audit: GameAuditReport | None
    results: list[TableResult] = field(default_factory=list)
    step_times: list[tuple[str, float, int, int]] = field(default_factory=list)
    #: with ``bot_processes``: each child's final ``done`` event (seats 1…, :mod:`p2p.peer`)
    peer_events: list[dict[str, Any]] = field(default_factory=list)


async def make_local_setup(players: int, shuffle_mode: str, root: Path,
                           ports: list[int] | None = None, lam: int = DEFAULT_LAMBDA,
                           names: list[str] | None = None, *, variant: str = "base",
                           board: str | os.PathLike[str] | None = None,
                           money: str = "open") -> list[LocalPeer]:
    """Identities, started listeners, the roster and each peer's game folder.

    ``names`` (optional, one per seat) are the players' names in the roster (hashed into
    the game id, shown by replay); the default is ``bot0``, ``bot1``…  ``variant``
    ("base"/"normal" or "reverse") and ``board`` (a board JSON file, None for the built-in
    board) become the params every peer checks; the board's JSON travels in each folder.
    ``money`` ("open"/"hidden") is agreed the same way (it is part of the params)."""
    spec = read_board_spec(board)
    variant_reverse(variant)  # an unknown variant is refused before any socket opens
    ids = [Identity.generate() for _ in range(players)]
    listeners = [await Listener(ids[i], host=LOOPBACK, port=(ports[i] if ports else 0)).start()
                 for i in range(players)]
    roster = [RosterEntry(i, ids[i].public, LOOPBACK, listeners[i].port,
                          names[i] if names else f"bot{i}")
              for i in range(players)]
    if money not in MONEY_MODES:
        raise ValueError(f"money must be one of {MONEY_MODES}, not {money!r}")
    params = GameParams(players, variant, board_spec_digest(spec), shuffle_mode, money=money)
    gid = compute_game_id(roster, params)
    peers = []
    for i in range(players):
        folder = game_folder(Path(root) / f"seat{i}", gid)
        store = GameStore(folder)
        store.create(roster, params, i, gid, lam, spec)
        peers.append(LocalPeer(i, ids[i], listeners[i], roster, params, gid, folder,
                               board=spec))
    return peers


def prepare_folder(folder: Path, roster: list[RosterEntry], params: GameParams, seat: int,
                   game_id: bytes, identity: Identity, lam: int = DEFAULT_LAMBDA,
                   board: str = DEFAULT_BOARD) -> GameStore:
    """Write ``meta.json`` and the initial ``secrets.bin`` (identity, fresh ElGamal key) so
    a peer process (:mod:`p2p.peer`) can play this seat from the folder alone."""
    store = GameStore(folder)
    store.create(roster, params, seat, game_id, lam, board)
    store.save_secrets(Secrets(identity.to_bytes(), g.random_scalar(), None))
    return store


def table_setup(roster: list[RosterEntry], params: GameParams, seat: int, game_id: bytes,
                lam: int, board: str = DEFAULT_BOARD) -> TableSetup:
    """The table's setup from the agreed roster/params (``board`` is checked against
    ``params.board_digest`` when the table builds its config)."""
    return TableSetup(game_id, [e.key for e in roster], seat, params.shuffle_mode, lam,
                      params.variant, board, params.board_digest, params.first_leader)


async def start_peer(peer: LocalPeer, agent: Any, human: HumanDecider | None = None, *,
                     lam: int | None = None, heartbeat: float = 0.2, peer_timeout: float = 3.0,
                     stall_timeout: float = 5.0, abandon_timeout: float = 60.0) -> LockstepTable:
    """Start the mesh and build the table (``await table.run()`` plays); a folder that
    already holds a transcript makes the table resume.  The folder is locked first
    (:class:`p2p.store.FolderInUse` if another peer plays from it); :func:`finish_peer`
    unlocks it.  Without ``lam`` the folder's is used, if it is right for the game's
    protocol (:meth:`p2p.store.GameStore.load_table_lam`, else :class:`StoreError`)."""
    if peer.lock is None:
        peer.lock = FolderLock(peer.folder).acquire()
    store = GameStore(peer.folder)
    board = store.load_board() if store.exists() else peer.board
    # refuse a board/variant that is not the agreed one before anybody is contacted
    check_board(peer.params, board, f"seat {peer.seat}")
    variant_reverse(peer.params.variant)
    if lam is None:
        # the table's λ is fixed at set-up (meta.json) and checked against the protocol,
        # like the board, before anybody is contacted (StoreError names the folder)
        lam = store.load_table_lam()
    mesh = Mesh(peer.listener, peer.roster, peer.game_id, heartbeat_interval=heartbeat,
                peer_timeout=peer_timeout)
    await mesh.start()
    peer.mesh = mesh
    x = None
    if store.secrets_path.exists():
        x = store.load_secrets().elgamal_x
    setup = table_setup(peer.roster, peer.params, peer.seat, peer.game_id, lam, board)
    table = LockstepTable(mesh, setup, peer.identity, store, agent, human, elgamal_x=x,
                  stall_timeout=stall_timeout, abandon_timeout=abandon_timeout)
    peer.table = table
    return table


async def finish_peer(peer: LocalPeer, grace: float = 3.0) -> None:
    """Let our last envelopes reach everyone, then close the mesh and the listener, and
    unlock the folder.  A peer that said goodbye is not waited for: it left on purpose,
    after its own table ended (with every close, ours included) or when it gave up."""
    try:
        if peer.mesh is not None:
            mesh = peer.mesh
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline and any(
                    s["unacked"] for seat, s in mesh.stats().items()
                    if seat not in mesh.left_seats()):
                await asyncio.sleep(0.02)
            await peer.mesh.close("game over")
        await peer.listener.close()
    finally:
        if peer.lock is not None:
            peer.lock.release()
            peer.lock = None


async def run_local_game(players: int, bots: list[Any] | str = "heuristic", seed: int = 0,
                         shuffle_mode: str = "audit", folder: str | Path = "games",
                         human: HumanDecider | None = None, *, lam: int = DEFAULT_LAMBDA,
                         audit: bool = True, names: list[str] | None = None,
                         on_tables: Callable[[list[LockstepTable]], None] | None = None,
                         variant: str | None = None,
                         board: str | os.PathLike[str] | None = None,
                         pace: float = 0.0, bot_processes: bool = False,
                         handle: TableHandle | None = None,
                         money: str = "open") -> LocalGameResult:
    """Play one complete game among ``players`` local peers (seat 0 is ``human`` if given).

    ``bots`` is one bot kind for everyone or a list per seat (a kind such as "heuristic",
    or any object with ``choose(view, legal)``).  Returns scores, winners, each
    peer's final state hash (they must all be equal), wall time and the transcript path
    (seat 0's ``game.silkroad``), audited when ``audit`` is true.  ``names`` name the
    seats in the roster; ``on_tables(tables)`` is called once every table of this process
    is built and before play starts, so a UI can watch seat 0's table (``on_step``,
    ``hand()``, mesh).  ``variant`` ("reverse", or None/"normal"/"base") and ``board`` (path
    of a board JSON file, None for the built-in board) choose the rules every peer plays
    and audits.  ``money`` ("open"/"hidden": others' money behind their screens) is agreed
    by every peer in the params.  Bots wait ``pace`` s before each move.

    ``bot_processes``: seats 1… run as child processes (:mod:`p2p.peer_process`; bot kinds
    must then be names) so the peers use every core; only seat 0's table is in this process
    (``results`` covers it alone, ``peer_events`` holds the children's final reports).
    Seat 0's folder records them (``bots.json``) so resuming seat 0 brings them back.
    ``handle`` (a :class:`p2p.handle.TableHandle`) is attached to seat 0's table.
    """
    kinds: list[Any] = [bots] * players if isinstance(bots, str) else list(bots)
    if bot_processes and not all(isinstance(k, str) for k in kinds[1:]):
        raise ValueError("bot_processes needs bot kinds given by name")
    t0 = time.perf_counter()
    peers = await make_local_setup(players, shuffle_mode, Path(folder), lam=lam, names=names,
                                   variant=variant or "base", board=board, money=money)
    # with a human at the table nobody gives up on a slow decision: the UI can call
    # ``LockstepTable.abandon`` instead
    abandon = float("inf") if human else 60.0
    children: list[PeerProcess] = []
    tables = []
    if bot_processes:
        GameStore(peers[0].folder).save_bot_seats([
            BotSeat(p.seat, str(p.folder.resolve()), kinds[p.seat], seed, pace, abandon)
            for p in peers[1:]])
    try:
        for p in peers:
            kind = kinds[p.seat]
            if bot_processes and p.seat > 0:
                await p.listener.close()  # the child binds this port again
                prepare_folder(p.folder, p.roster, p.params, p.seat, p.game_id, p.identity,
                               lam, p.board)
                children.append(await spawn(p.seat, p.folder, kind, seed, pace=pace,
                                            abandon=abandon))
                continue
            agent = make_bot(kind, seed * 1000 + p.seat) if isinstance(kind, str) else kind
            decider = human if p.seat == 0 else (paced(agent, pace) if pace > 0 else None)
            tables.append(await start_peer(p, agent, decider, lam=lam,
                                           abandon_timeout=abandon))
        if on_tables is not None:
            on_tables(tables)
        if handle is not None:
            handle.attach(tables[0], peers[0].folder)
        watcher = asyncio.ensure_future(watch(children, stop_on_child_exit(tables[0].stop))) \
            if children else None
        try:
            results = await asyncio.gather(*(t.run() for t in tables))
            if handle is not None:
                handle.result = results[0]
        finally:
            if watcher is not None:
                watcher.cancel()
            for p in peers[:len(tables)]:
                with contextlib.suppress(Exception):
                    await finish_peer(p)
        ends = await wait_all(children, CHILD_FINISH)
    finally:
        await asyncio.gather(*(stop(c) for c in children))
        for p in peers:  # listeners of seats never started (a failed spawn), idempotent
            with contextlib.suppress(Exception):
                await p.listener.close()
    hashes = [r.state_hash for r in results]
    for end in ends:
        if end["event"] != "done":
            raise RuntimeError(f"bot peer of seat {end.get('seat')} did not finish: {end}")
        hashes.append(bytes.fromhex(end["hash"]))
    times = [t.step_times for t in tables] + [[tuple(x) for x in e["timings"]] for e in ends]
    wall = time.perf_counter() - t0
    export = results[0].export
    assert export is not None
    report = audit_game(export) if audit else None
    return LocalGameResult(results[0].scores, results[0].winners, hashes, wall, export,
                           export.stat().st_size, len(results[0].transcript), report,
                           list(results), actor_step_times(times), ends)


def stop_on_child_exit(stop_table: Callable[[int | None, str, str], object],
                       ) -> Callable[[PeerProcess, dict[str, Any]], None]:
    """The :func:`p2p.peer_process.watch` callback for our bot children: a child that ends
    early would only leave our table stalled on its seat, so stop the table with the
    child's own word (its culprit and rule, or "peer-exited")."""
    def child_gone(c: PeerProcess, ev: dict[str, Any]) -> None:
        culprit = ev.get("culprit") if ev["event"] == "stopped" else c.seat
        stop_table(culprit if isinstance(culprit, int) else None,
                   str(ev.get("rule", "peer-exited")),
                   f"seat {c.seat}'s peer process ended early: {ev.get('detail', ev)}")

    return child_gone


def actor_step_times(per_seat: list[list[tuple[str, float, int, int]]],
                     ) -> list[tuple[str, float, int, int]]:
    """Per step, the timing seen by the peer that acted (its decision time excluded), so a
    bot's think time on another peer does not count as network latency.  ``per_seat``:
    each seat's ``step_times`` (a table's, or a child peer's ``timings``)."""
    out = []
    for k, row in enumerate(per_seat[0]):
        actor = row[3]
        src = per_seat[actor] if actor >= 0 else per_seat[0]
        name, dt, ops, who = src[k] if k < len(src) else row
        out.append((name, dt, ops, who))
    return out

"""Entry points for a LAN game after the lobby (``silkroad host`` / ``join`` / resume).

The lobby (:mod:`p2p.lobby.seating`) ends with a :class:`~p2p.game.GameSetup` and the listener it
used; :func:`play_setup` creates this peer's game folder and plays the game on that same
listener (the per-game identity is the listener's).  :func:`resume_folder` restarts a peer
from its folder after a crash — the same code path :mod:`p2p.peer` uses.  The CLI reaches
these through :mod:`p2p.front_door`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from crypto.shuffle import DEFAULT_LAMBDA

from .game import BoardMismatch, GameSetup, check_board, read_board_spec, variant_reverse
from .identity import Identity
from .local_table import LocalPeer, finish_peer, start_peer
from .net.connection import Listener
from .store import BotSeat, FolderLock, GameStore, game_folder
from .table import Agent, HumanDecider, LockstepTable, TableResult


def setup_board(setup: GameSetup, variant: str | None = None,
                board: str | os.PathLike[str] | None = None) -> str:
    """The board spec to play: ours (``board`` file) or the host's, checked against the
    agreed digest; ``variant`` (if given) must be the agreed one.  Raises
    :class:`p2p.game.BoardMismatch` naming the mismatch, before any game state exists."""
    agreed = setup.params.variant
    if variant is not None and variant_reverse(variant) != variant_reverse(agreed):
        raise BoardMismatch(f"variant mismatch: this peer wants {variant!r}, the table "
                            f"agreed on {agreed!r}")
    variant_reverse(agreed)
    mine = read_board_spec(board) if board is not None else None
    if mine is not None:
        check_board(setup.params, mine, "this peer")
    if setup.board is not None:
        check_board(setup.params, setup.board, "the host")
    spec = mine if mine is not None else setup.board
    return check_board(setup.params, spec, "this peer")


def seat_folder(root: str | Path, setup: GameSetup, listener: Listener) -> Path:
    """This seat's game folder under ``root``: keyed by the game and by our own key, so a
    host and a joiner playing from one directory never share a folder."""
    return game_folder(root, setup.game_id, listener.identity.public)


async def play_setup(setup: GameSetup, listener: Listener, root: str | Path,
                     agent: Agent | None = None, human: HumanDecider | None = None, *,
                     lam: int = DEFAULT_LAMBDA, abandon_timeout: float = 1800.0,
                     on_table: Callable[[LockstepTable, Path], None] | None = None,
                     variant: str | None = None,
                     board: str | os.PathLike[str] | None = None,
                     bot_seats: Sequence[BotSeat] = ()) -> TableResult:
    """Play the game agreed in the lobby; returns our :class:`TableResult` (with the
    ``game.silkroad`` export path).  ``on_table(table, folder)`` is called before play
    starts so a UI can follow the table (:meth:`p2p.handle.TableHandle.attach`).
    ``variant``/``board`` (a board JSON file) are what this player asked for: they must
    match the agreed params (:func:`setup_board`), else :class:`p2p.game.BoardMismatch`.
    ``bot_seats`` are the bot children this process runs for the table (recorded so a
    resume brings them back).  The folder (:func:`seat_folder`) is locked before anything
    is written to it (:class:`p2p.store.FolderInUse` names it if another peer holds it).
    Raises :class:`p2p.table.TableStopped` on a cheat, a desync or a peer that never came
    back."""
    spec = setup_board(setup, variant, board)
    folder = seat_folder(root, setup, listener)
    lock = FolderLock(folder).acquire()
    try:
        store = GameStore(folder)
        if not store.exists():
            store.create(list(setup.roster), setup.params, setup.my_seat, setup.game_id, lam,
                         spec, setup.table)
        if bot_seats:
            store.save_bot_seats(list(bot_seats))
    except BaseException:
        lock.release()
        raise
    peer = LocalPeer(setup.my_seat, listener.identity, listener, list(setup.roster),
                     setup.params, setup.game_id, folder, board=spec, lock=lock)
    return await _play_peer(peer, agent, human, abandon_timeout, on_table)


async def _play_peer(peer: LocalPeer, agent: Agent | None, human: HumanDecider | None,
                     abandon_timeout: float,
                     on_table: Callable[[LockstepTable, Path], None] | None) -> TableResult:
    """Start ``peer``'s table, show it to ``on_table``, play to the end, always clean up."""
    try:
        table = await start_peer(peer, agent, human, abandon_timeout=abandon_timeout)
        if on_table is not None:
            on_table(table, peer.folder)
        return await table.run()
    finally:
        await finish_peer(peer)


async def resume_folder(folder: str | Path, agent: Agent | None = None,
                        human: HumanDecider | None = None, *,
                        abandon_timeout: float = 1800.0,
                        on_table: Callable[[LockstepTable, Path], None] | None = None,
                        lock: FolderLock | None = None) -> TableResult:
    """Restart a crashed peer from its game folder (same address, same key) and finish
    (``on_table`` as in :func:`play_setup`).  The folder is locked first (or ``lock``, the
    caller's, is taken over), before the listener takes the seat's port."""
    lock = (lock or FolderLock(folder)).acquire()
    try:
        store = GameStore(folder)
        roster, params, seat, game_id = store.load_meta()
        params.check_playable()
        identity = Identity.from_bytes(store.load_secrets().identity_seed)
        entry = roster[seat]
        listener = await Listener(identity, host=entry.host, port=entry.port).start()
    except BaseException:
        lock.release()
        raise
    peer = LocalPeer(seat, identity, listener, roster, params, game_id, Path(folder),
                     lock=lock)
    return await _play_peer(peer, agent, human, abandon_timeout, on_table)

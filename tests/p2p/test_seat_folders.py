"""Every seat has its own game folder, and a folder is locked while a peer plays from it.

Issue: ``host`` and ``join`` run from one directory used one folder ``games/peers/<id>``;
their transcripts interleaved and the others saw "envelope 0/0 delivered again" — a
cheating verdict for a local mistake.  Now the default folder is keyed by the seat's key,
and two peers pointed at one folder get a clear local error naming it.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from table_kit import LAM, run

from p2p.front_door import TableHandle, resume_seat
from p2p.identity import Identity
from p2p.lobby.seating import LobbyTable, join_table
from p2p.local_table import (
    LocalPeer,
    finish_peer,
    make_local_setup,
    prepare_folder,
    start_peer,
)
from p2p.net.connection import Listener
from p2p.netgame import seat_folder
from p2p.store import FolderInUse, FolderLock, StoreError


def test_a_locked_folder_is_a_clear_local_error(tmp_path: Path) -> None:
    folder = tmp_path / "g"
    with FolderLock(folder):
        with pytest.raises(FolderInUse) as err:
            FolderLock(folder).acquire()
        assert str(folder) in str(err.value) and "in use" in str(err.value)
        assert isinstance(err.value, StoreError)
    with FolderLock(folder) as again:  # released: free again
        assert again.held


def test_the_lock_is_held_across_processes(tmp_path: Path) -> None:
    """The lock is the OS's (flock): another process sees it, and it goes with the
    process that held it."""
    folder = tmp_path / "g"
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        from p2p.store import FolderLock
        FolderLock({str(folder)!r}).acquire()
        print("locked", flush=True)
        sys.stdin.read()
    """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(FolderInUse, match=f"process {holder.pid}"):
            FolderLock(folder).acquire()
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(10)
    FolderLock(folder).acquire().release()


@pytest.mark.timeout(60)
def test_two_peers_on_one_folder(tmp_path: Path) -> None:
    """A second peer started on a folder another peer plays from is refused before it
    touches the network or the transcript: the first one's files are unchanged."""
    async def body() -> None:
        peers = await make_local_setup(3, "audit", tmp_path, lam=LAM)
        first = peers[0]
        prepare_folder(first.folder, first.roster, first.params, 0, first.game_id,
                       first.identity, LAM)
        try:
            await start_peer(first, None)
            meta = (first.folder / "meta.json").read_bytes()
            intruder = LocalPeer(0, first.identity,
                                 await Listener(first.identity, host="127.0.0.1").start(),
                                 first.roster, first.params, first.game_id, first.folder)
            with pytest.raises(FolderInUse) as err:
                await start_peer(intruder, None)
            assert str(first.folder) in str(err.value)
            await intruder.listener.close()
            assert (first.folder / "meta.json").read_bytes() == meta
            # resuming the seat from its folder meanwhile: the same local error
            with pytest.raises(FolderInUse):
                await resume_seat(first.folder, TableHandle())
        finally:
            for p in peers:
                await finish_peer(p)
        assert not FolderLock(first.folder).acquire().release()  # unlocked at the end

    run(body, timeout=50)


@pytest.mark.timeout(30)
def test_host_and_joiner_in_one_directory_get_their_own_folders(tmp_path: Path) -> None:
    """The lobby's seats, all playing from one ``--folder``: one folder per seat."""
    async def body() -> list[Path]:
        listeners = [await Listener(Identity.generate(), host="127.0.0.1").start()
                     for _ in range(3)]
        host = LobbyTable(listeners[0], name="t", seats=3, shuffle_mode="audit")
        await host.open()
        try:
            joins = [asyncio.ensure_future(join_table(lst, "127.0.0.1", listeners[0].port,
                                                      name=f"p{i}", start_timeout=20))
                     for i, lst in enumerate(listeners[1:], 1)]
            await host.wait_for_players(timeout=10)
            setups = [await host.start(), *(await asyncio.gather(*joins))]
        finally:
            await host.close()
            for lst in listeners:
                await lst.close()
        return [seat_folder(tmp_path, s, lst) for s, lst in zip(setups, listeners,
                                                                strict=True)]

    folders = run(body, timeout=25)
    assert len(set(folders)) == 3
    assert len({f.name[:16] for f in folders}) == 1  # one game, keyed by each seat's key

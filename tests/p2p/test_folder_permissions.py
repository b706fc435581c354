"""A seat's game folder is private: ``0700``, every file ``0600``.

``secrets.bin`` holds the identity seed, the ElGamal key and the hand; it used to be made
``0644`` in ``0755`` folders, so any local user could read a player's hand mid-game.  Now
everything is created private, and a folder found readable at start is fixed with a
warning naming it (docs/network.md §10 says why fix, not refuse); what cannot be fixed is a
clear local error naming the file.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from crypto import group as g
from p2p.front_door import read_seat
from p2p.game import GameParams, compute_game_id
from p2p.identity import Identity
from p2p.local_table import prepare_folder
from p2p.net.mesh import RosterEntry
from p2p.store import (
    FolderLock,
    GameStore,
    InsecureFolder,
    Secrets,
    StoreError,
    game_folder,
    secure_folder,
)


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _seat_folder(root: Path) -> tuple[Path, Identity]:
    """A seat's folder as ``silkroad host``/``join`` make it (meta, secrets, lock)."""
    ids = [Identity.generate() for _ in range(3)]
    roster = [RosterEntry(i, ids[i].public, "127.0.0.1", 4000 + i, f"p{i}") for i in range(3)]
    params = GameParams(3)
    gid = compute_game_id(roster, params)
    folder = game_folder(root, gid, ids[1].public)
    with FolderLock(folder):
        store = prepare_folder(folder, roster, params, 1, gid, ids[1])
        store.append(b"an envelope")
        store.write_stopped(None, "abandoned", "test", 3, 1)
        store.close()
    return folder, ids[1]


def test_everything_is_created_private(tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o755)
    old = os.umask(0o022)  # the usual umask: without care, files would be 0644
    try:
        root = tmp_path / "games" / "peers"
        folder, _ = _seat_folder(root)
    finally:
        os.umask(old)
    assert _mode(tmp_path) == 0o755  # the user's own directory is left alone
    for made in (tmp_path / "games", root, folder):
        assert _mode(made) == 0o700, made
    names = {p.name for p in folder.iterdir()}
    assert {"secrets.bin", "meta.json", "transcript.bin", "lock", "stopped.json"} <= names
    for f in folder.iterdir():
        assert _mode(f) == 0o600, f


def test_a_readable_folder_is_fixed_at_start_and_said(tmp_path: Path,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    folder, ident = _seat_folder(tmp_path / "peers")
    secrets = folder / "secrets.bin"
    os.chmod(folder, 0o755)  # as an older version left it
    os.chmod(secrets, 0o644)
    os.chmod(folder / "transcript.bin", 0o640)
    with caplog.at_level(logging.WARNING, logger="p2p.store"):
        record = read_seat(folder)  # what 'join --resume' checks first
    assert record.seat == 1
    assert _mode(folder) == 0o700 and _mode(secrets) == 0o600
    assert _mode(folder / "transcript.bin") == 0o600
    said = caplog.text
    assert str(secrets) in said and "other users" in said and str(folder) in said
    # the start of play (the folder lock) fixes it too, before anything is read
    os.chmod(secrets, 0o604)
    with FolderLock(folder):
        assert _mode(secrets) == 0o600
    assert GameStore(folder).load_secrets().identity_seed == ident.to_bytes()
    assert secure_folder(folder) == []  # nothing left to fix


def test_what_cannot_be_fixed_is_refused_naming_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder, _ = _seat_folder(tmp_path / "peers")
    secrets = folder / "secrets.bin"
    # a symlink in place of the secrets could send them (or read them) anywhere
    elsewhere = tmp_path / "elsewhere.bin"
    secrets.rename(elsewhere)
    secrets.symlink_to(elsewhere)
    with pytest.raises(InsecureFolder) as err:
        GameStore(folder).load_secrets()
    assert str(secrets) in str(err.value) and "symbolic link" in str(err.value)
    assert isinstance(err.value, StoreError)  # the commands report it as a local error
    with pytest.raises(InsecureFolder):
        FolderLock(folder).acquire()
    with pytest.raises(InsecureFolder):
        GameStore(folder).save_secrets(Secrets(b"x" * 32, g.random_scalar()))
    assert elsewhere.stat().st_size > 0 and secrets.is_symlink()  # nothing written through it
    secrets.unlink()
    elsewhere.rename(secrets)
    # a folder of another user: this process cannot make it private
    monkeypatch.setattr("p2p.store.os.geteuid", lambda: os.getuid() + 4242)
    with pytest.raises(InsecureFolder) as err:
        read_seat(folder)
    assert str(folder) in str(err.value) and "another user" in str(err.value)

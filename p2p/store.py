"""Per-game folder persistence: the transcript as it arrives, our secrets, and the export.

Layout of ``<root>/<game_id hex[:16]>/``:

* ``meta.json`` — roster (seat, key, host, port, name), params, our seat: enough to rebuild
  the table after a crash without the lobby.
* ``transcript.bin`` — every accepted envelope (ours included) in arrival order, each as a
  4-byte big-endian length + the wire bytes, flushed and fsynced one by one.  A torn last
  record (crash mid-write) is ignored on load: it was never acknowledged to anybody.
* ``secrets.bin`` — our identity seed, ElGamal secret key and the latest session snapshot
  (see :mod:`p2p.lockstep`), written atomically (temp file + fsync + rename) because a
  half-written secret file would make the peer unable to resume.
* ``game.silkroad`` — the self-contained export written at the end (roster keys, params and
  every envelope including the revealed secrets) that ``silkroad audit`` verifies offline.

Secrets are pickled only here, only by and for this peer: they are never sent anywhere and
never loaded from someone else's folder.
"""

from __future__ import annotations

import json
import os
import pickle
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack

from .game import GameParams
from .mesh import RosterEntry

EXPORT_MAGIC = "silkroad-transcript"
EXPORT_VERSION = 1
_LEN = struct.Struct(">I")
MAX_RECORD = 16 * 1024 * 1024


class StoreError(Exception):
    """A game folder or export file is missing, corrupt or of another version."""


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def game_folder(root: str | os.PathLike[str], game_id: bytes) -> Path:
    """``root/<first 16 hex digits of the game id>``."""
    return Path(root) / game_id.hex()[:16]


@dataclass
class Secrets:
    """What only this peer knows and needs to resume."""

    identity_seed: bytes
    elgamal_x: int
    snapshot: bytes | None = None


class GameStore:
    """One game's folder for one peer."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self.transcript_path = self.folder / "transcript.bin"
        self.secrets_path = self.folder / "secrets.bin"
        self.meta_path = self.folder / "meta.json"
        self.export_path = self.folder / "game.silkroad"
        self._fh: Any = None
        self._dirty = False
        #: records appended so far / known to be on disk (fsync done after they were written)
        self.written = 0
        self.synced = 0

    # --- meta ---------------------------------------------------------------------------
    def create(self, roster: list[RosterEntry], params: GameParams, seat: int,
               game_id: bytes, lam: int = 40) -> None:
        """Create the folder and write ``meta.json`` (once, at the start of the game)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        meta = {
            "game_id": game_id.hex(),
            "seat": seat,
            "lam": lam,
            "params": [p.hex() if isinstance(p, bytes) else p for p in params.to_wire()],
            "roster": [[e.seat, e.key.hex(), e.host, e.port, e.name] for e in roster],
        }
        _atomic_write(self.meta_path, json.dumps(meta, indent=1).encode())

    def exists(self) -> bool:
        return self.meta_path.exists()

    def load_lam(self) -> int:
        """The cut-and-choose parameter the table plays with (needed to audit)."""
        try:
            return int(json.loads(self.meta_path.read_text()).get("lam", 40))
        except (OSError, ValueError, TypeError) as exc:
            raise StoreError(f"cannot read {self.meta_path}: {exc}") from exc

    def load_meta(self) -> tuple[list[RosterEntry], GameParams, int, bytes]:
        """``(roster, params, seat, game_id)`` from ``meta.json``."""
        try:
            meta = json.loads(self.meta_path.read_text())
            roster = [RosterEntry(s, bytes.fromhex(k), h, p, n) for s, k, h, p, n in meta["roster"]]
            pw = list(meta["params"])
            pw[3] = bytes.fromhex(pw[3])
            return roster, GameParams.from_wire(pw), int(meta["seat"]), bytes.fromhex(
                meta["game_id"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise StoreError(f"cannot read {self.meta_path}: {exc}") from exc

    # --- transcript ---------------------------------------------------------------------
    def append(self, wire: bytes, durable: bool = True) -> int:
        """Append one envelope (flushed to the OS at once).

        ``durable`` also fsyncs it, and everything appended before.  The table passes
        ``durable=False`` for envelopes it *received* and calls :meth:`sync` before anything
        of its own leaves: a received envelope lost in a crash is simply fetched again from
        the peers on resume, but one of ours must be on disk before anybody sees it (else a
        restarted peer could sign a different envelope with the same sequence number).
        Group commit keeps lockstep latency low (one fsync per outgoing message, not per
        envelope).
        """
        if self._fh is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.transcript_path, "ab")
        self._fh.write(_LEN.pack(len(wire)) + wire)
        self._fh.flush()
        self._dirty = True
        self.written += 1
        if durable:
            self.sync()
        return self.written

    def sync(self) -> None:
        """fsync the transcript if anything was appended since the last sync.

        Safe to call from a worker thread while the event loop keeps appending (the table's
        background flusher does): ``synced`` only counts records written *before* the fsync
        started, so a record appended meanwhile is never marked durable by mistake.
        """
        fh = self._fh
        if fh is not None and self.synced < self.written:
            upto = self.written
            os.fsync(fh.fileno())
            self.synced = max(self.synced, upto)
            self._dirty = self.synced < self.written

    def load_transcript(self) -> list[bytes]:
        """Stored wires in arrival order; a torn final record is dropped (and truncated)."""
        if not self.transcript_path.exists():
            return []
        data = self.transcript_path.read_bytes()
        out: list[bytes] = []
        pos = 0
        while pos + 4 <= len(data):
            (n,) = _LEN.unpack_from(data, pos)
            if n > MAX_RECORD or pos + 4 + n > len(data):
                break
            out.append(data[pos + 4: pos + 4 + n])
            pos += 4 + n
        if pos != len(data):
            with open(self.transcript_path, "r+b") as fh:
                fh.truncate(pos)
        return out

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    # --- secrets ------------------------------------------------------------------------
    def save_secrets(self, secrets: Secrets) -> None:
        """Atomically replace ``secrets.bin``."""
        self.folder.mkdir(parents=True, exist_ok=True)
        _atomic_write(self.secrets_path, pickle.dumps(secrets, protocol=pickle.HIGHEST_PROTOCOL))

    def load_secrets(self) -> Secrets:
        try:
            obj = pickle.loads(self.secrets_path.read_bytes())
        except (OSError, pickle.UnpicklingError, EOFError) as exc:
            raise StoreError(f"cannot read {self.secrets_path}: {exc}") from exc
        if not isinstance(obj, Secrets):
            raise StoreError(f"{self.secrets_path} does not hold secrets")
        return obj

    # --- export -------------------------------------------------------------------------
    def write_export(self, roster: list[RosterEntry], params: GameParams, game_id: bytes,
                     lam: int, wires: list[bytes]) -> Path:
        """Write the self-contained ``game.silkroad`` (msgpack) and return its path."""
        _atomic_write(self.export_path, encode_export(roster, params, game_id, lam, wires))
        return self.export_path


@dataclass
class ExportedGame:
    """A parsed ``game.silkroad`` file."""

    roster: list[RosterEntry]
    params: GameParams
    game_id: bytes
    lam: int
    wires: list[bytes]


def encode_export(roster: list[RosterEntry], params: GameParams, game_id: bytes, lam: int,
                  wires: list[bytes]) -> bytes:
    """Bytes of a self-contained transcript file (arrays only)."""
    return msgpack.packb([EXPORT_MAGIC, EXPORT_VERSION, [e.to_wire() for e in roster],
                          params.to_wire(), game_id, lam, list(wires)], use_bin_type=True)


def read_export(path: str | os.PathLike[str]) -> ExportedGame:
    """Parse a ``game.silkroad`` file; :class:`StoreError` says why it is unreadable."""
    try:
        data = Path(path).read_bytes()
        obj = msgpack.unpackb(data, raw=False, use_list=True, strict_map_key=True)
    except Exception as exc:  # OSError or any msgpack error: all mean "unreadable"
        raise StoreError(f"cannot read {path}: {exc}") from exc
    if not (isinstance(obj, list) and len(obj) == 7 and obj[0] == EXPORT_MAGIC):
        raise StoreError(f"{path} is not a silkroad transcript")
    _, version, roster_w, params_w, game_id, lam, wires = obj
    if version != EXPORT_VERSION:
        raise StoreError(f"{path}: unsupported transcript version {version!r}")
    try:
        roster = [RosterEntry.from_wire(e) for e in roster_w]
        params = GameParams.from_wire(params_w)
    except Exception as exc:
        raise StoreError(f"{path}: bad roster or params: {exc}") from exc
    if not isinstance(game_id, bytes) or not isinstance(lam, int) or not isinstance(wires, list) \
            or not all(isinstance(w, bytes) for w in wires):
        raise StoreError(f"{path}: bad game id, lambda or envelope list")
    return ExportedGame(roster, params, game_id, lam, wires)

"""Per-game folder persistence: the transcript as it arrives, our secrets, and the export.

Layout of ``<root>/<game_id hex[:16]>/``:

* ``meta.json`` — roster (seat, key, host, port, name), params, our seat: enough to rebuild
  the table after a crash without the lobby.
* ``transcript.bin`` — every accepted envelope (ours included) in arrival order, each as a
  4-byte big-endian length + the wire bytes, flushed and fsynced one by one.  A torn last
  record (crash mid-write) is ignored on load: it was never acknowledged to anybody.
* ``secrets.bin`` — our identity seed, ElGamal secret key and the latest session snapshot
  (see :mod:`p2p.table.resume`), written atomically (temp file + fsync + rename) because a
  half-written secret file would make the peer unable to resume.
* ``stopped.json`` — why our table stopped early (culprit, rule, detail, step), if it did,
  and the export's path if it was written all the same.
* ``game.silkroad`` — the self-contained export written at the end (roster keys, params and
  every envelope including the revealed secrets) that ``silkroad audit`` verifies offline;
  also when the table stops after the game reached its end (a seat never closed).
* ``lock`` — held (``flock``) by the one process playing from this folder: two peers
  writing one transcript would look to everyone else like one peer signing twice.
* ``bots.json`` — the bot seats this player's process ran (their folders, kinds, seeds),
  so a resumed player brings them back.

Permissions: the folder is ``0700`` and every file in it ``0600`` (``secrets.bin`` holds the
identity seed, the ElGamal key and the hand; the transcript holds what only this seat was
sent).  Folders the program creates for the root (``games/peers``…) are ``0700`` too.
:func:`secure_folder` checks this at the start of every game and resume and *fixes* a
folder or file that others could read, with a warning naming it, rather than refusing:
the common case is a folder written by an older version in the middle of a game, and
refusing would only lock its owner out of that game while leaving the file readable.  What
cannot be fixed (a file of another user, a symlink in place of a file) is refused with
:class:`InsecureFolder` naming it.

Secrets are msgpack (``[magic, version, identity seed, ElGamal x, snapshot]``; the snapshot
is :mod:`p2p.table.resume`'s own versioned msgpack around
:meth:`crypto.session.TokenSession.snapshot`): no pickle, so even a tampered folder cannot
make the program run code when it resumes.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import stat
import struct
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import msgpack

from crypto.shuffle import DEFAULT_LAMBDA
from engine.state import Config

from .game import (
    CERTIFIED_SINCE,
    DEFAULT_BOARD,
    LEGACY_LAMBDA,
    GameParams,
    game_config,
    lambda_problem,
)
from .identity import fingerprint
from .net.mesh import RosterEntry
from .sanitize import clean

EXPORT_MAGIC = "silkroad-transcript"
EXPORT_VERSION = 2
_LEN = struct.Struct(">I")
SECRETS_MAGIC = "silkroad-secrets"
SECRETS_VERSION = 2
MAX_RECORD = 16 * 1024 * 1024


FILE_MODE = 0o600
DIR_MODE = 0o700
log = logging.getLogger("p2p.store")


class StoreError(Exception):
    """A game folder or export file is missing, corrupt or of another version."""


class InsecureFolder(StoreError):
    """A game folder or one of its files could be read by others and cannot be fixed."""


def private_dirs(folder: str | os.PathLike[str]) -> Path:
    """Create ``folder`` and any missing parent as ``0700`` (existing parents are the
    user's and stay as they are): a game's secrets must not sit in a folder others list."""
    path = Path(folder)
    missing: list[Path] = []
    cur = path
    while not cur.exists():
        missing.append(cur)
        if cur.parent == cur:
            break
        cur = cur.parent
    for d in reversed(missing):
        try:
            d.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue  # made meanwhile by another peer of this machine
        os.chmod(d, DIR_MODE)  # mkdir's mode is masked by the umask; this is not
    return path


def _private_open(path: Path, flags: int) -> int:
    """``os.open`` creating the file ``0600``; an existing file is narrowed to ``0600``."""
    fd = os.open(path, flags | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) != FILE_MODE:
            os.fchmod(fd, FILE_MODE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with os.fdopen(_private_open(tmp, os.O_WRONLY | os.O_TRUNC), "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def write_private(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically as a ``0600`` file (missing parent folders are
    made ``0700``, as :func:`private_dirs` does) and return the path.

    For a copy of a game's transcript outside its folder (``silkroad play --transcript``):
    it holds what only this seat was sent, so it is as private as the folder's own."""
    target = Path(path)
    private_dirs(target.parent)
    _atomic_write(target, data)
    return target


def secure_folder(folder: str | os.PathLike[str]) -> list[str]:
    """Make ``folder`` ``0700`` and every file in it ``0600``; return what was fixed.

    Called when a peer starts or resumes from the folder (:class:`FolderLock`) and before
    secrets are read or written.  A readable folder or file is fixed and a warning names
    it (see the module docstring for why it is fixed, not refused); a file or folder of
    another user, or a symlink where a file should be, raises :class:`InsecureFolder`
    naming it — this process cannot make it private, and a symlink could point the
    secrets anywhere."""
    path = private_dirs(folder)
    fixed: list[str] = []
    uid = os.geteuid()

    def check(p: Path, want: int, is_dir: bool) -> None:
        st = os.lstat(p)
        if stat.S_ISLNK(st.st_mode):
            raise InsecureFolder(f"{p} is a symbolic link; a game folder holds its own "
                                 "files only (remove the link)")
        if is_dir != stat.S_ISDIR(st.st_mode):
            return  # not ours to judge (a stray entry); never followed or read
        if st.st_uid != uid:
            raise InsecureFolder(f"{p} belongs to another user (uid {st.st_uid}); this "
                                 "seat's secrets must be private to you")
        mode = stat.S_IMODE(st.st_mode)
        if mode & 0o077:
            try:
                os.chmod(p, want)
            except OSError as exc:
                raise InsecureFolder(f"{p} can be read by other users (mode {mode:o}) and "
                                     f"cannot be made private: {exc}") from None
            fixed.append(str(p))
            log.warning("%s could be read by other users (mode %o): made it %o", p, mode,
                        want)

    check(path, DIR_MODE, True)
    for entry in path.iterdir():
        if entry.is_symlink() or entry.is_file():
            check(entry, FILE_MODE, False)
    return fixed


def game_folder(root: str | os.PathLike[str], game_id: bytes,
                key: bytes | None = None) -> Path:
    """``root/<first 16 hex digits of the game id>``, or with ``key`` (the seat's public
    key) ``root/<game id 16>-<key fingerprint 8>``: every seat of one game gets its own
    folder even when several play from one directory (host and join on one machine)."""
    name = game_id.hex()[:16]
    if key is not None:
        name += "-" + fingerprint(key)[:8]
    return Path(root) / name


class FolderInUse(StoreError):
    """Another process (or another peer of this one) plays from this game folder."""


class FolderLock:
    """An OS lock (``flock``) on ``<folder>/lock`` while a peer plays from the folder.

    Why: two peers sharing one folder interleave their transcripts, and the others then see
    envelopes "delivered again" and name a cheat.  The lock makes that a local error naming
    the folder, before anything is written.  The kernel drops it when the process dies, so
    a crashed peer never leaves a stale lock behind."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self.path = self.folder / "lock"
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> FolderLock:
        """Take the lock or raise :class:`FolderInUse` naming the folder (never blocks)."""
        if self._fd is not None:
            return self
        secure_folder(self.folder)  # before anything is read or written (may raise)
        fd = _private_open(self.path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
            finally:
                os.close(fd)
            who = f" (process {holder})" if holder.isdigit() else ""
            raise FolderInUse(
                f"the game folder {self.folder} is in use by another peer{who}; each seat "
                "needs its own folder (give a different --folder)") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing the only descriptor drops the flock

    def __enter__(self) -> FolderLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


@dataclass(frozen=True)
class BotSeat:
    """A bot seat this player's process runs as a child (:mod:`p2p.peer_process`)."""

    seat: int
    folder: str
    kind: str
    seed: int
    pace: float = 0.0
    abandon: float = 1800.0


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
        self.stopped_path = self.folder / "stopped.json"
        self.bots_path = self.folder / "bots.json"
        self._fh: Any = None
        #: records appended so far / known to be on disk (fsync done after they were written)
        self.written = 0
        self.synced = 0

    # --- meta ---------------------------------------------------------------------------
    def create(self, roster: list[RosterEntry], params: GameParams, seat: int,
               game_id: bytes, lam: int = DEFAULT_LAMBDA, board: str = DEFAULT_BOARD,
               table: str = "") -> None:
        """Create the folder and write ``meta.json`` (once, at the start of the game).

        ``board`` is the agreed board spec (``"default"`` or the board file's JSON text):
        kept here so a resumed peer and :func:`p2p.judge.game_audit.audit_folder` rebuild the same
        engine config without the lobby.  ``table`` is the table's name (a label for the
        files a resumed seat writes, in no hash)."""
        secure_folder(self.folder)
        meta = {
            "game_id": game_id.hex(),
            "seat": seat,
            "lam": lam,
            "board": board,
            "params": [p.hex() if isinstance(p, bytes) else p for p in params.to_wire()],
            "roster": [[e.seat, e.key.hex(), e.host, e.port, e.name] for e in roster],
            "table": table,
        }
        _atomic_write(self.meta_path, json.dumps(meta, indent=1).encode())

    def exists(self) -> bool:
        return self.meta_path.exists()

    def load_lam(self) -> int:
        """The cut-and-choose parameter recorded in ``meta.json``, as it is (the audit
        judges it: :func:`p2p.game.lambda_problem`); a live table uses
        :meth:`load_table_lam`."""
        try:
            return int(json.loads(self.meta_path.read_text()).get("lam", LEGACY_LAMBDA))
        except (OSError, ValueError, TypeError) as exc:
            raise StoreError(f"cannot read {self.meta_path}: {exc}") from exc

    def load_table_lam(self) -> int:
        """λ for a live table playing (or resuming) from this folder, checked against the
        game's protocol version (:func:`p2p.game.lambda_problem`).

        Nobody signs ``meta.json``: a λ edited or damaged there would otherwise be played
        silently, and the table would make or accept cut-and-choose proofs the others (and
        the audit) judge with the protocol's own λ.  So a wrong, absent (since protocol
        version 4) or out-of-range λ raises :class:`StoreError` naming λ and the folder."""
        try:
            meta = json.loads(self.meta_path.read_text())
            version = int(meta["params"][0])
        except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
            raise StoreError(f"cannot read {self.meta_path}: {exc}") from exc
        if "lam" not in meta:
            if version >= CERTIFIED_SINCE:
                raise StoreError(f"the game folder {self.folder} records no λ (\"lam\" in "
                                 f"meta.json); protocol version {version} games record "
                                 f"{DEFAULT_LAMBDA}: refusing to play from it")
            lam: object = LEGACY_LAMBDA
        else:
            lam = meta["lam"]
        why = lambda_problem(version, lam)
        if why is not None:
            raise StoreError(f"the game folder {self.folder} has a wrong λ in meta.json "
                             f"({why}): refusing to play from it")
        assert isinstance(lam, int)
        return lam

    def load_board(self) -> str:
        """The agreed board spec (folders from before boards were carried: the default)."""
        try:
            board = json.loads(self.meta_path.read_text()).get("board", DEFAULT_BOARD)
        except (OSError, ValueError, TypeError) as exc:
            raise StoreError(f"cannot read {self.meta_path}: {exc}") from exc
        if not isinstance(board, str):
            raise StoreError(f"{self.meta_path}: bad board")
        return board

    def load_table_name(self) -> str:
        """The table's name recorded at the start ("" when none was, or it is unreadable:
        only a label)."""
        try:
            name = json.loads(self.meta_path.read_text()).get("table", "")
        except (OSError, ValueError, AttributeError):
            return ""
        return clean(name, 64) if isinstance(name, str) else ""

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
            private_dirs(self.folder)
            self._fh = os.fdopen(_private_open(self.transcript_path,
                                               os.O_WRONLY | os.O_APPEND), "ab")
        self._fh.write(_LEN.pack(len(wire)) + wire)
        self._fh.flush()
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
        """Atomically replace ``secrets.bin`` (``0600`` in a ``0700`` folder)."""
        secure_folder(self.folder)
        _atomic_write(self.secrets_path, msgpack.packb(
            [SECRETS_MAGIC, SECRETS_VERSION, secrets.identity_seed,
             secrets.elgamal_x.to_bytes(32, "big"), secrets.snapshot], use_bin_type=True))

    def load_secrets(self) -> Secrets:
        """Read ``secrets.bin``, after making sure nobody else can (:func:`secure_folder`:
        a readable one is fixed, one of another user or a symlink refused)."""
        if self.folder.exists():
            secure_folder(self.folder)
        try:
            obj = msgpack.unpackb(self.secrets_path.read_bytes(), raw=False)
        except Exception as exc:  # OSError or any msgpack error: unreadable
            raise StoreError(f"cannot read {self.secrets_path}: {exc}") from exc
        if not (isinstance(obj, list) and len(obj) == 5 and obj[0] == SECRETS_MAGIC):
            raise StoreError(f"{self.secrets_path} does not hold secrets")
        if obj[1] != SECRETS_VERSION:
            raise StoreError(f"{self.secrets_path}: secrets version {obj[1]!r}")
        _, _, seed, x, snap = obj
        if not (isinstance(seed, bytes) and isinstance(x, bytes) and len(x) == 32
                and (snap is None or isinstance(snap, bytes))):
            raise StoreError(f"{self.secrets_path}: bad secrets fields")
        return Secrets(seed, int.from_bytes(x, "big"), snap)

    # --- a stopped table ------------------------------------------------------------------
    def write_stopped(self, culprit: int | None, rule: str, detail: str, step: int,
                      envelopes: int, export: Path | None = None) -> None:
        """Record why our table stopped (``stopped.json``): the transcript alone cannot say
        that a player abandoned or whom a timeout named.  ``export``: the ``game.silkroad``
        written all the same (a stop at the end of the game), so whoever looks at the
        folder finds it."""
        private_dirs(self.folder)
        record: dict[str, Any] = {"culprit": culprit, "rule": rule, "detail": detail,
                                  "step": step, "envelopes": envelopes}
        if export is not None:
            record["export"] = str(export)
        _atomic_write(self.stopped_path, json.dumps(record, indent=1).encode())

    def load_stopped(self) -> dict[str, Any] | None:
        """The stop record, or None if the table never stopped early (or it is unreadable)."""
        try:
            obj = json.loads(self.stopped_path.read_text())
        except (OSError, ValueError):
            return None
        return obj if isinstance(obj, dict) else None

    # --- our bot seats ------------------------------------------------------------------
    def save_bot_seats(self, bots: list[BotSeat]) -> None:
        """Record the bot seats we run, so resuming this seat brings them back."""
        private_dirs(self.folder)
        rows = [{**asdict(b), "abandon": repr(b.abandon)} for b in bots]
        _atomic_write(self.bots_path, json.dumps(rows, indent=1).encode())

    def load_bot_seats(self) -> list[BotSeat]:
        """The recorded bot seats (none if this seat ran none)."""
        if not self.bots_path.exists():
            return []
        try:
            rows = json.loads(self.bots_path.read_text())
            return [BotSeat(int(r["seat"]), str(r["folder"]), str(r["kind"]), int(r["seed"]),
                            float(r["pace"]), float(r["abandon"])) for r in rows]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise StoreError(f"cannot read {self.bots_path}: {exc}") from exc

    # --- export -------------------------------------------------------------------------
    def write_export(self, roster: list[RosterEntry], params: GameParams, game_id: bytes,
                     lam: int, wires: list[bytes], board: str = DEFAULT_BOARD) -> Path:
        """Write the self-contained ``game.silkroad`` (msgpack) and return its path."""
        _atomic_write(self.export_path, encode_export(roster, params, game_id, lam, wires,
                                                      board))
        return self.export_path


@dataclass
class ExportedGame:
    """A parsed ``game.silkroad`` file."""

    roster: list[RosterEntry]
    params: GameParams
    game_id: bytes
    lam: int
    wires: list[bytes]
    #: board spec (``"default"`` or board JSON; its digest is checked against the params)
    board: str = DEFAULT_BOARD

    def config(self) -> Config:
        """The engine config the game was played with (board checked, variant applied)."""
        return game_config(self.params, self.board)


def encode_export(roster: list[RosterEntry], params: GameParams, game_id: bytes, lam: int,
                  wires: list[bytes], board: str = DEFAULT_BOARD) -> bytes:
    """Bytes of a self-contained transcript file (arrays only).  Version 2 appends the
    board spec, so the audit rebuilds a custom board without any file of the player's."""
    return msgpack.packb([EXPORT_MAGIC, EXPORT_VERSION, [e.to_wire() for e in roster],
                          params.to_wire(), game_id, lam, list(wires), board],
                         use_bin_type=True)


def read_export(path: str | os.PathLike[str]) -> ExportedGame:
    """Parse a ``game.silkroad`` file; :class:`StoreError` says why it is unreadable."""
    try:
        data = Path(path).read_bytes()
        obj = msgpack.unpackb(data, raw=False, use_list=True, strict_map_key=True)
    except Exception as exc:  # OSError or any msgpack error: all mean "unreadable"
        raise StoreError(f"cannot read {path}: {exc}") from exc
    if not (isinstance(obj, list) and len(obj) in (7, 8) and obj[0] == EXPORT_MAGIC):
        raise StoreError(f"{path} is not a silkroad transcript")
    version = obj[1]
    if (version, len(obj)) not in ((1, 7), (EXPORT_VERSION, 8)):
        raise StoreError(f"{path}: unsupported transcript version {version!r}")
    _, _, roster_w, params_w, game_id, lam, wires = obj[:7]
    board = obj[7] if len(obj) == 8 else DEFAULT_BOARD
    if not isinstance(board, str):
        raise StoreError(f"{path}: bad board")
    try:
        roster = [RosterEntry.from_wire(e, weak_key_ok=True) for e in roster_w]
        params = GameParams.from_wire(params_w)
    except Exception as exc:
        raise StoreError(f"{path}: bad roster or params: {exc}") from exc
    if not isinstance(game_id, bytes) or not isinstance(lam, int) or not isinstance(wires, list) \
            or not all(isinstance(w, bytes) for w in wires):
        raise StoreError(f"{path}: bad game id, lambda or envelope list")
    return ExportedGame(roster, params, game_id, lam, wires, board)

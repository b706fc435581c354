"""Game parameters, the game id and the authentication words every player compares.

``game_id = SHA-256(domain ‖ msgpack([[seat, key, name]…], params))`` binds every later
message (mesh purpose, phase-2 envelopes) to exactly this roster and these rules.  Network
addresses are deliberately *not* hashed: they are transport hints that differ per observer
(multi-homed hosts) and may change when a peer restarts.

The authentication words are derived from the game id **and** a nonce per seat that every
peer committed to (at join time) before any nonce was revealed.  Without the commitments a
man-in-the-middle who controls the keys on both sides of a split table could grind keys
until both rosters gave the same few words (a birthday search, ~2^20 tries for 40 bits);
with them the words on each side are fixed by values the attacker had to choose blind, so
a forged table matches with probability 2^-40.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from crypto.errors import MalformedInput
from crypto.shuffle import DEFAULT_LAMBDA, check_lambda_range
from engine.board import Board, default_board, load_board
from engine.errors import DataError
from engine.state import Config, make_config

from .errors import LobbyError, ProtocolError
from .net.framing import pack
from .net.handshake import PROTOCOL_VERSION
from .net.mesh import RosterEntry

SHUFFLE_MODES = ("verified", "audit")
MIN_PLAYERS = 3
MAX_PLAYERS = 6
NONCE_LEN = 32
AUDITABLE_VERSIONS = (1, 2, 3, 4, 5, 6, PROTOCOL_VERSION)
"""Protocol versions whose transcripts we read and audit (the envelopes, crypto and engine
actions of version 1 are those of version 2; only the ack schedule differs.  Version 3
changed only the handshake's join-code check, not what a game records.  Games before
version 4 have no closing acknowledgements: they audit as consistent, never certified.
Version 5 changed one rule, the Grand Vizier's marker: a version 4 game is replayed
without it, and certified as it was played.  Version 6 added the heads to every crypto
body: a version 5 game's five-element bodies are judged by the ack frontier alone.
Version 7 lets a seat relay its watchers' talk: in a version 6 game a two-element talk
body is malformed, as it was)."""
FINAL_MOVE_SINCE = 4
"""The first protocol version whose games end with the caravan in the end city."""
VIZIER_MARKER_SINCE = 5
"""The first protocol version whose Grand Viziers set a good of their colour aside."""
CERTIFIED_SINCE = 4
"""The first protocol version whose games end with every seat's closing acknowledgement."""
SERIES_SINCE = 5
"""The first protocol version whose params may number a game in a series."""
LEGACY_LAMBDA = 40
"""λ of a folder written before ``meta.json`` recorded it (protocol versions before
:data:`CERTIFIED_SINCE` only: from then on it must be recorded)."""
WORD_COUNT = 5
MAX_SERIES = 1000
"""Most games a series may number (a bound on a field every peer parses)."""
MONEY_MODES = ("open", "hidden")
"""How other players' money shows at the table: ``open`` (the default: every payment is
public, so the software shows the totals) or ``hidden`` (behind the screens, as the
rulebook has it: only the log's payments, a player keeps track)."""


@dataclass(frozen=True)
class GameParams:
    """The table parameters every peer must agree on (all hashed into the game id)."""

    players: int
    variant: str = "base"
    board_digest: bytes = b""
    shuffle_mode: str = "verified"
    protocol_version: int = PROTOCOL_VERSION
    money: str = "open"
    #: the game's number in a series at one table (``silkroad host --games N``): 1 for a
    #: single game.  Hashed, so the same seats play a new game id each time
    game_no: int = 1
    #: the seat that holds the leader pawn first (None: the shared coin picks it, as in
    #: game 1); games 2.. of a series rotate it (:mod:`p2p.lobby.series`, docs/rules.md)
    first_leader: int | None = None

    def __post_init__(self) -> None:
        # what to_wire leaves out must be the default, or the game id would not bind it
        if not 1 <= self.game_no <= MAX_SERIES:
            raise ValueError(f"game number {self.game_no} (1..{MAX_SERIES})")
        if self.game_no == 1 and self.first_leader is not None:
            raise ValueError("game 1 of a series has no first leader: the coin picks it")

    def check_playable(self) -> None:
        """Raise :class:`ProtocolError` unless a table with these params can be played (or
        resumed) by this version; older games can still be audited."""
        if self.protocol_version != PROTOCOL_VERSION:
            raise ProtocolError(
                f"this game speaks protocol version {self.protocol_version} and this "
                f"silkroad speaks {PROTOCOL_VERSION}: it can be audited (silkroad audit) "
                "but not played on"
            )

    def to_wire(self) -> list[Any]:
        """The agreed parameters as hashed into the game id.  ``money`` is appended only
        when it is not the default, so a table without the option has exactly the wire
        (hence the game id) it had before the option existed: old transcripts still
        audit and resume.  Likewise the series tail ``money, game_no, first_leader`` is
        written only for games 2.. of a series: a single game's wire is unchanged."""
        wire: list[Any] = [
            self.protocol_version,
            self.players,
            self.variant,
            self.board_digest,
            self.shuffle_mode,
        ]
        if self.game_no != 1:
            # a series tail: money always written (so its position is fixed), then the
            # game's number and the first leader (nil: the coin's pick)
            wire += [self.money, self.game_no, self.first_leader]
        elif self.money != "open":
            wire.append(self.money)
        return wire

    @property
    def hidden_money(self) -> bool:
        return self.money == "hidden"

    @classmethod
    def from_wire(cls, obj: Any) -> GameParams:
        """Parse and validate; raises :class:`ProtocolError` naming the bad field."""
        if not isinstance(obj, list) or len(obj) not in (5, 6, 8):
            raise ProtocolError("params must be [version, players, variant, digest, shuffle"
                                "(, money)] or [..., money, game_no, first_leader]")
        money = "open"
        game_no, first_leader = 1, None
        if len(obj) == 6:
            money = obj[5]
            if money not in MONEY_MODES or money == "open":
                # the default is never written: one encoding per table, one game id
                raise ProtocolError(f"money {money!r} (hidden, or left out for open)")
        elif len(obj) == 8:
            money, game_no, first_leader = obj[5:]
            if money not in MONEY_MODES:
                raise ProtocolError(f"money {money!r} (open or hidden)")
            if not isinstance(game_no, int) or isinstance(game_no, bool) \
                    or not 2 <= game_no <= MAX_SERIES:
                # game 1 never has the tail: one encoding per table, one game id
                raise ProtocolError(f"game number {game_no!r} (2..{MAX_SERIES} with a "
                                    "series tail)")
        version, players, variant, digest, mode = obj[:5]
        if version not in AUDITABLE_VERSIONS or isinstance(version, bool):
            raise ProtocolError(
                f"params for protocol version {version!r}, we speak {PROTOCOL_VERSION}"
            )
        if not isinstance(players, int) or isinstance(players, bool):
            raise ProtocolError("players must be an integer")
        if not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise ProtocolError(f"{players} players (3..6 allowed)")
        if not isinstance(variant, str) or not 0 < len(variant) <= 32:
            raise ProtocolError("bad variant")
        if not isinstance(digest, bytes) or len(digest) > 64:
            raise ProtocolError("bad board digest")
        if mode not in SHUFFLE_MODES:
            raise ProtocolError(f"shuffle mode {mode!r} (verified/audit)")
        if game_no != 1 and version < SERIES_SINCE:
            raise ProtocolError(f"a protocol version {version} game has no series number")
        if first_leader is not None and (
                not isinstance(first_leader, int) or isinstance(first_leader, bool)
                or not 0 <= first_leader < players):
            raise ProtocolError(f"first leader {first_leader!r} is not a seat of {players}")
        return cls(players, variant, digest, mode, version, money, game_no, first_leader)


def lambda_problem(version: int, lam: object) -> str | None:
    """Why ``lam`` (cut-and-choose rounds) cannot be the λ of a game of protocol
    ``version``, or None.  Since :data:`CERTIFIED_SINCE` it is the protocol's own
    (:data:`crypto.shuffle.DEFAULT_LAMBDA`), so the game id, which binds the version, binds
    it too; before, any value in range was recorded.  Nobody signs λ: a file or folder that
    says otherwise was damaged or edited, and a live table must not play on with it (an
    honest cut-and-choose proof would fail, or a forgeable one pass).  The same rule as the
    audit's (:mod:`p2p.judge.game_audit`)."""
    if version >= CERTIFIED_SINCE and lam != DEFAULT_LAMBDA:
        return (f"λ = {lam!r:.20}, but protocol version {version} games use "
                f"{DEFAULT_LAMBDA}")
    try:
        check_lambda_range(lam)
    except MalformedInput as exc:
        return str(exc)
    return None


def compute_game_id(roster: Sequence[RosterEntry], params: GameParams) -> bytes:
    """``H(roster ‖ params)``: seat order, keys and names; never addresses."""
    seats = [[e.seat, e.key, e.name] for e in roster]
    return hashlib.sha256(b"silkroad/game-id/v1\0" + pack([seats, params.to_wire()])).digest()


def commitment(nonce: bytes, key: bytes) -> bytes:
    """Commitment to a seat's authentication nonce, bound to the committer's key."""
    return hashlib.sha256(b"silkroad/sas-commit/v1\0" + key + nonce).digest()


@cache
def wordlist() -> tuple[str, ...]:
    """The 256 built-in words (``p2p/data/words.txt``), one per byte value."""
    text = resources.files("p2p").joinpath("data/words.txt").read_text("utf-8")
    words = tuple(w.strip() for w in text.splitlines() if w.strip())
    if len(words) != 256 or len(set(words)) != 256:
        raise RuntimeError("p2p/data/words.txt must hold 256 distinct words")
    return words


def auth_words(game_id: bytes, nonces: Sequence[bytes], count: int = WORD_COUNT) -> tuple[str, ...]:
    """The words every player reads aloud and compares (one byte of hash per word)."""
    digest = hashlib.sha256(b"silkroad/sas/v1\0" + game_id + b"".join(nonces)).digest()
    words = wordlist()
    return tuple(words[b] for b in digest[:count])


@dataclass(frozen=True)
class GameSetup:
    """What the lobby hands to the mesh (and to phase 2): everything agreed at the table."""

    roster: tuple[RosterEntry, ...]
    params: GameParams
    game_id: bytes
    words: tuple[str, ...]
    my_seat: int
    #: the board spec the host sent (``"default"`` or board JSON); None if it sent none
    board: str | None = None
    #: the table's name as its host advertised it (cleaned; a label, in no hash)
    table: str = ""
    #: every seat's revealed lobby nonce, in seat order (the words hash them): a watcher
    #: is sent them to show the same words (:mod:`p2p.watch`); () where unknown
    nonces: tuple[bytes, ...] = ()


# --------------------------------------------------------------------------- board/variant
DEFAULT_BOARD = "default"
"""Board spec of the built-in board; any other spec is the JSON text of a board file."""
MAX_BOARD_BYTES = 256 * 1024
VARIANTS: dict[str, bool] = {"base": False, "normal": False, "reverse": True}
"""Rules variant → whether the board is played in reverse (Antioch to Chang'An)."""


class BoardMismatch(LobbyError):
    """The board a peer would load is not the one the table agreed on (``board_digest``)."""


def variant_reverse(variant: str) -> bool:
    """Whether ``variant`` plays the board in reverse; unknown variants are refused (a
    peer that silently fell back to the base rules would desync at the first move)."""
    try:
        return VARIANTS[variant]
    except KeyError:
        raise BoardMismatch(f"unknown variant {variant!r} (known: {', '.join(VARIANTS)})"
                            ) from None


def read_board_spec(path: str | os.PathLike[str] | None) -> str:
    """The board spec carried to the other peers: the file's JSON text (validated here, so a
    bad file is refused before the lobby), or :data:`DEFAULT_BOARD` when ``path`` is None."""
    if path is None:
        return DEFAULT_BOARD
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise BoardMismatch(f"cannot read board file {path}: {exc}") from None
    load_board_spec(text, where=str(path))
    return text


def load_board_spec(spec: str, reverse: bool = False, where: str = "board") -> Board:
    """Parse a board spec (``"default"`` or board JSON) into an oriented :class:`Board`."""
    if spec == DEFAULT_BOARD:
        return default_board(reverse)
    if not isinstance(spec, str) or len(spec.encode("utf-8")) > MAX_BOARD_BYTES:
        raise BoardMismatch(f"{where}: board JSON missing or larger than {MAX_BOARD_BYTES} bytes")
    try:
        data = json.loads(spec)
    except ValueError as exc:
        raise BoardMismatch(f"{where}: board is not JSON: {exc}") from None
    try:
        return load_board(data, reverse=reverse, where=where)
    except DataError as exc:
        raise BoardMismatch(f"{where}: invalid board: {exc}") from None


def board_spec_digest(spec: str) -> bytes:
    """Digest of a board spec (:attr:`engine.board.Board.digest`, orientation-free)."""
    return load_board_spec(spec).digest


def check_board(params: GameParams, spec: str | None, who: str = "this peer") -> str:
    """Return the board spec to play after checking it is the agreed one.

    ``spec`` None means "whatever the table agreed if it is the built-in board".  The params'
    ``board_digest`` is hashed into the game id, so a peer with another board would play
    another game; it is refused here with both digests named instead of desyncing later.
    An empty ``board_digest`` (tables made before boards were carried) means the default
    board."""
    use = DEFAULT_BOARD if spec is None else spec
    digest = board_spec_digest(use)
    want = params.board_digest or board_spec_digest(DEFAULT_BOARD)
    if digest != want:
        what = "the built-in board" if use == DEFAULT_BOARD else "its board file"
        raise BoardMismatch(f"board mismatch: {who} has {what} (digest {digest.hex()[:16]}…) "
                            f"but the table agreed on board digest {want.hex()[:16]}…")
    return use


def game_config(params: GameParams, spec: str | None = None) -> Config:
    """The engine config of an agreed game: its board (checked against the digest) oriented
    by its variant.  Every peer and the offline audit build the config through here."""
    reverse = variant_reverse(params.variant)
    use = check_board(params, spec)
    config = make_config(params.players, reverse, load_board_spec(use, reverse))
    # the rules a game was played by are its protocol version's (engine.state.Config)
    version = params.protocol_version
    return config._replace(final_move=version >= FINAL_MOVE_SINCE,
                           vizier_marker=version >= VIZIER_MARKER_SINCE,
                           first_holder=params.first_leader)
